package payloadcmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"

	"github.com/laraworker/laraworker/internal/phparray"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/laravel/phpserialize"
)

// A class file states, once per PHP job class, what `push` cannot learn
// from the command line: the queue options the class declares (the
// payload's maxTries, backoff... come from them, as dispatch() reads
// `$job->tries`), whether it is ShouldBeEncrypted, and the visibility and
// type of its properties. Format (JSON, keyed by class name):
//
//	{
//	  "App\\Jobs\\RetryJob": {
//	    "tries": 4, "backoff": [2, 5, 10], "timeout": 30, "maxExceptions": 3,
//	    "failOnTimeout": true, "retryUntil": null, "deleteWhenMissingModels": false,
//	    "encrypted": false,
//	    "properties": {
//	      "failUntil":    {"type": "int"},
//	      "secretNote":   {"visibility": "protected", "type": "?string"},
//	      "privateCount": {"visibility": "private", "type": "int"},
//	      "inherited":    {"visibility": "private", "declaredIn": "App\\Jobs\\BaseJob"},
//	      "quality":      {"type": "string", "default": "hd"}
//	    }
//	  }
//	}
//
// Every key is optional. With "properties", a property the class does not
// list is refused (PHP would make it a dynamic property, which its
// handle() never reads). Types: int, float, string, bool, array, mixed,
// with a leading ? for nullable; a value of another type is refused (PHP's
// unserialize would throw a TypeError into the job). "default" is the
// property's declared default (`public string $quality = 'hd';`; not a
// constructor-promoted parameter's, which PHP does not count as one): from
// Laravel 9.4, a property holding it is left out of the command, as
// SerializesModels does; so are the queue options at their declared value.

// classFileFormat is the shape of a class file, for errors.
const classFileFormat = `a class file is JSON keyed by class name, e.g. {"App\\Jobs\\RetryJob": {"tries": 4, "backoff": [2, 5, 10], "properties": {"failUntil": {"type": "int"}, "note": {"visibility": "protected", "type": "?string", "default": null}}}}; 'laraworker push --help' lists every key`

// classDecl is one class's entry in a class file.
type classDecl struct {
	Tries                   *int64                  `json:"tries"`
	MaxExceptions           *int64                  `json:"maxExceptions"`
	Timeout                 *int64                  `json:"timeout"`
	RetryUntil              *int64                  `json:"retryUntil"`
	Backoff                 json.RawMessage         `json:"backoff"`
	FailOnTimeout           *bool                   `json:"failOnTimeout"`
	DeleteWhenMissingModels *bool                   `json:"deleteWhenMissingModels"`
	Encrypted               bool                    `json:"encrypted"`
	Properties              map[string]propertyDecl `json:"properties"`
}

type propertyDecl struct {
	Visibility string `json:"visibility"` // public (default), protected, private
	DeclaredIn string `json:"declaredIn"` // for private: the declaring class, default the class
	Type       string `json:"type"`
	// Default is the declared default as JSON; absent: none declared.
	Default json.RawMessage `json:"default"`
}

// loadClassDecl reads the entry of class (matched case-insensitively, as
// PHP matches class names) from a class file; nil when the file has none.
func loadClassDecl(path, class string) (*classDecl, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if bytes.HasPrefix(bytes.TrimSpace(raw), []byte("<?php")) {
		return nil, fmt.Errorf("this is PHP source; --class-file takes a JSON declaration of the class, not its PHP file: %s", classFileFormat)
	}
	// The file may come from PHP's json_encode: [] for an empty array.
	var entries map[string]json.RawMessage
	if err := phparray.Unmarshal(raw, &entries); err != nil {
		return nil, fmt.Errorf("not a JSON class declaration (%v): %s", err, classFileFormat)
	}
	for name, entry := range entries {
		if !strings.EqualFold(strings.TrimPrefix(name, `\`), class) {
			continue
		}
		var d classDecl
		dec := json.NewDecoder(bytes.NewReader(phparray.Reshape(entry, &d)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&d); err != nil {
			return nil, fmt.Errorf("%s: %v (%s)", name, err, classFileFormat)
		}
		if err := d.validate(); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return &d, nil
	}
	return nil, nil
}

func (d *classDecl) validate() error {
	for name, p := range d.Properties {
		if !phpIdentRE.MatchString(name) {
			return fmt.Errorf("property %q is not a PHP property name", name)
		}
		switch p.Visibility {
		case "", "public", "protected":
			if p.DeclaredIn != "" {
				return fmt.Errorf("property %s: declaredIn is for private properties", name)
			}
		case "private":
			if p.DeclaredIn != "" {
				if _, err := phpClassName(p.DeclaredIn); err != nil {
					return fmt.Errorf("property %s: declaredIn: %w", name, err)
				}
			}
		default:
			return fmt.Errorf("property %s: visibility %q: want public, protected or private", name, p.Visibility)
		}
		if _, ok := phpTypes[strings.TrimPrefix(p.Type, "?")]; !ok && p.Type != "" {
			return fmt.Errorf("property %s: type %q: want int, float, string, bool, array or mixed (? for nullable)", name, p.Type)
		}
		if _, err := p.defaultValue(name); err != nil {
			return err
		}
	}
	if len(d.Backoff) > 0 {
		if _, err := d.backoffValue(); err != nil {
			return err
		}
	}
	return nil
}

// declared is the class's queue options as the public properties
// BuildObjectPayload reads them from.
func (d *classDecl) declared() (map[string]*phpserialize.Value, error) {
	out := map[string]*phpserialize.Value{}
	ints := map[string]*int64{"tries": d.Tries, "maxExceptions": d.MaxExceptions, "timeout": d.Timeout, "retryUntil": d.RetryUntil}
	for name, v := range ints {
		if v != nil {
			out[name] = phpserialize.Int(*v)
		}
	}
	for name, v := range map[string]*bool{"failOnTimeout": d.FailOnTimeout, "deleteWhenMissingModels": d.DeleteWhenMissingModels} {
		if v != nil {
			out[name] = phpserialize.Bool(*v)
		}
	}
	if len(d.Backoff) > 0 {
		b, err := d.backoffValue()
		if err != nil {
			return nil, err
		}
		out["backoff"] = b
	}
	return out, nil
}

// backoffValue reads "backoff": seconds or a list of seconds, as the
// property holds them.
func (d *classDecl) backoffValue() (*phpserialize.Value, error) {
	v, err := payload.FromJSON(d.Backoff)
	if err == nil {
		switch {
		case v.Kind == phpserialize.KindInt && v.Int >= 0, v.Kind == phpserialize.KindNull:
			return v, nil
		case v.Kind == phpserialize.KindArray && v.IsList():
			ok := true
			for _, e := range v.Entries {
				ok = ok && e.Value.Kind == phpserialize.KindInt && e.Value.Int >= 0
			}
			if ok {
				return v, nil
			}
		}
	}
	return nil, errors.New(`backoff: want seconds or a list of seconds, e.g. 5 or [1, 5, 10]`)
}

// phpIdentRE is a PHP property name (a label).
var phpIdentRE = regexp.MustCompile(`^[A-Za-z_\x{80}-\x{10FFFF}][A-Za-z0-9_\x{80}-\x{10FFFF}]*$`)

var phpTypes = map[string]func(*phpserialize.Value) bool{
	"int": func(v *phpserialize.Value) bool { return v.Kind == phpserialize.KindInt },
	"float": func(v *phpserialize.Value) bool {
		return v.Kind == phpserialize.KindFloat || v.Kind == phpserialize.KindInt
	},
	"string": func(v *phpserialize.Value) bool { return v.Kind == phpserialize.KindString },
	"bool":   func(v *phpserialize.Value) bool { return v.Kind == phpserialize.KindBool },
	"array":  func(v *phpserialize.Value) bool { return v.Kind == phpserialize.KindArray },
	"mixed":  func(*phpserialize.Value) bool { return true },
}

// queueOptionProps are the properties every queued class has through its
// traits or the payload's options, which a class file need not list.
var queueOptionProps = map[string]bool{
	"tries": true, "maxExceptions": true, "timeout": true, "retryUntil": true, "backoff": true,
	"failOnTimeout": true, "deleteWhenMissingModels": true,
	"job": true, "connection": true, "queue": true, "delay": true, "afterCommit": true, "middleware": true,
	"chained": true, "chainConnection": true, "chainQueue": true, "chainCatchCallbacks": true, "batchId": true,
}

// checkProps checks the given properties (by plain name) against the
// declaration: a property the class does not declare, or a value PHP
// could not hold, is refused, naming the property.
func (d *classDecl) checkProps(class string, props []phpserialize.Entry) error {
	for _, e := range props {
		name := e.Key.Str
		decl, listed := d.Properties[name]
		if !listed && len(d.Properties) > 0 && !queueOptionProps[name] {
			return fmt.Errorf("%s declares no property %q in the class file (known: %s)", class, name, strings.Join(d.propertyNames(), ", "))
		}
		if err := checkType(class, name, decl.Type, e.Value); err != nil {
			return err
		}
	}
	return nil
}

// coerce converts what PHP converts when it assigns to a typed property:
// an int given to a float property is a float (`d:5;`, not `i:5;`).
func (d *classDecl) coerce(props []phpserialize.Entry) []phpserialize.Entry {
	out := make([]phpserialize.Entry, len(props))
	for i, e := range props {
		out[i] = phpserialize.Entry{Key: e.Key, Value: coerceTo(d.Properties[e.Key.Str].Type, e.Value)}
	}
	return out
}

func coerceTo(typ string, v *phpserialize.Value) *phpserialize.Value {
	if strings.TrimPrefix(typ, "?") == "float" && v.Kind == phpserialize.KindInt {
		return phpserialize.Float(float64(v.Int))
	}
	return v
}

// mangle writes each property under its visibility's name, as PHP
// serializes it.
func (d *classDecl) mangle(class string, props []phpserialize.Entry) []phpserialize.Entry {
	out := make([]phpserialize.Entry, 0, len(props))
	for _, e := range props {
		name := e.Key.Str
		decl := d.Properties[name]
		switch decl.Visibility {
		case "protected":
			out = append(out, phpserialize.Protected(name, e.Value))
		case "private":
			out = append(out, phpserialize.Private(orDefault(strings.TrimPrefix(decl.DeclaredIn, `\`), class), name, e.Value))
		default:
			out = append(out, e)
		}
	}
	return out
}

// withoutDefaults leaves out the properties that hold their declared
// default, compared as PHP's === does, as SerializesModels::__serialize
// does from Laravel 9.4: a property's "default", and the queue options the
// class declares (its $tries, $backoff...).
func (d *classDecl) withoutDefaults(props []phpserialize.Entry) []phpserialize.Entry {
	declared, _ := d.declared()
	out := make([]phpserialize.Entry, 0, len(props))
	for _, e := range props {
		def := declared[e.Key.Str]
		if p, ok := d.Properties[e.Key.Str]; ok && len(p.Default) > 0 {
			def, _ = p.defaultValue(e.Key.Str)
		}
		if def != nil && identical(e.Value, def) {
			continue
		}
		out = append(out, e)
	}
	return out
}

// defaultValue is the property's declared default as PHP holds it; nil
// when none is declared.
func (p propertyDecl) defaultValue(name string) (*phpserialize.Value, error) {
	if len(p.Default) == 0 {
		return nil, nil
	}
	v, err := payload.FromJSON(p.Default)
	if err != nil {
		return nil, fmt.Errorf("property %s: default: %v", name, err)
	}
	if p.Type != "" && !(v.Kind == phpserialize.KindNull && (strings.HasPrefix(p.Type, "?") || p.Type == "mixed")) &&
		!phpTypes[strings.TrimPrefix(p.Type, "?")](v) {
		return nil, fmt.Errorf("property %s: default %s is not of its type %s", name, p.Default, p.Type)
	}
	return coerceTo(p.Type, v), nil
}

// identical is PHP's ===: same type and value; arrays with the same keys
// and identical values in the same order.
func identical(a, b *phpserialize.Value) bool {
	a, b = a.Deref(), b.Deref()
	if a == nil || b == nil || a.Kind != b.Kind {
		return false
	}
	switch a.Kind {
	case phpserialize.KindNull:
		return true
	case phpserialize.KindBool:
		return a.Bool == b.Bool
	case phpserialize.KindInt:
		return a.Int == b.Int
	case phpserialize.KindFloat:
		return a.Float == b.Float
	case phpserialize.KindString:
		return bytes.Equal(a.Str, b.Str)
	case phpserialize.KindArray:
		if len(a.Entries) != len(b.Entries) {
			return false
		}
		for i := range a.Entries {
			ka, kb := a.Entries[i].Key, b.Entries[i].Key
			if ka.IsInt != kb.IsInt || ka.String() != kb.String() || !identical(a.Entries[i].Value, b.Entries[i].Value) {
				return false
			}
		}
		return true
	}
	return false
}

func (d *classDecl) propertyNames() []string {
	names := make([]string, 0, len(d.Properties))
	for n := range d.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func checkType(class, name, typ string, v *phpserialize.Value) error {
	if typ == "" {
		return nil
	}
	nullable := strings.HasPrefix(typ, "?")
	if v.Kind == phpserialize.KindNull {
		if nullable || typ == "mixed" {
			return nil
		}
		return fmt.Errorf("%s::$%s is %s: null is not allowed (PHP would throw a TypeError when it unserializes the job)", class, name, typ)
	}
	if !phpTypes[strings.TrimPrefix(typ, "?")](v) {
		return fmt.Errorf("%s::$%s is %s, got a PHP %s (PHP would throw a TypeError when it unserializes the job)", class, name, typ, v.Kind)
	}
	return nil
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// checkPropName refuses names no PHP class declares: a JSON key such as
// "my-prop" or "0", or a NUL-mangled name (use the class file's
// visibility instead).
func checkPropName(name string) error {
	if strings.ContainsRune(name, 0) {
		return fmt.Errorf("property %q: write protected and private properties by their plain name and declare their visibility in a --class-file", strings.ReplaceAll(name, "\x00", `\0`))
	}
	if !phpIdentRE.MatchString(name) {
		return fmt.Errorf("property %q is not a PHP property name", name)
	}
	return nil
}
