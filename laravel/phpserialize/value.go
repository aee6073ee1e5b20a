package phpserialize

import "strconv"

// Kind is the type of a PHP value in a serialized stream.
type Kind uint8

const (
	KindNull     Kind = iota // N;
	KindBool                 // b:0; b:1;
	KindInt                  // i:42;
	KindFloat                // d:0.1;
	KindString               // s:3:"abc";
	KindArray                // a:N:{...}
	KindObject               // O:len:"Class":N:{...}
	KindCustom               // C:len:"Class":len:{raw}
	KindEnum                 // E:len:"Class:Case";
	KindRef                  // r:N;  a second occurrence of an object (or enum)
	KindRefAlias             // R:N;  a PHP reference (&$x) to an earlier value
)

var kindNames = [...]string{"null", "bool", "int", "float", "string", "array", "object", "custom", "enum", "ref", "refalias"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// Value is one node of a serialized PHP value. The tree is ordered and
// lossless: Serialize(Unserialize(x)) reproduces x byte for byte.
//
// References (KindRef, KindRefAlias) point at their target node rather than
// holding PHP's slot number, so a tree can be edited and Serialize renumbers
// the references.
type Value struct {
	Kind  Kind
	Bool  bool
	Int   int64
	Float float64
	// Str holds a string's bytes (KindString) or the raw body of a C: object
	// (KindCustom). PHP strings are bytes, not runes.
	//
	// For KindInt and KindFloat, Unserialize stores the original text here
	// when it is not how PHP writes that number (i:+5;, d:0.10;). Serialize
	// writes it back only while it still denotes Int or Float, so editing the
	// number needs no care; leave it nil when building values.
	Str []byte
	// Class names the class of KindObject, KindCustom and KindEnum.
	Class string
	// Case is the enum case of KindEnum.
	Case string
	// Entries are an array's elements or an object's properties, in order.
	// Property names keep PHP's visibility mangling: "\x00*\x00name" for
	// protected, "\x00Class\x00name" for private.
	Entries []Entry
	// Target is the node a KindRef or KindRefAlias refers to.
	Target *Value
}

// Entry is one array element or object property.
type Entry struct {
	Key   Key
	Value *Value
}

// Key is an array key (int or string) or a property name (always a string).
type Key struct {
	IsInt bool
	Int   int64
	Str   string
}

// IntKey and StrKey build keys.
func IntKey(i int64) Key  { return Key{IsInt: true, Int: i} }
func StrKey(s string) Key { return Key{Str: s} }
func (k Key) String() string {
	if k.IsInt {
		return strconv.FormatInt(k.Int, 10)
	}
	return k.Str
}

// Null builds PHP's null; it and the constructors below build values in Go
// (pushing jobs, editing commands).
func Null() *Value                { return &Value{Kind: KindNull} }
func Bool(b bool) *Value          { return &Value{Kind: KindBool, Bool: b} }
func Int(i int64) *Value          { return &Value{Kind: KindInt, Int: i} }
func Float(f float64) *Value      { return &Value{Kind: KindFloat, Float: f} }
func String(s string) *Value      { return &Value{Kind: KindString, Str: []byte(s)} }
func Bytes(b []byte) *Value       { return &Value{Kind: KindString, Str: b} }
func Enum(class, c string) *Value { return &Value{Kind: KindEnum, Class: class, Case: c} }

// Array builds a PHP array from entries in order.
func Array(entries ...Entry) *Value { return &Value{Kind: KindArray, Entries: entries} }

// List builds a PHP list (keys 0..n-1).
func List(items ...*Value) *Value {
	v := &Value{Kind: KindArray, Entries: make([]Entry, len(items))}
	for i, it := range items {
		v.Entries[i] = Entry{Key: IntKey(int64(i)), Value: it}
	}
	return v
}

// Object builds an object of class with properties in order. Use Public,
// Protected and Private to build property keys.
func Object(class string, props ...Entry) *Value {
	return &Value{Kind: KindObject, Class: class, Entries: props}
}

// Ref builds an r: reference to target (an object or enum seen earlier).
func Ref(target *Value) *Value { return &Value{Kind: KindRef, Target: target} }

// RefAlias builds an R: PHP reference to target.
func RefAlias(target *Value) *Value { return &Value{Kind: KindRefAlias, Target: target} }

// IsList reports whether an array's keys are 0..n-1 in order: what PHP's
// array_is_list() and json_encode call a list.
func (v *Value) IsList() bool {
	for i, e := range v.Entries {
		if !e.Key.IsInt || e.Key.Int != int64(i) {
			return false
		}
	}
	return true
}

// TypeName names v's PHP type for error messages: "int", "array",
// "object App\Jobs\Foo", "enum App\Suit", or "nothing" for a nil value.
func (v *Value) TypeName() string {
	if v == nil {
		return "nothing"
	}
	switch v.Kind {
	case KindObject, KindCustom:
		return "object " + v.Class
	case KindEnum:
		return "enum " + v.Class
	}
	return v.Kind.String()
}

// Deref follows KindRef and KindRefAlias to the value they point at.
func (v *Value) Deref() *Value {
	for i := 0; v != nil && (v.Kind == KindRef || v.Kind == KindRefAlias) && i < 64; i++ {
		v = v.Target
	}
	return v
}
