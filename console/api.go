package console

import (
	"io"

	"github.com/laraworker/laraworker/console/internal/cmdline"
	"github.com/laraworker/laraworker/console/internal/democmd"
	"github.com/laraworker/laraworker/console/internal/output"
	"github.com/laraworker/laraworker/console/internal/queueconn"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/urfave/cli/v2"
)

// This file is the small API for commands that live outside this package
// (package bench, or an embedding program's own commands): they take the
// same connection flags, read the configuration the same way and print
// tables, JSON and errors as the built-in commands do.

// ConnectionFlags are the flags every database command takes: --env, --key-file,
// --cipher, --db, --db-host, --db-port, --db-database, --db-username,
// --db-socket, --connection, --table, --failed-table, --batches-table and
// --retry-after. There is no password flag on purpose (it would show in
// `ps`): the password comes from DB_PASSWORD in the .env or
// LARAWORKER_DB_PASSWORD.
func ConnectionFlags() []cli.Flag { return cmdline.ConnectionFlags() }

// ConnectionOverrides returns the connection flags the user set, keyed by
// the .env names LoadConfig knows (DB_CONNECTION, DB_QUEUE_TABLE, ...). A
// command adds its own defaults for keys that are absent.
func ConnectionOverrides(c *cli.Context) map[string]string { return cmdline.ConnectionOverrides(c) }

// LoadConfig reads the configuration as every command does, in
// appconfig.Load's order: overrides (usually ConnectionOverrides), --key-file
// and --cipher first, then LARAWORKER_* variables, the app's config (--app,
// --php), the .env named by --env (default ./.env when present) and the
// environment, the defaults. Errors name the setting at fault and never
// hold a secret.
func LoadConfig(c *cli.Context, overrides map[string]string) (appconfig.Config, error) {
	return queueconn.LoadConfig(c, overrides)
}

// WriteTable prints rows under headers in artisan's table style. Control
// characters and invalid UTF-8 in cells are shown escaped, so text read from
// the database cannot drive the terminal.
func WriteTable(w io.Writer, headers []string, rows [][]string) error {
	return output.WriteTable(w, headers, rows)
}

// WriteJSON prints v as indented JSON with a final newline, without HTML
// escaping (class names hold backslashes).
func WriteJSON(w io.Writer, v any) error { return output.WriteJSON(w, v) }

// ErrorLine is msg on one line with every secret of cfg (DB and Redis
// passwords, APP_KEY, APP_PREVIOUS_KEYS) replaced by "[redacted]", in any
// escaping (JSON's \/ and \u00XX, HTML's &#43;, percent escapes): what a
// command may print of an error that a driver or a child process wrote.
// Package appconfig already keeps secrets out of its errors; this guards
// the rest.
func ErrorLine(cfg appconfig.Config, msg string) string { return queueconn.ErrorLine(cfg, msg) }

// ExitUsage is the status of a usage error.
const ExitUsage = 2

// ExitLost is audit's status when something a class declares would not
// carry over to Go.
const ExitLost = 1

// NoArgs wraps the body of a command that takes no positional arguments:
// an argument is a usage error (exit status 2) naming it, and flags written
// after arguments are still read, as for the built-in commands.
func NoArgs(fn cli.ActionFunc) cli.ActionFunc { return cmdline.NoArgs(fn) }

// Warn prints one line on the app's stderr (progress, a skipped step).
func Warn(c *cli.Context, format string, args ...any) { output.Warn(c, format, args...) }

// DemoCommand is `demo`, the newcomer's tour on an embedded SQLite
// database. Only the laraworker binary adds it; an embedding program may
// append it to its app's Commands too.
func DemoCommand() *cli.Command { return democmd.Command() }
