// Package visible shows the characters that change how text around them
// looks without being seen themselves: C0 and C1 control characters (ESC
// starts a terminal's escape sequences) and Unicode's bidirectional
// controls (U+202E RIGHT-TO-LEFT OVERRIDE makes "gpj.exe" read "exe.jpg").
// Text taken from the queue (class and queue names, exception messages,
// payloads: anyone who can push a job writes them) is shown with each such
// character written as an escape a person can read: \x1b, \u202e.
//
// Tab, line feed and carriage return are left alone: they lay out stack
// traces and JSON, and spoof nothing on a page.
package visible

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Hidden reports whether r is a character this package makes visible: a
// C0 control other than tab, line feed and carriage return, DEL, a C1
// control, or a bidirectional control (Unicode's Bidi_Control property:
// U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069).
func Hidden(r rune) bool {
	switch {
	case r == '\t' || r == '\n' || r == '\r':
		return false
	case r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x061c || r == 0x200e || r == 0x200f:
		return true
	case r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// Escape is how a hidden character is shown: \xHH below U+0080, \uHHHH
// above, as Go's %+q writes them.
func Escape(r rune) string {
	if r < 0x80 {
		return fmt.Sprintf(`\x%02x`, r)
	}
	return fmt.Sprintf(`\u%04x`, r)
}

// String is s with every hidden character escaped.
func String(s string) string {
	if !strings.ContainsFunc(s, Hidden) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if Hidden(r) {
			b.WriteString(Escape(r))
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Bytes is b with every hidden character escaped; b itself when it has
// none. Invalid UTF-8 is left as it is (a page declares UTF-8, and a
// browser shows U+FFFD for it). The escapes hold only ASCII letters,
// digits and a backslash: safe in HTML text and attribute values.
func Bytes(b []byte) []byte { return rewrite(b, Escape) }

// JSON is a JSON document with every hidden character inside its strings
// written as a \u escape: the same value, but a terminal or page that
// shows the document raw shows the escape. (Encoders already escape C0
// controls; C1 and bidi controls they leave raw.)
func JSON(doc []byte) []byte {
	return rewrite(doc, func(r rune) string { return fmt.Sprintf(`\u%04x`, r) })
}

func rewrite(b []byte, esc func(rune) string) []byte {
	i := firstHidden(b)
	if i < 0 {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	out = append(out, b[:i]...)
	for i < len(b) {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			out = append(out, b[i])
		} else if Hidden(r) {
			out = append(out, esc(r)...)
		} else {
			out = append(out, b[i:i+n]...)
		}
		i += n
	}
	return out
}

// firstHidden is the index of the first hidden character in b, or -1.
func firstHidden(b []byte) int {
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\t' && c != '\n' && c != '\r' || c == 0x7f {
				return i
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if Hidden(r) {
			return i
		}
		i += n
	}
	return -1
}
