package phparray

import (
	"encoding/json"
	"testing"
)

// TestCastsAsPHP: each value as PHP 8's (string) and (bool) casts read
// what json_decode($json, true) gives for it.
func TestCastsAsPHP(t *testing.T) {
	for _, c := range []struct {
		v      any
		str    string
		truthy bool
	}{
		{nil, "", false},
		{false, "", false},
		{true, "1", true},
		{float64(0), "0", false},
		{float64(-1.5), "-1.5", true},
		{float64(6379), "6379", true},
		{json.Number("0"), "0", false},
		{json.Number("0.0"), "0.0", false},
		{json.Number("2"), "2", true},
		{"", "", false},
		{"0", "0", false},
		{"0.0", "0.0", true}, // only "" and "0" are false strings
		{"false", "false", true},
		{[]any{}, "[]", false},
		{map[string]any{}, "map[]", false},
		{[]any{float64(0)}, "[0]", true},
		{map[string]any{"a": nil}, "map[a:<nil>]", true},
		{int64(0), "0", false},
		{7, "7", true},
	} {
		if got := String(c.v); got != c.str {
			t.Errorf("String(%#v) = %q, want %q", c.v, got, c.str)
		}
		if got := Truthy(c.v); got != c.truthy {
			t.Errorf("Truthy(%#v) = %v, want %v", c.v, got, c.truthy)
		}
	}
}
