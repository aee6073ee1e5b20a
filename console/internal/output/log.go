package output

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"
	"github.com/urfave/cli/v2"
)

// Logger logs JSON when stderr is not a terminal, readable text on one.
func Logger(c *cli.Context) zerolog.Logger {
	log, _ := BuildLogger(c.App.ErrWriter, "auto")
	return log
}

// BuildLogger writes JSON lines, or readable text (format "text", or
// "auto" on a terminal). Text is coloured only on a terminal, and never
// with NO_COLOR set: escape codes in a log file or a journal are noise.
func BuildLogger(out io.Writer, format string) (zerolog.Logger, error) {
	if out == nil {
		out = os.Stderr
	}
	tty := writesToTerminal(out)
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
