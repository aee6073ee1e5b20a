package console

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/laraworker/laraworker/console/internal/queueconn"
	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/internal/didyoumean"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/rs/zerolog"
)

// logAppConfig is the one startup line that says what configuration was
// read and from where, followed by the app's setup warnings.
func logAppConfig(log zerolog.Logger, cfg appconfig.Config, info appconfig.AppInfo) {
	ev := log.Info().Str("source", info.Source).Str("from", info.Describe()).
		Str("connection", cfg.ConnectionName).Str("driver", cfg.Driver).Str("database", cfg.Database).
		Str("table", cfg.JobsTable).Str("default_queue", cfg.DefaultQueue).Int("retry_after", cfg.RetryAfterSeconds()).
		Str("cache_store", cfg.CacheStore)
	if cfg.CacheStore == "database" {
		ev = ev.Str("cache_table", cfg.CacheTable).Str("cache_prefix", cfg.CachePrefix)
	}
	if info.Version != "" {
		ev = ev.Str("laravel", info.Version)
	}
	ev.Msg("laravel config")
	for _, w := range info.Warnings {
		log.Warn().Msg(w)
	}
}

// queueDriverError: the served queue connection must be a database, a
// redis, a beanstalkd or an sqs one, or PHP pushes its jobs elsewhere (sync
// runs them at once) and Go would wait on an empty table forever. A
// connection the app does not define is refused earlier
// (queueconn.ConnectionConfigured).
func queueDriverError(info appconfig.AppInfo) error {
	if info.QueueConnections == nil || info.Connection == "" {
		return nil
	}
	driver, ok := info.QueueConnections[info.Connection]
	if !ok || queueconn.Served(driver) || driver == "?" {
		return nil
	}
	return fmt.Errorf("queue connection %q (%s) has driver %q, not database, redis, beanstalkd or sqs: PHP does not push its jobs where Go reads them; %s",
		info.Connection, info.ConnectionFrom, driver, databaseConnectionHint(info))
}

// databaseConnectionHint names the app's queue connections with the
// database, redis, beanstalkd or sqs driver, which laraworker serves.
func databaseConnectionHint(info appconfig.AppInfo) string {
	var dbConns []string
	for name, d := range info.QueueConnections {
		if queueconn.Served(d) {
			dbConns = append(dbConns, name)
		}
	}
	sort.Strings(dbConns)
	if len(dbConns) == 0 {
		return "no queue connection of the app has the database, redis, beanstalkd or sqs driver"
	}
	return "serve one with --connection " + strings.Join(dbConns, " or --connection ")
}

// routeWarnings checks each Go route against the classes waiting on the
// watched queues: a route that matches none of them gets one warning that
// names the classes that are there, with a "did you mean" for near misses
// (doubled backslashes, a short name, a typo). With empty queues only
// names no PHP class can have are reported. Routes in skip (a class the
// app has, or one already reported by checkRouteClasses) get no such
// warning.
//
// A queued class matches the route the handler lookup gives it
// (reg.Route): PHP class names are case-insensitive, and so is the
// lookup. A class spelled with another case is claimed only where the
// database's LIKE ignores case too (MySQL, SQLite); where it does not
// (PostgreSQL, the engine named by driver) the route gets a warning that
// says so.
func routeWarnings(ctx context.Context, q jobqueue.Admin, driver string, queues []string, reg *handlers.Registry, skip map[string]bool) ([]string, error) {
	routes := reg.Names()
	if len(routes) == 0 {
		return nil, nil
	}
	present, read, err := q.ClassesOnQueues(ctx, queues, queueconn.ClassSample)
	if errors.Is(err, jobqueue.ErrNotSupported) {
		return nil, nil // the store cannot tell which classes wait
	}
	if err != nil {
		return nil, err
	}
	names := queueconn.SortedClasses(present)
	exact, otherCase := matchRoutes(reg, names)
	var out []string
	for _, route := range routes {
		if exact[route] {
			continue
		}
		if spelled, ok := otherCase[route]; ok {
			n, err := countOnQueues(ctx, q, queues, route)
			if err != nil {
				return nil, err
			}
			if n == 0 && !skip[route] {
				out = append(out, caseWarning(route, spelled, queues, driver))
			}
			continue
		}
		if skip[route] {
			continue
		}
		if read >= queueconn.ClassSample { // a sample: confirm the class is absent
			n, err := countOnQueues(ctx, q, queues, route)
			if err != nil {
				return nil, err
			}
			if n > 0 {
				continue
			}
		}
		if w := routeWarning(route, queues, names, present); w != "" {
			out = append(out, w)
		}
	}
	return out, nil
}

// matchRoutes maps the queued classes to the routes the handler lookup
// gives them: exact holds the routes some class spells as registered,
// otherCase the others, with the queued spelling (the most frequent, as
// names are sorted).
func matchRoutes(reg *handlers.Registry, names []string) (exact map[string]bool, otherCase map[string]string) {
	exact, otherCase = map[string]bool{}, map[string]string{}
	for _, class := range names {
		route, ok := reg.Route(class)
		switch {
		case !ok:
		case route == class:
			exact[route] = true
		case otherCase[route] == "":
			otherCase[route] = class
		}
	}
	return exact, otherCase
}

// caseWarning words the warning for a route whose jobs are queued with
// another case on a database whose claim compares case-sensitively.
func caseWarning(route, spelled string, queues []string, driver string) string {
	return fmt.Sprintf(`route "%s" is queued as "%s" on queues %s: PHP class names ignore case, and so does the handler lookup, but the claim's LIKE on %s does not, so these jobs are never claimed; register the class as "%s"`,
		route, spelled, strings.Join(queues, ","), driver, spelled)
}

func countOnQueues(ctx context.Context, q jobqueue.Admin, queues []string, class string) (int64, error) {
	var total int64
	for _, name := range queues {
		c, err := q.CountClasses(ctx, name, []string{class})
		if err != nil {
			return 0, err
		}
		total += c[0].Unreserved + c[0].Reserved
	}
	return total, nil
}

// routeWarning words the warning for one route that matches no job.
func routeWarning(route string, queues, names []string, present map[string]int64) string {
	suggestion, ok := didyoumean.Suggest(route, names, didyoumean.ClassName)
	if len(names) == 0 {
		// Nothing queued: only a name no class can have is worth a word.
		if fixed := strings.TrimPrefix(collapseBackslashes(route), `\`); fixed != route {
			return fmt.Sprintf(`route "%s" can never match: Laravel writes class names with single backslashes and no leading one ("%s"); the watched queues %s are empty now`, route, fixed, strings.Join(queues, ","))
		}
		return ""
	}
	msg := fmt.Sprintf(`route "%s" matches no job on queues %s.`, route, strings.Join(queues, ","))
	if ok {
		msg = strings.TrimSuffix(msg, ".") + fmt.Sprintf(`; did you mean "%s"?`, suggestion)
	}
	listed := names
	if len(listed) > 5 {
		listed = listed[:5]
	}
	parts := make([]string, len(listed))
	for i, n := range listed {
		parts[i] = fmt.Sprintf("%s (%d)", n, present[n])
	}
	more := ""
	if len(names) > len(listed) {
		more = fmt.Sprintf(" and %d more", len(names)-len(listed))
	}
	return msg + " Queued classes: " + strings.Join(parts, ", ") + more
}

func collapseBackslashes(s string) string {
	for strings.Contains(s, `\\`) {
		s = strings.ReplaceAll(s, `\\`, `\`)
	}
	return s
}

// bridgeWarnings: classes the bridge sends to a queue this worker does not
// watch wait there for nobody.
func bridgeWarnings(b *appconfig.BridgeConfig, connection string, queues []string) []string {
	if b == nil {
		return nil
	}
	watched := map[string]bool{}
	for _, q := range queues {
		watched[q] = true
	}
	var out []string
	for _, r := range b.Jobs {
		queue, conn := queueconn.OrString(r.Queue, b.Queue), queueconn.OrString(r.Connection, b.Connection)
		if conn != "" && conn != connection {
			continue // another connection: another laraworker serves it
		}
		if queue != "" && !watched[queue] {
			out = append(out, fmt.Sprintf("the bridge (config/laraworker.php) sends %s to queue %q, which this worker does not watch (--queue %s)", r.Class, queue, strings.Join(queues, ",")))
		}
	}
	return out
}

// checkSetup runs the startup checks of `work`: missing tables, a
// --route to a class the app does not have or whose declarations Go
// cannot learn are errors; a route that matches no queued job and a bridge
// route to an unwatched queue are warnings. Nothing is claimed before
// they ran.
func checkSetup(ctx context.Context, conn *queueconn.Connection, info appconfig.AppInfo, queues []string, reg *handlers.Registry, setup routeSetup, log zerolog.Logger) error {
	missing, err := conn.Store.MissingTables(ctx)
	if err != nil {
		return err
	}
	if len(missing) > 0 {
		return queueconn.MissingTablesError(missing)
	}
	app, err := reflectRouteClasses(ctx, info, setup.php, reg.Names())
	if err != nil {
		// The config was read through the same PHP: a failure here is the
		// app's (a class that does not load); the queue-based checks stay.
		log.Warn().Err(err).Msg("the routes' classes could not be read through the app's PHP: they are checked against the queued jobs only")
	}
	q := conn.Store
	found, err := checkRouteClasses(ctx, q, conn.Cfg.Driver, queues, reg, app, info.Bridge, setup)
	if err != nil {
		return err
	}
	if err := routeCheckError(found.errors); err != nil {
		return err
	}
	more, err := routeWarnings(ctx, q, conn.Cfg.Driver, queues, reg, found.handled)
	if err != nil {
		return err
	}
	warnings := append(found.warnings, more...)
	warnings = append(warnings, bridgeWarnings(info.Bridge, conn.Store.Connection(), queues)...)
	for _, w := range warnings {
		log.Warn().Msg(w)
	}
	return nil
}
