package payload

import (
	"strings"
	"testing"
)

// TestTopStringsOfEveryFixture: for every payload real Laravel wrote (the
// fixtures), TopStrings reads the uuid and displayName Parse reads, from
// the whole payload and from its first PrefixLen bytes; cut anywhere, it
// gives the right value or none, never a wrong one.
func TestTopStringsOfEveryFixture(t *testing.T) {
	m := loadManifest(t)
	for _, f := range payloadFixtures(m) {
		raw := readPayloadFixture(t, f.File)
		p, err := Parse(raw)
		if err != nil {
			t.Fatalf("%s: %v", f.File, err)
		}
		want := map[string]string{"uuid": p.UUID, "displayName": p.DisplayName}
		for _, in := range [][]byte{raw, raw[:min(len(raw), PrefixLen)]} {
			got := TopStrings(in, "uuid", "displayName")
			if got["uuid"] != want["uuid"] || got["displayName"] != want["displayName"] {
				t.Fatalf("%s (%d bytes): %v, want %v", f.File, len(in), got, want)
			}
		}
		for cut := range min(len(raw), 300) {
			for k, v := range TopStrings(raw[:cut], "uuid", "displayName") {
				if v != want[k] {
					t.Fatalf("%s cut at %d: %s %q, want %q or none", f.File, cut, k, v, want[k])
				}
			}
		}
	}
}

// TestTopStringsReadsTheTopLevelOnly: a key inside a nested object or
// array is never taken for the payload's, a value that is not a string is
// no value, a value cut short is none, and keys after a cut value are
// not read.
func TestTopStringsReadsTheTopLevelOnly(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string
	}{
		{`{"meta":{"displayName":"Nested"},"displayName":"App\\Jobs\\Top"}`, `App\Jobs\Top`},
		{`{"tags":["displayName",{"displayName":"x"}],"displayName":"A\/B"}`, `A/B`},
		{`{"displayName":{"x":"y"},"uuid":"u"}`, ``},
		{`{"displayName":7}`, ``},
		{`{"displayName":"App\\Jobs\\Cu`, ``},
		{`{"data":{"command":"` + strings.Repeat("x", 100) + `"},"displayName":"Late"}`, `Late`},
		{`[{"displayName":"InArray"}]`, ``},
		{`not json "displayName":"X"`, ``},
		{` {"displayName" : "Spaced"}`, `Spaced`},
		{`{"displayName":"Caf\u00e9Job"}`, `CaféJob`},
	} {
		if got := TopStrings([]byte(c.in), "displayName")["displayName"]; got != c.want {
			t.Errorf("%s: %q, want %q", c.in, got, c.want)
		}
	}
}
