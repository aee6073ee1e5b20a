package classcmd

import (
	"fmt"

	"github.com/laraworker/laraworker/console/internal/cmdline"
	"github.com/laraworker/laraworker/jobgen"
	"github.com/urfave/cli/v2"
)

// GenCommand is `gen`: the Go struct and handler skeleton of a PHP job
// class.
func GenCommand() *cli.Command {
	return &cli.Command{
		Name:      "gen",
		Usage:     "print the Go struct and handler skeleton of a PHP job class",
		ArgsUsage: "CLASS",
		Description: `Reads CLASS through the app's own PHP (as audit does) and prints a Go file:
a struct with one php:"name" field per property the class declares (Carbon and
DateTime as time.Time, enums as their case name, models and model collections
as payload.ModelIdentifier, nullable types as pointers, declared defaults as
default= tags: Laravel 9.4+ leaves such properties out of the payload), and
a handlers.Register call with a handler skeleton and the declarations Go needs
(ShouldBeUnique, DeleteWhenMissingModels, the models' tables). Redirect it to
a file: laraworker gen 'App\Jobs\X' --app DIR > x.go`,
		Flags: auditFlags(
			&cli.StringFlag{Name: "package", Value: "jobs", Usage: "the Go `package` name of the file"},
		),
		Action: cmdline.Action(runGen),
	}
}

func runGen(c *cli.Context, args []string) error {
	if len(args) != 1 {
		return cli.Exit(`gen: name one class: laraworker gen 'App\Jobs\X' --app DIR`, cmdline.ExitUsage)
	}
	app, err := reflectClasses(c, args)
	if err != nil {
		return err
	}
	class := app.Class(args[0])
	if class == nil {
		return fmt.Errorf("gen: the app's PHP did not read %s", args[0])
	}
	src, err := jobgen.Generate(app, class, jobgen.Options{Package: c.String("package")})
	if err != nil {
		return err
	}
	_, err = c.App.Writer.Write(src)
	return err
}
