package payload

import (
	"encoding/json"
	"errors"
)

// Members is a JSON object's members with their values undecoded, for
// code that reads a few top-level keys of many payloads (Horizon's
// records read the uuid, displayName and tags of every job).
type Members struct{ o jsonObject }

// SplitObject splits a JSON object in one pass, without copying (the
// payload scanner's fast path, encoding/json for anything unusual).
func SplitObject(raw []byte) (Members, error) {
	if o, ok := scanObject(raw); ok {
		return Members{o}, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return Members{}, err
	}
	if m == nil {
		return Members{}, errors.New("payload: not a JSON object")
	}
	return Members{objectFromMap(m)}, nil
}

// Raw is a member's value as it is in the document, nil when absent.
func (m Members) Raw(key string) json.RawMessage { return m.o.member(key).raw }

// String is a member's value when it is a JSON string.
func (m Members) String(key string) (string, bool) {
	raw := m.o.member(key).raw
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	if s, ok := UnquoteJSON(raw); ok {
		return s, true
	}
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err == nil
}
