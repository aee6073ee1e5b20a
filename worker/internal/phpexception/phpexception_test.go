package phpexception

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/laravel/phpserialize"
)

// failed_jobs.exception is what `php artisan queue:failed` users read: it
// must look like PHP's (string) $exception.

var where = Frame{File: "/app/handlers/mail.go", Line: 42, Func: "main.sendMail"}

func TestExceptionText(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"Laravel's own exception",
			MaxAttemptsExceeded(`App\Jobs\X`, false),
			"Illuminate\\Queue\\MaxAttemptsExceededException: App\\Jobs\\X has been attempted too many times. in /app/handlers/mail.go:42\n" +
				"Stack trace:\n#0 /app/handlers/mail.go(42): main.sendMail()\n#1 {main}"},
		{"Laravel 8/9 text",
			TimeoutExceeded(`App\Jobs\X`, true),
			"Illuminate\\Queue\\MaxAttemptsExceededException: App\\Jobs\\X has been attempted too many times or run too long. The job may have previously timed out. in /app/handlers/mail.go:42\n" +
				"Stack trace:\n#0 /app/handlers/mail.go(42): main.sendMail()\n#1 {main}"},
		{"a Go error without a type of its own is a GoException",
			errors.New("smtp is down"),
			"LaraWorker\\GoException: smtp is down in /app/handlers/mail.go:42\nStack trace:\n#0 /app/handlers/mail.go(42): main.sendMail()\n#1 {main}"},
		{"a class without a message",
			&handlers.PHPException{Class: ManuallyFailedClass},
			"Illuminate\\Queue\\ManuallyFailedException in /app/handlers/mail.go:42\nStack trace:\n#0 /app/handlers/mail.go(42): main.sendMail()\n#1 {main}"},
		{"wrapped errors print innermost first, as PHP's previous exceptions",
			fmt.Errorf("sending: %w", &fs.PathError{Op: "open", Path: "/tmp/x", Err: fs.ErrNotExist}),
			"LaraWorker\\GoException: sending: open /tmp/x: file does not exist in /app/handlers/mail.go:42\nStack trace:\n#0 /app/handlers/mail.go(42): main.sendMail()\n#1 {main}"},
		{"errors whose text is not repeated by the wrapper come as Next",
			wrapped{msg: "outer", err: errors.New("inner")},
			"LaraWorker\\GoException: inner in /app/handlers/mail.go:42\nStack trace:\n#0 /app/handlers/mail.go(42): main.sendMail()\n#1 {main}" +
				"\n\nNext LaraWorker\\WrappedException: outer in /app/handlers/mail.go:42\nStack trace:\n#0 /app/handlers/mail.go(42): main.sendMail()\n#1 {main}"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Text(c.err, where); got != c.want {
				t.Errorf("got\n%s\nwant\n%s", got, c.want)
			}
		})
	}
}

type wrapped struct {
	msg string
	err error
}

func (w wrapped) Error() string { return w.msg }
func (w wrapped) Unwrap() error { return w.err }

func TestJoinedErrorsAreSeparateExceptions(t *testing.T) {
	got := Text(errors.Join(errors.New("first"), &handlers.PHPException{Class: `LaraWorker\ChainStoppedException`, Message: "stop"}), where)
	parts := strings.Split(got, "\n\nNext ")
	if len(parts) != 2 || !strings.HasPrefix(parts[0], `LaraWorker\GoException: first in `) ||
		!strings.HasPrefix(parts[1], `LaraWorker\ChainStoppedException: stop in `) {
		t.Fatalf("joined errors:\n%s", got)
	}
}

func TestPanicTraceStartsAtThePanickingFunction(t *testing.T) {
	var pe *handlers.PanicError
	err := handlers.Recover()(handlers.HandlerFunc(func(_ context.Context, _ *handlers.Job) error {
		panicky()
		return nil
	})).Handle(context.Background(), nil)
	if !errors.As(err, &pe) {
		t.Fatalf("Recover returned %v", err)
	}
	got := Text(err, where)
	lines := strings.Split(got, "\n")
	if !strings.HasPrefix(lines[0], "LaraWorker\\PanicException: panic: boom in ") || !strings.Contains(lines[0], "phpexception_test.go:") {
		t.Fatalf("first line %q: want the panic's message at the panicking line", lines[0])
	}
	if !strings.Contains(lines[2], "phpexception.panicky()") {
		t.Fatalf("frame #0 %q: want the function that panicked", lines[2])
	}
	if !strings.HasSuffix(got, "{main}") {
		t.Fatalf("trace must end with {main}:\n%s", got)
	}
}

func panicky() { panic("boom") }

// TestGoErrorsGetPHPClassNames: every class failed_jobs gets from a Go
// error type is a valid PHP class name (no *, no ., no package path).
func TestGoErrorsGetPHPClassNames(t *testing.T) {
	phpClass := regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\\[A-Za-z_][A-Za-z0-9_]*)+$`)
	var decodeErr error = &phpserialize.DecodeError{}
	cases := []struct {
		err  error
		want string
	}{
		{errors.New("x"), `LaraWorker\GoException`},
		{fmt.Errorf("x: %w", errors.New("y")), `LaraWorker\GoException`},
		{decodeErr, `LaraWorker\DecodeException`},
		{&handlers.ExecError{Command: "/bin/x", Status: 3}, `LaraWorker\ExecException`},
		{&payload.DecryptError{}, `LaraWorker\DecryptException`},
		{&fs.PathError{Op: "open", Path: "/x", Err: fs.ErrNotExist}, `Go\fs\PathError`},
		{wrapped{msg: "x"}, `LaraWorker\WrappedException`},
		{context.DeadlineExceeded, `LaraWorker\DeadlineExceededException`},
		{fmt.Errorf("fetching: %w", context.Canceled), `LaraWorker\CanceledException`},
		{pair[int]{}, `LaraWorker\Pair_int_Exception`},
	}
	for _, c := range cases {
		class, _ := ClassAndMessage(c.err)
		if class != c.want || !phpClass.MatchString(class) {
			t.Errorf("%T: class %q, want %q", c.err, class, c.want)
		}
	}
}

type pair[T any] []T

func (pair[T]) Error() string { return "pair" }

// TestTracesHoldNoBuildPaths: the files of a failed job's trace are
// named as `go build -trimpath` names them (import path and file name),
// never by the folders the worker was built in, which failed_jobs would
// show to whoever reads it.
func TestTracesHoldNoBuildPaths(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	err = handlers.Recover()(handlers.HandlerFunc(func(_ context.Context, _ *handlers.Job) error {
		panicky()
		return nil
	})).Handle(context.Background(), nil)
	text := Text(err, HandlerFrame(panicky))
	const own = "github.com/laraworker/laraworker/worker/internal/phpexception/phpexception_test.go:"
	if strings.Contains(text, wd) || !strings.Contains(text, " in "+own) || strings.Contains(text, "#0 /") || strings.Contains(text, "/usr/local/go/src") {
		t.Errorf("the trace shows build paths, or not the import path:\n%s", text)
	}
	if f := HandlerFrame(panicky); f.File != strings.TrimSuffix(own, ":") || f.Line == 0 {
		t.Errorf("handler frame %+v", f)
	}
	if got := trimBuildPath("/usr/local/go/src/runtime/panic.go", "runtime.gopanic"); got != "runtime/panic.go" {
		t.Errorf("runtime frame: %s", got)
	}
	if got := trimBuildPath("/home/a/go/pkg/mod/github.com/x/y@v1.2.3/z/z.go", "github.com/x/y/z.(*T).Run.func1"); got != "github.com/x/y/z/z.go" {
		t.Errorf("module cache frame: %s", got)
	}
	if got := trimBuildPath("github.com/x/y/z/z.go", "github.com/x/y/z.Run"); got != "github.com/x/y/z/z.go" {
		t.Errorf("a trimmed path changed: %s", got)
	}
}
