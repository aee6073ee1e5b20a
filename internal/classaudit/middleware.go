package classaudit

import (
	"fmt"
	"strings"

	"github.com/laraworker/laraworker/internal/phpclass"
)

const middlewareNS = `Illuminate\Queue\Middleware\`

// standardMiddleware is the middleware Go applies with Laravel's keys, by
// class, with the version that introduced it and how Go shares it.
var standardMiddleware = map[string]struct{ since, how string }{
	"WithoutOverlapping":           {"8.11", "one overlap lock with PHP (laravel-queue-overlap:<class>:<key>) on the %s"},
	"RateLimited":                  {"8.11", "one rate-limit budget with PHP (md5(limiter.key) counters) on the %s"},
	"RateLimitedWithRedis":         {"8.11", "one rate-limit budget with PHP (md5(limiter.key) hashes) on the app's redis connection"},
	"ThrottlesExceptions":          {"8.32", "one exception budget with PHP (laravel_throttles_exceptions:<key>) on the %s"},
	"ThrottlesExceptionsWithRedis": {"8.32", "one exception budget with PHP (laravel_throttles_exceptions:<key>) on the app's redis connection"},
	"Skip":                         {"11.23", "the condition is evaluated when the bridge records the middleware at dispatch, not when the job runs"},
	"SkipIfBatchCancelled":         {"9.49", "Go checks the batch's cancelled_at before running, as PHP does"},
}

// usesCacheStore: the middleware keeps its state in a cache store (which
// Go reaches for database and redis drivers only).
func usesCacheStore(short string) bool {
	return short == "WithoutOverlapping" || short == "RateLimited" || short == "ThrottlesExceptions"
}

func (a *auditor) middleware() {
	mw := a.c.Middleware
	if mw == nil {
		return
	}
	if !mw.Parsed {
		a.add(Item{Area: "middleware", Name: "middleware()", Declared: "method", Verdict: Lost,
			How: "audit cannot read what it returns (" + mw.Why + "): Go applies only middleware it can name; write middleware() as `return [new X(...), ...];`"})
		return
	}
	if len(mw.Items) == 0 {
		a.add(Item{Area: "middleware", Name: "middleware()", Declared: "return [];", Verdict: Go, How: "no middleware"})
	}
	for _, m := range mw.Items {
		a.add(a.middlewareItem(m))
	}
}

func (a *auditor) middlewareItem(m phpclass.MiddlewareItem) Item {
	it := Item{Area: "middleware", Name: m.Class, Declared: m.Expr}
	switch m.Kind {
	case "closure":
		it.Name, it.Verdict, it.How = "closure", Lost, "PHP code Go cannot run: the job would run without it"
		return it
	case "unknown":
		it.Name, it.Verdict, it.How = "?", Lost, "audit cannot tell which middleware this is ("+m.Why+"): Go would not apply it"
		return it
	}
	short, standard := strings.CutPrefix(m.Class, middlewareNS)
	spec, known := standardMiddleware[short]
	if standard {
		it.Name = short
	}
	switch {
	case !m.Exists:
		it.Verdict, it.How = Lost, "no such class in this app (Laravel "+a.version+"): PHP fails the job when it builds the middleware"
	case !standard:
		it.Verdict, it.How = Lost, "the app's own middleware: PHP code Go cannot run, so the job would run without it"
	case !known:
		it.Verdict, it.How = Lost, "not one of the middleware Go applies (WithoutOverlapping, RateLimited(WithRedis), ThrottlesExceptions(WithRedis), Skip, SkipIfBatchCancelled)"
	case !a.bridgeHas(phpclass.CapMiddleware):
		it.Verdict, it.How = Lost, "the job would run without it: "+a.noBridge("record it in the payload for Go")
	case usesCacheStore(short) && !lockDriverOK(a.middlewareDriver(short)):
		it.Verdict, it.How = Lost, fmt.Sprintf("its state lives in the %s cache driver, which Go cannot reach (database and redis only)", orUnknown(a.middlewareDriver(short)))
	default:
		it.Verdict = Shared
		it.How = spec.how
		if strings.Contains(it.How, "%s") {
			it.How = fmt.Sprintf(it.How, a.middlewareStore(short))
		}
		if !a.atLeast(spec.since) {
			it.How += fmt.Sprintf(" (note: Laravel added it in %s)", spec.since)
		}
	}
	it.How += a.middlewareNotes(short, m)
	return it
}

// middlewareStore names the cache store a middleware uses.
func (a *auditor) middlewareStore(short string) string {
	store := ""
	if short == "RateLimited" || short == "ThrottlesExceptions" {
		if a.app.Cache.Limiter != nil {
			store = *a.app.Cache.Limiter
		}
	}
	name := store
	if name == "" && a.app.Cache.Default != nil {
		name = *a.app.Cache.Default
	}
	return fmt.Sprintf("%s cache store (%s driver)", orUnknown(name), orUnknown(a.app.Cache.Driver(store)))
}

func (a *auditor) middlewareDriver(short string) string {
	if (short == "RateLimited" || short == "ThrottlesExceptions") && a.app.Cache.Limiter != nil {
		return a.app.Cache.Driver(*a.app.Cache.Limiter)
	}
	return a.app.Cache.Driver("")
}

// middlewareNotes are what is worth knowing about one use.
func (a *auditor) middlewareNotes(short string, m phpclass.MiddlewareItem) string {
	var notes []string
	if m.Limiter != nil && !m.Limiter.Registered {
		notes = append(notes, fmt.Sprintf("no limiter %q is registered (RateLimiter::for): PHP does not limit either", m.Limiter.Name))
	}
	if short == "ThrottlesExceptions" || short == "ThrottlesExceptionsWithRedis" {
		unit := "seconds"
		if !a.atLeast("11.0") {
			unit = "minutes"
		}
		notes = append(notes, "its decay argument is in "+unit+" on Laravel "+a.version)
	}
	for _, call := range m.Calls {
		if call == "dontRelease" {
			notes = append(notes, "dontRelease(): a job it stops counts as a success")
		}
	}
	if len(m.Args) > 0 && !m.Args[0].Literal && short == "WithoutOverlapping" && a.bridgeHas(phpclass.CapMiddleware) {
		notes = append(notes, "its key "+m.Args[0].Expr+" is read at dispatch")
	}
	if len(notes) == 0 {
		return ""
	}
	return "; " + strings.Join(notes, "; ")
}
