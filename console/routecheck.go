package console

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/laraworker/laraworker/console/internal/queueconn"
	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/internal/classaudit"
	"github.com/laraworker/laraworker/internal/didyoumean"
	"github.com/laraworker/laraworker/internal/phpclass"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
)

// The start checks of the routes' classes, through the app's own PHP (as
// `audit` reads them): a --route to a class the app does not have, and a
// --route to a class whose declarations Go cannot learn from its payloads
// (no bridge record) stop `work` before it claims anything. A Go
// registration gets warnings only: a program may serve several apps.

// routeSetup is what the route checks take from the flags.
type routeSetup struct {
	// cli are the classes --route names (as given).
	cli []string
	// php is --php: the binary that boots the app.
	php string
	// optIn is --run-without-php-declarations; mwOptIn
	// --run-without-php-middleware (it consents to the middleware part).
	optIn, mwOptIn []string
}

// isCLI reports whether route came from --route.
func (s routeSetup) isCLI(route string) bool { return slices.Contains(s.cli, route) }

// phpClassName is the shape of a class name Laravel writes as a payload's
// displayName; a route of another shape (a closure's "Closure (...)", a
// displayName() that is not a class) is not looked up.
var phpClassName = regexp.MustCompile(`^[A-Za-z_\x80-\xff][A-Za-z0-9_\x80-\xff]*(\\[A-Za-z_\x80-\xff][A-Za-z0-9_\x80-\xff]*)*$`)

// reflectRouteClasses reads the routes' classes through the app's PHP;
// nil when the app's configuration was not read through its PHP (no app
// folder, --php off), which leaves only the queue-based warnings.
func reflectRouteClasses(ctx context.Context, info appconfig.AppInfo, php string, routes []string) (*phpclass.App, error) {
	if info.Source != "php" || info.AppDir == "" {
		return nil, nil
	}
	var names []string
	for _, r := range routes {
		if phpClassName.MatchString(r) {
			names = append(names, r)
		}
	}
	if len(names) == 0 {
		return nil, nil
	}
	return phpclass.Reflect(ctx, phpclass.Options{AppDir: info.AppDir, EnvFile: info.EnvFile, PHP: php, Classes: names})
}

// routeFindings are what the class checks found: errors stop `work`,
// warnings are logged; handled are the routes whose class the app has or
// that got a finding (the queue-based "matches no job" warning is not for
// them).
type routeFindings struct {
	errors, warnings []string
	handled          map[string]bool
}

// checkRouteClasses checks each route against the app's classes (app nil:
// nothing to check but the shape of --route names).
func checkRouteClasses(ctx context.Context, q jobqueue.Admin, driver string, queues []string, reg *handlers.Registry, app *phpclass.App, bridge *appconfig.BridgeConfig, setup routeSetup) (routeFindings, error) {
	f := routeFindings{handled: map[string]bool{}}
	for _, route := range reg.Names() {
		if setup.isCLI(route) && nonCanonical(route) {
			f.errors = append(f.errors, fmt.Sprintf(`--route %s can never match: Laravel writes class names with single backslashes and no leading one (%s)`, route, canonical(route)))
			continue
		}
		if app == nil || !phpClassName.MatchString(route) {
			continue
		}
		c := app.Class(route)
		if c != nil && c.Error == "" {
			f.handled[route] = true
			if c.Name != route && driver == appconfig.EnginePgSQL {
				f.add(route, setup.isCLI(route), caseWarning(route, c.Name, queues, driver))
				continue
			}
			if setup.isCLI(route) {
				if msg := undeclaredProblem(app, c, bridge, setup); msg != "" {
					f.errors = append(f.errors, msg)
				}
			}
			continue
		}
		msg, err := missingClass(ctx, q, queues, route, c, app)
		if err != nil {
			return f, err
		}
		if msg != "" {
			f.add(route, setup.isCLI(route), msg)
		}
	}
	return f, nil
}

// add records a finding: an error for a --route, a warning for a Go
// registration.
func (f *routeFindings) add(route string, cli bool, msg string) {
	f.handled[route] = true
	if cli {
		f.errors = append(f.errors, msg)
	} else {
		f.warnings = append(f.warnings, msg)
	}
}

// missingClass words the finding for a route whose class the app does
// not have; "" when jobs of that name wait on the queues all the same (a
// displayName() that is not a class name).
func missingClass(ctx context.Context, q jobqueue.Admin, queues []string, route string, c *phpclass.Class, app *phpclass.App) (string, error) {
	n, err := countOnQueues(ctx, q, queues, route)
	if (err != nil && !errors.Is(err, jobqueue.ErrNotSupported)) || n > 0 {
		return "", err
	}
	counted := err == nil
	var present map[string]int64
	if counted {
		if present, _, err = q.ClassesOnQueues(ctx, queues, queueconn.ClassSample); err != nil && !errors.Is(err, jobqueue.ErrNotSupported) {
			return "", err
		}
	}
	why := "the app has no such class (its autoloader does not find it)"
	if c != nil && c.Error != "" && !strings.HasPrefix(c.Error, "no such class") {
		why = "the app's PHP cannot read it: " + c.Error
	}
	waits := "and no job of that name waits on queues " + strings.Join(queues, ",")
	if !counted {
		waits = "and the store cannot count the jobs of a class on queues " + strings.Join(queues, ",")
	}
	msg := fmt.Sprintf(`route %s: %s, %s`, route, why, waits)
	candidates := append(slices.Clone(app.JobClasses), queueconn.SortedClasses(present)...)
	if s, ok := didyoumean.Suggest(route, candidates, didyoumean.ClassName); ok {
		msg += fmt.Sprintf(`; did you mean %s?`, s)
	}
	return msg, nil
}

// nonCanonical: a name with a leading or doubled backslash, which no
// displayName Laravel writes has.
func nonCanonical(route string) bool {
	return strings.HasPrefix(route, `\`) || strings.Contains(route, `\\`)
}

func canonical(route string) string {
	return strings.TrimPrefix(collapseBackslashes(route), `\`)
}

// undeclaredProblem is the refusal of a --route class whose jobs carry no
// bridge record while the class declares what Go learns only from one (or
// from a Go registration): a unique lock, models (deleteWhenMissingModels
// included), job middleware. "" when nothing is missing, the jobs carry
// the record, or the class was consented to.
func undeclaredProblem(app *phpclass.App, c *phpclass.Class, bridge *appconfig.BridgeConfig, setup routeSetup) string {
	if bridge.RecordsAll() || (bridge != nil && bridge.Installed && len(c.BridgeRoutes) > 0) || optedIn(setup.optIn, c.Name) {
		return ""
	}
	// The audit as if no bridge recorded the class: what the payloads
	// then carry.
	bare := *app
	bare.Bridge = phpclass.Bridge{}
	var lost []string
	for _, it := range classaudit.AuditClass(&bare, c).Items {
		if why := undeclaredItem(it); why != "" && !(it.Area == "middleware" && optedIn(setup.mwOptIn, c.Name)) {
			lost = append(lost, why)
		}
	}
	if len(lost) == 0 {
		return ""
	}
	how := "install the laraworker bridge, which records them in every job's payload at dispatch (bridge/README.md; 'record' => 'all', its default)"
	if bridge != nil && bridge.Installed {
		how = "let the installed bridge record every job ('record' => 'all' in config/laraworker.php, LARAWORKER_RECORD=all; update the bridge if it has no such setting), or route the class in config/laraworker.php"
	}
	return fmt.Sprintf(`--route %s: its jobs carry no bridge record, and the class declares what Go then cannot know, so Go would run them unlike PHP: %s. Fix: %s; or register the class in Go with its declarations (laraworker gen '%s'); or accept running it without them: --run-without-php-declarations '%s'`,
		c.Name, strings.Join(lost, "; "), how, c.Name, c.Name)
}

// undeclaredItem says what goes wrong when an audit item's declaration
// does not reach Go; "" for an item Go does from the payload or that
// does not matter here.
func undeclaredItem(it classaudit.Item) string {
	lost := it.Verdict == classaudit.Lost && it.When == ""
	switch {
	case it.Area == "contract" && strings.HasPrefix(it.Name, "ShouldBeUnique") && (it.Verdict == classaudit.GoDeclared || lost):
		return it.Name + ": its lock would stay in the cache after Go ran the job, and Laravel drops every dispatch of the class until uniqueFor ends"
	case it.Area == "option" && it.Name == "deleteWhenMissingModels" && it.Verdict == classaudit.GoDeclared:
		return "$deleteWhenMissingModels: a job whose model was deleted would run instead of being deleted"
	case it.Area == "model" && it.Verdict == classaudit.GoDeclared:
		return "model " + it.Name + ": a job whose model was deleted would run where PHP fails it (ModelNotFoundException)"
	case it.Area == "middleware" && lost:
		return "middleware " + it.Name + ": the job would run without it"
	}
	return ""
}

// optedIn: CLASS or * was given to a consent flag.
func optedIn(classes []string, class string) bool {
	return slices.ContainsFunc(classes, func(c string) bool { return c == "*" || strings.EqualFold(c, class) })
}

// routeCheckError joins the refusals into the error `work` stops with.
func routeCheckError(errs []string) error {
	if len(errs) == 0 {
		return nil
	}
	return errors.New(strings.Join(errs, "\n"))
}
