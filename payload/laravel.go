package payload

import (
	"errors"
	"fmt"
	"strings"
	"time"
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
func IsClosure(v *Value) bool {
	v = v.Deref()
	return v != nil && (v.Kind == KindObject || v.Kind == KindCustom) && closureClasses[v.Class]
}

// dateClasses serialize as DateTime does: date, timezone_type, timezone.
var dateClasses = map[string]bool{
	"DateTime": true, "DateTimeImmutable": true,
	`Carbon\Carbon`: true, `Carbon\CarbonImmutable`: true,
	`Illuminate\Support\Carbon`: true, `Illuminate\Support\CarbonImmutable`: true,
}

// IsDate reports whether v is a serialized DateTime or Carbon object.
func IsDate(v *Value) bool {
	v = v.Deref()
	return v != nil && v.Kind == KindObject && dateClasses[v.Class]
}

// ModelIdentifier is what SerializesModels leaves of an Eloquent model or
// collection: the class and key(s) to load it again.
type ModelIdentifier struct {
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
func IsModelIdentifier(v *Value) bool {
	v = v.Deref()
	return v != nil && v.Kind == KindObject && v.Class == ModelIdentifierClass
}

// IsCollection reports whether the identifier stands for several models.
func (m *ModelIdentifier) IsCollection() bool {
	_, ok := m.ID.([]any)
	return ok
}

// DecodePHP reads a ModelIdentifier object.
func (m *ModelIdentifier) DecodePHP(v *Value) error {
	v = v.Deref()
	if !IsModelIdentifier(v) {
		return fmt.Errorf("payload: want %s, got %s", ModelIdentifierClass, describe(v))
	}
	var err error
	if m.Class, err = stringProp(v, "class"); err != nil {
		return err
	}
	id := optionalProp(v, "id")
	if m.ID, err = scalarOrList(id); err != nil {
		return fmt.Errorf("payload: ModelIdentifier id: %w", err)
	}
	m.Relations = nil
	if rel := optionalProp(v, "relations"); rel != nil && rel.Kind == KindArray {
		for _, e := range rel.Entries {
			if s := e.Value.Deref(); s != nil && s.Kind == KindString {
				m.Relations = append(m.Relations, string(s.Str))
			}
		}
	}
	m.Connection = optionalString(v, "connection")
	m.CollectionClass = optionalString(v, "collectionClass")
	return nil
}

func scalarOrList(v *Value) (any, error) {
	v = v.Deref()
	if v == nil {
		return nil, nil
	}
	switch v.Kind {
	case KindInt:
		return v.Int, nil
	case KindString:
		return string(v.Str), nil
	case KindNull:
		return nil, nil
	case KindArray:
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

// Time converts a serialized DateTime / DateTimeImmutable / Carbon /
// CarbonImmutable to a time.Time in the zone it was serialized with.
func Time(v *Value) (time.Time, error) {
	v = v.Deref()
	if !IsDate(v) {
		return time.Time{}, fmt.Errorf("payload: want a DateTime or Carbon object, got %s", describe(v))
	}
	date, err := stringProp(v, "date")
	if err != nil {
		return time.Time{}, err
	}
	tz, err := stringProp(v, "timezone")
	if err != nil {
		return time.Time{}, err
	}
	loc, err := phpZone(tz)
	if err != nil {
		return time.Time{}, fmt.Errorf("payload: %s: %w", v.Class, err)
	}
	t, err := time.ParseInLocation("2006-01-02 15:04:05.000000", date, loc)
	if err != nil {
		return time.Time{}, fmt.Errorf("payload: %s: date %q is not Y-m-d H:i:s.u", v.Class, date)
	}
	return t, nil
}

// phpZone resolves the three forms of PHP's timezone: an offset (type 1),
// an abbreviation (type 2) or an identifier (type 3).
func phpZone(tz string) (*time.Location, error) {
	if off, ok := parseOffset(tz); ok {
		return time.FixedZone(tz, off), nil
	}
	if off, ok := zoneAbbreviations[strings.ToUpper(tz)]; ok {
		return time.FixedZone(strings.ToUpper(tz), off), nil
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return nil, fmt.Errorf("unknown time zone %q", tz)
	}
	return loc, nil
}

func parseOffset(tz string) (int, bool) {
	if len(tz) != 6 || (tz[0] != '+' && tz[0] != '-') || tz[3] != ':' {
		return 0, false
	}
	h, m := digits2(tz[1:3]), digits2(tz[4:6])
	if h < 0 || m < 0 {
		return 0, false
	}
	off := h*3600 + m*60
	if tz[0] == '-' {
		off = -off
	}
	return off, true
}

func digits2(s string) int {
	if s[0] < '0' || s[0] > '9' || s[1] < '0' || s[1] > '9' {
		return -1
	}
	return int(s[0]-'0')*10 + int(s[1]-'0')
}

// zoneAbbreviations are the common abbreviations PHP stores as
// timezone_type 2, with their UTC offsets in seconds.
var zoneAbbreviations = map[string]int{
	"UTC": 0, "GMT": 0, "Z": 0, "WET": 0, "WEST": 3600, "BST": 3600,
	"CET": 3600, "CEST": 7200, "EET": 7200, "EEST": 10800, "MSK": 10800,
	"EST": -5 * 3600, "EDT": -4 * 3600, "CST": -6 * 3600, "CDT": -5 * 3600,
	"MST": -7 * 3600, "MDT": -6 * 3600, "PST": -8 * 3600, "PDT": -7 * 3600,
	"AKST": -9 * 3600, "AKDT": -8 * 3600, "HST": -10 * 3600,
	"IST": 19800, "JST": 9 * 3600, "KST": 9 * 3600, "AEST": 10 * 3600, "AEDT": 11 * 3600,
}

// Closure marks a serialized PHP closure. Go cannot run it; a handler can
// see it is there and which wrapper holds it.
type Closure struct{ Class string }

// DecodePHP accepts any closure wrapper.
func (c *Closure) DecodePHP(v *Value) error {
	v = v.Deref()
	if !IsClosure(v) {
		return fmt.Errorf("payload: want a serialized closure, got %s", describe(v))
	}
	c.Class = v.Class
	return nil
}

// EnumCase is a PHP 8.1 enum case as serialized: class and case name. A
// backed enum's value is not in the stream, only its case name.
type EnumCase struct {
	Class string
	Case  string
}

// DecodePHP reads an E: value.
func (e *EnumCase) DecodePHP(v *Value) error {
	v = v.Deref()
	if v == nil || v.Kind != KindEnum {
		return fmt.Errorf("payload: want an enum, got %s", describe(v))
	}
	e.Class, e.Case = v.Class, v.Case
	return nil
}

// describe names a value's PHP type for error messages.
func describe(v *Value) string {
	if v == nil {
		return "nothing"
	}
	switch v.Kind {
	case KindObject, KindCustom:
		return "object " + v.Class
	case KindEnum:
		return "enum " + v.Class
	}
	return "PHP " + v.Kind.String()
}

// optionalProp returns the property by short name, nil when absent or
// ambiguous (ambiguity cannot happen for Laravel's own public properties).
func optionalProp(obj *Value, name string) *Value {
	p, err := obj.Prop(name)
	if err != nil {
		return nil
	}
	return p.Deref()
}

func stringProp(obj *Value, name string) (string, error) {
	p, err := obj.Prop(name)
	if err != nil {
		return "", err
	}
	p = p.Deref()
	if p == nil || p.Kind != KindString {
		return "", fmt.Errorf("payload: %s property %q: want a string, got %s", obj.Class, name, describe(p))
	}
	return string(p.Str), nil
}

func optionalString(obj *Value, name string) *string {
	p := optionalProp(obj, name)
	if p == nil || p.Kind != KindString {
		return nil
	}
	s := string(p.Str)
	return &s
}

func optionalInt(obj *Value, name string) *int64 {
	p := optionalProp(obj, name)
	if p == nil || p.Kind != KindInt {
		return nil
	}
	n := p.Int
	return &n
}

var errNotObject = errors.New("payload: the command is not a serialized object")
