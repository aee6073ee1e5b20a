package phpserialize

// DeepCopy copies a value tree; references inside it point into the copy,
// references to values outside it keep pointing there.
func DeepCopy(v *Value) *Value {
	copies := map[*Value]*Value{}
	var cp func(*Value) *Value
	cp = func(v *Value) *Value {
		if v == nil {
			return nil
		}
		if c, ok := copies[v]; ok {
			return c
		}
		c := &Value{Kind: v.Kind, Bool: v.Bool, Int: v.Int, Float: v.Float, Class: v.Class, Case: v.Case, Target: v.Target}
		copies[v] = c
		if v.Str != nil {
			c.Str = append([]byte(nil), v.Str...)
		}
		if v.Entries != nil {
			c.Entries = make([]Entry, len(v.Entries))
			for i, e := range v.Entries {
				c.Entries[i] = Entry{Key: e.Key, Value: cp(e.Value)}
			}
		}
		return c
	}
	root := cp(v)
	for _, c := range copies {
		if t, ok := copies[c.Target]; ok {
			c.Target = t
		}
	}
	return root
}
