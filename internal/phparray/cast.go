package phparray

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// The casts below read a scalar of a document decoded into any (the app's
// configuration as its PHP printed it, Horizon's records) as PHP's casts
// read the value json_decode gave: the stores' configuration readers and
// Horizon's records each had a copy of their own, and two of those read an
// empty array as true.

// String is PHP's (string) cast of a decoded JSON scalar: null and false
// are "", true is "1", a number its shortest text. An array has no string
// in PHP ("Array", with a warning); it is given as Go prints it, for an
// error message to show.
func String(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool:
		if x {
			return "1"
		}
		return ""
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case json.Number:
		return x.String()
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	}
	return fmt.Sprint(v)
}

// Truthy is PHP's (bool) cast of a decoded JSON value: null, false, zero,
// "", "0" and the empty array (a list or an object, json_decode's [] and
// {} as arrays) are false; everything else is true.
func Truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case float64:
		return x != 0
	case json.Number:
		f, err := x.Float64()
		return err != nil || f != 0
	case string:
		return x != "" && x != "0"
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	}
	s := String(v)
	return s != "" && s != "0"
}
