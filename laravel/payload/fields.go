package payload

import "encoding/json"

// Field is one top-level key of a payload with its JSON exactly as stored.
type Field struct {
	Key string
	Raw json.RawMessage
}

// Fields lists the payload's top-level keys in their stored order, each
// with its raw JSON: what the payload holds, as Laravel wrote it, whether
// or not this package knows the key.
func (p *Payload) Fields() []Field {
	out := make([]Field, len(p.fields))
	for i, f := range p.fields {
		out[i] = Field{Key: f.key, Raw: f.raw}
	}
	return out
}

// Fields lists data's keys in their stored order with their raw JSON; nil
// when data is not an object (string jobs).
func (d *Data) Fields() []Field {
	if isNull(d.Raw) || d.Raw[0] != '{' {
		return nil
	}
	fields, ok := scanObject(d.Raw)
	if !ok {
		var m map[string]json.RawMessage
		if json.Unmarshal(d.Raw, &m) != nil {
			return nil
		}
		fields = objectFromMap(m)
	}
	out := make([]Field, len(fields))
	for i, f := range fields {
		out[i] = Field{Key: f.key, Raw: f.raw}
	}
	return out
}
