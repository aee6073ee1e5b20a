package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/rs/zerolog"
)

// ExitRelease is the exec handler's exit status for "release me with the
// job's backoff" (EX_TEMPFAIL).
const ExitRelease = 75

// stderrTail is how much of a command's output is kept: the tail of
// stderr becomes a failure's exception message, the tail of stdout is
// logged.
const stderrTail = 4096

// ExecInputVersion is the version of ExecInput's shape, its "version" key.
// 2: the command's properties are an object keyed by name
// (.command.properties.podcastId), visibility beside them; 1 (no
// "version" key, before 2026-11-30): a list of {name, visibility, value}.
// It goes up with every change a handler script could trip over.
const ExecInputVersion = 2

// ExecInput is the JSON document the exec handler writes to the command's
// stdin.
type ExecInput struct {
	// Version is ExecInputVersion: a handler can refuse a shape it was
	// not written for.
	Version     int             `json:"version"`
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
	// Context is Laravel's Context (11+) the job was dispatched with,
	// each value as payload.ReadableJSON renders it; absent when the
	// payload carries none. ContextError says why it could not be read
	// (PHP's hydrate would have thrown).
	Context      *ExecContext `json:"context,omitempty"`
	ContextError string       `json:"contextError,omitempty"`
	// Trace is the trace the job runs in; absent when it has none.
	Trace *ExecTrace `json:"trace,omitempty"`
}

// ExecContext is Laravel's Context in ExecInput: {"data": {...},
// "hidden": {...}}, keys in PHP's order. Laravel's logs carry Data on
// every line; Hidden is what the dispatching code kept out of logs: a
// handler must not log it either.
type ExecContext struct {
	Data   json.RawMessage `json:"data"`
	Hidden json.RawMessage `json:"hidden"`
}

// ExecTrace is the job's trace in ExecInput. Traceparent and Tracestate
// are W3C Trace Context (also in the TRACEPARENT and TRACESTATE
// variables): the attempt's span when the worker traces (docs/TRACING.md),
// else the payload's own; absent when there is none. Sentry is what
// Sentry's Laravel SDK put into the payload, for Sentry's SDKs to
// continue.
type ExecTrace struct {
	Traceparent string      `json:"traceparent,omitempty"`
	Tracestate  string      `json:"tracestate,omitempty"`
	Sentry      *ExecSentry `json:"sentry,omitempty"`
}

// ExecSentry is Sentry's trace in ExecTrace: sentry-trace and baggage as
// the SDKs' continueTrace takes them, and the dispatch time in Unix
// seconds (absent when the payload has none).
type ExecSentry struct {
	Trace       string   `json:"trace"`
	Baggage     string   `json:"baggage"`
	PublishTime *float64 `json:"publishTime,omitempty"`
}

// ExecOptions configure an exec handler.
type ExecOptions struct {
	// Logger receives what the command prints on stdout (its last 4 KiB,
	// one log line per run, with the job's uuid). The zero value discards
	// it.
	Logger zerolog.Logger
	// PassEnv names variables of the worker's environment the command
	// gets besides ExecEnv's (see Exec).
	PassEnv []string
	// Redact, when set, removes secrets from what the command is given:
	// the JSON document on its stdin (inside its strings, so it stays
	// valid) and the queue and class in LARAWORKER_JOB_*. The CLI's
	// removes the app's secrets (DB and Redis passwords, APP_KEY, AWS
	// keys) in any escaping.
	Redact Redactor
}

// Redactor removes secrets from a text (String) or from the strings of a
// JSON document (JSON).
type Redactor interface {
	String(s string) string
	JSON(doc []byte) []byte
}

// ExecEnv are the variables of the worker's environment an exec handler
// gets, with ExecOptions.PassEnv's: what a program needs to run (search
// path, home, user, locale, time zone, temporary directory; on Windows
// the system's folders too), and no other. Names ending in "_" are
// prefixes (LC_ALL, LC_CTYPE...).
var ExecEnv = []string{
	"PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "LC_", "TZ", "TMPDIR",
	// Windows: programs fail to start without some of these.
	"SYSTEMROOT", "WINDIR", "COMSPEC", "PATHEXT", "TEMP", "TMP", "USERPROFILE", "USERNAME",
	"APPDATA", "LOCALAPPDATA", "PROGRAMDATA", "PROGRAMFILES", "SYSTEMDRIVE", "HOMEDRIVE", "HOMEPATH",
}

// Exec runs argv for each job. Job data reaches the command only through
// stdin (ExecInput) and LARAWORKER_JOB_* environment variables, never
// through its arguments or a shell. Exit 0 deletes the job, 75 releases it
// with backoff, anything else is an exception whose message is the tail
// of stderr. The command is killed when ctx ends (the job's timeout or
// shutdown): on Unix with its whole process group, on Windows the process
// itself.
//
// A handler may be a third-party program: of the worker's environment it
// gets only the variables ExecEnv and opts.PassEnv name (the worker's own
// holds its secrets: DB_PASSWORD, APP_KEY, AWS_SECRET_ACCESS_KEY...), and
// its input goes through opts.Redact.
func Exec(argv []string, opts ExecOptions) Handler {
	return HandlerFunc(func(ctx context.Context, job *Job) error {
		trace := execTrace(ctx, job)
		input, err := execInput(job, trace)
		if err != nil {
			return err
		}
		queue, class := job.Queue, job.DisplayName
		if opts.Redact != nil {
			input, queue, class = opts.Redact.JSON(input), opts.Redact.String(queue), opts.Redact.String(class)
		}
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Stdin = bytes.NewReader(input)
		cmd.Env = append(handlerEnviron(os.Environ(), opts.PassEnv),
			"LARAWORKER_JOB_UUID="+job.UUID,
			"LARAWORKER_JOB_ID="+strconv.FormatInt(job.ID, 10),
			"LARAWORKER_JOB_QUEUE="+queue,
			"LARAWORKER_JOB_ATTEMPTS="+strconv.FormatInt(job.Attempts, 10),
			"LARAWORKER_JOB_CLASS="+class,
		)
		cmd.Env = withTraceEnv(cmd.Env, trace)
		var stdout, stderr tailBuffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		killOnCancel(cmd)
		cmd.WaitDelay = 2 * time.Second
		runErr := cmd.Run()
		if out := strings.TrimSpace(stdout.String()); out != "" {
			opts.Logger.Info().Str("uuid", job.UUID).Str("class", job.DisplayName).Str("command", argv[0]).
				Str("stdout", out).Msg("exec handler output")
		}
		return execResult(ctx, argv[0], runErr, stderr.String())
	})
}

// handlerEnviron is the variables of environ that ExecEnv or pass name.
func handlerEnviron(environ, pass []string) []string {
	out := make([]string, 0, len(ExecEnv)+len(pass))
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if allowedEnv(name) || slices.ContainsFunc(pass, func(p string) bool { return sameEnvName(p, name) }) {
			out = append(out, kv)
		}
	}
	return out
}

func allowedEnv(name string) bool {
	for _, a := range ExecEnv {
		if strings.HasSuffix(a, "_") && len(name) > len(a) && sameEnvName(name[:len(a)], a) || sameEnvName(name, a) {
			return true
		}
	}
	return false
}

func execInput(job *Job, trace *ExecTrace) ([]byte, error) {
	in := ExecInput{
		Version: ExecInputVersion, UUID: job.UUID, ID: job.ID, Queue: job.Queue, Attempts: job.Attempts,
		DisplayName: job.DisplayName, Payload: json.RawMessage(job.Payload.Raw), Command: json.RawMessage("null"),
		Trace: trace,
	}
	in.Context, in.ContextError = execContext(job)
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
