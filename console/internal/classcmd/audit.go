package classcmd

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/laraworker/laraworker/console/internal/cmdline"
	"github.com/laraworker/laraworker/console/internal/output"
	"github.com/laraworker/laraworker/internal/classaudit"
	"github.com/laraworker/laraworker/internal/phpclass"
	"github.com/urfave/cli/v2"
)

// ExitLost is audit's status when something a class declares would not
// carry over to Go.
const ExitLost = 1

// AuditCommand is `audit`: what of each job class carries over to Go.
func AuditCommand() *cli.Command {
	return &cli.Command{
		Name:      "audit",
		Usage:     "say, for each job class of the app (or each CLASS), what carries over to Go and what does not",
		ArgsUsage: "[CLASS...]",
		Description: `Reads each job class through the app's own PHP (the app booted as artisan
boots it; no job is constructed and nothing of the class runs: middleware()
and uniqueId() are read as source) and lists its properties, queue options,
contracts, models, hooks and middleware, each with who does it once the class
runs in Go:

  Go                      from the payload or the class's registration
  Go, when declared       when the Go registration declares it (laraworker gen
                          writes the declaration); a --route handler cannot
  Go, shared with PHP     Laravel's middleware, with Laravel's keys on the
                          app's cache: one lock, one budget for PHP and Go
  PHP through the bridge  failed(), batch and chain callbacks, run in PHP
  PHP                     stays on PHP (nothing is lost)
  will not carry over     closures, the app's own middleware, hooks without
                          the bridge: nobody does it once the class is in Go

A property's line says the Go type gen writes for it, which decodes every value
its declaration admits as Laravel serializes it, and "Go might not decode it in
another type" where some of those values need that type: a Collection holding
Eloquent models arrives as their class and keys, a model of a class without
SerializesModels arrives whole, a property the constructor may leave unset is
left out of the job.

Without CLASS, every job class of the app: the concrete ShouldQueue classes
under app/ and the app's composer.json psr-4 folders, found by its PHP, with or
without the bridge (each routed class says which route of config/laraworker.php
sends it to Go); the queued classes Laravel wraps in its own commands
(listeners, mailables, notifications) are named and left out. --routed: only
the classes config/laraworker.php routes (a parent class, interface or trait
stands for every job class under app/ that extends, implements or uses it).
Exit status 1 when something would not carry over (items marked "only ..." do
not count: the class may never be used that way).`,
		Flags: auditFlags(cmdline.JSONFlag(),
			&cli.BoolFlag{Name: "routed", Usage: "without CLASS: only the classes the bridge's config/laraworker.php routes to Go"}),
		Action: cmdline.Action(runAudit),
	}
}

// auditFlags are the flags of the commands that read classes through PHP.
func auditFlags(extra ...cli.Flag) []cli.Flag {
	return append([]cli.Flag{cmdline.AppFlag(), cmdline.EnvFlag(), cmdline.PHPFlag()}, extra...)
}

// reflectClasses runs the app's PHP over the classes; without classes,
// every job class of the app (allJobs) or those the bridge routes.
func reflectClasses(c *cli.Context, classes []string, allJobs bool) (*phpclass.App, error) {
	app := c.String("app")
	if app == "" {
		app = "."
		if env := c.String("env"); env != "" {
			app = filepath.Dir(env)
		}
	}
	return phpclass.Reflect(c.Context, phpclass.Options{AppDir: app, EnvFile: c.String("env"), PHP: c.String("php"), Classes: classes, AllJobs: allJobs})
}

func runAudit(c *cli.Context, classes []string) error {
	routed := c.Bool("routed")
	if routed && len(classes) > 0 {
		return cmdline.UsageError("audit: name classes or give --routed, not both")
	}
	app, err := reflectClasses(c, classes, !routed)
	if err != nil {
		return err
	}
	if len(app.Classes) == 0 && routed {
		return cli.Exit("audit: no classes: config/laraworker.php (the bridge) routes none to Go; name them (laraworker audit 'App\\Jobs\\X'), or leave out --routed for every job class of the app", cmdline.ExitUsage)
	}
	report := classaudit.Audit(app)
	if c.Bool("json") {
		if err := output.WriteJSON(c.App.Writer, report); err != nil {
			return err
		}
	} else if err := printAudit(c, report); err != nil {
		return err
	}
	switch {
	case report.Unreadable > 0:
		return cli.Exit(fmt.Sprintf("audit: %d item(s) would not carry over to Go, and %d class(es) could not be read", report.Lost, report.Unreadable), ExitLost)
	case report.Lost > 0:
		return cli.Exit(fmt.Sprintf("audit: %d item(s) would not carry over to Go", report.Lost), ExitLost)
	}
	return nil
}

func printAudit(c *cli.Context, r classaudit.Report) error {
	bridge := "not installed"
	if r.Bridge.Installed {
		bridge = "installed, capabilities: " + noneIfEmpty(strings.Join(r.Bridge.Capabilities, ", "))
	}
	output.Say(c, "Laravel %s; laraworker bridge %s.", r.LaravelVersion, bridge)
	for _, route := range r.UnmatchedRoutes {
		output.Warn(c, "audit: the route %s of config/laraworker.php matches no job class under app/", route)
	}
	for _, s := range r.Skipped {
		output.Say(c, "Not audited: %s: %s.", output.Printable(s.Class), output.Printable(s.Why))
	}
	if len(r.Classes) == 0 {
		output.Say(c, "No job class (a concrete class implementing ShouldQueue) under app/ or the app's psr-4 folders.")
	}
	for _, cr := range r.Classes {
		output.Say(c, "")
		output.Say(c, "%s", output.Printable(classHeading(cr)))
		if cr.Error != "" {
			output.Say(c, "  cannot be read: %s", output.Printable(cr.Error))
			continue
		}
		rows := make([][]string, 0, len(cr.Items))
		for _, it := range cr.Items {
			who := it.Verdict.Text()
			if it.When != "" {
				who += " (only " + it.When + ")"
			}
			rows = append(rows, []string{it.Name, it.Declared, who})
		}
		if err := output.WriteTable(c.App.Writer, []string{"Item", "Declared", "Once in Go"}, rows); err != nil {
			return err
		}
		// How goes below the table: one line per item keeps the table
		// narrow enough for a terminal.
		for _, it := range cr.Items {
			output.Say(c, "  %s: %s", output.Printable(it.Name), output.Printable(it.How))
		}
		if cr.Lost > 0 {
			output.Say(c, "%d item(s) of %s would not carry over.", cr.Lost, cr.Class)
		}
		if risky := riskyProperties(cr); len(risky) > 0 {
			output.Say(c, "%d property(ies) of %s decode only into the Go type gen writes (see above): %s.", len(risky), cr.Class, strings.Join(risky, ", "))
		}
	}
	return nil
}

func classHeading(cr classaudit.ClassReport) string {
	var where []string
	if cr.File != "" {
		where = append(where, cr.File)
	}
	if len(cr.RoutedBy) > 0 {
		where = append(where, "routed to Go by "+strings.Join(cr.RoutedBy, ", "))
	}
	if len(where) == 0 {
		return cr.Class
	}
	return cr.Class + " (" + strings.Join(where, "; ") + ")"
}

func noneIfEmpty(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// riskyProperties are the properties of a class some of whose values a Go
// type other than gen's fails on.
func riskyProperties(cr classaudit.ClassReport) []string {
	var out []string
	for _, it := range cr.Items {
		if it.Area == "property" && it.Risk != "" {
			out = append(out, output.Printable(it.Name))
		}
	}
	return out
}
