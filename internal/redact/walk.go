package redact

import "reflect"

// maxWalkDepth bounds Map's descent (a cycle is copied no deeper).
const maxWalkDepth = 64

// Value is a deep copy of v with every string in it (struct fields,
// slices, arrays, map keys and values, pointers' targets, byte slices)
// redacted: what a template is given instead of v, so every value it
// renders was redacted before it was escaped, truncated or split. v itself
// is not changed. Unexported fields are copied as they are (a template
// cannot read them).
func (r *Redactor) Value(v any) any {
	if !r.Active() || v == nil {
		return v
	}
	return Map(v, r.String)
}

// Map is a deep copy of v with fn applied to every string in it (see
// Value).
func Map(v any, fn func(string) string) any {
	if v == nil {
		return nil
	}
	return mapValue(reflect.ValueOf(v), fn, 0).Interface()
}

func mapValue(v reflect.Value, fn func(string) string, depth int) reflect.Value {
	if depth > maxWalkDepth {
		return v
	}
	depth++
	switch v.Kind() {
	case reflect.String:
		n := reflect.New(v.Type()).Elem()
		n.SetString(fn(v.String()))
		return n
	case reflect.Slice:
		return mapSlice(v, fn, depth)
	case reflect.Array:
		n := reflect.New(v.Type()).Elem()
		for i := range v.Len() {
			n.Index(i).Set(mapValue(v.Index(i), fn, depth))
		}
		return n
	case reflect.Map:
		if v.IsNil() {
			return v
		}
		n := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			n.SetMapIndex(mapValue(it.Key(), fn, depth), mapValue(it.Value(), fn, depth))
		}
		return n
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		n := reflect.New(v.Type().Elem())
		n.Elem().Set(mapValue(v.Elem(), fn, depth))
		return n
	case reflect.Interface:
		if v.IsNil() {
			return v
		}
		n := reflect.New(v.Type()).Elem()
		n.Set(mapValue(v.Elem(), fn, depth))
		return n
	case reflect.Struct:
		return mapStruct(v, fn, depth)
	}
	return v
}

func mapSlice(v reflect.Value, fn func(string) string, depth int) reflect.Value {
	if v.IsNil() {
		return v
	}
	if v.Type().Elem().Kind() == reflect.Uint8 {
		b := []byte(fn(string(v.Bytes())))
		n := reflect.MakeSlice(v.Type(), len(b), len(b))
		reflect.Copy(n, reflect.ValueOf(b))
		return n
	}
	n := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
	for i := range v.Len() {
		n.Index(i).Set(mapValue(v.Index(i), fn, depth))
	}
	return n
}

func mapStruct(v reflect.Value, fn func(string) string, depth int) reflect.Value {
	n := reflect.New(v.Type()).Elem()
	n.Set(v)
	t := v.Type()
	for i := range v.NumField() {
		if t.Field(i).IsExported() {
			n.Field(i).Set(mapValue(v.Field(i), fn, depth))
		}
	}
	return n
}
