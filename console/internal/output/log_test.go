package output

import (
	"bytes"
	"strings"
	"testing"
)

// terminalBuffer is a writer that says it is a terminal.
type terminalBuffer struct{ bytes.Buffer }

func (*terminalBuffer) IsTerminal() bool { return true }

// TestTextLogsAreColouredOnlyOnATerminal: --log-format text writes plain
// lines into a file or a pipe, colours on a terminal unless NO_COLOR.
func TestTextLogsAreColouredOnlyOnATerminal(t *testing.T) {
	const esc = "\x1b["
	var file bytes.Buffer
	log, err := BuildLogger(&file, "text")
	if err != nil {
		t.Fatal(err)
	}
	log.Warn().Str("queue", "default").Msg("a line")
	if !strings.Contains(file.String(), "a line") || strings.Contains(file.String(), esc) {
		t.Errorf("text into a file: %q", file.String())
	}

	var tty terminalBuffer
	log, _ = BuildLogger(&tty, "text")
	log.Warn().Msg("a line")
	if !strings.Contains(tty.String(), esc) {
		t.Errorf("text on a terminal has no colour: %q", tty.String())
	}
	t.Setenv("NO_COLOR", "1")
	tty.Reset()
	log, _ = BuildLogger(&tty, "auto")
	log.Warn().Msg("a line")
	if !strings.Contains(tty.String(), "a line") || strings.Contains(tty.String(), esc) || strings.HasPrefix(tty.String(), "{") {
		t.Errorf("NO_COLOR on a terminal: %q", tty.String())
	}
}
