// Package phpserialize reads and writes PHP's serialize() format, as
// encoding/json does JSON: it knows PHP, not any framework.
//
// Unserialize parses bytes into a tree of *Value (null, bool, int, float,
// string, array, object, C: custom object, enum, r: and R: references)
// that keeps everything PHP wrote: key order, property visibility (names
// mangled as PHP mangles them), references, even number text PHP accepts
// but never writes. Serialize writes a tree back; for anything PHP's
// serialize() produced, Serialize(Unserialize(b)) is b byte for byte, and
// an edited tree gets its reference numbers renumbered as PHP would.
//
// Trees are built in Go with the constructors (Object, Public, Protected,
// Private, Array, List, String, Int, ...), read with Prop, Get and Index
// (short property names, references followed), and decoded into Go values
// with Decode (struct fields by `php:"name"` tag) or Natural. Types that
// read themselves implement Decoder; EnumCase does for enums, and Time
// reads a DateTime.
//
// Input is untrusted: lengths and counts are checked against the input
// before anything is allocated, nesting is bounded by MaxDepth, and
// Decode bounds the work references can cause.
package phpserialize
