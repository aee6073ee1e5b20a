package output

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

// countingWriter records each Write it gets.
type countingWriter struct {
	mu     sync.Mutex
	writes []string
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writes = append(c.writes, string(p))
	return len(p), nil
}

func (c *countingWriter) get() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.writes...)
}

// TestBatchedLoggerGathersInfoLines: info lines logged together reach
// the output in one write, in order; a warn line is written at once with
// the lines before it; Flush writes what waits.
func TestBatchedLoggerGathersInfoLines(t *testing.T) {
	out := &countingWriter{}
	// The timer is held off for the test (lineDelay is 1 ms: under the
	// race detector on a loaded machine, 50 lines take longer than that,
	// and CI saw the timer write between them).
	log, flush, err := buildBatchedLogger(out, "json", nil, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		log.Info().Int("n", i).Msg("job")
	}
	log.Warn().Msg("careful")
	writes := out.get()
	if len(writes) != 1 {
		t.Fatalf("50 info lines and a warn line made %d writes before any wait, want 1 (the warn's flush)", len(writes))
	}
	lines := strings.Split(strings.TrimSpace(writes[0]), "\n")
	if len(lines) != 51 || !strings.Contains(lines[0], `"n":0`) || !strings.Contains(lines[49], `"n":49`) || !strings.Contains(lines[50], "careful") {
		t.Fatalf("the write holds %d lines, out of order or incomplete:\n%s", len(lines), writes[0])
	}
	log.Info().Msg("last")
	flush()
	if writes = out.get(); len(writes) != 2 || !strings.Contains(writes[1], "last") {
		t.Fatalf("Flush: writes %q", writes)
	}
}

// TestBatchedLoggerWritesWithinTheDelay: a line nobody flushes is
// written by the batcher's timer.
func TestBatchedLoggerWritesWithinTheDelay(t *testing.T) {
	var mu sync.Mutex
	var buf bytes.Buffer
	b := NewLineBatcher(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return buf.Write(p)
	}))
	if _, err := b.Write([]byte("line\n")); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		got := buf.String()
		mu.Unlock()
		if got == "line\n" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the line was not written: %q", got)
		}
		time.Sleep(time.Millisecond)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
