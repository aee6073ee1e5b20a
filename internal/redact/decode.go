package redact

import (
	"bytes"
	"html"
	"sort"
	"unicode/utf16"
	"unicode/utf8"
)

// view is the source text read through zero or more decodings. Its
// escapes lists, in order, where data holds the bytes an escape of the
// parent view stood for; the bytes between escapes are the parent's own.
// A view without parent is the source.
type view struct {
	data    []byte
	parent  *view
	escapes []decoded
}

// decoded is one escape read: data[at:at+n] stands for parent.data[pat:pat+pn].
type decoded struct {
	at, n, pat, pn int32
}

// parentRange is the range of the parent's bytes that byte i of the view
// came from.
func (v *view) parentRange(i int) (int, int) {
	k := sort.Search(len(v.escapes), func(k int) bool { return int(v.escapes[k].at) > i }) - 1
	if k < 0 {
		return i, i + 1
	}
	e := v.escapes[k]
	if i < int(e.at+e.n) {
		return int(e.pat), int(e.pat + e.pn)
	}
	p := int(e.pat+e.pn) + i - int(e.at+e.n)
	return p, p + 1
}

// source is the range of source bytes that the view's bytes [i, j) came
// from.
func (v *view) source(i, j int) (int, int) {
	if v.parent == nil {
		return i, j
	}
	s, _ := v.parentRange(i)
	_, e := v.parentRange(j - 1)
	return v.parent.source(s, e)
}

// escape reads one escape sequence starting at b[i] (which is the
// decoder's trigger byte) into out: how many bytes of out it stands for
// and its own length, or ok false when b[i:] is not one.
type escape func(b []byte, i int, out *[utf8.UTFMax]byte) (n, size int, ok bool)

// decoder is one escaping the Redactor reads through.
type decoder struct {
	trigger byte
	read    escape
}

var decoders = []decoder{
	{'\\', backslashEscape},
	{'&', characterReference},
	{'%', percentEscape},
}

// decode reads v through d; ok is false when nothing in v decodes (the
// view would be the same).
func decode(v *view, d decoder) (*view, bool) {
	i := bytes.IndexByte(v.data, d.trigger)
	if i < 0 {
		return nil, false
	}
	out := &view{parent: v}
	var buf [utf8.UTFMax]byte
	last := 0
	for i >= 0 {
		n, size, ok := d.read(v.data, i, &buf)
		if !ok {
			i = next(v.data, i+1, d.trigger)
			continue
		}
		if out.data == nil {
			out.data = make([]byte, 0, len(v.data))
		}
		out.data = append(out.data, v.data[last:i]...)
		out.escapes = append(out.escapes, decoded{at: int32(len(out.data)), n: int32(n), pat: int32(i), pn: int32(size)})
		out.data = append(out.data, buf[:n]...)
		last = i + size
		i = next(v.data, last, d.trigger)
	}
	if len(out.escapes) == 0 {
		return nil, false
	}
	out.data = append(out.data, v.data[last:]...)
	return out, true
}

// next is the index of the next c in b from i, or -1.
func next(b []byte, i int, c byte) int {
	if i >= len(b) {
		return -1
	}
	k := bytes.IndexByte(b[i:], c)
	if k < 0 {
		return -1
	}
	return i + k
}

// backslashEscape reads the escapes of JSON (\" \\ \/ \b \f \n \r \t
// \uXXXX with surrogate pairs), Go's quoted strings (\a \v \xHH \UXXXXXXXX
// \NNN) and JavaScript (\'), hex digits in either case.
func backslashEscape(b []byte, i int, out *[utf8.UTFMax]byte) (int, int, bool) {
	if i+1 >= len(b) {
		return 0, 0, false
	}
	if c, ok := simpleEscapes[b[i+1]]; ok {
		out[0] = c
		return 1, 2, true
	}
	switch b[i+1] {
	case 'u':
		return utf16Escape(b, i, out)
	case 'U':
		r, ok := hexValue(b, i+2, 8)
		if !ok || !utf8.ValidRune(rune(r)) {
			return 0, 0, false
		}
		return utf8.EncodeRune(out[:], rune(r)), 10, true
	case 'x':
		v, ok := hexValue(b, i+2, 2)
		out[0] = byte(v)
		return 1, 4, ok
	case '0', '1', '2', '3':
		v, ok := octalValue(b, i+1)
		out[0] = byte(v)
		return 1, 4, ok
	}
	return 0, 0, false
}

// simpleEscapes are the one-letter backslash escapes and what they stand
// for.
var simpleEscapes = map[byte]byte{
	'"': '"', '\\': '\\', '/': '/', '\'': '\'',
	'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t', 'a': '\a', 'v': '\v',
}

// utf16Escape reads \uXXXX, or a surrogate pair \uD83D\uDE00 as one
// character. A lone surrogate is not read (it stands for no character).
func utf16Escape(b []byte, i int, out *[utf8.UTFMax]byte) (int, int, bool) {
	r1, ok := hexValue(b, i+2, 4)
	if !ok {
		return 0, 0, false
	}
	r := rune(r1)
	if !utf16.IsSurrogate(r) {
		return utf8.EncodeRune(out[:], r), 6, true
	}
	if i+7 < len(b) && b[i+6] == '\\' && b[i+7] == 'u' {
		if r2, ok := hexValue(b, i+8, 4); ok {
			if pair := utf16.DecodeRune(r, rune(r2)); pair != utf8.RuneError {
				return utf8.EncodeRune(out[:], pair), 12, true
			}
		}
	}
	return 0, 0, false
}

// characterReference reads an HTML character reference: &#NN;, &#xHH; or
// a named one (&amp;, &lt;, &quot;, &apos;, &nbsp;, ...). The semicolon is
// required: html/template and PHP's htmlspecialchars always write it.
func characterReference(b []byte, i int, out *[utf8.UTFMax]byte) (int, int, bool) {
	j := i + 1
	if j < len(b) && b[j] == '#' {
		return numericReference(b, i, out)
	}
	for j < len(b) && j-i <= 32 && isAlnum(b[j]) {
		j++
	}
	if j == i+1 || j >= len(b) || b[j] != ';' {
		return 0, 0, false
	}
	name := b[i+1 : j]
	if c, ok := commonEntities[string(name)]; ok {
		out[0] = c
		return 1, j + 1 - i, true
	}
	ref := string(b[i : j+1])
	dec := html.UnescapeString(ref)
	if dec == ref || len(dec) > len(out) {
		return 0, 0, false
	}
	return copy(out[:], dec), j + 1 - i, true
}

// commonEntities are the named references escapers write.
var commonEntities = map[string]byte{"amp": '&', "lt": '<', "gt": '>', "quot": '"', "apos": '\''}

func numericReference(b []byte, i int, out *[utf8.UTFMax]byte) (int, int, bool) {
	j := i + 2
	base := 10
	if j < len(b) && (b[j] == 'x' || b[j] == 'X') {
		base = 16
		j++
	}
	start := j
	r := 0
	for j < len(b) && j-start < 8 {
		d, ok := digit(b[j], base)
		if !ok {
			break
		}
		r = r*base + d
		j++
	}
	if j == start || j >= len(b) || b[j] != ';' {
		return 0, 0, false
	}
	// A browser shows U+FFFD for a reference to no character.
	ch := rune(r)
	if r == 0 || !utf8.ValidRune(ch) {
		ch = utf8.RuneError
	}
	return utf8.EncodeRune(out[:], ch), j + 1 - i, true
}

// percentEscape reads %HH, as URLs write a byte.
func percentEscape(b []byte, i int, out *[utf8.UTFMax]byte) (int, int, bool) {
	v, ok := hexValue(b, i+1, 2)
	out[0] = byte(v)
	return 1, 3, ok
}

func hexValue(b []byte, at, n int) (uint32, bool) {
	if at+n > len(b) {
		return 0, false
	}
	var v uint32
	for _, c := range b[at : at+n] {
		d, ok := digit(c, 16)
		if !ok {
			return 0, false
		}
		v = v<<4 | uint32(d)
	}
	return v, true
}

// octalValue reads Go's \NNN (three octal digits, at most \377).
func octalValue(b []byte, at int) (int, bool) {
	if at+3 > len(b) {
		return 0, false
	}
	v := 0
	for _, c := range b[at : at+3] {
		if c < '0' || c > '7' {
			return 0, false
		}
		v = v*8 + int(c-'0')
	}
	return v, v <= 0xff
}

func digit(c byte, base int) (int, bool) {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0'), true
	case base == 16 && c >= 'a' && c <= 'f':
		return int(c-'a') + 10, true
	case base == 16 && c >= 'A' && c <= 'F':
		return int(c-'A') + 10, true
	}
	return 0, false
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// tokens are the source's own escapes, [start, end) pairs in order: a
// replacement that begins or ends inside one is widened to all of it, so
// no escape is left cut in half.
func tokens(src []byte) [][2]int {
	var out [][2]int
	for i := 0; i < len(src); {
		n := 0
		var buf [utf8.UTFMax]byte
		for _, d := range decoders {
			if src[i] == d.trigger {
				if _, k, ok := d.read(src, i, &buf); ok {
					n = k
				}
				break
			}
		}
		if n > 0 {
			out = append(out, [2]int{i, i + n})
			i += n
			continue
		}
		i++
	}
	return out
}
