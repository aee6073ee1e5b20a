package phpserialize

import (
	"errors"
	"strings"
	"testing"
)

func TestSplitPropertyName(t *testing.T) {
	cases := []struct {
		key         string
		vis         Visibility
		class, name string
	}{
		{"pub", VisPublic, "", "pub"},
		{"\x00*\x00prot", VisProtected, "", "prot"},
		{"\x00Fixtures\\Base\x00secret", VisPrivate, `Fixtures\Base`, "secret"},
		{"", VisPublic, "", ""},
		{"\x00broken", VisPublic, "", "\x00broken"},
		{"\x00\x00x", VisPublic, "", "\x00\x00x"},
	}
	for _, c := range cases {
		vis, class, name := SplitPropertyName(c.key)
		if vis != c.vis || class != c.class || name != c.name {
			t.Errorf("%q: got %v %q %q", c.key, vis, class, name)
		}
		if c.vis != VisPublic || !strings.HasPrefix(c.key, "\x00") {
			if back := MangleProp(vis, class, name); back != c.key {
				t.Errorf("%q: MangleProp gave %q", c.key, back)
			}
		}
	}
}

func TestPropResolvesShortNames(t *testing.T) {
	v := mustUnserialize(t, readFixture(t, "visibility-base.ser"))
	for name, want := range map[string]string{"pub": "p", "prot": "q", "secret": "base-secret"} {
		p, err := v.Prop(name)
		if err != nil || string(p.Str) != want {
			t.Errorf("Prop(%q) = %v, %v; want %q", name, p, err, want)
		}
	}
}

func TestPropAmbiguousPrivateInParentAndChild(t *testing.T) {
	v := mustUnserialize(t, readFixture(t, "visibility.ser"))
	_, err := v.Prop("secret")
	var amb *AmbiguousPropertyError
	if !errors.As(err, &amb) || len(amb.Keys) != 2 {
		t.Fatalf("Prop(secret): %v", err)
	}
	if errors.Is(err, ErrNoProperty) {
		t.Error("ambiguity must not look like a missing property")
	}
	if !strings.Contains(err.Error(), `ambiguous`) || !strings.Contains(err.Error(), `Fixtures\\Child`) {
		t.Errorf("message %q", err)
	}
	base, err := v.PropKey(MangleProp(VisPrivate, `Fixtures\Base`, "secret"))
	if err != nil || string(base.Str) != "base-secret" {
		t.Errorf("base secret: %v %v", base, err)
	}
	child, err := v.PropKey(MangleProp(VisPrivate, `Fixtures\Child`, "secret"))
	if err != nil || string(child.Str) != "child-secret" {
		t.Errorf("child secret: %v %v", child, err)
	}
	own, err := v.Prop("own")
	if err != nil || own.Int != 1 {
		t.Errorf("own: %v %v", own, err)
	}
}

func TestPropMissing(t *testing.T) {
	v := mustUnserialize(t, readFixture(t, "typed-uninitialized.ser"))
	_, err := v.Prop("never")
	if !errors.Is(err, ErrNoProperty) || !strings.Contains(err.Error(), `"never"`) {
		t.Fatalf("uninitialized typed property: %v", err)
	}
	if _, err := String("x").Prop("a"); err == nil || errors.Is(err, ErrNoProperty) {
		t.Fatalf("Prop on a string: %v", err)
	}
}

func TestPropFollowsReferences(t *testing.T) {
	v := mustUnserialize(t, readFixture(t, "ref-shared-object.ser"))
	second, err := v.Get("second")
	if err != nil {
		t.Fatal(err)
	}
	name, err := second.Prop("name")
	if err != nil || string(name.Str) != "shared" {
		t.Fatalf("through r: %v %v", name, err)
	}
}

func TestSetPropReplacesOrAppends(t *testing.T) {
	v := mustUnserialize(t, readFixture(t, "visibility-base.ser"))
	if err := v.SetProp("prot", String("new")); err != nil {
		t.Fatal(err)
	}
	if err := v.SetProp("added", Int(7)); err != nil {
		t.Fatal(err)
	}
	got := string(mustSerialize(t, v))
	want := "O:13:\"Fixtures\\Base\":4:{s:3:\"pub\";s:1:\"p\";s:7:\"\x00*\x00prot\";s:3:\"new\";" +
		"s:21:\"\x00Fixtures\\Base\x00secret\";s:11:\"base-secret\";s:5:\"added\";i:7;}"
	if got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	child := mustUnserialize(t, readFixture(t, "visibility.ser"))
	var amb *AmbiguousPropertyError
	if err := child.SetProp("secret", Null()); !errors.As(err, &amb) {
		t.Fatalf("SetProp on an ambiguous name: %v", err)
	}
	if err := child.SetEntry(StrKey(MangleProp(VisPrivate, `Fixtures\Child`, "secret")), String("s")); err != nil {
		t.Fatal(err)
	}
	if p, _ := child.PropKey("\x00Fixtures\\Child\x00secret"); string(p.Str) != "s" {
		t.Fatalf("SetEntry did not replace: %v", p)
	}
}

func TestIndexAndGet(t *testing.T) {
	v := mustUnserialize(t, readFixture(t, "arrays.ser"))
	mixed, err := v.Get("mixed")
	if err != nil {
		t.Fatal(err)
	}
	if x, err := mixed.Get("x"); err != nil || x.Int != 1 {
		t.Errorf("Get(x): %v %v", x, err)
	}
	if ten, err := mixed.Index(IntKey(10)); err != nil || ten.Int != 2 {
		t.Errorf("Index(10): %v %v", ten, err)
	}
	if ten, err := mixed.Get("10"); err != nil || ten.Int != 2 {
		t.Errorf(`Get("10") must find int key 10 as PHP does: %v %v`, ten, err)
	}
	if _, err := mixed.Get("010"); !errors.Is(err, ErrNoProperty) {
		t.Errorf(`Get("010") is a string key in PHP: %v`, err)
	}
	if _, err := mixed.Get("+10"); !errors.Is(err, ErrNoProperty) {
		t.Errorf(`Get("+10"): %v`, err)
	}
	if _, err := Int(1).Get("x"); err == nil || errors.Is(err, ErrNoProperty) {
		t.Errorf("Get on an int: %v", err)
	}
}
