package phpserialize

import (
	"strings"
	"testing"
)

// The *-before fixtures are edited in Go the same way PHP built the
// *-after fixtures; reference numbers must follow the edit.
func TestEditThenSerializeRenumbersLikePHP(t *testing.T) {
	cases := []struct {
		name string
		edit func(t *testing.T, v *Value)
	}{
		{"edit-object", func(t *testing.T, v *Value) {
			// $after->inserted = [1, 2, 3] before a and b: r:2 becomes r:6.
			v.Entries = append([]Entry{Public("inserted", List(Int(1), Int(2), Int(3)))}, v.Entries...)
		}},
		{"edit-alias", func(t *testing.T, v *Value) {
			// 'n' => [true, null] first: R:2 becomes R:5.
			v.Entries = append([]Entry{{Key: StrKey("n"), Value: List(Bool(true), Null())}}, v.Entries...)
		}},
		{"edit-self", func(t *testing.T, v *Value) {
			// An enum before the self reference: r:1 stays r:1.
			v.Entries = append([]Entry{Public("tag", Enum(`Fixtures\Suit`, "Spades"))}, v.Entries...)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := mustUnserialize(t, readFixture(t, c.name+"-before.ser"))
			c.edit(t, v)
			want := string(readFixture(t, c.name+"-after.ser"))
			if got := string(mustSerialize(t, v)); got != want {
				t.Fatalf("got  %q\nwant %q", got, want)
			}
		})
	}
}

// TestBuildReferencesFromGo builds the PHP fixtures' reference structures
// with the constructors and expects PHP's exact bytes.
func TestBuildReferencesFromGo(t *testing.T) {
	shared := Object("stdClass", Public("name", String("shared")))
	sharedObj := Array(
		Entry{Key: StrKey("first"), Value: shared},
		Entry{Key: StrKey("second"), Value: Ref(shared)},
		Entry{Key: StrKey("list"), Value: List(Ref(shared))},
	)
	self := Object("stdClass", Public("name", String("me")))
	self.Entries = append(self.Entries, Public("self", Ref(self)))
	inner := &Value{Kind: KindArray}
	inner.Entries = []Entry{{Key: IntKey(0), Value: RefAlias(inner)}}
	scalar := String("scalar")
	hearts := Enum(`Fixtures\Suit`, "Hearts")
	cases := map[string]*Value{
		"ref-shared-object": sharedObj,
		"ref-self-object":   self,
		"ref-self-array":    List(inner),
		"ref-scalar": Array(
			Entry{Key: StrKey("a"), Value: scalar},
			Entry{Key: StrKey("b"), Value: Int(1)},
			Entry{Key: StrKey("c"), Value: RefAlias(scalar)},
		),
		"enum-twice": List(hearts, Enum(`Fixtures\Suit`, "Spades"), Ref(hearts), Enum(`Fixtures\Status`, "Active")),
		"visibility": Object(`Fixtures\Child`,
			Public("pub", String("p")),
			Protected("prot", String("q")),
			Private(`Fixtures\Base`, "secret", String("base-secret")),
			Private(`Fixtures\Child`, "secret", String("child-secret")),
			Public("own", Int(1)),
		),
	}
	for name, v := range cases {
		want := string(readFixture(t, name+".ser"))
		if got := string(mustSerialize(t, v)); got != want {
			t.Errorf("%s:\n got %q\nwant %q", name, got, want)
		}
	}
}

func TestSerializeRejectsBrokenTrees(t *testing.T) {
	later := String("x")
	removed := String("gone")
	cases := map[string]*Value{
		"reference before its target": List(RefAlias(later), later),
		"target not in the tree":      List(Ref(removed)),
		"nil value":                   List(nil),
		"ref without target":          List(&Value{Kind: KindRef}),
		"invalid class":               Object("has space"),
		"empty enum case":             Enum("Suit", ""),
		"unknown kind":                {Kind: 99},
		"r: to a string":              List(later, Ref(later)),
	}
	for name, v := range cases {
		if out, err := Serialize(v); err == nil {
			t.Errorf("%s: serialized to %q", name, out)
		}
	}
	deep := Null()
	for range MaxDepth + 1 {
		deep = List(deep)
	}
	if _, err := Serialize(deep); err == nil || !strings.Contains(err.Error(), "nesting") {
		t.Errorf("too deep: %v", err)
	}
}

func TestSerializeAfterRemovingATargetFails(t *testing.T) {
	v := mustUnserialize(t, readFixture(t, "edit-object-before.ser"))
	v.Entries = v.Entries[1:] // drop "a", whose object "b" refers to
	if out, err := Serialize(v); err == nil {
		t.Fatalf("serialized a dangling reference: %s", out)
	}
}

func TestAppendSerialize(t *testing.T) {
	out, err := AppendSerialize([]byte("prefix:"), List(String("a;\"}"), Bool(false), Null()))
	if err != nil || string(out) != `prefix:a:3:{i:0;s:4:"a;"}";i:1;b:0;i:2;N;}` {
		t.Fatalf("%s %v", out, err)
	}
}
