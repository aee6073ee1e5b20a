package payload

import (
	"bytes"
	"encoding/json"
	"io"
)

// PrefixLen is how many bytes of a payload TopStrings needs to find its
// uuid and displayName: Laravel writes them first ({"uuid":"...",
// "displayName":"...",...}), and a class name is far shorter.
const PrefixLen = 1024

// TopStrings reads, from the start of a payload (its first bytes: a
// prefix cut anywhere, or the whole document), the string values of the
// top-level keys asked for, without reading the rest: a start-up check
// or a claim of a job too large to decode needs a job's class or uuid,
// not its command. A key missing from the result is absent from the
// prefix, or its value is not a string or is cut; nested objects are
// skipped, so a "displayName" inside one is never taken for the
// payload's. Keys repeated in the prefix give their first value (PHP's
// json_decode keeps the last; Laravel never writes a key twice).
func TopStrings(prefix []byte, keys ...string) map[string]string {
	out := make(map[string]string, len(keys))
	dec := json.NewDecoder(bytes.NewReader(prefix))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return out
	}
	want := make(map[string]bool, len(keys))
	for _, k := range keys {
		want[k] = true
	}
	for len(out) < len(want) && dec.More() {
		t, err := dec.Token()
		key, isKey := t.(string)
		if err != nil || !isKey {
			return out
		}
		if !want[key] {
			if skipValue(dec) != nil {
				return out
			}
			continue
		}
		v, err := dec.Token()
		if err != nil {
			return out
		}
		switch v := v.(type) {
		case string:
			if _, seen := out[key]; !seen {
				out[key] = v
			}
		case json.Delim:
			// An object or array where a string was asked for: skip it.
			if skipOpen(dec) != nil {
				return out
			}
		}
	}
	return out
}

// skipValue reads one value, of any kind, token by token.
func skipValue(dec *json.Decoder) error {
	t, err := dec.Token()
	if err != nil {
		return err
	}
	if _, ok := t.(json.Delim); ok {
		return skipOpen(dec)
	}
	return nil
}

// skipOpen reads the rest of the object or array whose opening
// delimiter was just read.
func skipOpen(dec *json.Decoder) error {
	for depth := 1; depth > 0; {
		t, err := dec.Token()
		if err != nil {
			if err == io.EOF {
				return io.ErrUnexpectedEOF
			}
			return err
		}
		if d, ok := t.(json.Delim); ok {
			if d == '{' || d == '[' {
				depth++
			} else {
				depth--
			}
		}
	}
	return nil
}
