package appconfig

import (
	"encoding/json"
	"os"
	"testing"
)

// TestVersionCompareMatchesPHP checks every pair in a fixture produced by
// PHP 8.2's own version_compare (testdata/gen_version_compare.php).
func TestVersionCompareMatchesPHP(t *testing.T) {
	raw, err := os.ReadFile("testdata/version_compare.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases [][3]any
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 1000 {
		t.Fatalf("fixture too small: %d", len(cases))
	}
	bad := 0
	for _, c := range cases {
		a, b, want := c[0].(string), c[1].(string), int(c[2].(float64))
		if got := VersionCompare(a, b); got != want {
			bad++
			if bad < 20 {
				t.Errorf("VersionCompare(%q, %q) = %d, PHP says %d", a, b, got, want)
			}
		}
	}
}
