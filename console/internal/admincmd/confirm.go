package admincmd

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/laraworker/laraworker/console/internal/queueconn"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/mattn/go-isatty"
	"github.com/urfave/cli/v2"
)

// clear and flush ask before they delete, as artisan's ConfirmableTrait
// does: in production, unless --force. laraworker also asks whenever
// stdin is a terminal, whatever the environment, because clear deletes
// reserved (running) jobs too. Without a terminal to ask on, production
// refuses instead of waiting for an answer that cannot come.

// forceFlag is artisan's --force for the commands that confirm.
func forceFlag() cli.Flag {
	return &cli.BoolFlag{Name: "force", Usage: "run without asking for confirmation (asked in production, as artisan does, and whenever stdin is a terminal)"}
}

// confirmToProceed returns nil when the command may go on: --force, or
// neither production nor a terminal, or a yes typed on the terminal.
// Otherwise it returns the command's exit error; nothing was deleted.
func confirmToProceed(c *cli.Context, s *queueconn.Session, deletes string) error {
	if c.Bool("force") {
		return nil
	}
	env, from := appEnv(s.Info, os.LookupEnv)
	production := env == "production"
	interactive := isTerminal(c.App.Reader)
	switch {
	case !production && !interactive:
		return nil
	case !interactive:
		return cli.Exit(fmt.Sprintf("%s: the app is in production (%s) and stdin is not a terminal to confirm on: nothing was deleted; pass --force to run it without asking (it deletes %s)",
			c.Command.Name, from, deletes), 1)
	}
	w := c.App.ErrWriter
	if w == nil {
		w = os.Stderr
	}
	if production {
		alert(w, "Application In Production!")
	}
	fmt.Fprintf(w, "This deletes %s.\n Do you really wish to run this command? (yes/no) [no]:\n > ", deletes)
	if !yes(c.App.Reader) {
		fmt.Fprintln(w, "Command Canceled!")
		return cli.Exit("", 1)
	}
	return nil
}

// appEnv is the app's environment as Laravel reads APP_ENV (the process
// environment wins over the .env; LARAWORKER_APP_ENV over both, as for
// every setting laraworker reads), and where it came from. Unset, it is
// "production": config/app.php's default in every Laravel skeleton.
func appEnv(info appconfig.AppInfo, lookup func(string) (string, bool)) (env, from string) {
	if v, ok := lookup("LARAWORKER_APP_ENV"); ok {
		return v, "LARAWORKER_APP_ENV=" + v
	}
	if v, ok := lookup("APP_ENV"); ok {
		return v, "APP_ENV=" + v + " in the environment"
	}
	if info.EnvFile != "" {
		if src, err := os.ReadFile(info.EnvFile); err == nil {
			if vals, err := appconfig.ParseDotenv(string(src), lookup); err == nil {
				if v, ok := vals["APP_ENV"]; ok {
					return v, "APP_ENV=" + v + " in " + info.EnvFile
				}
			}
		}
	}
	return "production", "APP_ENV is not set, and Laravel's config/app.php then says production"
}

// isTerminal reports whether r is a terminal a person can answer on. A
// reader may say so itself (tests); any other reader is not one.
func isTerminal(r io.Reader) bool {
	switch v := r.(type) {
	case nil:
		return isTerminal(os.Stdin)
	case interface{ IsTerminal() bool }:
		return v.IsTerminal()
	case *os.File:
		return isatty.IsTerminal(v.Fd()) || isatty.IsCygwinTerminal(v.Fd())
	}
	return false
}

// yes reads one answer line; like Symfony's confirmation question, an
// answer starting with y means yes, anything else (or none) no.
func yes(r io.Reader) bool {
	if r == nil {
		r = os.Stdin
	}
	line, _ := bufio.NewReader(r).ReadString('\n')
	return strings.HasPrefix(strings.ToLower(strings.TrimSpace(line)), "y")
}

// alert frames a warning in stars, as artisan's $this->alert does.
func alert(w io.Writer, msg string) {
	stars := strings.Repeat("*", len(msg)+12)
	fmt.Fprintf(w, "%s\n*     %s     *\n%s\n\n", stars, msg, stars)
}
