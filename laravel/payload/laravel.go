package payload

import (
	"errors"
	"fmt"
	"slices"

	"github.com/laraworker/laraworker/laravel/phpserialize"
)

// Class names of the Laravel values a command may hold.
const (
	ModelIdentifierClass = `Illuminate\Contracts\Database\ModelIdentifier`
)

// closureClasses are the wrappers PHP uses to serialize closures. Go cannot
// run any of them.
var closureClasses = map[string]bool{
	`Laravel\SerializableClosure\SerializableClosure`:         true,
	`Laravel\SerializableClosure\UnsignedSerializableClosure`: true,
	`Laravel\SerializableClosure\Serializers\Signed`:          true,
	`Laravel\SerializableClosure\Serializers\Native`:          true,
	`Illuminate\Queue\SerializableClosure`:                    true,
	`Opis\Closure\SerializableClosure`:                        true,
}

// IsClosure reports whether v is a serialized PHP closure.
func IsClosure(v *phpserialize.Value) bool {
	v = v.Deref()
	return v != nil && (v.Kind == phpserialize.KindObject || v.Kind == phpserialize.KindCustom) && closureClasses[v.Class]
}

// dateClasses serialize as DateTime does: date, timezone_type, timezone.
var dateClasses = map[string]bool{
	"DateTime": true, "DateTimeImmutable": true,
	`Carbon\Carbon`: true, `Carbon\CarbonImmutable`: true,
	`Illuminate\Support\Carbon`: true, `Illuminate\Support\CarbonImmutable`: true,
}

// IsDate reports whether v is a serialized DateTime, DateTimeImmutable or
// one of the Carbon classes Laravel uses; phpserialize.Time reads it.
func IsDate(v *phpserialize.Value) bool {
	v = v.Deref()
	return v != nil && v.Kind == phpserialize.KindObject && dateClasses[v.Class]
}

// ModelIdentifier is what SerializesModels leaves of an Eloquent model or
// collection: the class and key(s) to load it again.
type ModelIdentifier struct {
	// Class is the model class; "" for an empty collection, which
	// Laravel serializes without one.
	Class string
	// ID is the model's key: int64 or string, or for a collection a []any
	// of those.
	ID         any
	Relations  []string
	Connection *string
	// CollectionClass is set (9.26+) for collections; nil otherwise.
	CollectionClass *string
}

// IsModelIdentifier reports whether v is a serialized ModelIdentifier.
func IsModelIdentifier(v *phpserialize.Value) bool {
	v = v.Deref()
	return v != nil && v.Kind == phpserialize.KindObject && v.Class == ModelIdentifierClass
}

// IsCollection reports whether the identifier stands for several models.
func (m *ModelIdentifier) IsCollection() bool {
	_, ok := m.ID.([]any)
	return ok
}

// DecodePHP reads a ModelIdentifier object.
func (m *ModelIdentifier) DecodePHP(v *phpserialize.Value) error {
	v = v.Deref()
	if !IsModelIdentifier(v) {
		return fmt.Errorf("payload: want %s, got %s", ModelIdentifierClass, describe(v))
	}
	id := optionalProp(v, "id")
	var err error
	if m.Class, err = stringProp(v, "class"); err != nil {
		// An empty Eloquent collection has no class: its
		// getQueueableClass() is null, and its ids an empty list.
		if c := optionalProp(v, "class"); c == nil || c.Kind != phpserialize.KindNull || id == nil || id.Kind != phpserialize.KindArray || len(id.Entries) != 0 {
			return err
		}
		m.Class = ""
	}
	if m.ID, err = scalarOrList(id); err != nil {
		return fmt.Errorf("payload: ModelIdentifier id: %w", err)
	}
	m.Relations = nil
	if rel := optionalProp(v, "relations"); rel != nil && rel.Kind == phpserialize.KindArray {
		for _, e := range rel.Entries {
			if s := e.Value.Deref(); s != nil && s.Kind == phpserialize.KindString {
				m.Relations = append(m.Relations, string(s.Str))
			}
		}
	}
	m.Connection = optionalString(v, "connection")
	m.CollectionClass = optionalString(v, "collectionClass")
	return nil
}

func scalarOrList(v *phpserialize.Value) (any, error) {
	v = v.Deref()
	if v == nil {
		return nil, nil
	}
	switch v.Kind {
	case phpserialize.KindInt:
		return v.Int, nil
	case phpserialize.KindString:
		return string(v.Str), nil
	case phpserialize.KindNull:
		return nil, nil
	case phpserialize.KindArray:
		ids := make([]any, 0, len(v.Entries))
		for _, e := range v.Entries {
			id, err := scalarOrList(e.Value)
			if err != nil {
				return nil, err
			}
			ids = append(ids, id)
		}
		return ids, nil
	}
	return nil, fmt.Errorf("want an int, a string or a list, got %s", describe(v))
}

// Closure marks a serialized PHP closure. Go cannot run it; a handler can
// see it is there and which wrapper holds it.
type Closure struct{ Class string }

// DecodePHP accepts any closure wrapper.
func (c *Closure) DecodePHP(v *phpserialize.Value) error {
	v = v.Deref()
	if !IsClosure(v) {
		return fmt.Errorf("payload: want a serialized closure, got %s", describe(v))
	}
	c.Class = v.Class
	return nil
}

// describe names a value's PHP type for error messages.
func describe(v *phpserialize.Value) string {
	if v == nil {
		return "nothing"
	}
	switch v.Kind {
	case phpserialize.KindObject, phpserialize.KindCustom:
		return "object " + v.Class
	case phpserialize.KindEnum:
		return "enum " + v.Class
	}
	return "PHP " + v.Kind.String()
}

// optionalProp returns the property by short name, nil when absent or
// ambiguous (ambiguity cannot happen for Laravel's own public properties).
func optionalProp(obj *phpserialize.Value, name string) *phpserialize.Value {
	p, err := obj.Prop(name)
	if err != nil {
		return nil
	}
	return p.Deref()
}

func stringProp(obj *phpserialize.Value, name string) (string, error) {
	p, err := obj.Prop(name)
	if err != nil {
		return "", err
	}
	p = p.Deref()
	if p == nil || p.Kind != phpserialize.KindString {
		return "", fmt.Errorf("payload: %s property %q: want a string, got %s", obj.Class, name, describe(p))
	}
	return string(p.Str), nil
}

func optionalString(obj *phpserialize.Value, name string) *string {
	return stringValue(optionalProp(obj, name))
}

// stringValue is a PHP string's text, nil for anything else.
func stringValue(v *phpserialize.Value) *string {
	if v == nil || v.Kind != phpserialize.KindString {
		return nil
	}
	s := string(v.Str)
	return &s
}

// readProps sets out[i] to optionalProp(obj, names[i]) for every name
// (at most 64), in one pass over obj's properties instead of one per
// name: the worker reads ten of them from every job's command.
func readProps(obj *phpserialize.Value, names []string, out []*phpserialize.Value) {
	clear(out)
	obj = obj.Deref()
	if obj == nil || obj.Kind != phpserialize.KindObject {
		return
	}
	var seen, twice uint64
	for _, e := range obj.Entries {
		if e.Key.IsInt {
			continue // its short name is a number, which no name is
		}
		_, _, short := phpserialize.SplitPropertyName(e.Key.Str)
		i := slices.Index(names, short)
		if i < 0 {
			continue
		}
		if seen&(1<<i) != 0 {
			twice |= 1 << i
		}
		seen |= 1 << i
		out[i] = e.Value.Deref()
	}
	for i := range out {
		if twice&(1<<i) != 0 {
			out[i] = nil // ambiguous, as optionalProp
		}
	}
}

var errNotObject = errors.New("payload: the command is not a serialized object")
