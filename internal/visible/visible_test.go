package visible

import (
	"encoding/json"
	"testing"
)

// TestHiddenCharactersShowAsEscapes: every C0 (but tab, LF, CR), DEL, C1
// and bidi control is shown as its escape; other text is unchanged.
func TestHiddenCharactersShowAsEscapes(t *testing.T) {
	for in, want := range map[string]string{
		"App\\Jobs\\Invoice\u202egpj.exe": `App\Jobs\Invoice\u202egpj.exe`,
		"\x1b[31mred\x1b[0m":              `\x1b[31mred\x1b[0m`,
		"a\u2066b\u2069c\u200f\u061c":     `a\u2066b\u2069c\u200f\u061c`,
		"nul\x00 del\x7f c1\u0085\u009b":  `nul\x00 del\x7f c1\u0085\u009b`,
		"line\n\ttab\r\n":                 "line\n\ttab\r\n",
		"café ✗ 日本 😀 \u200d":              "café ✗ 日本 😀 \u200d",
		"bad \xff utf8":                   "bad \xff utf8",
	} {
		if got := string(Bytes([]byte(in))); got != want {
			t.Errorf("Bytes(%q) = %q, want %q", in, got, want)
		}
		if in != "bad \xff utf8" {
			if got := String(in); got != want {
				t.Errorf("String(%q) = %q, want %q", in, got, want)
			}
		}
	}
}

// TestJSONKeepsTheValue: JSON writes hidden characters as \u escapes, and
// the document decodes to the same value.
func TestJSONKeepsTheValue(t *testing.T) {
	in := "queue\u202e\u0085\u2067x"
	doc, _ := json.Marshal(map[string]string{"q": in})
	out := JSON(doc)
	if string(out) != `{"q":"queue\u202e\u0085\u2067x"}` {
		t.Fatalf("%s", out)
	}
	var v map[string]string
	if err := json.Unmarshal(out, &v); err != nil || v["q"] != in {
		t.Fatalf("%v %q", err, v["q"])
	}
}
