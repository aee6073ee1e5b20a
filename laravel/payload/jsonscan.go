package payload

import (
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// The worker parses every payload it claims, and encoding/json's map
// decoding was the largest CPU and allocation cost of a drain. This file
// splits a payload object into its members in one pass over the bytes,
// without copying them. It only takes documents it is sure of: anything
// unusual (a syntax error, an escaped or non-ASCII key, a repeated key,
// trailing bytes, deep nesting) makes it decline, and the caller falls back
// to encoding/json, so results and error messages stay exactly those of
// encoding/json.

// jsonField is one member of an object: its key and its value's bytes,
// and, when the scanner decoded strings (scanPayload with texts), a string
// value's text.
type jsonField struct {
	key     string
	raw     json.RawMessage
	text    string
	decoded bool
}

// jsonObject is an object's members in document order, keys unique.
type jsonObject []jsonField

// member returns the member named key; its raw is nil when there is
// none (a member's value is never empty).
func (o jsonObject) member(key string) jsonField {
	for _, f := range o {
		if f.key == key {
			return f
		}
	}
	return jsonField{}
}

func (o jsonObject) has(key string) bool { return o.member(key).raw != nil }

// objectFromMap adapts encoding/json's result.
func objectFromMap(m map[string]json.RawMessage) jsonObject {
	out := make(jsonObject, 0, len(m))
	for k, v := range m {
		out = append(out, jsonField{key: k, raw: v})
	}
	return out
}

// maxScanDepth is far below encoding/json's limit, so a deeper document is
// simply left to encoding/json.
const maxScanDepth = 512

// scanObject splits a JSON object document. ok is false when it declines.
func scanObject(data []byte) (obj jsonObject, ok bool) {
	obj, _, ok = scanPayload(data, "", nil)
	return obj, ok
}

// scanPayload is scanObject that also splits the object under the
// top-level key nested, in the same pass (the payload's data, whose
// command is the longest string of the document, is then read once, not
// twice). nestedObj is nil when that member is absent, is no object, or
// is one scanObject would decline. With t, the string values of both
// objects' members are decoded into t as they are scanned (a payload's
// strings were otherwise read twice: scanned here, decoded after).
func scanPayload(data []byte, nested string, t *texts) (obj, nestedObj jsonObject, ok bool) {
	s := jsonScanner{b: data, nested: nested, t: t}
	s.space()
	obj, ok = s.object(true)
	if !ok {
		return nil, nil, false
	}
	s.space()
	return obj, s.nestedObj, s.i == len(s.b)
}

type jsonScanner struct {
	b     []byte
	i     int
	depth int
	// nested names a top-level member whose object is split too, into
	// nestedObj.
	nested    string
	nestedObj jsonObject
	// room backs the members of the top-level and nested objects.
	room jsonObject
	// t, when set, receives the collected members' string values.
	t *texts
}

func (s *jsonScanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *jsonScanner) peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// object reads an object at s.i; with collect it returns the members.
func (s *jsonScanner) object(collect bool) (jsonObject, bool) {
	if s.peek() != '{' || s.depth >= maxScanDepth {
		return nil, false
	}
	s.depth++
	defer func() { s.depth-- }()
	s.i++
	var out jsonObject
	if collect {
		out = s.members()
	}
	s.space()
	if s.peek() == '}' {
		s.i++
		return out, true
	}
	for {
		s.space()
		start := s.i
		if !s.str() {
			return nil, false
		}
		key := s.b[start+1 : s.i-1]
		s.space()
		if s.peek() != ':' {
			return nil, false
		}
		s.i++
		s.space()
		vstart := s.i
		var f jsonField
		if collect && s.t != nil && s.peek() == '"' {
			if f.text, f.decoded = s.decodeStr(); !f.decoded {
				return nil, false
			}
		} else if !s.memberValue(key) {
			return nil, false
		}
		if collect {
			if !plainKey(key) || out.member(string(key)).raw != nil {
				return nil, false
			}
			f.key, f.raw = internKey(key), s.b[vstart:s.i:s.i]
			out = append(out, f)
		}
		s.space()
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return out, true
		default:
			return nil, false
		}
	}
}

// Room for members: a payload has about a dozen, its data a few (a longer
// object just grows its slice).
const topMembers, nestedMembers = 16, 4

// members returns an empty slice for an object's members. The top-level
// object and the nested one share one allocation; each slice's capacity
// ends where the other's room begins, so growing one never writes into the
// other.
func (s *jsonScanner) members() jsonObject {
	if s.depth == 1 {
		s.room = make(jsonObject, topMembers+nestedMembers)
		return s.room[:0:topMembers]
	}
	return s.room[topMembers : topMembers : topMembers+nestedMembers]
}

// internKey returns the payload keys Laravel writes without allocating.
func internKey(k []byte) string {
	switch string(k) {
	case "uuid":
		return "uuid"
	case "displayName":
		return "displayName"
	case "job":
		return "job"
	case "maxTries":
		return "maxTries"
	case "maxExceptions":
		return "maxExceptions"
	case "failOnTimeout":
		return "failOnTimeout"
	case "backoff":
		return "backoff"
	case "timeout":
		return "timeout"
	case "retryUntil":
		return "retryUntil"
	case "data":
		return "data"
	case "commandName":
		return "commandName"
	case "command":
		return "command"
	case "createdAt":
		return "createdAt"
	case "delay":
		return "delay"
	case "batchId":
		return "batchId"
	}
	return string(k)
}

// plainKey: printable ASCII without escapes decodes to itself.
func plainKey(k []byte) bool {
	for _, c := range k {
		if c == '\\' || c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// memberValue scans the value of the member key: the nested object is
// split when key is the one asked for at the top level, and scanned like
// any value when it cannot be (so that what is declined stays the same).
func (s *jsonScanner) memberValue(key []byte) bool {
	if s.nested == "" || s.depth != 1 || s.peek() != '{' || string(key) != s.nested {
		return s.value()
	}
	start := s.i
	if obj, ok := s.object(true); ok {
		s.nestedObj = obj
		return true
	}
	s.i, s.nestedObj = start, nil
	return s.value()
}

func (s *jsonScanner) value() bool {
	switch c := s.peek(); {
	case c == '{':
		_, ok := s.object(false)
		return ok
	case c == '[':
		return s.array()
	case c == '"':
		return s.str()
	case c == '-' || (c >= '0' && c <= '9'):
		return s.number()
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	}
	return false
}

func (s *jsonScanner) array() bool {
	if s.depth >= maxScanDepth {
		return false
	}
	s.depth++
	defer func() { s.depth-- }()
	s.i++
	s.space()
	if s.peek() == ']' {
		s.i++
		return true
	}
	for {
		s.space()
		if !s.value() {
			return false
		}
		s.space()
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			return true
		default:
			return false
		}
	}
}

// str skips a string, checking what encoding/json's scanner checks: no
// control characters, only its escapes. Other bytes (even invalid UTF-8)
// are allowed, as there.
func (s *jsonScanner) str() bool {
	if s.peek() != '"' {
		return false
	}
	s.i++
	for s.i < len(s.b) {
		s.i += plainRun(s.b[s.i:], false)
		if s.i >= len(s.b) {
			return false
		}
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return true
		case c < 0x20:
			return false
		case c == '\\':
			if s.i+1 >= len(s.b) {
				return false
			}
			switch s.b[s.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i += 2
			case 'u':
				if hex4(s.b[s.i+2:]) < 0 {
					return false
				}
				s.i += 6
			default:
				return false
			}
		default:
			s.i++
		}
	}
	return false
}

// decodeStr is str that also decodes the string into s.t.
func (s *jsonScanner) decodeStr() (string, bool) {
	start := len(s.t.buf)
	out, n, ok := decodeString(s.t.buf, s.b[s.i+1:])
	if !ok {
		return "", false
	}
	s.i += 1 + n
	return s.t.took(out, start), true
}

func (s *jsonScanner) digits() int {
	n := 0
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
		n++
	}
	return n
}

// number follows JSON's grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *jsonScanner) number() bool {
	if s.peek() == '-' {
		s.i++
	}
	switch c := s.peek(); {
	case c == '0':
		s.i++
	case c >= '1' && c <= '9':
		s.digits()
	default:
		return false
	}
	if s.peek() == '.' {
		s.i++
		if s.digits() == 0 {
			return false
		}
	}
	if c := s.peek(); c == 'e' || c == 'E' {
		s.i++
		if c := s.peek(); c == '+' || c == '-' {
			s.i++
		}
		if s.digits() == 0 {
			return false
		}
	}
	return true
}

func (s *jsonScanner) literal(word string) bool {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		return false
	}
	s.i += len(word)
	return true
}

// hex4 reads four hex digits, -1 if they are not.
func hex4(b []byte) rune {
	if len(b) < 4 {
		return -1
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// UnquoteJSON decodes a JSON string literal (quotes included) as
// encoding/json does, without its reflection: invalid UTF-8 and lone
// surrogates become U+FFFD. ok is false for anything that is not exactly
// one valid JSON string.
func UnquoteJSON(raw []byte) (string, bool) {
	var t texts
	return t.unquote(raw)
}

// texts holds the decoded strings of one document in one buffer: a
// payload's uuid, names and command were a dozen allocations per job.
// Decoded bytes are only ever appended, so the bytes under a string made
// from the buffer are never written again (when append moves the buffer,
// earlier strings keep the old array, which nothing writes either).
type texts struct{ buf []byte }

// newTexts sizes the buffer for a document of n bytes: its strings decode
// to at most its length unless it holds invalid UTF-8.
func newTexts(n int) texts { return texts{buf: make([]byte, 0, n)} }

// unquote is UnquoteJSON decoding into t's buffer.
func (t *texts) unquote(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	start := len(t.buf)
	out, n, ok := decodeString(t.buf, raw[1:])
	if !ok || 1+n != len(raw) {
		return "", false
	}
	return t.took(out, start), true
}

// took keeps out, t's buffer after a string was appended at start, and
// returns that string.
func (t *texts) took(out []byte, start int) string {
	t.buf = out
	if len(out) == start {
		return ""
	}
	return unsafe.String(&out[start], len(out)-start)
}

// decodeString decodes the JSON string whose body starts b (the opening
// quote is before b) and appends it to out; n counts the bytes of b read,
// the closing quote included. It takes what encoding/json's scanner takes
// (no control characters, only JSON's escapes, any other byte) and decodes
// as encoding/json does: invalid UTF-8 and lone surrogates become U+FFFD.
func decodeString(out, b []byte) (_ []byte, n int, ok bool) {
	for i := 0; i < len(b); {
		if n := plainRun(b[i:], true); n > 0 {
			out = append(out, b[i:i+n]...)
			i += n
			continue
		}
		switch c := b[i]; {
		case c == '"':
			return out, i + 1, true
		case c < 0x20:
			return out, 0, false
		case c == '\\':
			n, r, ok := unescape(b[i:])
			if !ok {
				return out, 0, false
			}
			out = utf8.AppendRune(out, r)
			i += n
		default: // a byte of a multi-byte sequence, or invalid UTF-8
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				out = utf8.AppendRune(out, unicode.ReplacementChar)
			} else {
				out = append(out, b[i:i+size]...)
			}
			i += size
		}
	}
	return out, 0, false
}

// plainRun returns how many bytes at the start of b a JSON string holds
// as they are: none is '"', '\\' or a control character, nor (ascii) a
// byte of a multi-byte UTF-8 sequence. It reads eight bytes at a time:
// the payload's command, a long string full of escapes, was the largest
// cost of reading a payload byte by byte.
func plainRun(b []byte, ascii bool) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	n := 0
	for ; n+8 <= len(b); n += 8 {
		x := binary.LittleEndian.Uint64(b[n:])
		// The lowest byte flagged by each test is exact (a borrow only
		// flags bytes above a true one), so the lowest of all is.
		special := (x - ones*0x20) &^ x // below 0x20
		q := x ^ (ones * '"')
		special |= (q - ones) &^ q
		bs := x ^ (ones * '\\')
		special |= (bs - ones) &^ bs
		if ascii {
			special |= x
		}
		if special &= highs; special != 0 {
			return n + bits.TrailingZeros64(special)/8
		}
	}
	for ; n < len(b); n++ {
		c := b[n]
		if c == '"' || c == '\\' || c < 0x20 || (ascii && c >= utf8.RuneSelf) {
			break
		}
	}
	return n
}

// unescape decodes the escape at the start of b: its length and rune.
func unescape(b []byte) (int, rune, bool) {
	if len(b) < 2 {
		return 0, 0, false
	}
	switch b[1] {
	case '"', '\\', '/':
		return 2, rune(b[1]), true
	case 'b':
		return 2, '\b', true
	case 'f':
		return 2, '\f', true
	case 'n':
		return 2, '\n', true
	case 'r':
		return 2, '\r', true
	case 't':
		return 2, '\t', true
	case 'u':
		r := hex4(b[2:])
		if r < 0 {
			return 0, 0, false
		}
		if !utf16.IsSurrogate(r) {
			return 6, r, true
		}
		// A surrogate pair is two escapes; anything else is U+FFFD and the
		// next escape is read on its own.
		if len(b) >= 12 && b[6] == '\\' && b[7] == 'u' {
			if r2 := hex4(b[8:]); r2 >= 0 {
				if d := utf16.DecodeRune(r, r2); d != unicode.ReplacementChar {
					return 12, d, true
				}
			}
		}
		return 6, unicode.ReplacementChar, true
	}
	return 0, 0, false
}
