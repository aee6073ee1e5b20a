package phpserialize

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/laraworker/laraworker/internal/phparray"
)

// Decoder is implemented by Go types that read themselves from a PHP value
// (Carbon dates, model identifiers, ...). Decode calls DecodePHP instead of
// its own rules whenever the target (or a pointer to it) implements it. The
// value passed in has its references already followed.
type Decoder interface {
	DecodePHP(v *Value) error
}

// DecodeError reports a value that does not fit the Go type it is decoded
// into. Path names the property or key, e.g. `options.tags[2]`.
type DecodeError struct {
	Path   string
	PHP    string // PHP type, e.g. "string"
	GoType string // Go type, e.g. "int"
	Detail string // extra reason, e.g. "300 overflows"
	Err    error  // error from a DecodePHP hook, if any
}

func (e *DecodeError) Error() string {
	var b strings.Builder
	b.WriteString("phpserialize: ")
	if e.Path != "" {
		b.WriteString("property " + strconv.Quote(e.Path) + ": ")
	}
	switch {
	case e.Err != nil:
		// Hook errors from this package carry the same prefix already;
		// others (payload's ModelIdentifier) keep theirs.
		b.WriteString(strings.TrimPrefix(e.Err.Error(), "phpserialize: "))
	case e.Detail != "":
		b.WriteString("PHP " + e.PHP + " " + e.Detail + " Go " + e.GoType)
	default:
		b.WriteString("cannot decode PHP " + e.PHP + " into Go " + e.GoType)
	}
	return b.String()
}

func (e *DecodeError) Unwrap() error { return e.Err }

// Decode stores v into out, which must be a non-nil pointer. It never
// guesses: a value either becomes what PHP meant or Decode returns a
// *DecodeError naming the property, the PHP type and the Go type.
//
// Struct fields are matched against short property names of objects and
// string keys of arrays: by their `php:"name"` tag exactly (PHP property
// names are case-sensitive), or, without a tag, by their Go name ignoring
// case (PodcastID matches podcastId). `php:"-"` skips a field. Properties
// without a field are ignored. A field whose property is missing is an
// error, unless its tag says what PHP would have held:
//
//	php:"quality,default=\"hd\""  the class declares public $quality = 'hd'
//	php:"limit,default_php=d:INF;" the default as serialize() writes it, for
//	                              what JSON cannot say (INF, bytes, enums)
//	php:"tags,default=[]"         public array $tags = [] (a Go map or slice)
//	php:"note,optional"           missing means Go's zero value
//
// or the struct implements Defaulter (its PHPDefaults sets every declared
// default before decoding). Laravel 9.4+ leaves out of the serialized job
// every property that still holds its declared default, so a field that
// can hold its default needs one of these.
//
// Conversions: PHP string to string or []byte, bool to bool, int to any Go
// integer (range checked) or float, float to float, a DateTime (Carbon...)
// to time.Time with its zone and microseconds, an enum case to a string
// (the case name), a list (keys 0..n-1) or a collection object (one with
// an items array, as Laravel's Collection) to a slice, an array or object
// to map[string]T, map[int]T or a struct, null to a nil pointer, slice,
// map or interface, anything to *Value (raw), and anything to interface{}
// as natural Go values (see Natural). References are followed.
func Decode(v *Value, out any) error {
	rv := reflect.ValueOf(out)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return errors.New("phpserialize: Decode needs a non-nil pointer, got " + reflect.TypeOf(out).String())
	}
	return new(walker).decodeValue(v, rv.Elem(), "", 0)
}

// maxVisits bounds the values one Decode or Natural call visits: r: and R:
// let a small input name the same subtree again and again, and expanding it
// each time would take exponential time.
const maxVisits = 1 << 20

// walker carries the state of one Decode or Natural call.
type walker struct {
	visits int
	// seen maps arrays and objects already converted by Natural to their Go
	// value, so shared PHP values stay shared (and cycles terminate).
	seen map[*Value]any
}

func (w *walker) visit(path string) error {
	w.visits++
	if w.visits > maxVisits {
		return &DecodeError{Path: path, Err: errors.New("more than " + strconv.Itoa(maxVisits) + " values (references expand too far)")}
	}
	return nil
}

// Defaulter is implemented by structs that mirror a PHP class's declared
// property defaults: Decode calls PHPDefaults on the struct before filling
// it, and a property missing from the value then keeps its default.
type Defaulter interface {
	PHPDefaults()
}

var (
	decoderType   = reflect.TypeFor[Decoder]()
	defaulterType = reflect.TypeFor[Defaulter]()
	valuePtr      = reflect.TypeFor[*Value]()
	timeType      = reflect.TypeFor[time.Time]()
)

func (w *walker) decodeValue(v *Value, rv reflect.Value, path string, depth int) error {
	if depth > MaxDepth {
		return &DecodeError{Path: path, Err: errors.New("nesting deeper than " + strconv.Itoa(MaxDepth) + " levels (reference cycle?)")}
	}
	if err := w.visit(path); err != nil {
		return err
	}
	v = v.Deref()
	if v == nil {
		return &DecodeError{Path: path, Err: errors.New("missing value")}
	}
	t := rv.Type()
	if t == valuePtr {
		rv.Set(reflect.ValueOf(v))
		return nil
	}
	if t.Kind() != reflect.Pointer && t.Kind() != reflect.Interface && rv.CanAddr() && reflect.PointerTo(t).Implements(decoderType) {
		if err := rv.Addr().Interface().(Decoder).DecodePHP(v); err != nil {
			return &DecodeError{Path: path, Err: err}
		}
		return nil
	}
	if v.Kind == KindNull && nullable(t.Kind()) {
		rv.SetZero()
		return nil
	}
	if t == timeType {
		return decodeTime(v, rv, path)
	}
	switch t.Kind() {
	case reflect.Pointer:
		elem := reflect.New(t.Elem())
		if err := w.decodeValue(v, elem.Elem(), path, depth+1); err != nil {
			return err
		}
		rv.Set(elem)
		return nil
	case reflect.Interface:
		return w.decodeInterface(v, rv, path, depth)
	case reflect.Struct:
		return w.decodeStruct(v, rv, path, depth)
	case reflect.Map:
		return w.decodeMap(v, rv, path, depth)
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 && v.Kind == KindString {
			rv.SetBytes(append([]byte(nil), v.Str...))
			return nil
		}
		return w.decodeSlice(v, rv, path, depth)
	}
	return decodeScalar(v, rv, path)
}

func nullable(k reflect.Kind) bool {
	switch k {
	case reflect.Pointer, reflect.Interface, reflect.Map, reflect.Slice:
		return true
	}
	return false
}

func mismatch(v *Value, rv reflect.Value, path string) error {
	return &DecodeError{Path: path, PHP: v.TypeName(), GoType: rv.Type().String()}
}

// decodeTime reads a serialized DateTime (or Carbon, or any subclass).
func decodeTime(v *Value, rv reflect.Value, path string) error {
	if v.Kind != KindObject {
		return mismatch(v, rv, path)
	}
	t, err := Time(v)
	if err != nil {
		return &DecodeError{Path: path, Err: err}
	}
	rv.Set(reflect.ValueOf(t))
	return nil
}

func decodeScalar(v *Value, rv reflect.Value, path string) error {
	switch rv.Kind() {
	case reflect.String:
		switch v.Kind {
		case KindString:
			rv.SetString(string(v.Str))
		case KindEnum:
			rv.SetString(v.Case)
		default:
			return mismatch(v, rv, path)
		}
	case reflect.Bool:
		if v.Kind != KindBool {
			return mismatch(v, rv, path)
		}
		rv.SetBool(v.Bool)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if v.Kind != KindInt {
			return mismatch(v, rv, path)
		}
		if rv.OverflowInt(v.Int) {
			return overflow(v, rv, path)
		}
		rv.SetInt(v.Int)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if v.Kind != KindInt {
			return mismatch(v, rv, path)
		}
		if v.Int < 0 || rv.OverflowUint(uint64(v.Int)) {
			return overflow(v, rv, path)
		}
		rv.SetUint(uint64(v.Int))
	case reflect.Float32, reflect.Float64:
		return decodeFloat(v, rv, path)
	default:
		return mismatch(v, rv, path)
	}
	return nil
}

func overflow(v *Value, rv reflect.Value, path string) error {
	return &DecodeError{Path: path, PHP: "int", GoType: rv.Type().String(), Detail: strconv.FormatInt(v.Int, 10) + " overflows"}
}

// decodeFloat accepts PHP ints too: PHP code often stores 2 where 2.0 is
// meant, and the conversion is exact up to 2^53.
func decodeFloat(v *Value, rv reflect.Value, path string) error {
	var f float64
	switch v.Kind {
	case KindFloat:
		f = v.Float
	case KindInt:
		f = float64(v.Int)
	default:
		return mismatch(v, rv, path)
	}
	if rv.Kind() == reflect.Float32 && !math.IsInf(f, 0) && !math.IsNaN(f) && rv.OverflowFloat(f) {
		return &DecodeError{Path: path, PHP: "float", GoType: "float32", Detail: strconv.FormatFloat(f, 'g', -1, 64) + " overflows"}
	}
	rv.SetFloat(f)
	return nil
}

func (w *walker) decodeInterface(v *Value, rv reflect.Value, path string, depth int) error {
	if rv.NumMethod() != 0 {
		return mismatch(v, rv, path)
	}
	n, err := w.natural(v, depth)
	if err != nil {
		return &DecodeError{Path: path, Err: err}
	}
	if n == nil {
		rv.SetZero()
		return nil
	}
	rv.Set(reflect.ValueOf(n))
	return nil
}

// Natural converts v to plain Go values: nil, bool, int64, float64, string,
// []any for lists (keys 0..n-1 in order), map[string]any for other arrays
// (int keys as decimal strings) and for objects (short property names;
// clashing private names keep their mangled keys). Enums and C: objects,
// which have no Go counterpart, stay *Value.
func Natural(v *Value) (any, error) { return new(walker).natural(v, 0) }

func (w *walker) natural(v *Value, depth int) (any, error) {
	if depth > MaxDepth {
		return nil, errors.New("nesting deeper than " + strconv.Itoa(MaxDepth) + " levels (reference cycle?)")
	}
	if err := w.visit(""); err != nil {
		return nil, err
	}
	v = v.Deref()
	if v == nil {
		return nil, errors.New("missing value")
	}
	if done, ok := w.seen[v]; ok {
		return done, nil
	}
	switch v.Kind {
	case KindNull:
		return nil, nil
	case KindBool:
		return v.Bool, nil
	case KindInt:
		return v.Int, nil
	case KindFloat:
		return v.Float, nil
	case KindString:
		return string(v.Str), nil
	case KindArray, KindObject:
		return w.naturalContainer(v, depth)
	}
	return v, nil
}

// naturalContainer converts an array or object once per call: values that
// references share are converted once and shared. Only finished values are
// remembered, so a cycle still ends at MaxDepth instead of building a
// self-containing Go value.
func (w *walker) naturalContainer(v *Value, depth int) (any, error) {
	var out any
	var err error
	switch {
	case v.Kind == KindObject:
		out, err = w.naturalMap(v, depth, true)
	case v.IsList():
		out, err = w.naturalList(v, depth)
	default:
		out, err = w.naturalMap(v, depth, false)
	}
	if err != nil {
		return nil, err
	}
	if w.seen == nil {
		w.seen = make(map[*Value]any)
	}
	w.seen[v] = out
	return out, nil
}

func (w *walker) naturalList(v *Value, depth int) (any, error) {
	out := make([]any, len(v.Entries))
	for i, en := range v.Entries {
		n, err := w.natural(en.Value, depth+1)
		if err != nil {
			return nil, err
		}
		out[i] = n
	}
	return out, nil
}

func (w *walker) naturalMap(v *Value, depth int, object bool) (any, error) {
	var clashes map[string]int
	if object {
		clashes = make(map[string]int, len(v.Entries))
		for _, en := range v.Entries {
			clashes[shortName(en.Key)]++
		}
	}
	out := make(map[string]any, len(v.Entries))
	for _, en := range v.Entries {
		name := en.Key.String()
		if object && clashes[shortName(en.Key)] == 1 {
			name = shortName(en.Key)
		}
		n, err := w.natural(en.Value, depth+1)
		if err != nil {
			return nil, err
		}
		out[name] = n
	}
	return out, nil
}

// collectionItems is the items array of a collection object (Laravel's
// Illuminate\Support\Collection and its subclasses keep their elements in
// a protected $items array), or v itself.
func collectionItems(v *Value) *Value {
	if v.Kind != KindObject {
		return v
	}
	items, err := v.Prop("items")
	if err != nil || items.Deref() == nil || items.Deref().Kind != KindArray {
		return v
	}
	return items.Deref()
}

func (w *walker) decodeSlice(v *Value, rv reflect.Value, path string, depth int) error {
	v = collectionItems(v)
	if v.Kind != KindArray {
		return mismatch(v, rv, path)
	}
	if !v.IsList() {
		return &DecodeError{Path: path, PHP: "array", GoType: rv.Type().String(), Detail: "with keys other than 0..n-1 cannot become"}
	}
	s := reflect.MakeSlice(rv.Type(), len(v.Entries), len(v.Entries))
	for i, en := range v.Entries {
		if err := w.decodeValue(en.Value, s.Index(i), path+"["+strconv.Itoa(i)+"]", depth+1); err != nil {
			return err
		}
	}
	rv.Set(s)
	return nil
}

func (w *walker) decodeMap(v *Value, rv reflect.Value, path string, depth int) error {
	v = collectionItems(v)
	if v.Kind != KindArray && v.Kind != KindObject {
		return mismatch(v, rv, path)
	}
	t := rv.Type()
	m := reflect.MakeMapWithSize(t, len(v.Entries))
	for _, en := range v.Entries {
		name := en.Key.String()
		if v.Kind == KindObject {
			name = shortName(en.Key)
		}
		key, err := mapKey(en.Key, name, t.Key())
		if err != nil {
			return &DecodeError{Path: joinField(path, name), Err: err}
		}
		elem := reflect.New(t.Elem()).Elem()
		if err := w.decodeValue(en.Value, elem, joinField(path, name), depth+1); err != nil {
			return err
		}
		m.SetMapIndex(key, elem)
	}
	rv.Set(m)
	return nil
}

// mapKey converts an array key to a Go map key of type kt (string or an
// integer kind).
func mapKey(k Key, name string, kt reflect.Type) (reflect.Value, error) {
	key := reflect.New(kt).Elem()
	switch {
	case kt.Kind() == reflect.String:
		key.SetString(name)
		return key, nil
	case key.CanInt():
		n, ok := k.Int, k.IsInt
		if !ok {
			n, ok = phpIntString(k.Str)
		}
		if !ok || key.OverflowInt(n) {
			return key, errors.New("key " + strconv.Quote(name) + " does not fit Go " + kt.String())
		}
		key.SetInt(n)
		return key, nil
	case key.CanUint():
		n, ok := k.Int, k.IsInt
		if !ok {
			n, ok = phpIntString(k.Str)
		}
		if !ok || n < 0 || key.OverflowUint(uint64(n)) {
			return key, errors.New("key " + strconv.Quote(name) + " does not fit Go " + kt.String())
		}
		key.SetUint(uint64(n))
		return key, nil
	}
	return key, errors.New("unsupported Go map key type " + kt.String())
}

func joinField(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func (w *walker) decodeStruct(v *Value, rv reflect.Value, path string, depth int) error {
	if v.Kind != KindObject && v.Kind != KindArray {
		return mismatch(v, rv, path)
	}
	fields, err := structFields(rv.Type())
	if err != nil {
		return &DecodeError{Path: path, GoType: rv.Type().String(), Err: err}
	}
	defaulted := false
	if rv.CanAddr() && reflect.PointerTo(rv.Type()).Implements(defaulterType) {
		rv.Addr().Interface().(Defaulter).PHPDefaults()
		defaulted = true
	}
	seen := make([]bool, len(fields.list))
	for _, en := range v.Entries {
		name := en.Key.String()
		if v.Kind == KindObject {
			name = shortName(en.Key)
		}
		i, ok := fields.lookup(name)
		if !ok {
			continue
		}
		if seen[i] {
			return &DecodeError{Path: joinField(path, name), Err: errors.New("ambiguous: several properties have this name")}
		}
		seen[i] = true
		if err := w.decodeValue(en.Value, rv.Field(fields.list[i].index), joinField(path, name), depth+1); err != nil {
			return err
		}
	}
	for i, f := range fields.list {
		if seen[i] || defaulted || f.optional {
			continue
		}
		if f.defPHP != "" {
			if err := w.decodeDefaultPHP(f, rv.Field(f.index), joinField(path, f.name), depth); err != nil {
				return err
			}
			continue
		}
		if f.def == "" {
			return &DecodeError{Path: joinField(path, f.name), GoType: rv.Type().Field(f.index).Type.String(), Err: missingProperty(f)}
		}
		// The default is a PHP value written as JSON: [] may be an empty map.
		if err := phparray.Unmarshal([]byte(f.def), rv.Field(f.index).Addr().Interface()); err != nil {
			return &DecodeError{Path: joinField(path, f.name), Err: fmt.Errorf("default=%s does not fit Go %s: %v", f.def, rv.Type().Field(f.index).Type, err)}
		}
	}
	return nil
}

// decodeDefaultPHP fills a missing property's field from its default_php=
// tag, by the rules a serialized value follows (parsed on every use: a
// *Value field must not share one tree between decoded structs).
func (w *walker) decodeDefaultPHP(f field, rv reflect.Value, path string, depth int) error {
	def, err := UnserializeString(f.defPHP)
	if err != nil {
		return &DecodeError{Path: path, Err: fmt.Errorf("default_php=%s: %v", f.defPHP, err)}
	}
	if err := w.decodeValue(def, rv, path, depth+1); err != nil {
		return &DecodeError{Path: path, Err: fmt.Errorf("default_php=%s does not fit Go %s: %v", f.defPHP, rv.Type(), err)}
	}
	return nil
}

// missingProperty explains a property that is not in the value.
func missingProperty(f field) error {
	return fmt.Errorf("not in the serialized value, and field %s declares no default (Laravel 9.4+ leaves out properties "+
		"that hold their declared default: tag it php:\"%s,default=<JSON>\" with the PHP default, or php:\"%s,optional\")",
		f.goName, f.name, f.name)
}

// field is one struct field Decode fills.
type field struct {
	index    int
	name     string // the PHP name: the tag, or the Go name
	goName   string
	tagged   bool
	optional bool
	def      string // default=..., a JSON literal
	defPHP   string // default_php=..., a serialize() literal
}

// fields are a struct's fields, by PHP name.
type fields struct {
	list    []field
	byName  map[string]int // exact names
	byLower map[string]int // lower-cased names of untagged fields
}

func (fs *fields) lookup(name string) (int, bool) {
	if i, ok := fs.byName[name]; ok {
		return i, true
	}
	i, ok := fs.byLower[strings.ToLower(name)]
	return i, ok
}

var fieldCache sync.Map // reflect.Type -> *fields

// structFields lists the exported fields of t Decode fills, with their
// tag options; a malformed tag is an error.
func structFields(t reflect.Type) (*fields, error) {
	if m, ok := fieldCache.Load(t); ok {
		return m.(*fields), nil
	}
	fs := &fields{byName: map[string]int{}, byLower: map[string]int{}}
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		f := field{index: i, name: sf.Name, goName: sf.Name}
		if tag, ok := sf.Tag.Lookup("php"); ok {
			name, opts, _ := strings.Cut(tag, ",")
			if name == "-" && opts == "" {
				continue
			}
			if name != "" {
				f.name, f.tagged = name, true
			}
			if err := f.options(opts); err != nil {
				return nil, fmt.Errorf("field %s: tag php:%q: %w", sf.Name, tag, err)
			}
		}
		fs.byName[f.name] = len(fs.list)
		if !f.tagged {
			fs.byLower[strings.ToLower(f.name)] = len(fs.list)
		}
		fs.list = append(fs.list, f)
	}
	fieldCache.Store(t, fs)
	return fs, nil
}

// options reads a tag's options: optional, or default=JSON or
// default_php=SERIALIZED (which run to the end of the tag, so the literal
// may hold commas).
func (f *field) options(opts string) error {
	for opts != "" {
		if def, ok := strings.CutPrefix(opts, "default_php="); ok {
			if _, err := UnserializeString(def); err != nil {
				return fmt.Errorf("default_php=%s is not what serialize() writes: %v", def, err)
			}
			f.defPHP = def
			return nil
		}
		if def, ok := strings.CutPrefix(opts, "default="); ok {
			if !json.Valid([]byte(def)) {
				return fmt.Errorf("default=%s is not a JSON literal", def)
			}
			f.def = def
			return nil
		}
		opt, rest, _ := strings.Cut(opts, ",")
		switch opt {
		case "optional":
			f.optional = true
		default:
			return fmt.Errorf("unknown option %q (want optional, default=JSON or default_php=SERIALIZED)", opt)
		}
		opts = rest
	}
	return nil
}
