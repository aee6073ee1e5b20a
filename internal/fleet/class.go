package fleet

import (
	"bytes"

	"github.com/laraworker/laraworker/laravel/payload"
)

var displayNameKey = []byte(`"displayName":"`)

// ClassOf returns a payload's displayName without decoding the whole
// payload: Laravel writes it second, right after the uuid, so scanning
// for the key is enough. ok is false when the key is not in raw (or its
// string is cut off, when raw is a prefix of the payload).
func ClassOf(raw []byte) (class string, ok bool) {
	i := bytes.Index(raw, displayNameKey)
	if i < 0 {
		return "", false
	}
	start := i + len(displayNameKey) - 1 // the opening quote
	end := start + 1
	for end < len(raw) {
		switch raw[end] {
		case '\\':
			end += 2
			continue
		case '"':
			// Decoded as encoding/json would, without its reflection: the
			// worker counts every job's class.
			return payload.UnquoteJSON(raw[start : end+1])
		}
		end++
	}
	return "", false
}

var uuidKey = []byte(`"uuid":"`)

// UUIDOf returns a payload's uuid the same way ClassOf finds the class.
func UUIDOf(raw []byte) string {
	i := bytes.Index(raw, uuidKey)
	if i < 0 {
		return ""
	}
	rest := raw[i+len(uuidKey):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 || j > 64 || bytes.IndexByte(rest[:j], '\\') >= 0 {
		return ""
	}
	return string(rest[:j])
}
