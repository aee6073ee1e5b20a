package phpserialize

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// FuzzUnserialize checks that no input panics, that whatever parses can be
// serialized and re-parsed to the same bytes, and that canonical input
// (everything PHP's serialize() writes) round-trips byte for byte.
func FuzzUnserialize(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		v, canonical, err := unserialize(in)
		checkStringAgrees(t, in, v, err)
		if err != nil {
			if _, ok := err.(*SyntaxError); !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		out, err := Serialize(v)
		if err != nil {
			t.Fatalf("parsed but does not serialize: %v", err)
		}
		if canonical && !bytes.Equal(out, in) {
			t.Fatalf("canonical input changed:\n in: %q\nout: %q", in, out)
		}
		v2, canonical2, err := unserialize(out)
		if err != nil {
			t.Fatalf("own output does not parse: %v\n%q", err, out)
		}
		if !canonical2 {
			t.Fatalf("own output is not canonical: %q", out)
		}
		out2, err := Serialize(v2)
		if err != nil || !bytes.Equal(out, out2) {
			t.Fatalf("second round trip differs (%v):\n%q\n%q", err, out, out2)
		}
	})
}

// checkStringAgrees asserts UnserializeString reads in as Unserialize did
// (v, err): the same error, or a value that serializes to the same bytes.
func checkStringAgrees(t *testing.T, in []byte, v *Value, err error) {
	sv, serr := UnserializeString(string(in))
	if (err == nil) != (serr == nil) || (err != nil && err.Error() != serr.Error()) {
		t.Fatalf("%q: Unserialize: %v, UnserializeString: %v", in, err, serr)
	}
	if err != nil {
		return
	}
	want, err1 := Serialize(v)
	got, err2 := Serialize(sv)
	if err1 != nil || err2 != nil || !bytes.Equal(want, got) {
		t.Fatalf("%q: UnserializeString serializes to %q (%v), Unserialize to %q (%v)", in, got, err2, want, err1)
	}
}

// fuzzSeeds returns every fixture plus the serialized commands found in
// testdata/payloads/*.json.
func fuzzSeeds(f *testing.F) [][]byte {
	var seeds [][]byte
	files, _ := filepath.Glob(filepath.Join(fixtureDir, "*.ser"))
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, b)
	}
	payloads, _ := filepath.Glob("../../testdata/payloads/*.json")
	for _, name := range payloads {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		var p struct {
			Data struct {
				Command string `json:"command"`
			} `json:"data"`
		}
		if json.Unmarshal(b, &p) == nil && p.Data.Command != "" {
			seeds = append(seeds, []byte(p.Data.Command))
		}
	}
	if len(seeds) == 0 {
		f.Fatal("no fuzz seeds found")
	}
	return append(seeds, []byte(`d:0.10;`), []byte(`i:+5;`), []byte(`a:01:{i:007;s:03:"abc";}`))
}
