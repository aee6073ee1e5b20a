package phpjson

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzAppendString checks json_encode's rules on any input: an error
// exactly for invalid UTF-8; otherwise valid JSON that decodes to the
// input, with "/" and control characters escaped, only ASCII without
// UnescapedUnicode, and U+2028/U+2029 never raw.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "a/b", "\x00\x1f\x7f", "Café 😀 \u2028\u2029", "\xff", "\xed\xa0\x80", `"\`} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, s string, unescaped bool) {
		var flags Flags
		if unescaped {
			flags = UnescapedUnicode
		}
		out, err := AppendString(nil, s, flags)
		if !utf8.ValidString(s) {
			if err != ErrMalformedUTF8 {
				t.Fatalf("%q: want ErrMalformedUTF8, got %q, %v", s, out, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		var back string
		if err := json.Unmarshal(out, &back); err != nil || back != s {
			t.Fatalf("%q encoded as %s, which decodes to %q (%v)", s, out, back, err)
		}
		body := out[1 : len(out)-1]
		for i := 0; i < len(body); i++ {
			c := body[i]
			if c == '\\' {
				i++ // the escaped character
				continue
			}
			if c < 0x20 || c == '/' || c == '"' || (flags == 0 && c >= 0x80) {
				t.Fatalf("byte %#x left raw in %s (flags %d)", c, out, flags)
			}
		}
		if strings.ContainsAny(string(body), "\u2028\u2029") {
			t.Fatalf("line separator left raw in %s", out)
		}
	})
}
