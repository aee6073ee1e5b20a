package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/laraworker/laraworker/payload"
)

// ExitRelease is the exec handler's exit status for "release me with the
// job's backoff" (EX_TEMPFAIL).
const ExitRelease = 75

// stderrTail is how much of a failed command's stderr becomes the exception
// message.
const stderrTail = 4096

// ExecInput is the JSON document the exec handler writes to the command's
// stdin.
type ExecInput struct {
	UUID        string          `json:"uuid"`
	ID          int64           `json:"id"`
	Queue       string          `json:"queue"`
	Attempts    int64           `json:"attempts"`
	DisplayName string          `json:"displayName"`
	Payload     json.RawMessage `json:"payload"`
	// Command is the decoded command as payload.ReadableJSON renders it;
	// null for string jobs, or when it could not be decoded (CommandError).
	Command      json.RawMessage `json:"command"`
	CommandError string          `json:"commandError,omitempty"`
}

// Exec runs argv for each job. Job data reaches the command only through
// stdin (ExecInput) and LARAWORKER_* environment variables, never through
// its arguments or a shell. Exit 0 deletes the job, 75 releases it with
// backoff, anything else is an exception carrying the tail of stderr. The
// command is killed when ctx ends (the job's timeout or shutdown): on Unix
// with its whole process group, on Windows the process itself.
func Exec(argv ...string) Handler {
	return HandlerFunc(func(ctx context.Context, job *Job) error {
		input, err := execInput(job)
		if err != nil {
			return err
		}
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Stdin = bytes.NewReader(input)
		cmd.Env = append(os.Environ(),
			"LARAWORKER_JOB_UUID="+job.UUID,
			"LARAWORKER_JOB_ID="+strconv.FormatInt(job.ID, 10),
			"LARAWORKER_JOB_QUEUE="+job.Queue,
			"LARAWORKER_JOB_ATTEMPTS="+strconv.FormatInt(job.Attempts, 10),
			"LARAWORKER_JOB_CLASS="+job.DisplayName,
		)
		var stderr tailBuffer
		cmd.Stderr = &stderr
		cmd.Stdout = &stderr
		killOnCancel(cmd)
		cmd.WaitDelay = 2 * time.Second
		return execResult(ctx, argv[0], cmd.Run(), stderr.String())
	})
}

func execInput(job *Job) ([]byte, error) {
	in := ExecInput{
		UUID: job.UUID, ID: job.ID, Queue: job.Queue, Attempts: job.Attempts,
		DisplayName: job.DisplayName, Payload: json.RawMessage(job.Payload.Raw), Command: json.RawMessage("null"),
	}
	if job.Payload.Data.Command != "" {
		if cmd, err := job.Command(); err != nil {
			in.CommandError = err.Error()
		} else if tree, err := payload.ReadableJSON(cmd.Object); err == nil {
			in.Command = tree
		}
	}
	return json.Marshal(in)
}

// ExecError is a failed exec handler run.
type ExecError struct {
	Command string
	Status  int
	Stderr  string
}

func (e *ExecError) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" {
		msg = "(no output)"
	}
	return fmt.Sprintf("%s exited with status %d: %s", e.Command, e.Status, msg)
}

func execResult(ctx context.Context, name string, runErr error, stderr string) error {
	if runErr == nil {
		return nil
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("%s was killed: %w", name, ctxErr)
	}
	var exitErr *exec.ExitError
	if !errors.As(runErr, &exitErr) {
		return fmt.Errorf("%s could not run: %w", name, runErr)
	}
	if exitErr.ExitCode() == ExitRelease {
		return &ReleaseError{UseBackoff: true}
	}
	return &ExecError{Command: name, Status: exitErr.ExitCode(), Stderr: stderr}
}

// tailBuffer keeps the last stderrTail bytes written.
type tailBuffer struct{ buf []byte }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*stderrTail {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-stderrTail:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	if len(t.buf) > stderrTail {
		return string(t.buf[len(t.buf)-stderrTail:])
	}
	return string(t.buf)
}

// SplitArgs splits a command line on spaces; single and double quotes group
// words. No expansion of any kind happens.
func SplitArgs(s string) ([]string, error) {
	var args []string
	var cur strings.Builder
	inWord, quote := false, byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			cur.WriteByte(c)
		case c == '\'' || c == '"':
			quote, inWord = c, true
		case c == ' ' || c == '\t':
			if inWord {
				args = append(args, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("handlers: unclosed %c quote in %q", quote, s)
	}
	if inWord {
		args = append(args, cur.String())
	}
	return args, nil
}
