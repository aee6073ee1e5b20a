package phprun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// DefaultTimeout bounds a run when Script.Timeout is zero: booting an app
// takes a second or two; a boot that hangs (a provider waiting on a
// network service) must not hang laraworker.
const DefaultTimeout = 30 * time.Second

// Script is one run.
type Script struct {
	PHP     string   // the php binary
	Source  []byte   // the script, fed on standard input
	Args    []string // after `--`: the script's $argv[1:]
	Dir     string   // working directory (the app's root)
	Env     []string // the environment (nil: none)
	Timeout time.Duration
}

// ErrTimeout is returned when the script did not finish in time.
var ErrTimeout = errors.New("phprun: timed out")

// Run runs s and returns its stdout. A non-zero exit is an *ExitError
// carrying what the script said on stderr.
func Run(ctx context.Context, s Script) ([]byte, error) {
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	args := append([]string{"-d", "display_errors=stderr", "-d", "log_errors=0", "--"}, s.Args...)
	cmd := exec.CommandContext(ctx, s.PHP, args...)
	cmd.Dir = s.Dir
	cmd.Env = s.Env
	cmd.Stdin = bytes.NewReader(s.Source)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &limitedBuffer{max: 64 << 10, buf: &stderr}
	killTreeOnCancel(cmd)
	// A descendant that escaped the group and holds stdout open must not
	// keep Run waiting after the kill.
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if ctx.Err() == context.DeadlineExceeded {
		return nil, fmt.Errorf("%w after %s", ErrTimeout, timeout)
	}
	if err != nil {
		return nil, &ExitError{Err: err, Stderr: stderr.String()}
	}
	return stdout.Bytes(), nil
}

// ExitError is a run that failed: PHP could not start, or the script
// exited non-zero.
type ExitError struct {
	Err    error
	Stderr string
}

func (e *ExitError) Error() string { return fmt.Sprintf("%v: %s", e.Err, e.Message()) }

func (e *ExitError) Unwrap() error { return e.Err }

// Message is the script's own "laraworker: ..." line when it wrote one,
// else the last lines PHP printed.
func (e *ExitError) Message() string {
	lines := strings.Split(e.Stderr, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if msg, ok := strings.CutPrefix(lines[i], "laraworker: "); ok {
			return msg
		}
	}
	var kept []string
	for _, l := range lines {
		if l = strings.TrimSpace(l); l != "" {
			kept = append(kept, l)
		}
	}
	if len(kept) > 3 {
		kept = kept[len(kept)-3:]
	}
	if len(kept) == 0 {
		return "no error output"
	}
	return strings.Join(kept, " | ")
}

// LastLine is the last non-empty line of out: what the script printed
// after anything the app wrote to stdout while booting.
func LastLine(out []byte) []byte {
	out = bytes.TrimRight(out, "\r\n")
	if i := bytes.LastIndexByte(out, '\n'); i >= 0 {
		return out[i+1:]
	}
	return out
}

// limitedBuffer keeps the first max bytes written.
type limitedBuffer struct {
	max int
	buf *bytes.Buffer
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.max - l.buf.Len(); room > 0 {
		l.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
