package console

import (
	"fmt"

	"github.com/laraworker/laraworker/console/internal/queueconn"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/rs/zerolog"
)

// PHP keeps two signals for its workers in the app's default cache store:
// `php artisan queue:restart`'s timestamp and the maxExceptions counters.
// Go reads and writes them only where it shares that store with PHP: the
// `database` store on the queue's database, or the `redis` store whose
// config Go read (package redisshared, beside a database or a Redis
// queue); with any other store (file, memcached, dynamodb, array; redis
// whose config Go could not read) a deploy that relies on queue:restart
// leaves Go workers running the old code, and a job's exceptions are
// counted per process. warnUnsharedCache says so at startup, with what to
// do.

// sharesCache tells whether the store reaches the app's default cache
// store as PHP does.
func sharesCache(c *queueconn.Connection) bool {
	return c.Store.SharedCache() != nil
}

// warnUnsharedCache logs one warning when Go cannot reach the cache store
// PHP keeps queue:restart and maxExceptions in.
func warnUnsharedCache(conn *queueconn.Connection, version string, log zerolog.Logger) {
	if sharesCache(conn) {
		return
	}
	store := conn.Cfg.CacheStore
	fix := cacheFix(version)
	if store == "redis" {
		fix = "let laraworker read the app's config through its php (php on the PATH, or --php), with a known Laravel version; else " + fix
	}
	log.Warn().Str("cache_store", store).Str("fix", fix).
		Msg(unsharedCacheReason(store) + ": `php artisan queue:restart` does not stop this worker, maxExceptions is counted in this process only (not with PHP's workers), " +
			"and a job cut short by a stop signal always gets its attempt back (no bound across restarts)" + unsharedControls(version))
}

// unsharedControls names Laravel 12.40+'s controls that live in the cache
// too: queue:pause does not reach Go, and Go gives #[DebounceFor] jobs
// (13.6+) back to PHP workers.
func unsharedControls(version string) string {
	if version != "" && appconfig.VersionCompare(version, "12.40") < 0 {
		return ""
	}
	return "; `php artisan queue:pause` does not pause it, and #[DebounceFor] jobs are left to PHP workers"
}

// unsharedCacheReason says why Go cannot read the store.
func unsharedCacheReason(store string) string {
	switch store {
	case "":
		return "the app's cache store is not known (no CACHE_STORE or CACHE_DRIVER)"
	case "redis":
		return `the app's cache store is "redis", whose config Go could not read (config/cache.php's store and config/database.php's redis, which laraworker reads in the app's folder through its php, or from config files Go can evaluate)`
	}
	return fmt.Sprintf("the app's cache store is %q, which Go cannot share with PHP (only the database and redis stores)", store)
}

// cacheFix is what to do: stop Go workers with SIGTERM on deploy, or
// move the app's cache to the database store (its variable's name
// depends on the Laravel version).
func cacheFix(version string) string {
	variable := "CACHE_STORE=database (CACHE_DRIVER=database before Laravel 11)"
	switch {
	case version == "":
	case appconfig.VersionCompare(version, "11") < 0:
		variable = "CACHE_DRIVER=database"
	default:
		variable = "CACHE_STORE=database"
	}
	return "on deploy, restart Go workers with SIGTERM (systemctl restart, supervisorctl restart; they finish or give back their jobs), " +
		"or use the database cache store: " + variable + " with its table (php artisan cache:table, make:cache-table from Laravel 11)"
}
