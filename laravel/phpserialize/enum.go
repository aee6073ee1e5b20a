package phpserialize

import "fmt"

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
		return fmt.Errorf("phpserialize: want an enum, got %s", v.TypeName())
	}
	e.Class, e.Case = v.Class, v.Case
	return nil
}
