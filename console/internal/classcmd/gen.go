package classcmd

import (
	"fmt"
	"strings"

	"github.com/laraworker/laraworker/console/internal/cmdline"
	"github.com/laraworker/laraworker/console/internal/output"
	"github.com/laraworker/laraworker/internal/jobgen"
	"github.com/laraworker/laraworker/internal/phpclass"
	"github.com/urfave/cli/v2"
)

// GenCommand is `gen`: the Go struct and handler skeleton of PHP job
// classes.
func GenCommand() *cli.Command {
	return &cli.Command{
		Name:      "gen",
		Usage:     "write the Go struct and handler skeleton of a PHP job class (or of every job class of the app)",
		ArgsUsage: "[CLASS...]",
		Description: `Reads each CLASS through the app's own PHP (as audit does) and writes a Go
file: a struct with one php:"name" field per property the class declares, typed
so that every value the declaration admits decodes as Laravel serializes it
(Carbon and DateTime as time.Time, enums as their case name, models and
Eloquent collections as payload.ModelIdentifier, a plain Collection as
payload.Collection: it arrives as a ModelIdentifier when it holds Eloquent
models; nullable types and properties the constructor may leave unset as
pointers; declared defaults as default= or default_php= tags: Laravel 9.4+
leaves such properties out of the payload), and a handlers.Register call with
a handler skeleton and the declarations Go needs (ShouldBeUnique,
DeleteWhenMissingModels, the models' tables).

  laraworker gen 'App\Jobs\X' --app DIR              prints the file
  laraworker gen 'App\Jobs\X' --out jobs/x.go        writes it
  laraworker gen --out jobs/                         every job class of the app,
                                                     one file each (as audit finds them)

With --out the package is that of the Go files already in the folder, else the
folder's name; without, "jobs". --package names it. An existing file is never
overwritten without --force (the file is yours once you write the handler).`,
		Flags: auditFlags(
			&cli.StringFlag{Name: "package", Usage: "the Go `package` name of the files (default: the --out folder's package or name; jobs on standard output)"},
			&cli.StringFlag{Name: "out", Usage: "write to `PATH`: a .go file (one CLASS), or a folder (one file per class; every job class of the app without CLASS)"},
			&cli.BoolFlag{Name: "force", Usage: "overwrite files --out would write that exist"},
		),
		Action: cmdline.Action(runGen),
	}
}

func runGen(c *cli.Context, args []string) error {
	out := c.String("out")
	toFile := strings.HasSuffix(out, ".go")
	switch {
	case out == "" && len(args) != 1:
		return cmdline.UsageError(`gen: name one class to print it (laraworker gen 'App\Jobs\X' --app DIR), or give --out DIR to write every job class, or the classes named, one file each`)
	case toFile && len(args) != 1:
		return cmdline.UsageError("gen: --out %s is one file: name one class (or give --out a folder)", out)
	}
	app, err := reflectClasses(c, args, len(args) == 0)
	if err != nil {
		return err
	}
	classes, err := genClasses(app, args)
	if err != nil {
		return err
	}
	if out == "" {
		src, err := jobgen.Generate(app, classes[0], jobgen.Options{Package: packageName(c, "")})
		if err != nil {
			return err
		}
		_, err = c.App.Writer.Write(src)
		return err
	}
	return writeGenerated(c, app, classes, out, toFile)
}

// genClasses are the classes to generate: those named (each must have
// been read), or every job class the app's PHP found.
func genClasses(app *phpclass.App, named []string) ([]*phpclass.Class, error) {
	var out []*phpclass.Class
	for _, name := range named {
		c := app.Class(name)
		if c == nil {
			return nil, fmt.Errorf("gen: the app's PHP did not read %s", name)
		}
		if c.Error != "" {
			return nil, fmt.Errorf("gen: %s: %s", name, c.Error)
		}
		out = append(out, c)
	}
	if len(named) > 0 {
		return out, nil
	}
	for i := range app.Classes {
		if app.Classes[i].Error != "" {
			return nil, fmt.Errorf("gen: %s: %s", app.Classes[i].Name, app.Classes[i].Error)
		}
		out = append(out, &app.Classes[i])
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("gen: no job class (a concrete class implementing ShouldQueue) under app/ or the app's psr-4 folders of %s", app.AppDir)
	}
	return out, nil
}

// packageName is --package, or the package of the folder dir ("" for
// standard output: jobs).
func packageName(c *cli.Context, dir string) string {
	if c.IsSet("package") || dir == "" {
		return c.String("package")
	}
	return folderPackage(dir)
}

// writeGenerated writes one file per class under out (a folder), or the
// one class to out (a .go file); no file is written when one would
// overwrite a file without --force.
func writeGenerated(c *cli.Context, app *phpclass.App, classes []*phpclass.Class, out string, toFile bool) error {
	files, err := plannedFiles(classes, out, toFile)
	if err != nil {
		return err
	}
	if !c.Bool("force") {
		if existing := existingFiles(files); len(existing) > 0 {
			return fmt.Errorf("gen: %s exist(s): give --force to overwrite (a handler written there would be lost)", strings.Join(existing, ", "))
		}
	}
	pkg := packageName(c, files[0].dir())
	for _, f := range files {
		src, err := jobgen.Generate(app, f.class, jobgen.Options{Package: pkg, TypeName: f.typeName})
		if err != nil {
			return err
		}
		if err := writeFile(f.path, src); err != nil {
			return err
		}
		output.Say(c, "%s: %s (package %s)", output.Printable(f.class.Name), f.path, pkg)
	}
	return nil
}
