// Package phpexception is how a Go error reads in failed_jobs: the PHP
// exception class Laravel (or a handler) names, and the text PHP's
// (string) $exception prints, which `php artisan queue:failed` users
// read.
package phpexception

import (
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"

	"github.com/laraworker/laraworker/handlers"
)

// PHP exception classes Laravel writes into failed_jobs for these cases.
const (
	MaxAttemptsExceededClass = `Illuminate\Queue\MaxAttemptsExceededException`
	TimeoutExceededClass     = `Illuminate\Queue\TimeoutExceededException`
	ManuallyFailedClass      = `Illuminate\Queue\ManuallyFailedException`
)

// MaxAttemptsExceeded is Worker::maxAttemptsExceededException: Laravel
// 10.10+'s text, or the older one (legacy) that 8.x and 9.x write.
func MaxAttemptsExceeded(name string, legacy bool) *handlers.PHPException {
	if legacy {
		return &handlers.PHPException{Class: MaxAttemptsExceededClass, Message: name +
			" has been attempted too many times or run too long. The job may have previously timed out."}
	}
	return &handlers.PHPException{Class: MaxAttemptsExceededClass, Message: name + " has been attempted too many times."}
}

// TimeoutExceeded is what a timed-out job fails with: 10.10+'s
// TimeoutExceededException, or before it (legacy) MaxAttemptsExceeded with
// its old text.
func TimeoutExceeded(name string, legacy bool) *handlers.PHPException {
	if legacy {
		return MaxAttemptsExceeded(name, true)
	}
	return &handlers.PHPException{Class: TimeoutExceededClass, Message: name + " has timed out."}
}

// Text renders err as PHP's (string) $exception does, which is
// what `php artisan queue:failed` users read:
//
//	Class: message in file:line
//	Stack trace:
//	#0 file(line): function()
//	#1 {main}
//
// where is the handler's location when err carries no stack of its own.
// Wrapped errors come innermost first, joined with "\n\nNext ", as PHP
// prints previous exceptions.
func Text(err error, where Frame) string {
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		var parts []string
		for _, e := range joined.Unwrap() {
			parts = append(parts, Text(e, where))
		}
		return strings.Join(parts, "\n\nNext ")
	}
	chain := unwrapChain(err)
	parts := make([]string, 0, len(chain))
	for i := len(chain) - 1; i >= 0; i-- {
		parts = append(parts, oneException(chain[i], where))
	}
	return strings.Join(parts, "\n\nNext ")
}

// unwrapChain lists err and the errors it wraps, outermost first, skipping
// those whose text the outer one already shows (fmt.Errorf("x: %w")).
func unwrapChain(err error) []error {
	chain := []error{err}
	for cur := errors.Unwrap(err); cur != nil; cur = errors.Unwrap(cur) {
		if !strings.Contains(chain[len(chain)-1].Error(), cur.Error()) {
			chain = append(chain, cur)
		}
	}
	return chain
}

func oneException(err error, where Frame) string {
	class, msg := ClassAndMessage(err)
	frames := []Frame{where}
	var p *handlers.PanicError
	if errors.As(err, &p) {
		if fs := panicFrames(p.Stack); len(fs) > 0 {
			frames = fs
		}
	}
	head := class
	if msg != "" {
		head += ": " + msg
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s in %s:%d\nStack trace:\n", head, frames[0].File, frames[0].Line)
	for i, f := range frames {
		fmt.Fprintf(&b, "#%d %s(%d): %s()\n", i, f.File, f.Line, f.Func)
	}
	fmt.Fprintf(&b, "#%d {main}", len(frames))
	return b.String()
}

// ClassAndMessage picks the PHP class name failed_jobs shows for an
// error: Laravel's own for the cases it has, else a valid PHP class name
// made from the Go type (goExceptionClass).
func ClassAndMessage(err error) (string, string) {
	var php *handlers.PHPException
	if errors.As(err, &php) && php == err {
		return php.Class, php.Message
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return `LaraWorker\DeadlineExceededException`, err.Error()
	case errors.Is(err, context.Canceled):
		return `LaraWorker\CanceledException`, err.Error()
	}
	return goExceptionClass(reflect.TypeOf(err)), err.Error()
}

// modulePath is laraworker's own module: its error types read as
// LaraWorker's exceptions.
const modulePath = "github.com/laraworker/laraworker/"

// goExceptionClass names a Go error type as a PHP class, so that
// failed_jobs holds what artisan, Horizon and log tools parse as one
// (never `*`, `.` or a package path):
//
//   - laraworker's own error types: LaraWorker\<Name>Exception
//     (*phpserialize.DecodeError is LaraWorker\DecodeException);
//   - the errors of errors.New and fmt.Errorf, which have no type of their
//     own: LaraWorker\GoException;
//   - any other type: Go\<package>\<Type> (*fs.PathError is Go\fs\PathError,
//     a handler's *main.CardDeclined is Go\main\CardDeclined).
func goExceptionClass(t reflect.Type) string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Name() == "" {
		return `LaraWorker\GoException`
	}
	pkg, name := t.PkgPath(), t.Name()
	switch {
	case pkg == "errors" || pkg == "fmt":
		return `LaraWorker\GoException`
	case strings.HasPrefix(pkg+"/", modulePath):
		return `LaraWorker\` + phpIdent(upperFirst(strings.TrimSuffix(name, "Error"))) + "Exception"
	}
	return `Go\` + phpIdent(path.Base(pkg)) + `\` + phpIdent(name)
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// phpIdent makes s a PHP identifier: what is not a letter, digit or _
// (yaml.v3, Pair[int]) becomes _, and a leading digit gets one before it.
func phpIdent(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80) {
			b[i] = '_'
		}
	}
	if len(b) == 0 || b[0] >= '0' && b[0] <= '9' {
		b = append([]byte{'_'}, b...)
	}
	return string(b)
}

// Frame is one line of a stack trace.
type Frame struct {
	File string
	Line int
	Func string
}

// HandlerFrame locates a handler's code, for errors that carry no stack.
func HandlerFrame(h any) Frame {
	if h == nil {
		return Frame{File: "laraworker", Func: "handler"}
	}
	v := reflect.ValueOf(h)
	if v.Kind() != reflect.Func {
		return Frame{File: "laraworker", Line: 0, Func: reflect.TypeOf(h).String() + ".Handle"}
	}
	fn := runtime.FuncForPC(v.Pointer())
	if fn == nil {
		return Frame{File: "laraworker", Func: "handler"}
	}
	file, line := fn.FileLine(v.Pointer())
	return Frame{File: trimBuildPath(file, fn.Name()), Line: line, Func: fn.Name()}
}

// trimBuildPath is what `go build -trimpath` would have recorded for file,
// the source file of function fn: its package's import path and the
// file's name ("github.com/acme/worker/jobs/mail.go", "runtime/panic.go"),
// so failed_jobs never shows the folders the worker was built in
// (/home/alice/src/..., the module cache). A path that is not absolute is
// already trimmed.
func trimBuildPath(file, fn string) string {
	if !filepath.IsAbs(file) && !strings.HasPrefix(file, "/") {
		return file
	}
	pkg := funcPackage(fn)
	switch {
	case pkg == "":
		return path.Base(filepath.ToSlash(file))
	case pkg == "main":
		pkg = mainPackage()
	}
	return pkg + "/" + path.Base(filepath.ToSlash(file))
}

// funcPackage is the import path in a function's full name
// ("github.com/acme/w/jobs.(*T).Run.func1": github.com/acme/w/jobs).
func funcPackage(fn string) string {
	slash := strings.LastIndexByte(fn, '/')
	dot := strings.IndexByte(fn[slash+1:], '.')
	if dot < 0 {
		return ""
	}
	return fn[:slash+1+dot]
}

// mainPackage is the import path of the program's main package (its
// module path for one at the module's root), "main" when the build did
// not record it.
var mainPackage = sync.OnceValue(func() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Path != "" && bi.Path != "command-line-arguments" {
		return bi.Path
	}
	return "main"
})

// panicFrames turns runtime/debug.Stack output into frames, starting at
// the function that panicked (frames of the runtime and of the recovery
// itself are dropped).
func panicFrames(stack []byte) []Frame {
	lines := strings.Split(string(stack), "\n")
	var frames []Frame
	for i := 1; i+1 < len(lines); i += 2 {
		fn := strings.TrimSpace(lines[i])
		loc := strings.TrimSpace(lines[i+1])
		if fn == "" || !strings.HasPrefix(lines[i+1], "\t") {
			i--
			continue
		}
		if created, ok := strings.CutPrefix(fn, "created by "); ok {
			// "created by pkg.(*T).Run in goroutine 7": no arguments.
			fn, _, _ = strings.Cut(created, " in goroutine")
		} else if j := strings.LastIndexByte(fn, '('); j > 0 {
			fn = fn[:j]
		}
		if k := strings.LastIndexByte(loc, ' '); k > 0 {
			loc = loc[:k]
		}
		file, lineNo := loc, 0
		if k := strings.LastIndexByte(loc, ':'); k > 0 {
			file = loc[:k]
			lineNo, _ = strconv.Atoi(loc[k+1:])
		}
		frames = append(frames, Frame{File: trimBuildPath(file, fn), Line: lineNo, Func: fn})
	}
	return dropUntilPanic(frames)
}

func dropUntilPanic(frames []Frame) []Frame {
	for i, f := range frames {
		if f.Func == "panic" || strings.HasSuffix(f.Func, ".gopanic") {
			return frames[i+1:]
		}
	}
	return frames
}

// framedError carries the location to print for errors without a stack.
type framedError struct {
	error
	where Frame
}

func (e framedError) Unwrap() error { return e.error }

// WithFrame is err located at where, for FailureText when err carries no
// stack of its own.
func WithFrame(err error, where Frame) error { return framedError{err, where} }

// FailureText is the exception column of a failed job for err: PHP's
// rendering, located where a WithFrame in err says, else in the worker.
func FailureText(err error) string {
	where := Frame{File: "laraworker", Func: "worker"}
	var fe framedError
	if errors.As(err, &fe) && fe.where.File != "" {
		where = fe.where
	}
	return Text(WithoutFrames(err), where)
}

// WithoutFrames removes the WithFrame wrappers, which only carry the
// location, so they do not show up as exceptions of their own.
func WithoutFrames(err error) error {
	if fe, ok := err.(framedError); ok {
		return fe.error
	}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		parts := joined.Unwrap()
		out := make([]error, len(parts))
		for i, e := range parts {
			out[i] = WithoutFrames(e)
		}
		return errors.Join(out...)
	}
	return err
}
