package phparray

import (
	"encoding/json"
	"reflect"
	"testing"
)

// FuzzUnmarshal: a document encoding/json reads into the type is read
// exactly as encoding/json reads it; one it refuses is refused or read
// whole, never half (a second read of the result gives the same value);
// nothing panics.
func FuzzUnmarshal(f *testing.F) {
	for _, s := range []string{`{"v":1,"stores":[]}`, `{"errors":{},"models":{"0":{"ids":{}}}}`, `{"by_index":["a"]}`,
		`{"pair":{"1":"y","0":"x"}}`, `[]`, `{}`, `null`, `{"unique":[]}`, `{"stores":[{"driver":1}]}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		var want, got record
		jsonErr := json.Unmarshal([]byte(doc), &want)
		err := Unmarshal([]byte(doc), &got)
		if jsonErr == nil {
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: json read %#v, Unmarshal %#v (%v)", doc, want, got, err)
			}
			return
		}
		if err != nil {
			return
		}
		again, merr := json.Marshal(got)
		if merr != nil {
			t.Fatalf("%s: read as %#v, which does not encode: %v", doc, got, merr)
		}
		var back record
		if err := json.Unmarshal(again, &back); err != nil || !reflect.DeepEqual(normalize(back), normalize(got)) {
			t.Fatalf("%s: read as %#v, which reads back as %#v (%v)", doc, got, back, err)
		}
	})
}

// normalize drops the distinction json.Marshal cannot keep: nil and
// empty slices and maps, and the raw bytes' spacing.
func normalize(r record) record {
	if len(r.Errors) == 0 {
		r.Errors = nil
	}
	if len(r.Models) == 0 {
		r.Models = nil
	}
	for i := range r.Models {
		if len(r.Models[i].IDs) == 0 {
			r.Models[i].IDs = nil
		}
	}
	if len(r.Stores) == 0 {
		r.Stores = nil
	}
	if len(r.ByIndex) == 0 {
		r.ByIndex = nil
	}
	r.Raw, r.Any = nil, nil
	return r
}
