package payload

import (
	"errors"
	"fmt"

	"github.com/laraworker/laraworker/internal/phparray"
)

// DecodeJSON decodes JSON that PHP wrote, or rewrote, into v as PHP reads
// it back: a payload key this package leaves undecoded (Payload.Extra),
// the payload an exec handler gets on stdin. PHP has one empty array for
// map and list, and the shapes change on the way (`queue:retry` turns {}
// into [], Laravel's Redis scripts turn [] into {}), so where v has a map,
// [] is the empty map and a list is the map keyed "0".."n-1"; where v has
// a slice, {} is the empty slice and an object is its values in document
// order; where v has a struct, [] is the empty object. Otherwise it is
// json.Unmarshal.
func DecodeJSON(raw []byte, v any) error { return phparray.Unmarshal(raw, v) }

// PHPArray is a JSON document as PHP's json_decode($raw, true) holds it
// (key order kept, objects and lists alike PHP arrays), for the few edits
// Laravel and its packages make before json_encode writes the document
// back: Horizon's retried_by lists, for one. Its zero value is null.
type PHPArray struct{ n *jsonNode }

// DecodePHPArray decodes raw keeping its key order.
func DecodePHPArray(raw []byte) (PHPArray, error) {
	n, err := decodeOrdered(raw)
	if err != nil {
		return PHPArray{}, fmt.Errorf("payload: invalid JSON: %w", err)
	}
	return PHPArray{n}, nil
}

// Len is the number of elements of a list or an object (0 otherwise).
func (a PHPArray) Len() int {
	if a.n == nil || (a.n.kind != 'a' && a.n.kind != 'o') {
		return 0
	}
	return len(a.n.vals)
}

// Index is the i-th element of a list or an object.
func (a PHPArray) Index(i int) PHPArray {
	if i < 0 || i >= a.Len() {
		return PHPArray{}
	}
	return PHPArray{a.n.vals[i]}
}

// Get is an object's value at key (null when absent or not an object).
func (a PHPArray) Get(key string) PHPArray {
	if a.n == nil || a.n.kind != 'o' {
		return PHPArray{}
	}
	return PHPArray{a.n.get(key)}
}

// Str is the value when it is a JSON string.
func (a PHPArray) Str() (string, bool) {
	if a.n == nil || a.n.kind != 's' {
		return "", false
	}
	return a.n.str, true
}

// SetString sets key to a string, in place when the key exists (PHP's
// Arr::set and $array[$key] = keep its position), else at the end.
func (a PHPArray) SetString(key, value string) error {
	if a.n == nil || a.n.kind != 'o' {
		return errors.New("payload: setting a key of a value that is not a JSON object")
	}
	a.n.set(key, &jsonNode{kind: 's', str: value})
	return nil
}

// SetBool sets key to true or false, as SetString does.
func (a PHPArray) SetBool(key string, value bool) error {
	if a.n == nil || a.n.kind != 'o' {
		return errors.New("payload: setting a key of a value that is not a JSON object")
	}
	a.n.set(key, &jsonNode{kind: 'b', truthy: value})
	return nil
}

// SetStrings sets key to a list of strings, as SetString does.
func (a PHPArray) SetStrings(key string, values []string) error {
	if a.n == nil || a.n.kind != 'o' {
		return errors.New("payload: setting a key of a value that is not a JSON object")
	}
	list := &jsonNode{kind: 'a'}
	for _, v := range values {
		list.vals = append(list.vals, &jsonNode{kind: 's', str: v})
	}
	a.n.set(key, list)
	return nil
}

// Strings is a list's (or an object's) string values, in order; ok is
// false when the value is not an array or holds anything but strings.
func (a PHPArray) Strings() (values []string, ok bool) {
	if a.n == nil || (a.n.kind != 'a' && a.n.kind != 'o') {
		return nil, false
	}
	for _, v := range a.n.vals {
		if v.kind != 's' {
			return nil, false
		}
		values = append(values, v.str)
	}
	return values, true
}

// EncodePHP writes the document as json_encode($array) does with no
// flags: "/" as "\/", non-ASCII as \uXXXX, {} as [].
func (a PHPArray) EncodePHP() ([]byte, error) {
	if a.n == nil {
		return []byte("null"), nil
	}
	return a.n.encodePHP(nil, 0)
}
