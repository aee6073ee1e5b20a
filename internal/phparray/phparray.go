// Package phparray reads JSON that PHP wrote, or rewrote, as PHP reads it
// back: into the Go type the reader wants, whichever of PHP's two shapes
// of an array the document holds.
//
// PHP has one array type for lists and maps, and json_encode picks the
// shape from the keys: an array keyed 0..n-1 (the empty one included) is
// written as a list, any other as an object. So a map that happens to be
// empty is "[]", and a list with a hole (after unset() or array_filter())
// is {"0":..,"2":..}. Documents change shape on the way, too:
// `php artisan queue:retry` (json_decode to arrays, then json_encode)
// turns {} into [], and Redis's cjson, which Laravel's Redis pop and
// release scripts re-encode the payload with, turns [] into {}.
//
// Unmarshal is encoding/json's Unmarshal with PHP's reading: where v has
// a map, a JSON list is read as the map keyed "0".."n-1" ([] is the empty
// map); where v has a slice or an array, a JSON object is read as its
// values in document order ({} is the empty list); where v has a struct,
// [] is the empty object. Values of other types, and of types that decode
// themselves (json.Unmarshaler: json.RawMessage, json.Number...), and
// interface values, are left as they are. Every Go reader of a document
// PHP wrote uses it: the payload's keys, the bridge's record, the app's
// configuration read through its PHP, the batch's failed job ids, Horizon's
// tags, laraworker's tables the bridge writes.
//
// String and Truthy are PHP's (string) and (bool) casts of a value such a
// document decoded into any holds (the stores' connection settings,
// Horizon's records): the empty array, [] or {}, is false.
package phparray

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"sync"
)

// Unmarshal decodes data into v (a non-nil pointer) as json.Unmarshal
// does, reading PHP's array shapes as the type of v needs them (see the
// package doc). A document that fits v as it is costs one json.Unmarshal.
//
// When the document needs reshaping, v is set back to what it held before
// the first attempt (a shallow copy: maps it held may keep keys that
// attempt added) and decoded again from the reshaped document.
func Unmarshal(data []byte, v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return json.Unmarshal(data, v) // json's InvalidUnmarshalError
	}
	saved := reflect.New(rv.Elem().Type()).Elem()
	saved.Set(rv.Elem())
	err := json.Unmarshal(data, v)
	var typeErr *json.UnmarshalTypeError
	if !errors.As(err, &typeErr) {
		return err
	}
	reshaped, changed, rerr := reshape(data, rv.Elem().Type(), 0)
	if rerr != nil || !changed {
		return err
	}
	rv.Elem().Set(saved)
	return json.Unmarshal(reshaped, v)
}

// Reshape returns data with PHP's array shapes rewritten to the ones v's
// type needs (see the package doc), for a reader that decodes with
// options of its own (json.Decoder's DisallowUnknownFields, UseNumber).
// data comes back as it is when nothing needs rewriting, and when it is
// not valid JSON (the reader's decoder then says why).
func Reshape(data []byte, v any) []byte {
	t := reflect.TypeOf(v)
	if t == nil {
		return data
	}
	out, changed, err := reshape(data, t, 0)
	if err != nil || !changed {
		return data
	}
	return out
}

// maxDepth bounds the recursion on hostile documents; encoding/json
// refuses deeper ones anyway (10000).
const maxDepth = 10000

var (
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	errTooDeep      = errors.New("phparray: document nested too deeply")
)

// reshape rewrites raw (one JSON value) for type t; changed reports
// whether anything was rewritten (out is raw otherwise).
func reshape(raw []byte, t reflect.Type, depth int) (out []byte, changed bool, err error) {
	if depth > maxDepth {
		return nil, false, errTooDeep
	}
	for t.Kind() == reflect.Pointer {
		if t.Implements(unmarshalerType) {
			return raw, false, nil
		}
		t = t.Elem()
	}
	if t.Kind() == reflect.Interface || reflect.PointerTo(t).Implements(unmarshalerType) {
		return raw, false, nil
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || (raw[0] != '[' && raw[0] != '{') {
		return raw, false, nil
	}
	switch t.Kind() {
	case reflect.Map:
		return reshapeMap(raw, t, depth)
	case reflect.Slice, reflect.Array:
		return reshapeList(raw, t, depth)
	case reflect.Struct:
		return reshapeStruct(raw, t, depth)
	}
	return raw, false, nil
}

// reshapeMap reads a list as the map keyed by its indexes, and reshapes
// an object's values.
func reshapeMap(raw []byte, t reflect.Type, depth int) ([]byte, bool, error) {
	if raw[0] == '{' {
		return reshapeMembers(raw, depth, func(string) reflect.Type { return t.Elem() })
	}
	elems, err := splitList(raw)
	if err != nil {
		return nil, false, err
	}
	b := append(make([]byte, 0, len(raw)+8*len(elems)), '{')
	for i, e := range elems {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(strconv.AppendQuote(b, strconv.Itoa(i)), ':')
		v, _, err := reshape(e, t.Elem(), depth+1)
		if err != nil {
			return nil, false, err
		}
		b = append(b, v...)
	}
	return append(b, '}'), true, nil
}

// reshapeList reads an object as the list of its values in document
// order, and reshapes a list's elements.
func reshapeList(raw []byte, t reflect.Type, depth int) ([]byte, bool, error) {
	var elems [][]byte
	var err error
	fromObject := raw[0] == '{'
	if fromObject {
		var members []member
		if members, err = splitObject(raw); err != nil {
			return nil, false, err
		}
		for _, m := range members {
			elems = append(elems, m.value)
		}
	} else if elems, err = splitList(raw); err != nil {
		return nil, false, err
	}
	changed := fromObject
	for i, e := range elems {
		v, c, err := reshape(e, t.Elem(), depth+1)
		if err != nil {
			return nil, false, err
		}
		elems[i], changed = v, changed || c
	}
	if !changed {
		return raw, false, nil
	}
	return append(append([]byte{'['}, bytes.Join(elems, []byte{','})...), ']'), true, nil
}

// reshapeStruct reads [] as {} and reshapes each member for its field's
// type.
func reshapeStruct(raw []byte, t reflect.Type, depth int) ([]byte, bool, error) {
	if raw[0] == '[' {
		elems, err := splitList(raw)
		if err != nil || len(elems) > 0 {
			return raw, false, err // a list is no struct; json says so
		}
		return []byte("{}"), true, nil
	}
	fields := fieldsOf(t)
	return reshapeMembers(raw, depth, fields.typeOf)
}

// reshapeMembers reshapes an object's values, each for the type typeOf
// gives its key (nil: left as it is).
func reshapeMembers(raw []byte, depth int, typeOf func(key string) reflect.Type) ([]byte, bool, error) {
	members, err := splitObject(raw)
	if err != nil {
		return nil, false, err
	}
	changed := false
	for i, m := range members {
		ft := typeOf(m.key)
		if ft == nil {
			continue
		}
		v, c, err := reshape(m.value, ft, depth+1)
		if err != nil {
			return nil, false, err
		}
		members[i].value, changed = v, changed || c
	}
	if !changed {
		return raw, false, nil
	}
	b := append(make([]byte, 0, len(raw)+16), '{')
	for i, m := range members {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(append(append(b, m.rawKey...), ':'), m.value...)
	}
	return append(b, '}'), true, nil
}

// member is one member of an object: its key, decoded and encoded again.
type member struct {
	key    string
	rawKey []byte
	value  []byte
}

// splitObject splits an object into its members, in document order.
func splitObject(raw []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil { // {
		return nil, err
	}
	var out []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		rawKey, err := json.Marshal(key)
		if err != nil {
			return nil, err
		}
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, err
		}
		out = append(out, member{key: key, rawKey: rawKey, value: value})
	}
	_, err := dec.Token() // }
	return out, err
}

// splitList splits a list into its elements.
func splitList(raw []byte) ([][]byte, error) {
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, err
	}
	out := make([][]byte, len(elems))
	for i, e := range elems {
		out[i] = e
	}
	return out, nil
}

// structFields are the JSON names of a struct's fields, as encoding/json
// matches them: exactly, else case-insensitively.
type structFields struct {
	byName map[string]reflect.Type
	names  []string
}

func (f *structFields) typeOf(key string) reflect.Type {
	if t, ok := f.byName[key]; ok {
		return t
	}
	for _, n := range f.names {
		if strings.EqualFold(n, key) {
			return f.byName[n]
		}
	}
	return nil
}

var fieldCache sync.Map // reflect.Type -> *structFields

// fieldsOf lists the fields encoding/json decodes into: exported ones by
// their tag's name (else the field's), "-" left out, the fields of
// untagged embedded structs promoted (a shallower name wins).
func fieldsOf(t reflect.Type) *structFields {
	if f, ok := fieldCache.Load(t); ok {
		return f.(*structFields)
	}
	f := &structFields{byName: map[string]reflect.Type{}}
	level, seen := []reflect.Type{t}, map[reflect.Type]bool{t: true}
	for len(level) > 0 {
		var next []reflect.Type
		for _, st := range level {
			next = append(next, f.addFields(st, seen)...)
		}
		level = next
	}
	fieldCache.Store(t, f)
	return f
}

// addFields adds the fields of struct t and returns its untagged embedded
// structs, whose fields come one level deeper.
func (f *structFields) addFields(t reflect.Type, seen map[reflect.Type]bool) []reflect.Type {
	var embedded []reflect.Type
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if et := sf.Type; sf.Anonymous && name == "" {
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				if !seen[et] {
					seen[et] = true
					embedded = append(embedded, et)
				}
				continue
			}
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		if _, taken := f.byName[name]; !taken {
			f.byName[name] = sf.Type
			f.names = append(f.names, name)
		}
	}
	return embedded
}
