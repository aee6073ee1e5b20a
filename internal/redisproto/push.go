package redisproto

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"
)

// Push is RedisQueue::pushRaw: the payload to the tail of the queue's
// list with a notify token, in one script. It returns the payload's "id"
// (as pushRaw does). The payload must carry a numeric "attempts": Laravel's
// pop script destroys a job without one (PreparePayload adds it).
func (q *Queue) Push(ctx context.Context, queue string, payload []byte) (id string, err error) {
	k := q.keys(queue)
	if k.err != nil {
		return "", k.err
	}
	if err := checkPayload(payload); err != nil {
		return "", err
	}
	if err := pushScript.Run(ctx, q.rdb, []string{k.Ready, k.Notify}, payload).Err(); err != nil && !isNil(err) {
		return "", q.wrap(err)
	}
	return payloadID(payload), nil
}

// Later is RedisQueue::laterRaw: the payload into the queue's delayed set,
// ready at now + delay (whole seconds). No notify token: the migration
// that makes it ready adds one.
func (q *Queue) Later(ctx context.Context, queue string, payload []byte, delay time.Duration) (id string, err error) {
	k := q.keys(queue)
	if k.err != nil {
		return "", k.err
	}
	if err := checkPayload(payload); err != nil {
		return "", err
	}
	if err := laterScript.Run(ctx, q.rdb, []string{k.Delayed}, q.now().Unix()+seconds(delay), payload).Err(); err != nil && !isNil(err) {
		return "", q.wrap(err)
	}
	return payloadID(payload), nil
}

// ErrBadPayload wraps what makes a payload unsafe to push on a Redis
// queue.
var ErrBadPayload = errors.New("redisqueue: payload cannot go on a Redis queue")

// checkPayload accepts what Laravel's pop can count: a JSON object with a
// number "attempts".
func checkPayload(payload []byte) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(payload, &fields); err != nil {
		return fmt.Errorf("%w: not a JSON object: %v", ErrBadPayload, err)
	}
	raw, ok := fields["attempts"]
	if !ok {
		return fmt.Errorf("%w: it has no \"attempts\" (Laravel's pop would lose the job; PreparePayload adds it)", ErrBadPayload)
	}
	var v any
	_ = json.Unmarshal(raw, &v)
	switch x := v.(type) {
	case float64:
		return nil
	case string:
		// Lua's arithmetic takes a numeric string, and so does PHP's.
		if _, err := strconv.ParseFloat(strings.TrimSpace(x), 64); err == nil {
			return nil
		}
	}
	return fmt.Errorf("%w: its \"attempts\" is %s, not a number", ErrBadPayload, raw)
}

// payloadID is json_decode($payload)['id'] when it is a string.
func payloadID(payload []byte) string {
	var p struct {
		ID any `json:"id"`
	}
	_ = json.Unmarshal(payload, &p)
	s, _ := p.ID.(string)
	return s
}

// PreparePayload turns a payload as the database queue has it (what
// payload.BuildObjectPayload writes) into the one RedisQueue writes:
// createPayloadArray adds "id" (Str::random(32)) and "attempts": 0 after
// the other keys, and on 12.11+ createPayload then adds "delay" last, so
// they go before a final "delay" key. A payload that already has both keys
// comes back unchanged. It returns the payload and its id.
func PreparePayload(payload []byte) ([]byte, string, error) {
	keys, err := topLevelKeys(payload)
	if err != nil {
		return nil, "", fmt.Errorf("%w: %v", ErrBadPayload, err)
	}
	_, hasID := keys.find("id")
	_, hasAttempts := keys.find("attempts")
	switch {
	case hasID && hasAttempts:
		return payload, payloadID(payload), checkPayload(payload)
	case hasID || hasAttempts:
		return nil, "", fmt.Errorf("%w: it has only one of \"id\" and \"attempts\"", ErrBadPayload)
	}
	id, err := RandomID()
	if err != nil {
		return nil, "", err
	}
	fields := `"id":"` + id + `","attempts":0`
	var at int
	var insert string
	n := len(keys.list)
	switch {
	case n == 0:
		at, insert = keys.open, fields
	case keys.list[n-1].name != "delay":
		at, insert = keys.end, ","+fields
	case n == 1:
		at, insert = keys.open, fields+","
	default:
		at, insert = keys.list[n-1].before, ","+fields
	}
	out := make([]byte, 0, len(payload)+len(insert))
	out = append(out, payload[:at]...)
	out = append(out, insert...)
	out = append(out, payload[at:]...)
	return out, id, nil
}

// ResetAttempts is queue:retry's resetAttempts: the payload with its
// "attempts" set to 0, for a failed job pushed again. Only that value
// changes (PHP decodes and re-encodes the whole payload, which escapes
// what JSON_UNESCAPED_UNICODE had left raw; the decoded payload is the
// same). A payload without "attempts" (not a Redis one) gets none, as in
// PHP, and Push refuses it.
func ResetAttempts(payload []byte) ([]byte, error) {
	keys, err := topLevelKeys(payload)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadPayload, err)
	}
	var at *objectKey
	for i := range keys.list {
		if keys.list[i].name == "attempts" {
			at = &keys.list[i] // the last duplicate wins, as in json_decode
		}
	}
	if at == nil {
		return payload, nil
	}
	out := make([]byte, 0, len(payload))
	out = append(out, payload[:at.value[0]]...)
	out = append(out, '0')
	return append(out, payload[at.value[1]:]...), nil
}

// RandomID is Str::random(32): 32 characters of [A-Za-z0-9].
func RandomID() (string, error) {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 32)
	limit := big.NewInt(int64(len(alphabet)))
	for i := range b {
		n, err := rand.Int(rand.Reader, limit)
		if err != nil {
			return "", err
		}
		b[i] = alphabet[n.Int64()]
	}
	return string(b), nil
}

// objectKeys are the top-level keys of a JSON object with byte offsets.
type objectKeys struct {
	list []objectKey
	open int // just after "{"
	end  int // just after the last value
}

type objectKey struct {
	name   string
	before int // end of the previous value (or of "{"): where a key can go in front
	// value is the value's bytes: payload[value[0]:value[1]].
	value [2]int
}

func (k objectKeys) find(name string) (objectKey, bool) {
	for _, key := range k.list {
		if key.name == name {
			return key, true
		}
	}
	return objectKey{}, false
}

// topLevelKeys scans a JSON object's keys with the offsets an insertion
// needs.
func topLevelKeys(payload []byte) (objectKeys, error) {
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return objectKeys{}, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return objectKeys{}, errors.New("not a JSON object")
	}
	keys := objectKeys{open: int(dec.InputOffset())}
	for dec.More() {
		before := int(dec.InputOffset())
		tok, err := dec.Token()
		if err != nil {
			return objectKeys{}, err
		}
		name, _ := tok.(string)
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return objectKeys{}, err
		}
		end := int(dec.InputOffset())
		key := objectKey{name: name, before: before, value: [2]int{end - len(value), end}}
		keys.list = append(keys.list, key)
	}
	keys.end = int(dec.InputOffset())
	if _, err := dec.Token(); err != nil {
		return objectKeys{}, err
	}
	if dec.More() {
		return objectKeys{}, errors.New("data after the JSON object")
	}
	return keys, nil
}
