package payload

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/laraworker/laraworker/laravel/phpserialize"
)

// ErrEncrypted is returned when a command is encrypted and no key was given.
var ErrEncrypted = errors.New("payload: the command is encrypted (ShouldBeEncrypted) and no APP_KEY is configured")

// Command is a job object as PHP serialized it into data.command.
type Command struct {
	// Object is the decoded object tree; edit it and call Serialize to
	// write it back.
	Object *phpserialize.Value
	// Encrypted says the command was stored encrypted.
	Encrypted bool
}

// DecodeCommand unserializes the payload's data.command, decrypting it with
// enc when it is not plain "O:" text (Laravel's rule in getCommand).
func DecodeCommand(p *Payload, enc *Encrypter) (*Command, error) {
	if p.Data.Command == "" {
		return nil, &PayloadError{Key: "data.command", Msg: "missing: not an object job (job is " + quoteOrEmpty(p.Job) + ")"}
	}
	var c *Command
	var err error
	encrypted := !IsPlainCommand(p.Data.Command)
	if encrypted {
		if enc == nil {
			return nil, ErrEncrypted
		}
		plain, derr := DecryptCommand(enc, p.Data.Command)
		if derr != nil {
			return nil, fmt.Errorf("payload: data.command: %w", derr)
		}
		c, err = ParseCommand(plain)
	} else {
		c, err = asCommand(phpserialize.UnserializeString(p.Data.Command))
	}
	if err != nil {
		return nil, fmt.Errorf("payload: data.command: %w", err)
	}
	c.Encrypted = encrypted
	return c, nil
}

// IsPlainCommand is Laravel's test: only text starting with "O:" is a plain
// serialized command; anything else is taken to be encrypted.
func IsPlainCommand(s string) bool {
	return len(s) >= 2 && s[0] == 'O' && s[1] == ':'
}

func quoteOrEmpty(s string) string {
	if s == "" {
		return "empty"
	}
	return fmt.Sprintf("%q", s)
}

// ParseCommand unserializes a command, which must be an object.
func ParseCommand(serialized []byte) (*Command, error) {
	return asCommand(phpserialize.Unserialize(serialized))
}

// asCommand takes an unserialized value that must be an object.
func asCommand(v *phpserialize.Value, err error) (*Command, error) {
	if err != nil {
		return nil, err
	}
	if v.Kind != phpserialize.KindObject {
		return nil, fmt.Errorf("%w (it is %s)", errNotObject, describe(v))
	}
	return &Command{Object: v}, nil
}

// Class is the command's PHP class.
func (c *Command) Class() string { return c.Object.Class }

// Serialize writes the command back as PHP would.
func (c *Command) Serialize() ([]byte, error) { return phpserialize.Serialize(c.Object) }

// Decode fills out (a pointer to a struct with `php:"name"` tags) from the
// command's properties, by phpserialize.Decode's rules; ModelIdentifier,
// Closure and phpserialize.EnumCase fields read themselves.
func (c *Command) Decode(out any) error { return phpserialize.Decode(c.Object, out) }

// Queueable holds the properties Laravel's Bus\Queueable trait adds to every
// queued job. A nil field means the property was absent (9.4+ omits
// properties that hold their default) or null.
type Queueable struct {
	Connection      *string
	Queue           *string
	ChainConnection *string
	ChainQueue      *string
	// ChainCatchCallbacks are PHP closures; Go cannot run them.
	ChainCatchCallbacks []*phpserialize.Value
	// Delay is an int of seconds, a DateTime or a DateInterval, as set.
	Delay       *phpserialize.Value
	AfterCommit *bool
	Middleware  []*phpserialize.Value
	// Chained holds the remaining links, each a serialized command.
	Chained []string
	BatchID *string
}

// queueableProps are the Bus\Queueable properties Queueable reads, in
// the order of its indexes below.
var queueableProps = [...]string{"connection", "queue", "chainConnection", "chainQueue", "batchId",
	"delay", "afterCommit", "chainCatchCallbacks", "middleware", "chained"}

// Queueable reads the Bus\Queueable properties.
func (c *Command) Queueable() Queueable {
	var p [len(queueableProps)]*phpserialize.Value
	readProps(c.Object, queueableProps[:], p[:])
	q := Queueable{
		Connection:      stringValue(p[0]),
		Queue:           stringValue(p[1]),
		ChainConnection: stringValue(p[2]),
		ChainQueue:      stringValue(p[3]),
		BatchID:         stringValue(p[4]),
	}
	if d := p[5]; d != nil && d.Kind != phpserialize.KindNull {
		q.Delay = d
	}
	if b := p[6]; b != nil && b.Kind == phpserialize.KindBool {
		q.AfterCommit = &b.Bool
	}
	q.ChainCatchCallbacks = listValues(p[7])
	q.Middleware = listValues(p[8])
	for _, v := range listValues(p[9]) {
		if v.Kind == phpserialize.KindString {
			q.Chained = append(q.Chained, string(v.Str))
		}
	}
	return q
}

func listValues(v *phpserialize.Value) []*phpserialize.Value {
	if v == nil || v.Kind != phpserialize.KindArray {
		return nil
	}
	out := make([]*phpserialize.Value, 0, len(v.Entries))
	for _, e := range v.Entries {
		out = append(out, e.Value.Deref())
	}
	return out
}

// ModelAt is a ModelIdentifier found in a command, with where it was found.
type ModelAt struct {
	// Path is the property path, e.g. "podcast" or "items.2".
	Path  string
	Model ModelIdentifier
}

// Models lists every ModelIdentifier in the command (SerializesModels'
// stand-ins for Eloquent models and collections), depth first.
func (c *Command) Models() []ModelAt {
	var out []ModelAt
	seen := map[*phpserialize.Value]bool{}
	var walk func(path string, v *phpserialize.Value)
	walk = func(path string, v *phpserialize.Value) {
		v = v.Deref()
		if v == nil || seen[v] {
			return
		}
		seen[v] = true
		if IsModelIdentifier(v) {
			var m ModelIdentifier
			if m.DecodePHP(v) == nil {
				out = append(out, ModelAt{Path: path, Model: m})
			}
			return
		}
		if v.Kind != phpserialize.KindArray && v.Kind != phpserialize.KindObject {
			return
		}
		for _, e := range v.Entries {
			_, _, name := phpserialize.SplitPropertyName(e.Key.String())
			if v.Kind == phpserialize.KindArray {
				name = e.Key.String()
			}
			walk(joinPath(path, name), e.Value)
		}
	}
	for _, e := range c.Object.Entries {
		_, _, name := phpserialize.SplitPropertyName(e.Key.String())
		walk(name, e.Value)
	}
	return out
}

func joinPath(base, name string) string {
	if base == "" {
		return name
	}
	return base + "." + name
}

// HasClosures reports whether the command holds PHP closures anywhere (a
// queued closure, chain catch callbacks, closures in properties).
func (c *Command) HasClosures() bool {
	seen := map[*phpserialize.Value]bool{}
	var walk func(v *phpserialize.Value) bool
	walk = func(v *phpserialize.Value) bool {
		v = v.Deref()
		if v == nil || seen[v] {
			return false
		}
		seen[v] = true
		if IsClosure(v) {
			return true
		}
		for _, e := range v.Entries {
			if walk(e.Value) {
				return true
			}
		}
		return false
	}
	return walk(c.Object)
}

// looksSerializedObject is a cheap check used before unserializing text
// found inside other values (chained links).
func looksSerializedObject(b []byte) bool { return bytes.HasPrefix(b, []byte("O:")) }
