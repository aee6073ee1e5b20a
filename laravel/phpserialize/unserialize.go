package phpserialize

import (
	"bytes"
	"strconv"
)

// MaxDepth bounds the nesting of arrays and objects that Unserialize accepts
// and Serialize writes, so hostile input cannot exhaust the stack.
const MaxDepth = 512

// SyntaxError reports input that PHP's unserialize() would reject (or that
// exceeds this package's limits), with the byte offset of the problem.
type SyntaxError struct {
	Offset int
	Msg    string
}

func (e *SyntaxError) Error() string {
	return "php unserialize: at byte " + strconv.Itoa(e.Offset) + ": " + e.Msg
}

// Minimum encoded sizes, used to reject declared lengths and counts that the
// remaining input cannot possibly hold before anything is allocated.
const (
	minValueLen = 2                       // N;
	minKeyLen   = 4                       // i:0;
	minEntryLen = minKeyLen + minValueLen // one array element or property
	slabLimit   = 1024                    // largest Value/Entry chunk allocated at once
)

// Unserialize parses one PHP-serialized value. The whole input must be one
// value; trailing bytes are an error.
//
// The input is copied once, so the caller may reuse b. String values
// sub-slice that private copy; keys and class names are substrings of a
// second (string) copy, so any retained key keeps the input's bytes alive.
//
// Round trip: Serialize(Unserialize(x)) == x for everything PHP's serialize()
// writes. Integer and float text that PHP accepts but never writes (i:+5;,
// d:0.10;, d:1e3;) is kept in Value.Str and written back while the number is
// unchanged. Lengths and counts with leading zeros (s:03:"abc";) and integer
// array keys written non-canonically are normalised.
func Unserialize(b []byte) (*Value, error) {
	v, _, err := unserialize(b)
	return v, err
}

// UnserializeString is Unserialize for text held in a string. Keys and
// class names are substrings of s itself, so only the copy that string
// values sub-slice is made (a job's command was copied three times).
func UnserializeString(s string) (*Value, error) {
	var d decoder
	d.reset([]byte(s), s)
	return d.parse()
}

// unserialize also reports whether Serialize will reproduce b exactly.
func unserialize(b []byte) (*Value, bool, error) {
	var d decoder
	d.reset(bytes.Clone(b), string(b))
	v, err := d.parse()
	if err != nil {
		return nil, false, err
	}
	return v, d.canonical, nil
}

// parse reads the one value the input must be.
func (d *decoder) parse() (*Value, error) {
	v, err := d.value()
	if err != nil {
		return nil, err
	}
	if d.pos != len(d.in) {
		return nil, d.fail("unexpected trailing data after the value")
	}
	return v, nil
}

type decoder struct {
	in    []byte // private copy of the input; Str values sub-slice it
	src   string // the same bytes as a string, for keys and class names
	pos   int
	depth int
	// slots holds every value that takes a PHP reference slot, in PHP's
	// order (slot N is slots[N-1]).
	slots     []*Value
	vals      []Value // unused part of the current Value chunk
	ents      []Entry // unused part of the current Entry chunk
	valChunk  int
	entChunk  int
	canonical bool
	// counting is set for the throwaway parse of a C: body, whose references
	// may point at any earlier slot, including the base slots taken before
	// the body.
	counting bool
	base     int
	counted  int    // slots taken while counting (slots stays empty)
	scratch  *Value // the only node a counting parse writes to
}

// reset prepares d to parse in, a private copy of the input, and src, the
// same bytes as a string.
func (d *decoder) reset(in []byte, src string) {
	values, entries := countNodes(in)
	values, entries = max(1, min(values, slabLimit)), max(1, min(entries, slabLimit))
	*d = decoder{
		in:        in,
		src:       src,
		valChunk:  values,
		entChunk:  entries,
		slots:     make([]*Value, 0, values),
		canonical: true,
	}
}

// countNodes returns how many values and entries b holds, by skipping from
// token to token without checking much, so the decoder can allocate its
// chunks once and at the right size. On malformed input the counts are only
// an estimate, which merely costs an extra chunk.
func countNodes(b []byte) (values, entries int) {
	tokens := 0
	for i := 0; i < len(b); {
		c := b[i]
		if c == '}' {
			i++
			continue
		}
		tokens++
		switch c {
		case 's', 'E':
			i = skipQuoted(b, i+2) + 1 // past the ';'
		case 'a':
			n, j := scanUint(b, i+2)
			entries += n
			i = j + 2 // past ":{"
		case 'O', 'C':
			n, j := scanUint(b, skipQuoted(b, i+2)+1)
			if c == 'O' {
				entries += n
				i = j + 2
			} else {
				i = j + 2 + n // past ":{" and the raw body
			}
		default:
			for i < len(b) && b[i] != ';' {
				i++
			}
			i++
		}
	}
	if entries > tokens/2 { // hostile counts; the real number is smaller
		entries = tokens / 2
	}
	return tokens - entries, entries
}

// skipQuoted skips `len:"...` at i and returns the index just past the
// closing quote (or len(b)).
func skipQuoted(b []byte, i int) int {
	n, j := scanUint(b, i)
	if n > len(b)-j {
		return len(b)
	}
	return j + 2 + n + 1
}

// scanUint reads digits at i and returns their value (capped at len(b)) and
// the index after them.
func scanUint(b []byte, i int) (int, int) {
	n := 0
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		n = min(n*10+int(b[i]-'0'), len(b))
		i++
	}
	return n, i
}

func (d *decoder) fail(msg string) error {
	return &SyntaxError{Offset: d.pos, Msg: msg}
}

func (d *decoder) failAt(off int, msg string) error {
	return &SyntaxError{Offset: off, Msg: msg}
}

// taken is the number of reference slots used so far.
func (d *decoder) taken() int { return d.base + len(d.slots) + d.counted }

// push gives v the next reference slot.
func (d *decoder) push(v *Value) {
	if d.counting {
		d.counted++
		return
	}
	d.slots = append(d.slots, v)
}

func (d *decoder) newValue(k Kind) *Value {
	if d.counting {
		return d.scratch
	}
	if len(d.vals) == 0 {
		d.vals = make([]Value, d.valChunk)
		// Only malformed input outgrows the count; grow so it costs few allocations.
		d.valChunk = min(2*d.valChunk, slabLimit)
	}
	v := &d.vals[0]
	d.vals = d.vals[1:]
	v.Kind = k
	return v
}

// newEntries returns n zeroed entries whose capacity is exactly n, so a
// caller appending to them cannot overwrite a neighbour's entries.
func (d *decoder) newEntries(n int) []Entry {
	if n == 0 {
		return nil
	}
	if d.counting { // contents are never read: reuse one buffer
		if n > cap(d.ents) {
			d.ents = make([]Entry, n)
		}
		return d.ents[:n]
	}
	if n > len(d.ents) {
		d.ents = make([]Entry, max(n, d.entChunk))
		d.entChunk = min(2*d.entChunk, slabLimit)
	}
	e := d.ents[:n:n]
	d.ents = d.ents[n:]
	return e
}

// expect consumes the literal s or fails with "expected s after what".
func (d *decoder) expect(s string, what string) error {
	if len(d.in)-d.pos < len(s) || string(d.in[d.pos:d.pos+len(s)]) != s {
		return d.fail("expected '" + s + "' " + what)
	}
	d.pos += len(s)
	return nil
}

// value parses one value. Every value but R: takes the next reference slot
// before its children do, as in PHP's var_push.
func (d *decoder) value() (*Value, error) {
	if d.pos >= len(d.in) {
		return nil, d.fail("unexpected end of input, expected a value")
	}
	c := d.in[d.pos]
	if c == 'R' {
		return d.reference(KindRefAlias)
	}
	if c == 'N' {
		v := d.newValue(KindNull)
		d.push(v)
		return v, d.expect("N;", "for null")
	}
	if len(d.in)-d.pos < 2 || d.in[d.pos+1] != ':' {
		return nil, d.failAt(d.pos, "unknown value type "+strconv.QuoteRune(rune(c)))
	}
	switch c {
	case 'b':
		return d.boolean()
	case 'i':
		return d.integer()
	case 'd':
		return d.float()
	case 's':
		return d.str()
	case 'a':
		return d.array()
	case 'O':
		return d.object()
	case 'C':
		return d.custom()
	case 'E':
		return d.enum()
	case 'r':
		return d.reference(KindRef)
	}
	return nil, d.fail("unknown value type " + strconv.QuoteRune(rune(c)))
}

func (d *decoder) boolean() (*Value, error) {
	v := d.newValue(KindBool)
	d.push(v)
	d.pos += 2
	if len(d.in)-d.pos < 2 || (d.in[d.pos] != '0' && d.in[d.pos] != '1') || d.in[d.pos+1] != ';' {
		return nil, d.fail("expected 0; or 1; for boolean")
	}
	v.Bool = d.in[d.pos] == '1'
	d.pos += 2
	return v, nil
}

func (d *decoder) integer() (*Value, error) {
	v := d.newValue(KindInt)
	d.push(v)
	d.pos += 2
	n, text, err := d.intText()
	if err != nil {
		return nil, err
	}
	v.Int = n
	if !canonicalInt(text, n) {
		v.Str = text
	}
	return v, nil
}

// intText parses [+-]?[0-9]+; and returns the value and its text.
func (d *decoder) intText() (int64, []byte, error) {
	start := d.pos
	t := d.in[d.pos:]
	i := 0
	neg := false
	if i < len(t) && (t[i] == '+' || t[i] == '-') {
		neg = t[i] == '-'
		i++
	}
	digits := countDigits(t[i:])
	if digits == 0 {
		return 0, nil, d.failAt(start+i, "expected digits in integer")
	}
	var u uint64
	for _, c := range t[i : i+digits] {
		if u > (1<<63)/10 {
			return 0, nil, d.failAt(start, "integer out of range")
		}
		u = u*10 + uint64(c-'0')
	}
	if u > 1<<63 || (!neg && u == 1<<63) {
		return 0, nil, d.failAt(start, "integer out of range")
	}
	i += digits
	if i >= len(t) || t[i] != ';' {
		return 0, nil, d.failAt(start+i, "expected ';' after integer")
	}
	d.pos = start + i + 1
	n := int64(u)
	if neg {
		n = -n
	}
	return n, t[:i:i], nil
}

// canonicalInt reports whether text is exactly how PHP writes n.
func canonicalInt(text []byte, n int64) bool {
	var buf [24]byte
	return string(strconv.AppendInt(buf[:0], n, 10)) == string(text)
}

func (d *decoder) float() (*Value, error) {
	v := d.newValue(KindFloat)
	d.push(v)
	d.pos += 2
	start := d.pos
	end := bytes.IndexByte(d.in[start:], ';')
	if end < 0 {
		return nil, d.fail("expected ';' after float")
	}
	text := d.in[start : start+end : start+end]
	if !validFloatText(text) {
		return nil, d.fail("invalid float " + strconv.Quote(string(text)))
	}
	v.Float = parseFloatText(text)
	var buf [32]byte
	if string(AppendPHPFloat(buf[:0], v.Float)) != string(text) {
		v.Str = text
	}
	d.pos = start + end + 1
	return v, nil
}

// length parses an unsigned decimal length or count followed by ':' and
// rejects values larger than the remaining input.
func (d *decoder) length(what string) (int, error) {
	start := d.pos
	digits := countDigits(d.in[d.pos:])
	if digits == 0 {
		return 0, d.fail("expected " + what)
	}
	if digits > 1 && d.in[start] == '0' {
		d.canonical = false
	}
	n := 0
	for _, c := range d.in[start : start+digits] {
		n = n*10 + int(c-'0')
		if n > len(d.in) {
			return 0, d.failAt(start, what+" exceeds the input size")
		}
	}
	d.pos += digits
	if d.pos >= len(d.in) || d.in[d.pos] != ':' {
		return 0, d.fail("expected ':' after " + what)
	}
	d.pos++
	return n, nil
}

// quoted reads n bytes between double quotes and returns their offsets.
func (d *decoder) quoted(n int, what string) (int, int, error) {
	if d.pos >= len(d.in) || d.in[d.pos] != '"' {
		return 0, 0, d.fail("expected '\"' before " + what)
	}
	d.pos++
	if n+1 > len(d.in)-d.pos {
		return 0, 0, d.fail(what + " length " + strconv.Itoa(n) + " exceeds the remaining input")
	}
	start := d.pos
	d.pos += n
	if d.in[d.pos] != '"' {
		return 0, 0, d.fail("expected '\"' after " + what + " of declared length")
	}
	d.pos++
	return start, start + n, nil
}

func (d *decoder) str() (*Value, error) {
	v := d.newValue(KindString)
	d.push(v)
	d.pos += 2
	n, err := d.length("string length")
	if err != nil {
		return nil, err
	}
	a, b, err := d.quoted(n, "string")
	if err != nil {
		return nil, err
	}
	if err := d.expect(";", "after string"); err != nil {
		return nil, err
	}
	v.Str = d.in[a:b:b]
	return v, nil
}

// count parses an element count and checks that the remaining input can
// hold that many entries plus the closing brace.
func (d *decoder) count(what string) (int, error) {
	n, err := d.length(what)
	if err != nil {
		return 0, err
	}
	if n > (len(d.in)-d.pos-2)/minEntryLen {
		return 0, d.failAt(d.pos, what+" "+strconv.Itoa(n)+" is more than the remaining input can hold")
	}
	return n, d.expect("{", "after "+what)
}

func (d *decoder) array() (*Value, error) {
	v := d.newValue(KindArray)
	d.push(v)
	d.pos += 2
	n, err := d.count("element count")
	if err != nil {
		return nil, err
	}
	if err := d.entries(v, n, "array"); err != nil {
		return nil, err
	}
	return v, nil
}

// entries parses n key/value pairs and the closing '}' into v.Entries.
func (d *decoder) entries(v *Value, n int, what string) error {
	if d.depth++; d.depth > MaxDepth {
		return d.fail("nesting deeper than " + strconv.Itoa(MaxDepth) + " levels")
	}
	// Index the local slice: while counting, v is shared scratch whose
	// Entries the children overwrite.
	ents := d.newEntries(n)
	v.Entries = ents
	for i := range ents {
		key, err := d.key(what)
		if err != nil {
			return err
		}
		val, err := d.value()
		if err != nil {
			return err
		}
		ents[i] = Entry{Key: key, Value: val}
	}
	d.depth--
	if d.pos >= len(d.in) || d.in[d.pos] != '}' {
		return d.fail("expected '}' after " + strconv.Itoa(n) + " " + what + " entries")
	}
	d.pos++
	return nil
}

// key parses an array key or property name: an i: or s: value that takes no
// reference slot.
func (d *decoder) key(what string) (Key, error) {
	if len(d.in)-d.pos < 2 || d.in[d.pos+1] != ':' || (d.in[d.pos] != 'i' && d.in[d.pos] != 's') {
		return Key{}, d.fail(what + " key must be an integer or a string")
	}
	if d.in[d.pos] == 'i' {
		d.pos += 2
		n, text, err := d.intText()
		if err != nil {
			return Key{}, err
		}
		if !canonicalInt(text, n) {
			d.canonical = false
		}
		return IntKey(n), nil
	}
	d.pos += 2
	n, err := d.length("key length")
	if err != nil {
		return Key{}, err
	}
	a, b, err := d.quoted(n, "key")
	if err != nil {
		return Key{}, err
	}
	if err := d.expect(";", "after key"); err != nil {
		return Key{}, err
	}
	return Key{Str: d.src[a:b]}, nil
}

// className parses `len:"Name":` and checks the characters PHP allows.
func (d *decoder) className() (string, error) {
	n, err := d.length("class name length")
	if err != nil {
		return "", err
	}
	a, b, err := d.quoted(n, "class name")
	if err != nil {
		return "", err
	}
	name := d.src[a:b]
	if !validClassName(name) {
		return "", d.failAt(a, "invalid class name "+strconv.Quote(name))
	}
	return name, d.expect(":", "after class name")
}

// validClassName mirrors the character check of PHP's unserialize: ASCII
// letters, digits, '_', '\' and bytes 0x7f-0xff.
func validClassName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '\\' || c >= 0x7f
		if !ok {
			return false
		}
	}
	return true
}

func (d *decoder) object() (*Value, error) {
	v := d.newValue(KindObject)
	d.push(v)
	d.pos += 2
	class, err := d.className()
	if err != nil {
		return nil, err
	}
	v.Class = class
	n, err := d.count("property count")
	if err != nil {
		return nil, err
	}
	if err := d.entries(v, n, "object"); err != nil {
		return nil, err
	}
	return v, nil
}

// custom parses a C: object (a class implementing Serializable). Its body is
// kept raw. PHP shares reference slots between the outer stream and any
// serialize() call inside the body, so when the body is itself one
// serialized value its values take slots too; those slots cannot be the
// target of a reference from outside the body.
func (d *decoder) custom() (*Value, error) {
	v := d.newValue(KindCustom)
	d.push(v)
	d.pos += 2
	class, err := d.className()
	if err != nil {
		return nil, err
	}
	v.Class = class
	n, err := d.length("body length")
	if err != nil {
		return nil, err
	}
	if err := d.expect("{", "before body"); err != nil {
		return nil, err
	}
	if n+1 > len(d.in)-d.pos {
		return nil, d.fail("body length " + strconv.Itoa(n) + " exceeds the remaining input")
	}
	v.Str = d.in[d.pos : d.pos+n : d.pos+n]
	d.pos += n
	if err := d.expect("}", "after body"); err != nil {
		return nil, err
	}
	for range bodySlots(v.Str, d.src[d.pos-n-1:d.pos-1], d.taken(), d.depth) {
		d.push(bodySlot)
	}
	return v, nil
}

// bodySlot fills the slots of values inside a C: body.
var bodySlot = &Value{Kind: KindNull}

// bodySlots returns how many reference slots the values inside a C: body
// take: zero unless the body is exactly one serialized value. base is the
// number of slots taken before the body; references inside it may point at
// any of them.
func bodySlots(in []byte, src string, base, depth int) int {
	if len(in) == 0 || depth >= MaxDepth {
		return 0
	}
	d := &decoder{in: in, src: src, base: base, depth: depth + 1, valChunk: 1, entChunk: 1, counting: true, scratch: new(Value)}
	if _, err := d.value(); err != nil || d.pos != len(d.in) {
		return 0
	}
	return d.counted
}

func (d *decoder) enum() (*Value, error) {
	v := d.newValue(KindEnum)
	d.push(v)
	d.pos += 2
	n, err := d.length("enum name length")
	if err != nil {
		return nil, err
	}
	a, b, err := d.quoted(n, "enum name")
	if err != nil {
		return nil, err
	}
	name := d.src[a:b]
	colon := indexColon(name)
	if colon <= 0 || colon == len(name)-1 {
		return nil, d.failAt(a, "enum name "+strconv.Quote(name)+" is not Class:Case")
	}
	v.Class, v.Case = name[:colon], name[colon+1:]
	return v, d.expect(";", "after enum")
}

func indexColon(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] == ':' {
			return i
		}
	}
	return -1
}

// reference parses r:N; or R:N; and points the node at slot N.
func (d *decoder) reference(k Kind) (*Value, error) {
	v := d.newValue(k)
	if k == KindRef {
		d.push(v)
	}
	start := d.pos
	d.pos++
	if err := d.expect(":", "after reference type"); err != nil {
		return nil, err
	}
	digits := countDigits(d.in[d.pos:])
	if digits == 0 {
		return nil, d.fail("expected reference number")
	}
	total := d.taken()
	n := 0
	for _, c := range d.in[d.pos : d.pos+digits] {
		n = n*10 + int(c-'0')
		if n > total {
			return nil, d.failAt(start, "reference to slot "+string(d.in[d.pos:d.pos+digits])+" which does not exist yet")
		}
	}
	d.pos += digits
	if err := d.expect(";", "after reference number"); err != nil {
		return nil, err
	}
	if n == 0 || (k == KindRef && n == total) {
		return nil, d.failAt(start, "reference to invalid slot "+strconv.Itoa(n))
	}
	if d.counting {
		return v, nil // only the number of slots matters
	}
	target := d.slots[n-d.base-1]
	if target == bodySlot {
		return nil, d.failAt(start, "reference into the body of a C: object is not supported")
	}
	if k == KindRef && !isObjectLike(target) {
		return nil, d.failAt(start, "r: must refer to an object, slot "+strconv.Itoa(n)+" holds "+target.Deref().Kind.String())
	}
	v.Target = target
	return v, nil
}

// isObjectLike reports whether v (after r: hops) is something PHP lets r:
// point at: an object, a C: object or an enum case.
func isObjectLike(v *Value) bool {
	for i := 0; v != nil && v.Kind == KindRef && i < 64; i++ {
		v = v.Target
	}
	return v != nil && (v.Kind == KindObject || v.Kind == KindCustom || v.Kind == KindEnum)
}
