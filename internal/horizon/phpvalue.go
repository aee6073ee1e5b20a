package horizon

import (
	"strconv"

	"github.com/laraworker/laraworker/laravel/phpserialize"
)

// phpValue is an unserialized PHP value.
type phpValue = phpserialize.Value

// property is an object's property by name, whatever its visibility.
func property(o *phpValue, name string) *phpValue {
	if o == nil || o.Kind != phpserialize.KindObject {
		return nil
	}
	for _, e := range o.Entries {
		if _, _, n := phpserialize.SplitPropertyName(e.Key.String()); n == name {
			return e.Value.Deref()
		}
	}
	return nil
}

// index is an array's element at key i, when it is an object.
func index(a *phpValue, i int) *phpValue {
	if a == nil || a.Kind != phpserialize.KindArray {
		return nil
	}
	for _, e := range a.Entries {
		if e.Key.String() == strconv.Itoa(i) {
			if v := e.Value.Deref(); v != nil && v.Kind == phpserialize.KindObject {
				return v
			}
		}
	}
	return nil
}
