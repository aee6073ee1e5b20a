package handlers

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/rs/zerolog"
)

// Builtin returns the built-in handler named by spec: "noop", "log", or
// "exec:COMMAND ARGS..." (split on spaces; single or double quotes group).
// log receives the log handler's lines and exec handlers' stdout; passEnv
// names the variables of the worker's environment exec handlers get
// besides ExecEnv's. It is BuiltinWith(spec, ExecOptions{Logger: log,
// PassEnv: passEnv}).
func Builtin(spec string, log zerolog.Logger, passEnv []string) (Handler, error) {
	return BuiltinWith(spec, ExecOptions{Logger: log, PassEnv: passEnv})
}

// BuiltinWith is Builtin with all of an exec handler's options (its
// Redact too); opts.Logger is the log handler's logger as well.
func BuiltinWith(spec string, opts ExecOptions) (Handler, error) {
	switch {
	case spec == "noop":
		return Noop(), nil
	case spec == "log":
		return Log(opts.Logger), nil
	case strings.HasPrefix(spec, "exec:"):
		argv, err := SplitArgs(strings.TrimPrefix(spec, "exec:"))
		if err != nil {
			return nil, err
		}
		if len(argv) == 0 {
			return nil, errors.New("handlers: exec: needs a command, as in exec:./handle.sh")
		}
		return Exec(argv, opts), nil
	}
	return nil, fmt.Errorf("handlers: unknown handler %q (want noop, log or exec:COMMAND)", spec)
}

// Noop succeeds at once: the job is deleted.
func Noop() Handler {
	return HandlerFunc(func(context.Context, *Job) error { return nil })
}

// Log logs the job and succeeds.
func Log(log zerolog.Logger) Handler {
	return HandlerFunc(func(_ context.Context, job *Job) error {
		log.Info().Str("uuid", job.UUID).Int64("id", job.ID).Str("class", job.DisplayName).
			Str("queue", job.Queue).Int64("attempt", job.Attempts).Msg("job")
		return nil
	})
}
