package payload

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// CallQueuedHandler is the `job` of every object job: Laravel's handler that
// unserializes data.command and runs it.
const CallQueuedHandler = `Illuminate\Queue\CallQueuedHandler@call`

// Payload is a decoded jobs.payload (or failed_jobs.payload) as any Laravel
// from 7.x to 13.x writes it. Missing keys stay nil/zero; unknown keys are
// kept in Extra. Raw holds the exact bytes read, so the row can be written
// back unchanged (release, fail, retry) whatever this type understands.
type Payload struct {
	UUID          string
	DisplayName   string
	Job           string
	MaxTries      *int64
	MaxExceptions *int64
	FailOnTimeout bool
	// Backoff is Laravel's comma-joined retry delays ("3", "1,5,10").
	Backoff *string
	Timeout *int64
	// RetryUntil is a Unix timestamp; 7.x payloads call it timeoutAt and are
	// read into it too (TimeoutAt remembers that key was present).
	RetryUntil              *int64
	TimeoutAt               *int64
	DeleteWhenMissingModels bool
	CreatedAt               *int64
	// Delay is 12.11+'s dispatch delay; in 7.x payloads it held the backoff.
	Delay *int64
	Data  Data
	// Extra holds keys this type does not know (hook keys such as
	// "illuminate:log:context", Horizon's "tags"), undecoded.
	Extra map[string]json.RawMessage
	// Raw is the payload exactly as stored.
	Raw []byte

	fields jsonObject
}

// Has reports whether the payload has the top-level key (even if null):
// the key set tells which Laravel version wrote it.
func (p *Payload) Has(key string) bool { return p.fields.has(key) }

// Data is payload.data. Object jobs carry CommandName and Command; string
// jobs (Queue::push('Class@method', $data)) carry arbitrary data in Raw.
type Data struct {
	CommandName string
	// Command is the PHP-serialized command (starts with "O:") or an
	// encrypted one (Laravel's base64 envelope).
	Command string
	BatchID *string
	// Raw is data's JSON exactly as stored.
	Raw json.RawMessage

	fields jsonObject
}

// Has reports whether data has the key (even if null).
func (d *Data) Has(key string) bool { return d.fields.has(key) }

// PayloadError says why a payload could not be read.
type PayloadError struct {
	Key string // the offending key, "" for the document itself
	Msg string
}

func (e *PayloadError) Error() string {
	if e.Key == "" {
		return "payload: " + e.Msg
	}
	return fmt.Sprintf("payload: key %q: %s", e.Key, e.Msg)
}

// Parse decodes a payload. It is tolerant of missing and unknown keys and of
// the loose types PHP allows (numeric strings for numbers), and strict about
// the document being a JSON object.
func Parse(raw []byte) (*Payload, error) {
	t := newTexts(len(raw))
	fields, data, ok := scanPayload(raw, "data", &t)
	if !ok {
		var err error
		if fields, err = decodeObject(raw); err != nil {
			return nil, err
		}
		data = nil
	}
	p := &Payload{Raw: raw, fields: fields}
	if err := p.readFields(&t, fields, data); err != nil {
		return nil, err
	}
	return p, nil
}

// decodeObject is encoding/json's reading of a payload document, for what
// scanObject declines; its errors are the ones Parse reports.
func decodeObject(raw []byte) (jsonObject, error) {
	var fields map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&fields); err != nil {
		return nil, &PayloadError{Msg: "invalid JSON: " + jsonErrorText(err)}
	}
	if fields == nil {
		return nil, &PayloadError{Msg: "not a JSON object"}
	}
	if dec.More() {
		return nil, &PayloadError{Msg: "trailing data after the JSON object"}
	}
	return objectFromMap(fields), nil
}

func jsonErrorText(err error) string {
	var se *json.SyntaxError
	if ok := asSyntaxError(err, &se); ok {
		return fmt.Sprintf("%s (at byte %d)", se.Error(), se.Offset)
	}
	return err.Error()
}

func asSyntaxError(err error, target **json.SyntaxError) bool {
	se, ok := err.(*json.SyntaxError)
	if ok {
		*target = se
	}
	return ok
}

// readFields reads the payload's members; data is the data member split
// already (nil: split it here); its strings are decoded into t.
func (p *Payload) readFields(t *texts, fields, data jsonObject) error {
	var err error
	str := func(key string) string {
		if err != nil {
			return ""
		}
		var s string
		s, err = t.str(key, fields, key)
		return s
	}
	num := func(key string) *int64 {
		if err != nil {
			return nil
		}
		var n *int64
		n, err = optInt(key, fields.member(key).raw)
		return n
	}
	flag := func(key string) bool {
		if err != nil {
			return false
		}
		var b bool
		b, err = optBool(key, fields.member(key).raw)
		return b
	}
	p.UUID = str("uuid")
	p.DisplayName = str("displayName")
	p.Job = str("job")
	p.MaxTries = num("maxTries")
	p.MaxExceptions = num("maxExceptions")
	p.FailOnTimeout = flag("failOnTimeout")
	if raw := fields.member("backoff").raw; !isNull(raw) { // Laravel writes null without one
		p.Backoff = p.readBackoff(raw, &err)
	}
	p.Timeout = num("timeout")
	p.RetryUntil = num("retryUntil")
	p.TimeoutAt = num("timeoutAt")
	if p.RetryUntil == nil && p.TimeoutAt != nil {
		p.RetryUntil = p.TimeoutAt
	}
	p.DeleteWhenMissingModels = flag("deleteWhenMissingModels")
	p.CreatedAt = num("createdAt")
	p.Delay = num("delay")
	if err != nil {
		return err
	}
	if err := p.Data.read(t, fields.member("data").raw, data); err != nil {
		return err
	}
	for _, f := range fields {
		if !knownKeys[f.key] {
			if p.Extra == nil {
				p.Extra = make(map[string]json.RawMessage)
			}
			p.Extra[f.key] = f.raw
		}
	}
	return nil
}

var knownKeys = map[string]bool{
	"uuid": true, "displayName": true, "job": true, "maxTries": true, "maxExceptions": true,
	"failOnTimeout": true, "backoff": true, "timeout": true, "retryUntil": true, "timeoutAt": true,
	"deleteWhenMissingModels": true, "createdAt": true, "delay": true, "data": true,
}

// readBackoff accepts Laravel's string ("1,5,10") and the bare numbers a
// hand-made payload may hold.
func (p *Payload) readBackoff(raw json.RawMessage, errp *error) *string {
	if *errp != nil {
		return nil
	}
	if s, err := optString("backoff", raw); err == nil {
		return s
	}
	n, err := optInt("backoff", raw)
	if err != nil {
		*errp = &PayloadError{Key: "backoff", Msg: "want a string like \"1,5,10\" or a number, got " + jsonKind(raw)}
		return nil
	}
	s := strconv.FormatInt(*n, 10)
	return &s
}

func (d *Data) read(t *texts, raw json.RawMessage, fields jsonObject) error {
	d.Raw = raw
	if isNull(raw) || raw[0] != '{' {
		return nil // string jobs may carry any data, "" by default
	}
	ok := fields != nil
	if !ok {
		fields, ok = scanObject(raw)
	}
	if !ok {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			return &PayloadError{Key: "data", Msg: "invalid JSON object"}
		}
		fields = objectFromMap(m)
	}
	d.fields = fields
	var err error
	if d.CommandName, err = t.str("data.commandName", fields, "commandName"); err != nil {
		return err
	}
	if d.Command, err = t.str("data.command", fields, "command"); err != nil {
		return err
	}
	d.BatchID, err = optString("data.batchId", fields.member("batchId").raw)
	return err
}

// IsObjectJob reports whether the payload runs a serialized command through
// CallQueuedHandler (as opposed to a Class@method string job).
func (p *Payload) IsObjectJob() bool {
	return p.Job == CallQueuedHandler && p.Data.Command != ""
}

// Name is what Laravel's resolveName() returns: displayName, else job.
func (p *Payload) Name() string {
	if p.DisplayName != "" {
		return p.DisplayName
	}
	return p.Job
}

// BackoffFor returns the seconds Laravel's calculateBackoff waits after the
// given attempt: from the payload's backoff, else its delay (7.x's backoff,
// 12.11+'s dispatch delay, as Job::backoff() reads it), else def (--backoff).
func (p *Payload) BackoffFor(attempts int64, def string) int64 {
	spec := def
	switch {
	case p.Backoff != nil:
		spec = *p.Backoff
	case p.Delay != nil:
		spec = strconv.FormatInt(*p.Delay, 10)
	}
	return BackoffAt(spec, attempts)
}

// BackoffAt implements `(int)(explode(',', spec)[attempts-1] ?? last)`.
func BackoffAt(spec string, attempts int64) int64 {
	parts := strings.Split(spec, ",")
	i := attempts - 1
	if i < 0 || i >= int64(len(parts)) {
		i = int64(len(parts)) - 1
	}
	return phpIntCast(parts[i])
}

// phpIntCast mimics PHP's (int) cast of a string: leading whitespace, an
// optional sign, then as many digits as there are; anything else gives 0.
func phpIntCast(s string) int64 {
	s = strings.TrimLeft(s, " \t\n\r\v\f")
	end := 0
	if end < len(s) && (s[end] == '+' || s[end] == '-') {
		end++
	}
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	n, err := strconv.ParseInt(s[:end], 10, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			if strings.HasPrefix(s, "-") {
				return math.MinInt64
			}
			return math.MaxInt64
		}
		return 0
	}
	return n
}

func isNull(raw json.RawMessage) bool {
	return len(raw) == 0 || string(raw) == "null"
}

func jsonKind(raw json.RawMessage) string {
	switch raw[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	default:
		return "a number"
	}
}

// str is the string member name of fields: decoded already by the scan,
// else decoded into t's buffer now; "" when null or absent. key names it
// in errors.
func (t *texts) str(key string, fields jsonObject, name string) (string, error) {
	f := fields.member(name)
	if f.decoded {
		return f.text, nil
	}
	if isNull(f.raw) {
		return "", nil
	}
	return t.decode(key, f.raw)
}

// decode reads raw, a JSON value other than null, as a string: unquoted
// into t's buffer, or by encoding/json for what the scanner declines.
func (t *texts) decode(key string, raw json.RawMessage) (string, error) {
	if s, ok := t.unquote(raw); ok {
		return s, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", &PayloadError{Key: key, Msg: "want a string, got " + jsonKind(raw)}
	}
	return s, nil
}

func optString(key string, raw json.RawMessage) (*string, error) {
	if isNull(raw) {
		return nil, nil
	}
	var t texts
	s, err := t.decode(key, raw)
	if err != nil {
		return nil, err
	}
	return &s, nil
}

// optInt reads an integer the way PHP code would compare it: JSON integers,
// integral floats and numeric strings.
func optInt(key string, raw json.RawMessage) (*int64, error) {
	if isNull(raw) {
		return nil, nil
	}
	text := string(raw)
	if raw[0] == '"' {
		if err := json.Unmarshal(raw, &text); err != nil {
			return nil, &PayloadError{Key: key, Msg: "invalid string"}
		}
		text = strings.TrimSpace(text)
	}
	if n, err := strconv.ParseInt(text, 10, 64); err == nil {
		return &n, nil
	}
	if f, err := strconv.ParseFloat(text, 64); err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<63 {
		n := int64(f)
		return &n, nil
	}
	return nil, &PayloadError{Key: key, Msg: "want an integer, got " + jsonKind(raw) + " " + truncate(string(raw), 40)}
}

func optBool(key string, raw json.RawMessage) (bool, error) {
	if isNull(raw) {
		return false, nil
	}
	switch string(raw) {
	case "true", "1":
		return true, nil
	case "false", "0", `""`, `"0"`:
		return false, nil
	}
	return false, &PayloadError{Key: key, Msg: "want a boolean, got " + jsonKind(raw)}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
