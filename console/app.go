package console

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"

	"github.com/laraworker/laraworker/console/internal/admincmd"
	"github.com/laraworker/laraworker/console/internal/classcmd"
	"github.com/laraworker/laraworker/console/internal/cmdline"
	"github.com/laraworker/laraworker/console/internal/output"
	"github.com/laraworker/laraworker/console/internal/payloadcmd"
	"github.com/laraworker/laraworker/handlers"
	"github.com/urfave/cli/v2"
)

// Version is, when set at build time, the version every program built with
// New reports unless its Options name one:
//
//	go build -ldflags "-X github.com/laraworker/laraworker/console.Version=1.4.0"
var Version string

// Options name the program New builds. The zero value is usable: every
// field has a default.
type Options struct {
	// Name is the program's name in --help, --version and error messages
	// (default: the executable's base name).
	Name string
	// Version is what --version prints (default: Version when set with
	// -ldflags -X, else the main module's version that the Go toolchain
	// records in the binary, e.g. v1.2.3 for `go install ...@v1.2.3`, else
	// "dev").
	Version string
	// Usage is the one-line description in --help (default: "a Go worker
	// for Laravel's database queue").
	Usage string
}

// New builds the worker CLI: work, push, inspect and the admin commands
// (failed, retry, forget, flush, prune-failed, clear, size, tables). reg
// holds the program's handlers; `work --route` adds built-in ones to it.
// The laraworker binary appends `demo` (DemoCommand) and `bench` (package
// bench) to app.Commands; an embedding program gets them only if it does
// the same.
func New(reg *handlers.Registry, opts Options) *cli.App {
	return &cli.App{
		Name:    opts.name(),
		Usage:   opts.usage(),
		Version: opts.version(),
		Commands: append([]*cli.Command{
			workCommand(reg),
			payloadcmd.InspectCommand(),
			payloadcmd.PushCommand(),
			admincmd.MoveCommand(),
			classcmd.AuditCommand(),
			classcmd.GenCommand(),
			dashboardCommand(),
		}, admincmd.Commands()...),
		HideHelpCommand: true,
		// --route values hold exec commands, which may contain commas.
		DisableSliceFlagSeparator: true,
	}
}

func (o Options) name() string {
	if o.Name != "" {
		return o.Name
	}
	if exe, err := os.Executable(); err == nil {
		return filepath.Base(exe)
	}
	return filepath.Base(os.Args[0])
}

func (o Options) usage() string {
	if o.Usage != "" {
		return o.Usage
	}
	return "a Go worker for Laravel's database queue"
}

func (o Options) version() string {
	switch {
	case o.Version != "":
		return o.Version
	case Version != "":
		return Version
	}
	return buildVersion()
}

// buildVersion is the main module's version as the Go toolchain recorded
// it: the tag for `go install module@v1.2.3`, a pseudo-version for a build
// in a git checkout, "(devel)" when it knew none (then "dev").
func buildVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return "dev"
}

// Run runs the CLI and returns the process exit status. Errors are printed
// as one line on stderr, prefixed with the program's name.
func Run(app *cli.App, args []string) int {
	app.ExitErrHandler = func(*cli.Context, error) {}
	cmdline.Conventions(app)
	if err := app.Run(args); err != nil {
		printError(app.ErrWriter, app.Name, output.Secrets(app).String(err.Error()))
		if coder, ok := err.(cli.ExitCoder); ok {
			return coder.ExitCode()
		}
		return 1
	}
	return 0
}

func printError(w io.Writer, name string, msg string) {
	if w == nil {
		w = os.Stderr
	}
	if msg != "" { // cli.Exit("", code) only sets the status
		fmt.Fprintf(w, "%s: %s\n", name, msg)
	}
}
