package phparray

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"reflect"
	"strings"
	"testing"

	"github.com/laraworker/laraworker/internal/testutil/phptest"
	"github.com/laraworker/laraworker/internal/testutil/testredis"
)

type store struct {
	Driver string `json:"driver"`
}

type record struct {
	V       int              `json:"v"`
	Stores  map[string]store `json:"stores"`
	Errors  []string         `json:"errors"`
	Unique  *store           `json:"unique"`
	Models  []model          `json:"models"`
	Raw     json.RawMessage  `json:"raw"`
	Any     any              `json:"any"`
	ByIndex map[int]string   `json:"by_index"`
	Pair    [2]string        `json:"pair"`
}

type model struct {
	IDs []json.RawMessage `json:"ids"`
}

// TestUnmarshalReadsPHPShapes: each way PHP (or Redis's cjson, on
// Laravel's behalf) writes an array is read into the Go type the reader
// wants, as PHP's json_decode($raw, true) would give the array back.
func TestUnmarshalReadsPHPShapes(t *testing.T) {
	cases := []struct {
		name, doc string
		want      record
	}{
		{"queue:retry's empty map", `{"v":1,"stores":[]}`, record{V: 1, Stores: map[string]store{}}},
		{"cjson's empty list", `{"errors":{},"models":{}}`, record{Errors: []string{}, Models: []model{}}},
		{"a map keyed 0..n-1 is a list", `{"stores":[{"driver":"database"},{"driver":"redis"}]}`,
			record{Stores: map[string]store{"0": {"database"}, "1": {"redis"}}}},
		{"an int-keyed map as a list", `{"by_index":["a","b"]}`, record{ByIndex: map[int]string{0: "a", 1: "b"}}},
		{"a list with a hole is an object", `{"errors":{"0":"a","2":"c"}}`, record{Errors: []string{"a", "c"}}},
		{"an object's values in document order", `{"errors":{"2":"c","0":"a"}}`, record{Errors: []string{"c", "a"}}},
		{"an empty struct as []", `{"unique":[]}`, record{Unique: &store{}}},
		{"an empty document as []", `[]`, record{}},
		{"nested", `{"models":{"1":{"ids":{}}},"stores":{"database":[]}}`,
			record{Models: []model{{IDs: []json.RawMessage{}}}, Stores: map[string]store{"database": {}}}},
		{"a Go array from an object", `{"pair":{"0":"x","1":"y"},"errors":{}}`, record{Pair: [2]string{"x", "y"}, Errors: []string{}}},
		{"raw and any left alone", `{"raw":[],"any":{},"errors":{}}`, record{Raw: json.RawMessage(`[]`), Any: map[string]any{}, Errors: []string{}}},
		{"a document that fits is read as is", `{"v":1,"stores":{"a":{"driver":"x"}},"errors":["e"]}`,
			record{V: 1, Stores: map[string]store{"a": {"x"}}, Errors: []string{"e"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got record
			if err := Unmarshal([]byte(c.doc), &got); err != nil {
				t.Fatalf("%s: %v", c.doc, err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("%s:\n got %#v\nwant %#v", c.doc, got, c.want)
			}
		})
	}
}

// TestUnmarshalKeepsRealErrors: a value of the wrong kind is json's
// error, not hidden by the reshaping.
func TestUnmarshalKeepsRealErrors(t *testing.T) {
	for _, doc := range []string{`{"v":"1","stores":[]}`, `{"errors":[1]}`, `{"unique":["x"]}`, `{"stores":[}`, `["x"]`} {
		var got record
		err := Unmarshal([]byte(doc), &got)
		want := json.Unmarshal([]byte(doc), new(record))
		if err == nil || want == nil {
			t.Errorf("%s: error %v, json's %v: want both to fail", doc, err, want)
			continue
		}
		if doc == `{"v":"1","stores":[]}` && !strings.Contains(err.Error(), "Go struct field record.v of type int") {
			t.Errorf("%s: %v, want json's error about v", doc, err)
		}
	}
	if err := Unmarshal([]byte(`[]`), record{}); err == nil {
		t.Error("a non-pointer: want json's InvalidUnmarshalError")
	}
}

// TestUnmarshalRestoresTarget: values v held before a reshaped decode
// stay where the document says nothing, as with json.Unmarshal.
func TestUnmarshalRestoresTarget(t *testing.T) {
	got := record{V: 7, Errors: []string{"before"}}
	if err := Unmarshal([]byte(`{"stores":[],"models":{}}`), &got); err != nil {
		t.Fatal(err)
	}
	want := record{V: 7, Errors: []string{"before"}, Stores: map[string]store{}, Models: []model{}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v\nwant %#v", got, want)
	}
}

type inner struct {
	Tags []string `json:"tags"`
}

type Outer struct {
	inner
	Name  string         `json:"name"`
	Props map[string]int `json:"props"`
	skip  []string
	Dash  []string `json:"-"`
}

// TestUnmarshalFieldsAsJSON: fields are found as encoding/json finds
// them: promoted from embedded structs, case-insensitively, never the
// unexported or "-" ones.
func TestUnmarshalFieldsAsJSON(t *testing.T) {
	var got Outer
	if err := Unmarshal([]byte(`{"TAGS":{},"name":"n","Props":[],"-":{}}`), &got); err != nil {
		t.Fatal(err)
	}
	if got.Tags == nil || len(got.Tags) != 0 || got.Props == nil || got.Name != "n" || got.skip != nil || got.Dash != nil {
		t.Errorf("got %#v", got)
	}
}

// TestReshapeForStrictDecoders: Reshape gives a decoder with options of
// its own the document in the shapes the type wants, and leaves what
// needs nothing (or is not JSON) as it is.
func TestReshapeForStrictDecoders(t *testing.T) {
	var d record
	doc := Reshape([]byte(` {"stores":[],"errors":{"3":"x"}} `), &d)
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("%s: %v", doc, err)
	}
	if d.Stores == nil || !reflect.DeepEqual(d.Errors, []string{"x"}) {
		t.Errorf("%s decoded as %#v", doc, d)
	}
	for _, same := range []string{`{"stores":{}}`, `{"stores":[`, `null`, `"x"`} {
		if got := Reshape([]byte(same), &d); string(got) != same {
			t.Errorf("Reshape(%s) = %s, want it unchanged", same, got)
		}
	}
	if got := Reshape([]byte(`[]`), nil); string(got) != `[]` {
		t.Errorf("Reshape for nil = %s", got)
	}
}

// TestUnmarshalWhatPHPAndRedisWrite: documents as real PHP's json_encode
// writes these arrays, and as real Redis's cjson (Laravel's Redis scripts)
// re-encodes them, read into the Go types that hold them.
func TestUnmarshalWhatPHPAndRedisWrite(t *testing.T) {
	const php = `echo json_encode([
		'v' => 1,
		'stores' => [],                          // a map with nothing in it
		'errors' => array_filter(['a', '', 'c']), // a list with a hole: {"0":"a","2":"c"}
		'by_index' => [0 => 'a', 1 => 'b'],       // a map keyed 0..n-1: a list
		'unique' => [],                          // an object with nothing in it
		'models' => [['ids' => []]],
	]);`
	out, err := exec.Command("php", "-r", php).Output()
	if err != nil {
		phptest.NeedPHP(t)
		t.Fatalf("php: %v", err)
	}
	want := record{V: 1, Stores: map[string]store{}, Errors: []string{"a", "c"}, ByIndex: map[int]string{0: "a", 1: "b"},
		Unique: &store{}, Models: []model{{IDs: []json.RawMessage{}}}}
	srv := testredis.Start(t)
	for how, doc := range map[string][]byte{"json_encode": out, "cjson": srv.CJSON(t, out)} {
		var got record
		if err := Unmarshal(doc, &got); err != nil {
			t.Fatalf("%s %s: %v", how, doc, err)
		}
		// cjson writes an object's keys in its own order, and PHP then
		// iterates them in that order: the list is what PHP reads back.
		want.Errors = phpValues(t, doc, "errors")
		if !reflect.DeepEqual(normalize(got), normalize(want)) || got.Stores == nil || got.Unique == nil {
			t.Errorf("%s %s:\n got %#v\nwant %#v", how, doc, got, want)
		}
	}
}

// phpValues is array_values(json_decode(doc, true)[key]) by real PHP: the
// order PHP iterates the array in.
func phpValues(t *testing.T, doc []byte, key string) []string {
	t.Helper()
	cmd := exec.Command("php", "-r", `echo json_encode(array_values(json_decode(stream_get_contents(STDIN), true)[$argv[1]]));`, key)
	cmd.Stdin = bytes.NewReader(doc)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("php: %v", err)
	}
	var vals []string
	if err := json.Unmarshal(out, &vals); err != nil {
		t.Fatalf("php printed %s: %v", out, err)
	}
	return vals
}
