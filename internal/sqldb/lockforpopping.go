package sqldb

import (
	"strings"

	"github.com/laraworker/laraworker/laravel/appconfig"
)

// Lock clauses LockForPopping can return.
const (
	LockSkipLocked = "FOR UPDATE SKIP LOCKED"
	LockForUpdate  = "for update"
)

// LockForPopping reproduces Laravel's DatabaseQueue::getLockForPopping()
// (10.x..13.x) for the engines this package supports. engine is the PDO
// driver name ("mysql" for MySQL, MariaDB and Vitess alike, "pgsql",
// "sqlite"); serverVersion is what the server reports; versionOverride is
// the DB connection's 'version' config and wins when non-empty.
//
// It returns "FOR UPDATE SKIP LOCKED", "for update" (Laravel's `true`
// rendered by the MySQL/PostgreSQL grammars) or "" (SQLite renders no lock).
func LockForPopping(engine, serverVersion, versionOverride string) string {
	version := serverVersion
	if versionOverride != "" {
		version = versionOverride
	}
	if engine == appconfig.EngineMariaDB {
		// Our own name for MariaDB; PDO reports "mysql" and the version
		// string decides, exactly as in Laravel.
		engine = appconfig.EngineMySQL
	}
	switch {
	case strings.Contains(version, "MariaDB"):
		engine = "mariadb"
		version = strBefore(strAfter(version, "5.5.5-"), "-")
	case strings.Contains(version, "vitess") || strings.Contains(version, "PlanetScale"):
		engine = "vitess"
		version = strBefore(version, "-")
	}
	if (engine == appconfig.EngineMySQL && appconfig.VersionCompare(version, "8.0.1") >= 0) ||
		(engine == "mariadb" && appconfig.VersionCompare(version, "10.6.0") >= 0) ||
		(engine == appconfig.EnginePgSQL && appconfig.VersionCompare(version, "9.5") >= 0) ||
		(engine == "vitess" && appconfig.VersionCompare(version, "19.0") >= 0) {
		return LockSkipLocked
	}
	if engine == appconfig.EngineSQLite {
		return ""
	}
	return LockForUpdate
}

// strAfter is Laravel's Str::after: the part after the first occurrence of
// search, or the whole subject when search is absent.
func strAfter(subject, search string) string {
	if search == "" {
		return subject
	}
	if _, after, ok := strings.Cut(subject, search); ok {
		return after
	}
	return subject
}

// strBefore is Laravel's Str::before.
func strBefore(subject, search string) string {
	if search == "" {
		return subject
	}
	before, _, _ := strings.Cut(subject, search)
	return before
}
