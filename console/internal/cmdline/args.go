package cmdline

import (
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"
)

// Action adapts a command body that takes its positional arguments
// (flags after arguments applied) to cli.ActionFunc.
func Action(fn func(c *cli.Context, args []string) error) cli.ActionFunc {
	return func(c *cli.Context) error {
		args, err := positionalArgs(c)
		if errors.Is(err, errHelpShown) {
			return nil
		}
		if err != nil {
			return err
		}
		return fn(c, args)
	}
}

// NoArgs is the body of a command that takes no arguments.
func NoArgs(fn func(c *cli.Context) error) cli.ActionFunc {
	return Action(func(c *cli.Context, args []string) error {
		if len(args) > 0 {
			return cli.Exit(fmt.Sprintf("%s: unexpected argument %q", c.Command.Name, args[0]), 2)
		}
		return fn(c)
	})
}

// errHelpShown stops an action after positionalArgs printed the help.
var errHelpShown = errors.New("help shown")

// positionalArgs returns the command's arguments after applying the flags
// written after them. urfave/cli stops reading flags at the first argument,
// but artisan users write `retry 5 --queue=high`. "--" ends the flags.
func positionalArgs(c *cli.Context) ([]string, error) {
	var args []string
	rest := c.Args().Slice()
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if a == "--" {
			return append(args, rest[i+1:]...), nil
		}
		if len(a) < 2 || a[0] != '-' {
			args = append(args, a)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if name == "help" || name == "h" {
			if err := cli.ShowSubcommandHelp(c); err != nil {
				return nil, err
			}
			return nil, errHelpShown
		}
		f := commandFlag(c.Command, name)
		if f == nil {
			return nil, commandUsageError(c, fmt.Errorf("flag provided but not defined: -%s", name))
		}
		if !hasValue {
			if tv, ok := f.(cli.DocGenerationFlag); ok && !tv.TakesValue() {
				value = "true"
			} else if i+1 < len(rest) {
				i++
				value = rest[i]
			} else {
				return nil, commandUsageError(c, fmt.Errorf("--%s needs a value", name))
			}
		}
		if err := c.Set(name, value); err != nil {
			if tv, ok := f.(cli.DocGenerationFlag); ok && !tv.TakesValue() {
				return nil, commandUsageError(c, fmt.Errorf("invalid boolean value %q for -%s: %v", value, name, err))
			}
			return nil, commandUsageError(c, fmt.Errorf("invalid value %q for flag -%s: %v", value, name, err))
		}
	}
	return args, nil
}

func commandFlag(cmd *cli.Command, name string) cli.Flag {
	for _, f := range cmd.Flags {
		for _, n := range f.Names() {
			if n == name {
				return f
			}
		}
	}
	return nil
}
