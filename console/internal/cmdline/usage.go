package cmdline

import (
	"errors"
	"flag"
	"fmt"
	"regexp"
	"strings"

	"github.com/laraworker/laraworker/internal/didyoumean"
	"github.com/urfave/cli/v2"
)

// Usage errors follow the conventions of Go tools and artisan: exit status
// 2, one line on stderr that says what was wrong, with a "did you mean"
// when a name is close to a real one, and where to read more; the help
// text itself is printed only when asked for (--help, `help COMMAND`).

// ExitUsage is the status of a usage error.
const ExitUsage = 2

// UsageError is a cli.ExitCoder with status 2.
func UsageError(format string, args ...any) error {
	return cli.Exit(fmt.Sprintf(format, args...), ExitUsage)
}

// Conventions applies the usage rules to every command of app (including
// commands appended after New, such as bench: call it from Run).
func Conventions(app *cli.App) {
	app.OnUsageError = func(c *cli.Context, err error, _ bool) error {
		if errors.Is(err, flag.ErrHelp) {
			return cli.ShowAppHelp(c)
		}
		return flagUsageError("", app.Name, app.Flags, err)
	}
	app.Action = func(c *cli.Context) error { return rootAction(c, app) }
	app.Suggest = false // our own messages carry the suggestion
	applyToCommands(app, app.Commands, app.Name)
	if !hasCommand(app.Commands, "help") {
		app.Commands = append(app.Commands, helpCommand(app))
	}
}

func applyToCommands(app *cli.App, cmds []*cli.Command, prefix string) {
	for _, cmd := range cmds {
		full := prefix + " " + cmd.Name
		if cmd.OnUsageError == nil {
			cmd.OnUsageError = func(c *cli.Context, err error, _ bool) error {
				if errors.Is(err, flag.ErrHelp) {
					return cli.ShowCommandHelp(c, cmd.Name)
				}
				return flagUsageError(strings.TrimPrefix(full, app.Name+" ")+": ", full, cmd.Flags, err)
			}
		}
		applyToCommands(app, cmd.Subcommands, full)
	}
}

func hasCommand(cmds []*cli.Command, name string) bool {
	for _, c := range cmds {
		if c.HasName(name) {
			return true
		}
	}
	return false
}

var (
	undefinedFlagRE = regexp.MustCompile(`flag provided but not defined: -+(\S+)`)
	invalidValueRE  = regexp.MustCompile(`invalid value "(.*)" for flag -+(\S+): (.*)`)
	invalidBoolRE   = regexp.MustCompile(`invalid boolean value "(.*)" for -+([^\s:]+)`)
)

// flagUsageError rewrites the flag package's errors into one line:
// "work: unknown flag --quue (did you mean --queue?)", "work: --sleep "x":
// want ...". prefix names the command; helpFor is what --help follows.
func flagUsageError(prefix, helpFor string, flags []cli.Flag, err error) error {
	see := fmt.Sprintf("; see '%s --help'", helpFor)
	msg := err.Error()
	switch {
	case undefinedFlagRE.MatchString(msg):
		name := undefinedFlagRE.FindStringSubmatch(msg)[1]
		name, _, _ = strings.Cut(name, "=")
		out := fmt.Sprintf("%sunknown flag --%s", prefix, name)
		if why, ok := removedFlags[name]; ok {
			out += " (" + why + ")"
		} else if s, ok := suggestFlag(name, flagNames(flags)); ok {
			out += fmt.Sprintf(" (did you mean --%s?)", s)
		}
		return UsageError("%s%s", out, see)
	case invalidValueRE.MatchString(msg):
		m := invalidValueRE.FindStringSubmatch(msg)
		reason := m[3]
		if reason == "parse error" {
			reason = "want a number"
		}
		return UsageError("%s--%s %q: %s%s", prefix, m[2], m[1], reason, see)
	case invalidBoolRE.MatchString(msg):
		m := invalidBoolRE.FindStringSubmatch(msg)
		return UsageError("%s--%s %q: a switch takes no value (or --%s=true/false)%s", prefix, m[2], m[1], m[2], see)
	}
	return UsageError("%s%s%s", prefix, strings.TrimPrefix(msg, "flag "), see)
}

// removedFlags are flags that are gone without an alias, and why; the
// usage error says what to use instead. (Flags renamed for a release stay
// as hidden aliases that print a hint: push --shape, --output.)
var removedFlags = map[string]string{
	"key": "removed: a key on the command line shows in `ps`; put it in a file and pass --key-file FILE, or set APP_KEY or LARAWORKER_APP_KEY",
}

// suggestFlag is the flag name meant: a close spelling, else the only
// flag that starts with what was typed (--key for --key-file).
func suggestFlag(typed string, names []string) (string, bool) {
	if s, ok := didyoumean.Suggest(typed, names, didyoumean.Lower); ok {
		return s, true
	}
	match := ""
	for _, n := range names {
		if strings.HasPrefix(n, typed) {
			if match != "" {
				return "", false
			}
			match = n
		}
	}
	return match, match != ""
}

func flagNames(flags []cli.Flag) []string {
	var out []string
	for _, f := range flags {
		out = append(out, f.Names()...)
	}
	return out
}

// rootAction runs when no command matched: no arguments shows the help
// (exit 0); anything else is an unknown command.
func rootAction(c *cli.Context, app *cli.App) error {
	if c.NArg() == 0 {
		return cli.ShowAppHelp(c)
	}
	return unknownCommand(app, c.Args().First())
}

func unknownCommand(app *cli.App, name string) error {
	msg := fmt.Sprintf("unknown command %q", name)
	if s, ok := didyoumean.Suggest(name, visibleCommandNames(app.Commands), didyoumean.Lower); ok {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	return UsageError("%s; see '%s help'", msg, app.Name)
}

func visibleCommandNames(cmds []*cli.Command) []string {
	var out []string
	for _, c := range cmds {
		if !c.Hidden {
			out = append(out, c.Names()...)
		}
	}
	return out
}

// helpCommand is `help [COMMAND]`: the program's or a command's help, exit
// 0; an unknown command is a usage error with a suggestion.
func helpCommand(app *cli.App) *cli.Command {
	return &cli.Command{
		Name:      "help",
		Usage:     "show the commands, or one command's flags",
		ArgsUsage: "[COMMAND]",
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return cli.ShowAppHelp(c)
			}
			name := c.Args().First()
			if !hasCommand(app.Commands, name) {
				return unknownCommand(app, name)
			}
			return cli.ShowCommandHelp(c.Lineage()[1], name)
		},
	}
}

// commandUsageError is flagUsageError for an error met inside a command's
// action (flags written after its arguments).
func commandUsageError(c *cli.Context, err error) error {
	return flagUsageError(c.Command.Name+": ", c.App.Name+" "+c.Command.Name, c.Command.Flags, err)
}
