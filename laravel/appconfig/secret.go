package appconfig

import (
	"fmt"

	"github.com/laraworker/laraworker/internal/redact"
)

// Secret holds a password or key. Every formatting path (%v, %+v, %#v, %s,
// %q, %x, JSON, text marshalling) prints "[redacted]" so a Config can be
// logged without leaking credentials. Use Reveal to get the value.
type Secret string

const redacted = redact.Mark

// Reveal returns the secret value. Callers must never log it.
func (s Secret) Reveal() string { return string(s) }

// IsSet reports whether the secret is non-empty.
func (s Secret) IsSet() bool { return s != "" }

func (s Secret) String() string   { return redacted }
func (s Secret) GoString() string { return `"` + redacted + `"` }

// Format covers verbs that would otherwise bypass String (e.g. %x, %q on
// the underlying string kind).
func (s Secret) Format(f fmt.State, verb rune) {
	switch verb {
	case 'q':
		fmt.Fprint(f, `"`+redacted+`"`)
	default:
		fmt.Fprint(f, redacted)
	}
}

func (s Secret) MarshalText() ([]byte, error) { return []byte(redacted), nil }

// ScrubError returns err with every occurrence of the given secret values
// removed from its message. Driver errors (connection failures above all)
// may echo parts of a DSN; this guarantees they never carry a password.
func ScrubError(err error, secrets ...Secret) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	clean := ScrubString(msg, secrets...)
	if clean == msg {
		return err
	}
	return &scrubbedError{msg: clean, cause: err}
}

// ScrubString replaces every occurrence of the secrets in s by
// "[redacted]", in any escaping (JSON, HTML, percent escapes: package
// internal/redact, the step every page, log line and handler input goes
// through), and a "base64:" key in its other spellings.
func ScrubString(s string, secrets ...Secret) string {
	values := make([]string, 0, len(secrets))
	for _, sec := range secrets {
		values = append(values, sec.Reveal())
	}
	return redact.New(values...).String(s)
}

// scrubbedError keeps the original for errors.Is/As classification (e.g.
// driver error codes) while its message is sanitised.
type scrubbedError struct {
	msg   string
	cause error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.cause }
