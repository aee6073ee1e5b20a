package worker

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rs/zerolog"
)

// TestWorkerLogger: Config.Logger's zero value (which writes nowhere)
// becomes the disabled logger, so the per-job tests of the level skip
// the lines; any other logger gets the worker's name and keeps its level.
func TestWorkerLogger(t *testing.T) {
	if l := workerLogger(zerolog.Logger{}, "w0"); l.GetLevel() != zerolog.Disabled {
		t.Fatalf("the zero logger's level is %v, want disabled", l.GetLevel())
	}
	var buf bytes.Buffer
	l := workerLogger(zerolog.New(&buf).Level(zerolog.WarnLevel), "w1")
	l.Info().Msg("dropped")
	l.Warn().Msg("kept")
	if out := buf.String(); strings.Contains(out, "dropped") || !strings.Contains(out, `"worker":"w1"`) || !strings.Contains(out, "kept") {
		t.Fatalf("logged %q", out)
	}
}
