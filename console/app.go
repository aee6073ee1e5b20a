// Package console is laraworker's command line: artisan-like commands over
// the payload, laravel and worker packages. A program that registers its own
// handlers builds the same CLI with New and runs it.
package console

import (
	"fmt"
	"io"
	"os"

	"github.com/laraworker/laraworker/handlers"
	"github.com/urfave/cli/v2"
)

// Version is set at build time with -ldflags.
var Version = "dev"

// New builds the laraworker CLI. reg holds the program's handlers; `work
// --route` adds built-in ones to it.
func New(reg *handlers.Registry) *cli.App {
	return &cli.App{
		Name:    "laraworker",
		Usage:   "a Go worker for Laravel's database queue",
		Version: Version,
		Commands: append([]*cli.Command{
			workCommand(reg),
			demoCommand(),
			inspectCommand(),
			pushCommand(),
			benchCommand(),
			dashboardCommand(),
		}, adminCommands()...),
		HideHelpCommand: true,
		// --route values hold exec commands, which may contain commas.
		DisableSliceFlagSeparator: true,
	}
}

// Run runs the CLI and returns the process exit status. Errors are printed
// as one line on stderr.
func Run(app *cli.App, args []string) int {
	app.ExitErrHandler = func(*cli.Context, error) {}
	if err := app.Run(args); err != nil {
		printError(app.ErrWriter, err)
		if coder, ok := err.(cli.ExitCoder); ok {
			return coder.ExitCode()
		}
		return 1
	}
	return 0
}

func printError(w io.Writer, err error) {
	if w == nil {
		w = os.Stderr
	}
	fmt.Fprintf(w, "laraworker: %v\n", err)
}
