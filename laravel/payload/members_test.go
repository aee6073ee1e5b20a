package payload

import "testing"

// SplitObject gives a payload's top-level members, by the fast scanner or,
// for what it declines (an escaped key), by encoding/json; a document that
// is not an object is an error.
func TestSplitObject(t *testing.T) {
	for _, raw := range []string{
		`{"uuid":"u-1","displayName":"App\\Jobs\\A","tags":["a"],"silenced":true,"data":{"command":"O:1:\"A\":0:{}"}}`,
		`{"uuid":"u-1","displayName":"App\\Jobs\\A","tags":["a"],"silenced":true,"d\u0061ta":{}}`,
	} {
		m, err := SplitObject([]byte(raw))
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if s, ok := m.String("displayName"); !ok || s != `App\Jobs\A` {
			t.Errorf("%s: displayName %q %v", raw, s, ok)
		}
		if s, ok := m.String("uuid"); !ok || s != "u-1" {
			t.Errorf("%s: uuid %q %v", raw, s, ok)
		}
		if string(m.Raw("tags")) != `["a"]` || string(m.Raw("silenced")) != "true" || m.Raw("missing") != nil {
			t.Errorf("%s: tags %s, silenced %s", raw, m.Raw("tags"), m.Raw("silenced"))
		}
		if _, ok := m.String("tags"); ok {
			t.Errorf("%s: a list read as a string", raw)
		}
	}
	for _, bad := range []string{`[1]`, `null`, `{"a":`, `"s"`} {
		if _, err := SplitObject([]byte(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}
