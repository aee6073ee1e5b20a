package phpserialize

import (
	"errors"
	"strconv"
	"strings"
)

// Visibility is the declared visibility of an object property, encoded by
// PHP in the property name.
type Visibility uint8

const (
	VisPublic    Visibility = iota // "name"
	VisProtected                   // "\x00*\x00name"
	VisPrivate                     // "\x00Class\x00name"
)

func (v Visibility) String() string {
	switch v {
	case VisPublic:
		return "public"
	case VisProtected:
		return "protected"
	case VisPrivate:
		return "private"
	}
	return "unknown"
}

// ErrNoProperty is returned (wrapped) by Prop, Index and Get when the
// property or key does not exist.
var ErrNoProperty = errors.New("no such property")

// AmbiguousPropertyError is returned by Prop when more than one property has
// the requested short name, e.g. a private property declared with the same
// name in a parent and a child class. Keys lists the mangled names.
type AmbiguousPropertyError struct {
	Name string
	Keys []string
}

func (e *AmbiguousPropertyError) Error() string {
	quoted := make([]string, len(e.Keys))
	for i, k := range e.Keys {
		quoted[i] = strconv.Quote(k)
	}
	return "phpserialize: property " + strconv.Quote(e.Name) + " is ambiguous: " + strings.Join(quoted, ", ")
}

// MangleProp returns the property key PHP uses for name declared with
// visibility vis in class (class matters only for private properties).
func MangleProp(vis Visibility, class, name string) string {
	switch vis {
	case VisProtected:
		return "\x00*\x00" + name
	case VisPrivate:
		return "\x00" + class + "\x00" + name
	}
	return name
}

// Public builds a public object property; Protected and Private build the
// others with PHP's name mangling.
func Public(name string, v *Value) Entry { return Entry{Key: StrKey(name), Value: v} }
func Protected(name string, v *Value) Entry {
	return Entry{Key: StrKey(MangleProp(VisProtected, "", name)), Value: v}
}
func Private(class, name string, v *Value) Entry {
	return Entry{Key: StrKey(MangleProp(VisPrivate, class, name)), Value: v}
}

// SplitPropertyName splits a mangled property key into its visibility, declaring
// class (private only) and short name. Keys that do not follow the mangling
// pattern are treated as public names.
func SplitPropertyName(key string) (vis Visibility, class, name string) {
	if len(key) < 3 || key[0] != 0 {
		return VisPublic, "", key
	}
	end := strings.IndexByte(key[1:], 0)
	if end < 1 {
		return VisPublic, "", key
	}
	class, name = key[1:1+end], key[2+end:]
	if class == "*" {
		return VisProtected, "", name
	}
	return VisPrivate, class, name
}

// Prop returns the property with the given short name, whatever its
// visibility. It follows references on v and on the result. The error wraps
// ErrNoProperty when there is none and is an *AmbiguousPropertyError when
// several properties share the name.
func (v *Value) Prop(name string) (*Value, error) {
	obj := v.Deref()
	if obj == nil || obj.Kind != KindObject {
		return nil, errors.New("phpserialize: property " + strconv.Quote(name) + ": not an object (" + kindOf(obj) + ")")
	}
	i, err := obj.propIndex(name)
	if err != nil {
		return nil, err
	}
	return obj.Entries[i].Value.Deref(), nil
}

// PropKey returns the property stored under the exact (mangled) key.
func (v *Value) PropKey(key string) (*Value, error) {
	obj := v.Deref()
	if obj == nil || obj.Kind != KindObject {
		return nil, errors.New("phpserialize: property " + strconv.Quote(key) + ": not an object (" + kindOf(obj) + ")")
	}
	for _, en := range obj.Entries {
		if !en.Key.IsInt && en.Key.Str == key {
			return en.Value.Deref(), nil
		}
	}
	return nil, propMissing(key)
}

func propMissing(name string) error {
	return &propError{name: name}
}

type propError struct{ name string }

func (e *propError) Error() string {
	return "phpserialize: property " + strconv.Quote(e.name) + ": " + ErrNoProperty.Error()
}
func (e *propError) Unwrap() error { return ErrNoProperty }

// propIndex finds the entry whose short name is name.
func (v *Value) propIndex(name string) (int, error) {
	found := -1
	var keys []string
	for i, en := range v.Entries {
		// A string key's short name is a suffix of it: most keys are
		// told apart without splitting them.
		if !en.Key.IsInt && !strings.HasSuffix(en.Key.Str, name) || shortName(en.Key) != name {
			continue
		}
		if found >= 0 {
			if keys == nil {
				keys = []string{v.Entries[found].Key.String()}
			}
			keys = append(keys, en.Key.String())
			continue
		}
		found = i
	}
	if keys != nil {
		return -1, &AmbiguousPropertyError{Name: name, Keys: keys}
	}
	if found < 0 {
		return -1, propMissing(name)
	}
	return found, nil
}

// shortName is the property name without visibility mangling; int keys
// (possible in PHP objects) are their decimal text.
func shortName(k Key) string {
	if k.IsInt {
		return k.String()
	}
	_, _, name := SplitPropertyName(k.Str)
	return name
}

// SetProp replaces the value of the property with the given short name, or
// appends a public property when none exists. It fails when the name is
// ambiguous.
func (v *Value) SetProp(name string, val *Value) error {
	obj := v.Deref()
	if obj == nil || obj.Kind != KindObject {
		return errors.New("phpserialize: property " + strconv.Quote(name) + ": not an object (" + kindOf(obj) + ")")
	}
	i, err := obj.propIndex(name)
	switch {
	case err == nil:
		obj.Entries[i].Value = val
		return nil
	case errors.Is(err, ErrNoProperty):
		obj.Entries = append(obj.Entries, Public(name, val))
		return nil
	}
	return err
}

// SetEntry replaces the value stored under key in an array or object (exact
// key, no unmangling), or appends it when absent.
func (v *Value) SetEntry(key Key, val *Value) error {
	c := v.Deref()
	if c == nil || (c.Kind != KindArray && c.Kind != KindObject) {
		return errors.New("phpserialize: key " + strconv.Quote(key.String()) + ": not an array or object (" + kindOf(c) + ")")
	}
	for i := range c.Entries {
		if c.Entries[i].Key == key {
			c.Entries[i].Value = val
			return nil
		}
	}
	c.Entries = append(c.Entries, Entry{Key: key, Value: val})
	return nil
}

// Index returns the array element stored under key, following references.
// Like PHP, the string key "5" and the int key 5 are the same element.
func (v *Value) Index(key Key) (*Value, error) {
	arr := v.Deref()
	if arr == nil || arr.Kind != KindArray {
		return nil, errors.New("phpserialize: key " + strconv.Quote(key.String()) + ": not an array (" + kindOf(arr) + ")")
	}
	key = normalizeKey(key)
	for _, en := range arr.Entries {
		if normalizeKey(en.Key) == key {
			return en.Value.Deref(), nil
		}
	}
	return nil, &keyError{key: key}
}

// Get returns the array element stored under the string key (or the int key
// it spells, as PHP does).
func (v *Value) Get(key string) (*Value, error) { return v.Index(StrKey(key)) }

type keyError struct{ key Key }

func (e *keyError) Error() string {
	return "phpserialize: key " + strconv.Quote(e.key.String()) + ": " + ErrNoProperty.Error()
}
func (e *keyError) Unwrap() error { return ErrNoProperty }

// ArrayKey is the key PHP stores for $array[s]: an int key when s is a
// canonical decimal integer ("7", "-5", not "07" or "+5"), else s.
func ArrayKey(s string) Key { return normalizeKey(StrKey(s)) }

// normalizeKey applies PHP's rule that decimal integer strings are int keys.
func normalizeKey(k Key) Key {
	if k.IsInt {
		return k
	}
	if n, ok := phpIntString(k.Str); ok {
		return IntKey(n)
	}
	return k
}

// phpIntString reports whether s is a canonical decimal int ("0", "-5",
// no '+', no leading zeros) that PHP would use as an int array key.
func phpIntString(s string) (int64, bool) {
	if s == "" || s == "-0" || len(s) > 20 {
		return 0, false
	}
	digits := s
	if s[0] == '-' {
		digits = s[1:]
	}
	if digits == "" || countDigits([]byte(digits)) != len(digits) || (digits[0] == '0' && len(digits) > 1) {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

func kindOf(v *Value) string {
	if v == nil {
		return "nil"
	}
	return v.Kind.String()
}
