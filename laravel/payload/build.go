package payload

import (
	"crypto/rand"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/laraworker/laraworker/internal/phpjson"
	"github.com/laraworker/laraworker/laravel/phpserialize"
)

// Shape selects which keys a built payload carries, after the Laravel
// version that will run it (Queue::createObjectPayload and
// createPayloadArray in each version). Every version reads every shape; the
// shape only matters for byte-for-byte comparison with what PHP would write.
type Shape int

const (
	// Shape8 is 8.43 to 9.3: ... backoff, timeout, retryUntil, data; the
	// command holds every property (NewCommand), defaults included.
	Shape8 Shape = iota
	// Shape94 is 9.4 to 12.10: Shape8's keys; SerializesModels leaves out
	// of the command every property that still holds its declared default
	// (NewCommand writes no default-valued trait property).
	Shape94
	// Shape12 is 12.11 to 12.50: + createdAt and delay.
	Shape12
	// Shape1251 is 12.51+: + data.batchId.
	Shape1251
	// Shape13 is 13.x: + deleteWhenMissingModels.
	Shape13
)

// ShapeOf is the shape dispatch() writes on Laravel major.minor. Before
// 8.43 it is Shape8, which every version reads.
func ShapeOf(major, minor int) Shape {
	switch {
	case major < 9 || major == 9 && minor < 4:
		return Shape8
	case major < 12 || major == 12 && minor < 11:
		return Shape94
	case major == 12 && minor < 51:
		return Shape12
	case major == 12:
		return Shape1251
	}
	return Shape13
}

// SerializesDefaults tells whether the command holds the properties that
// still have their declared default: 8.x and 9.0 to 9.3 serialize them,
// 9.4+'s SerializesModels::__serialize leaves them out.
func (s Shape) SerializesDefaults() bool { return s == Shape8 }

// BuildOptions are what the dispatching side decides, not the class.
type BuildOptions struct {
	Shape Shape
	// Encrypter, when set, encrypts data.command as ShouldBeEncrypted does.
	Encrypter *Encrypter
	// Now is the dispatch time (createdAt); zero means time.Now().
	Now time.Time
	// Delay is the dispatch delay in seconds for Shape12+'s "delay" key
	// (nil writes null).
	Delay *int64
	// UUID overrides the random v4 uuid (tests, retries).
	UUID string
	// Declared holds the class's declared defaults of the public
	// properties the payload's keys come from (tries, maxExceptions,
	// failOnTimeout, backoff, timeout, retryUntil, deleteWhenMissingModels),
	// by property name. PHP reads `$job->tries` from the object, which has
	// its class's default even when 9.4+ leaves the property out of the
	// serialized command; a property of the command wins over it.
	Declared map[string]*phpserialize.Value
	// Carried holds the keys PHP's payload hooks add (Laravel's Context,
	// Sentry's trace, W3C trace context) for a job dispatched from inside
	// another: they go after createdAt (after data before 12.11), before
	// delay, where PHP's hooks put them. The zero value adds none.
	Carried Carried
}

// BuildObjectPayload builds the jobs.payload Laravel's createObjectPayload
// writes for a command object: the same keys, order and JSON escaping
// (JSON_UNESCAPED_UNICODE), with maxTries, maxExceptions, failOnTimeout,
// backoff, timeout and retryUntil read from the object's public properties
// as `$job->tries ?? null` does. Values PHP computes from methods (tries(),
// backoff(), retryUntil(), displayName()) cannot be known here: set the
// matching properties on the object instead.
func BuildObjectPayload(cmd *phpserialize.Value, o BuildOptions) ([]byte, error) {
	if cmd == nil || cmd.Kind != phpserialize.KindObject {
		return nil, errors.New("payload: a job command must be an object")
	}
	serialized, err := phpserialize.Serialize(cmd)
	if err != nil {
		return nil, err
	}
	command := string(serialized)
	if o.Encrypter != nil {
		if command, err = EncryptCommand(o.Encrypter, serialized); err != nil {
			return nil, err
		}
	}
	id := o.UUID
	if id == "" {
		if id, err = NewUUID(); err != nil {
			return nil, err
		}
	}
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	w := &jsonWriter{buf: make([]byte, 0, len(command)+256)}
	w.raw("{")
	w.key("uuid", true).str(id)
	w.key("displayName", false).str(cmd.Class)
	w.key("job", false).str(CallQueuedHandler)
	prop := func(name string) *phpserialize.Value {
		if v := publicProp(cmd, name); v != nil {
			return v
		}
		return o.Declared[name]
	}
	w.key("maxTries", false).value(prop("tries"))
	w.key("maxExceptions", false).value(prop("maxExceptions"))
	w.key("failOnTimeout", false).value(orFalse(prop("failOnTimeout")))
	w.key("backoff", false).backoff(prop("backoff"), now)
	w.key("timeout", false).value(prop("timeout"))
	w.key("retryUntil", false).timestamp(prop("retryUntil"))
	if o.Shape >= Shape13 {
		w.key("deleteWhenMissingModels", false).value(orFalse(prop("deleteWhenMissingModels")))
	}
	w.key("data", false).raw("{")
	w.key("commandName", true).str(cmd.Class)
	w.key("command", false).str(command)
	if o.Shape >= Shape1251 {
		w.key("batchId", false).value(publicProp(cmd, "batchId"))
	}
	w.raw("}")
	if o.Shape >= Shape12 {
		w.key("createdAt", false).int(now.Unix())
	}
	w.carried(o.Carried)
	if o.Shape >= Shape12 {
		if o.Delay != nil {
			w.key("delay", false).int(*o.Delay)
		} else {
			w.key("delay", false).raw("null")
		}
	}
	w.raw("}")
	return w.buf, w.err
}

// NewUUID returns a random RFC 4122 v4 uuid, lowercase, as Str::uuid().
func NewUUID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]), nil
}

// publicProp returns a public property's value, nil when absent: PHP's
// `$job->prop ?? null` from outside the class sees only public ones.
func publicProp(obj *phpserialize.Value, name string) *phpserialize.Value {
	for _, e := range obj.Entries {
		if !e.Key.IsInt && e.Key.Str == name {
			return e.Value.Deref()
		}
	}
	return nil
}

func orFalse(v *phpserialize.Value) *phpserialize.Value {
	if v == nil || v.Kind == phpserialize.KindNull {
		return phpserialize.Bool(false)
	}
	return v
}

// jsonWriter writes PHP-compatible JSON, keeping the first error.
type jsonWriter struct {
	buf []byte
	err error
}

func (w *jsonWriter) raw(s string) *jsonWriter {
	w.buf = append(w.buf, s...)
	return w
}

func (w *jsonWriter) key(k string, first bool) *jsonWriter {
	if !first {
		w.buf = append(w.buf, ',')
	}
	w.str(k)
	w.buf = append(w.buf, ':')
	return w
}

func (w *jsonWriter) str(s string) *jsonWriter {
	if w.err != nil {
		return w
	}
	w.buf, w.err = phpjson.AppendString(w.buf, s, phpjson.UnescapedUnicode)
	return w
}

func (w *jsonWriter) int(n int64) *jsonWriter {
	w.buf = strconv.AppendInt(w.buf, n, 10)
	return w
}

// value writes a PHP value as json_encode does (null for absent).
func (w *jsonWriter) value(v *phpserialize.Value) *jsonWriter {
	if w.err != nil {
		return w
	}
	w.buf, w.err = appendValueJSON(w.buf, v, 0)
	return w
}

// backoff joins an array backoff with "," as getJobBackoff does; DateTimes
// become the seconds until them.
func (w *jsonWriter) backoff(v *phpserialize.Value, now time.Time) *jsonWriter {
	if v == nil || v.Kind == phpserialize.KindNull {
		return w.raw("null")
	}
	items := []*phpserialize.Value{v}
	if v.Kind == phpserialize.KindArray {
		items = listValues(v)
	}
	joined := make([]byte, 0, 16)
	for i, it := range items {
		if i > 0 {
			joined = append(joined, ',')
		}
		joined = append(joined, backoffText(it, now)...)
	}
	return w.str(string(joined))
}

func backoffText(v *phpserialize.Value, now time.Time) string {
	if IsDate(v) {
		if t, err := phpserialize.Time(v); err == nil {
			return strconv.FormatInt(max(0, int64(math.Ceil(t.Sub(now).Seconds()))), 10)
		}
	}
	switch v.Kind {
	case phpserialize.KindInt:
		return strconv.FormatInt(v.Int, 10)
	case phpserialize.KindString:
		return string(v.Str)
	case phpserialize.KindFloat:
		return string(phpserialize.AppendPHPFloat(nil, v.Float))
	case phpserialize.KindBool:
		if v.Bool {
			return "1"
		}
	}
	return ""
}

// timestamp writes retryUntil: a DateTime as its Unix time, else the value.
func (w *jsonWriter) timestamp(v *phpserialize.Value) *jsonWriter {
	if IsDate(v) {
		t, err := phpserialize.Time(v)
		if err != nil {
			w.err = err
			return w
		}
		return w.int(t.Unix())
	}
	return w.value(v)
}

func appendValueJSON(dst []byte, v *phpserialize.Value, depth int) ([]byte, error) {
	if depth > 512 {
		return nil, errors.New("payload: value nested too deeply for JSON")
	}
	v = v.Deref()
	if v == nil {
		return append(dst, "null"...), nil
	}
	switch v.Kind {
	case phpserialize.KindNull:
		return append(dst, "null"...), nil
	case phpserialize.KindBool:
		return strconv.AppendBool(dst, v.Bool), nil
	case phpserialize.KindInt:
		return strconv.AppendInt(dst, v.Int, 10), nil
	case phpserialize.KindFloat:
		return phpjson.AppendFloat(dst, v.Float)
	case phpserialize.KindString:
		return phpjson.AppendString(dst, string(v.Str), phpjson.UnescapedUnicode)
	case phpserialize.KindArray:
		return appendArrayJSON(dst, v, depth)
	}
	return nil, fmt.Errorf("payload: cannot write %s as a payload value", describe(v))
}

func appendArrayJSON(dst []byte, v *phpserialize.Value, depth int) ([]byte, error) {
	isList := v.IsList()
	open, close := byte('{'), byte('}')
	if isList {
		open, close = '[', ']'
	}
	dst = append(dst, open)
	var err error
	for i, e := range v.Entries {
		if i > 0 {
			dst = append(dst, ',')
		}
		if !isList {
			if dst, err = phpjson.AppendString(dst, e.Key.String(), phpjson.UnescapedUnicode); err != nil {
				return nil, err
			}
			dst = append(dst, ':')
		}
		if dst, err = appendValueJSON(dst, e.Value, depth+1); err != nil {
			return nil, err
		}
	}
	return append(dst, close), nil
}
