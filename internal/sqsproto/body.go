package sqsproto

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// PointerPrefix starts the cache key of a payload Laravel 13.9+ keeps in
// the cache instead of the message (SqsQueue::EXTENDED_PAYLOAD_CACHE_PREFIX).
const PointerPrefix = "laravel:sqs-payloads:"

// Pointer reads a message body of the form {"@pointer":"<key>"}, which
// SqsJob::getRawBody follows (when the connection's overflow is enabled):
// the payload is in the cache under key. ok is false for any other body.
func Pointer(body []byte) (key string, ok bool) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '{' || !bytes.Contains(body, []byte(`"@pointer"`)) {
		return "", false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return "", false
	}
	raw, found := m["@pointer"]
	if !found {
		return "", false
	}
	if err := json.Unmarshal(raw, &key); err != nil || key == "" {
		return "", false // json_decode's non-string pointer: not followed
	}
	return key, true
}

// ErrBadPayload is a payload that is not a JSON object.
var ErrBadPayload = errors.New("sqsqueue: the payload is not a JSON object")

// VaporAttempts is the "attempts" a payload holds (VaporQueue writes 0 at
// dispatch, VaporJob::release the attempt that ran); ok is false when it
// has none (a payload the framework's SqsQueue wrote).
func VaporAttempts(payload []byte) (n int, ok bool) {
	at, err := topLevelValue(payload, "attempts")
	if err != nil || at == nil {
		return 0, false
	}
	v := strings.TrimSpace(string(payload[at[0]:at[1]]))
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		return int(f), true // PHP's (int) of a number; "attempts" is an int
	}
	return 0, v == "null"
}

// SetAttempts is VaporJob::release's $payload['attempts'] = n: the
// value replaced in place (the other bytes kept as they are), or the key
// added at the end when the payload has none.
func SetAttempts(payload []byte, n int) ([]byte, error) {
	at, err := topLevelValue(payload, "attempts")
	if err != nil {
		return nil, err
	}
	num := strconv.Itoa(n)
	if at != nil {
		out := make([]byte, 0, len(payload)+len(num))
		out = append(out, payload[:at[0]]...)
		out = append(out, num...)
		return append(out, payload[at[1]:]...), nil
	}
	end := bytes.LastIndexByte(payload, '}')
	inner := bytes.TrimSpace(payload[bytes.IndexByte(payload, '{')+1 : end])
	sep := ","
	if len(inner) == 0 {
		sep = ""
	}
	out := make([]byte, 0, len(payload)+len(num)+12)
	out = append(out, payload[:end]...)
	out = append(out, sep+`"attempts":`+num...)
	return append(out, payload[end:]...), nil
}

// topLevelValue finds the byte range of the value of key in a JSON
// object (the last one, as json_decode keeps), nil when absent.
func topLevelValue(payload []byte, key string) ([]int, error) {
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, ErrBadPayload
	}
	var found []int
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrBadPayload, err)
		}
		start := int(dec.InputOffset())
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrBadPayload, err)
		}
		end := int(dec.InputOffset())
		if k == key {
			// Skip the colon and blanks before the value.
			colon := bytes.IndexByte(payload[start:end], ':')
			vs := start + colon + 1
			for vs < end && isBlank(payload[vs]) {
				vs++
			}
			found = []int{vs, end}
		}
	}
	if _, err := dec.Token(); err != nil && err != io.EOF {
		return nil, fmt.Errorf("%w: %v", ErrBadPayload, err)
	}
	return found, nil
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
