package phpserialize

import (
	"fmt"
	"strings"
	"time"
)

// Time converts a serialized DateTime or DateTimeImmutable to a time.Time in
// the zone it was serialized with. Subclasses (Carbon, Laravel's
// Illuminate\Support\Carbon) serialize the same way and are read alike: Time
// looks at the object's date and timezone properties, not at its class.
func Time(v *Value) (time.Time, error) {
	v = v.Deref()
	if v == nil || v.Kind != KindObject {
		return time.Time{}, fmt.Errorf("phpserialize: want a DateTime object, got %s", v.TypeName())
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
		return time.Time{}, fmt.Errorf("phpserialize: %s: %w", v.Class, err)
	}
	t, err := time.ParseInLocation("2006-01-02 15:04:05.000000", date, loc)
	if err != nil {
		return time.Time{}, fmt.Errorf("phpserialize: %s: date %q is not Y-m-d H:i:s.u", v.Class, date)
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

// stringProp returns the string property name of obj.
func stringProp(obj *Value, name string) (string, error) {
	p, err := obj.Prop(name)
	if err != nil {
		return "", err
	}
	if p == nil || p.Kind != KindString {
		return "", fmt.Errorf("phpserialize: %s property %q: want a string, got %s", obj.Class, name, p.TypeName())
	}
	return string(p.Str), nil
}
