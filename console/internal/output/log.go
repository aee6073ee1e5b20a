package output

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/laraworker/laraworker/internal/redact"
	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"
	"github.com/urfave/cli/v2"
)

// Logger logs JSON when stderr is not a terminal, readable text on one,
// without the app's secrets.
func Logger(c *cli.Context) zerolog.Logger {
	log, _ := BuildLogger(c.App.ErrWriter, "auto", Secrets(c.App))
	return log
}

// BuildLogger writes JSON lines, or readable text (format "text", or
// "auto" on a terminal). Text is coloured only on a terminal, and never
// with NO_COLOR set: escape codes in a log file or a journal are noise.
// Every line is redacted by secrets (nil: none) as zerolog writes it, JSON
// still, before the text form is made of it: whatever a line holds (an
// exception, a handler's output, a driver's error), no secret is printed.
func BuildLogger(out io.Writer, format string, secrets *redact.Redactor) (zerolog.Logger, error) {
	return buildLogger(out, format, secrets, nil)
}

// BuildBatchedLogger is BuildLogger writing through a LineBatcher (a
// worker's line per job): call flush before the process exits.
func BuildBatchedLogger(out io.Writer, format string, secrets *redact.Redactor) (log zerolog.Logger, flush func(), err error) {
	return buildBatchedLogger(out, format, secrets, lineDelay)
}

func buildBatchedLogger(out io.Writer, format string, secrets *redact.Redactor, delay time.Duration) (log zerolog.Logger, flush func(), err error) {
	if out == nil {
		out = os.Stderr
	}
	b := newLineBatcher(out, delay)
	log, err = buildLogger(out, format, secrets, b)
	return log, b.Flush, err
}

// buildLogger is BuildLogger; lines go through batcher when set (out is
// what it writes to).
func buildLogger(out io.Writer, format string, secrets *redact.Redactor, batcher *LineBatcher) (zerolog.Logger, error) {
	if out == nil {
		out = os.Stderr
	}
	tty := writesToTerminal(out)
	if batcher != nil {
		out = batcher
	}
	text := false
	switch format {
	case "json":
	case "text":
		text = true
	case "auto":
		text = tty
	default:
		return zerolog.Nop(), fmt.Errorf("work: --log-format %q: want json, text or auto", format)
	}
	if text {
		out = zerolog.ConsoleWriter{Out: out, TimeFormat: time.TimeOnly, NoColor: !tty || os.Getenv("NO_COLOR") != ""}
	}
	if secrets != nil {
		out = secrets.Writer(out)
	}
	if batcher != nil {
		out = urgentFlush{next: out, batcher: batcher}
	}
	return zerolog.New(out).With().Timestamp().Logger(), nil
}

// writesToTerminal reports whether w is a terminal; a writer may say so
// itself (tests).
func writesToTerminal(w io.Writer) bool {
	switch v := w.(type) {
	case interface{ IsTerminal() bool }:
		return v.IsTerminal()
	case *os.File:
		return isatty.IsTerminal(v.Fd()) || isatty.IsCygwinTerminal(v.Fd())
	}
	return false
}
