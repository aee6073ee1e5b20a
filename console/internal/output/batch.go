package output

import (
	"io"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// Batching the log's lines. A busy worker logs a line per job; written
// one by one, each line is a write system call (at concurrency 128 on
// Redis that was 8% of the worker's CPU per job). Lines at info and debug
// are gathered for up to lineDelay (or lineBatchMax bytes) and written
// together, in order; a line at warn or above is written at once with
// whatever waits before it, and Flush writes what waits (at exit). A
// crash of the process loses at most lineDelay of info lines.
const (
	lineDelay    = time.Millisecond
	lineBatchMax = 64 << 10
)

// LineBatcher gathers writes for w (see above). Safe for concurrent use.
// A line is appended under mu, which is never held while writing to w: a
// job's goroutine logging never waits for a write system call (unless
// lineBatchMax bytes wait). writing keeps the writes to w in order.
type LineBatcher struct {
	mu sync.Mutex
	// buf gathers the lines; spare is the buffer last written, reused.
	buf, spare []byte
	armed      bool
	timer      *time.Timer

	// delay is lineDelay; tests that count writes set it longer so
	// that a slow machine's timer does not write between their lines.
	delay time.Duration

	writing sync.Mutex
	w       io.Writer
}

// NewLineBatcher gathers the writes for w.
func NewLineBatcher(w io.Writer) *LineBatcher {
	return newLineBatcher(w, lineDelay)
}

func newLineBatcher(w io.Writer, delay time.Duration) *LineBatcher {
	b := &LineBatcher{w: w, delay: delay}
	b.timer = time.AfterFunc(time.Hour, b.Flush)
	b.timer.Stop()
	return b
}

// Write queues p; it is written within lineDelay.
func (b *LineBatcher) Write(p []byte) (int, error) {
	b.mu.Lock()
	b.buf = append(b.buf, p...)
	full := len(b.buf) >= lineBatchMax
	if !full && !b.armed {
		b.armed = true
		b.timer.Reset(b.delay)
	}
	b.mu.Unlock()
	if full {
		b.Flush()
	}
	return len(p), nil
}

// Flush writes what waits.
func (b *LineBatcher) Flush() {
	b.writing.Lock()
	defer b.writing.Unlock()
	b.mu.Lock()
	data := b.buf
	b.buf, b.spare = b.spare[:0], nil
	if b.armed {
		b.armed = false
		b.timer.Stop()
	}
	b.mu.Unlock()
	if len(data) > 0 {
		// A failed write of the log has nowhere to be told, as with
		// zerolog writing to w itself.
		_, _ = b.w.Write(data)
	}
	b.mu.Lock()
	if data != nil && cap(data) <= 4*lineBatchMax {
		b.spare = data[:0]
	}
	b.mu.Unlock()
}

// urgentFlush is the logger's writer in front of the rest: a line at
// warn or above flushes the batcher once written.
type urgentFlush struct {
	next    io.Writer
	batcher *LineBatcher
}

func (u urgentFlush) Write(p []byte) (int, error) { return u.next.Write(p) }

func (u urgentFlush) WriteLevel(level zerolog.Level, p []byte) (int, error) {
	n, err := u.next.Write(p)
	if level >= zerolog.WarnLevel && level != zerolog.NoLevel {
		u.batcher.Flush()
	}
	return n, err
}
