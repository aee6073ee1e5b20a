package output

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/laraworker/laraworker/internal/redact"
)

// terminalBuffer is a writer that says it is a terminal.
type terminalBuffer struct{ bytes.Buffer }

func (*terminalBuffer) IsTerminal() bool { return true }

// TestTextLogsAreColouredOnlyOnATerminal: --log-format text writes plain
// lines into a file or a pipe, colours on a terminal unless NO_COLOR.
func TestTextLogsAreColouredOnlyOnATerminal(t *testing.T) {
	const esc = "\x1b["
	var file bytes.Buffer
	log, err := BuildLogger(&file, "text", nil)
	if err != nil {
		t.Fatal(err)
	}
	log.Warn().Str("queue", "default").Msg("a line")
	if !strings.Contains(file.String(), "a line") || strings.Contains(file.String(), esc) {
		t.Errorf("text into a file: %q", file.String())
	}

	var tty terminalBuffer
	log, _ = BuildLogger(&tty, "text", nil)
	log.Warn().Msg("a line")
	if !strings.Contains(tty.String(), esc) {
		t.Errorf("text on a terminal has no colour: %q", tty.String())
	}
	t.Setenv("NO_COLOR", "1")
	tty.Reset()
	log, _ = BuildLogger(&tty, "auto", nil)
	log.Warn().Msg("a line")
	if !strings.Contains(tty.String(), "a line") || strings.Contains(tty.String(), esc) || strings.HasPrefix(tty.String(), "{") {
		t.Errorf("NO_COLOR on a terminal: %q", tty.String())
	}
}

// TestLogsHoldNoRandomSecret: random secrets (printable ASCII, some
// non-ASCII), added after the logger was made as the app's config adds
// them, logged as fields, errors, messages and JSON inside a field, in
// JSON and in text: no line holds one as written, as JSON escapes it or
// as Go quotes it, and each line is still what the format makes.
func TestLogsHoldNoRandomSecret(t *testing.T) {
	r := rand.New(rand.NewPCG(38, 1))
	const chars = " !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~"
	extra := []rune("éñ€✗日😀")
	for _, format := range []string{"json", "text"} {
		for range 200 {
			var b strings.Builder
			for range 8 + r.IntN(33) {
				if r.IntN(6) == 0 {
					b.WriteRune(extra[r.IntN(len(extra))])
				} else {
					b.WriteByte(chars[r.IntN(len(chars))])
				}
			}
			secret := b.String()
			var out bytes.Buffer
			secrets := redact.New()
			log, err := BuildLogger(&out, format, secrets)
			if err != nil {
				t.Fatal(err)
			}
			secrets.Add(secret)
			inner, _ := json.Marshal(map[string]string{"password": secret})
			log.Warn().Str("stdout", "pw "+secret+" end").Err(errors.New("dial: "+secret)).RawJSON("config", inner).
				Str("json", string(inner)).Msg("connecting with " + secret)
			goj, _ := json.Marshal(secret)
			q := strconv.Quote(secret)
			for _, f := range []string{secret, string(goj[1 : len(goj)-1]), q[1 : len(q)-1]} {
				if strings.Contains(out.String(), f) {
					t.Fatalf("%s log holds the secret %q as %q:\n%s", format, secret, f, out.String())
				}
			}
			if format == "json" && !json.Valid(out.Bytes()) {
				t.Fatalf("the JSON line is no longer JSON: %s", out.String())
			}
			if strings.Count(out.String(), "[redacted]") < 5 {
				t.Fatalf("%s log: %s", format, out.String())
			}
		}
	}
}
