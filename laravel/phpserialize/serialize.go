package phpserialize

import (
	"errors"
	"strconv"
)

// Serialize writes v in PHP's serialize() format. Reference slots are
// numbered from the tree as it is now, so r: and R: nodes stay correct after
// entries are inserted or removed, as long as each target is written before
// the reference to it.
func Serialize(v *Value) ([]byte, error) {
	return AppendSerialize(make([]byte, 0, 256), v)
}

// AppendSerialize appends the serialized form of v to dst.
func AppendSerialize(dst []byte, v *Value) ([]byte, error) {
	e := &encoder{buf: dst}
	targets, err := collectTargets(v)
	if err != nil {
		return dst, err
	}
	if len(targets) > 0 {
		e.slotOf = targets
	}
	if err := e.value(v); err != nil {
		return dst, err
	}
	return e.buf, nil
}

type encoder struct {
	buf   []byte
	depth int
	// next is the slot number the next slotted value takes.
	next int
	// slotOf maps every reference target to its slot once it is written
	// (0 until then); nil when the tree has no references.
	slotOf map[*Value]int
}

var errNilValue = errors.New("php serialize: nil value")

// collectTargets finds the nodes that r: and R: nodes point at.
func collectTargets(root *Value) (map[*Value]int, error) {
	var targets map[*Value]int
	var walk func(v *Value, depth int) error
	walk = func(v *Value, depth int) error {
		if v == nil {
			return errNilValue
		}
		if depth > MaxDepth {
			return errors.New("php serialize: nesting deeper than " + strconv.Itoa(MaxDepth) + " levels")
		}
		if v.Kind == KindRef || v.Kind == KindRefAlias {
			if v.Target == nil {
				return errors.New("php serialize: " + v.Kind.String() + " without a target")
			}
			if targets == nil {
				targets = make(map[*Value]int)
			}
			targets[v.Target] = 0
			return nil
		}
		if v.Kind != KindArray && v.Kind != KindObject {
			return nil
		}
		for _, en := range v.Entries {
			if err := walk(en.Value, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	return targets, walk(root, 0)
}

// take gives v the next slot and remembers it if v is a reference target.
func (e *encoder) take(v *Value) {
	e.next++
	if e.slotOf == nil {
		return
	}
	if slot, ok := e.slotOf[v]; ok && slot == 0 {
		e.slotOf[v] = e.next
	}
}

func (e *encoder) value(v *Value) error {
	if v == nil {
		return errNilValue
	}
	if v.Kind != KindRefAlias {
		e.take(v)
	}
	switch v.Kind {
	case KindNull:
		e.buf = append(e.buf, "N;"...)
	case KindBool:
		e.buf = append(e.buf, "b:0;"...)
		if v.Bool {
			e.buf[len(e.buf)-2] = '1'
		}
	case KindInt:
		e.integer(v)
	case KindFloat:
		e.float(v)
	case KindString:
		e.buf = append(e.buf, "s:"...)
		e.quoted(v.Str)
		e.buf = append(e.buf, ';')
	case KindArray:
		e.buf = append(e.buf, "a:"...)
		return e.entries(v)
	case KindObject:
		return e.object(v)
	case KindCustom:
		return e.custom(v)
	case KindEnum:
		return e.enum(v)
	case KindRef, KindRefAlias:
		return e.reference(v)
	default:
		return errors.New("php serialize: unknown kind " + v.Kind.String())
	}
	return nil
}

// integer writes the original text kept by Unserialize while it still
// denotes v.Int, and PHP's canonical form otherwise.
func (e *encoder) integer(v *Value) {
	e.buf = append(e.buf, "i:"...)
	if len(v.Str) > 0 && keptIntText(v.Str, v.Int) {
		e.buf = append(e.buf, v.Str...)
	} else {
		e.buf = strconv.AppendInt(e.buf, v.Int, 10)
	}
	e.buf = append(e.buf, ';')
}

func keptIntText(t []byte, n int64) bool {
	d := decoder{in: append(t[:len(t):len(t)], ';')}
	got, _, err := d.intText()
	return err == nil && got == n
}

func (e *encoder) float(v *Value) {
	e.buf = append(e.buf, "d:"...)
	if len(v.Str) > 0 && validFloatText(v.Str) && sameFloat(parseFloatText(v.Str), v.Float) {
		e.buf = append(e.buf, v.Str...)
	} else {
		e.buf = AppendPHPFloat(e.buf, v.Float)
	}
	e.buf = append(e.buf, ';')
}

// quoted writes len:"bytes".
func (e *encoder) quoted(b []byte) {
	e.buf = strconv.AppendInt(e.buf, int64(len(b)), 10)
	e.buf = append(e.buf, ':', '"')
	e.buf = append(e.buf, b...)
	e.buf = append(e.buf, '"')
}

func (e *encoder) quotedString(s string) {
	e.buf = strconv.AppendInt(e.buf, int64(len(s)), 10)
	e.buf = append(e.buf, ':', '"')
	e.buf = append(e.buf, s...)
	e.buf = append(e.buf, '"')
}

// entries writes N:{key value ...}.
func (e *encoder) entries(v *Value) error {
	e.depth++
	if e.depth > MaxDepth {
		return errors.New("php serialize: nesting deeper than " + strconv.Itoa(MaxDepth) + " levels")
	}
	e.buf = strconv.AppendInt(e.buf, int64(len(v.Entries)), 10)
	e.buf = append(e.buf, ':', '{')
	for _, en := range v.Entries {
		e.key(en.Key)
		if err := e.value(en.Value); err != nil {
			return err
		}
	}
	e.buf = append(e.buf, '}')
	e.depth--
	return nil
}

func (e *encoder) key(k Key) {
	if k.IsInt {
		e.buf = append(e.buf, "i:"...)
		e.buf = strconv.AppendInt(e.buf, k.Int, 10)
		e.buf = append(e.buf, ';')
		return
	}
	e.buf = append(e.buf, "s:"...)
	e.quotedString(k.Str)
	e.buf = append(e.buf, ';')
}

func (e *encoder) className(v *Value) error {
	if !validClassName(v.Class) {
		return errors.New("php serialize: invalid class name " + strconv.Quote(v.Class))
	}
	e.quotedString(v.Class)
	e.buf = append(e.buf, ':')
	return nil
}

func (e *encoder) object(v *Value) error {
	e.buf = append(e.buf, "O:"...)
	if err := e.className(v); err != nil {
		return err
	}
	return e.entries(v)
}

// custom writes a C: object and, like Unserialize, counts the slots of the
// values inside its body.
func (e *encoder) custom(v *Value) error {
	e.buf = append(e.buf, "C:"...)
	if err := e.className(v); err != nil {
		return err
	}
	e.buf = strconv.AppendInt(e.buf, int64(len(v.Str)), 10)
	e.buf = append(e.buf, ':', '{')
	e.buf = append(e.buf, v.Str...)
	e.buf = append(e.buf, '}')
	e.next += bodySlots(v.Str, string(v.Str), e.next, e.depth)
	return nil
}

func (e *encoder) enum(v *Value) error {
	if v.Class == "" || v.Case == "" || indexColon(v.Class) >= 0 {
		return errors.New("php serialize: invalid enum " + strconv.Quote(v.Class+":"+v.Case))
	}
	e.buf = append(e.buf, "E:"...)
	e.buf = strconv.AppendInt(e.buf, int64(len(v.Class)+1+len(v.Case)), 10)
	e.buf = append(e.buf, ':', '"')
	e.buf = append(e.buf, v.Class...)
	e.buf = append(e.buf, ':')
	e.buf = append(e.buf, v.Case...)
	e.buf = append(e.buf, '"', ';')
	return nil
}

func (e *encoder) reference(v *Value) error {
	slot := e.slotOf[v.Target]
	if slot == 0 || (v.Kind == KindRef && v.Target == v) {
		return errors.New("php serialize: " + v.Kind.String() + " target is not written before the reference")
	}
	if v.Kind == KindRef && !isObjectLike(v.Target) {
		return errors.New("php serialize: r: must refer to an object or enum, not " + kindOf(v.Target.Deref()))
	}
	if v.Kind == KindRef {
		e.buf = append(e.buf, "r:"...)
	} else {
		e.buf = append(e.buf, "R:"...)
	}
	e.buf = strconv.AppendInt(e.buf, int64(slot), 10)
	e.buf = append(e.buf, ';')
	return nil
}
