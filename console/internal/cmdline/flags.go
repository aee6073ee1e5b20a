package cmdline

import "github.com/urfave/cli/v2"

// The flags the commands share. Flags that name a secret do not exist: a
// value on the command line shows in `ps`.

// EnvFlag points at the Laravel app's .env (default ./.env when present).
func EnvFlag() cli.Flag {
	return &cli.StringFlag{Name: "env", Usage: "path to the Laravel app's `.env` (default ./.env when present)", EnvVars: []string{"LARAWORKER_ENV"}}
}

// KeyFlags select the APP_KEY used to decrypt ShouldBeEncrypted commands.
// The key's value is never shown: not in --help, not in errors.
func KeyFlags() []cli.Flag {
	return []cli.Flag{
		EnvFlag(), AppFlag(), PHPFlag(),
		&cli.StringFlag{Name: "key-file", Usage: "`FILE` holding the APP_KEY to decrypt encrypted commands (default: APP_KEY from the environment, LARAWORKER_APP_KEY or the .env; a key is never taken from the command line, where `ps` shows it)"},
		&cli.StringFlag{Name: "cipher", Usage: "APP_CIPHER (default AES-256-CBC)"},
	}
}

// AppFlag names the Laravel app folder whose configuration is read.
func AppFlag() cli.Flag {
	return &cli.StringFlag{Name: "app", EnvVars: []string{"LARAWORKER_APP"},
		Usage: "the Laravel app's `folder` (the one holding artisan); its config is read through its own php (default: the --env folder when it holds artisan)"}
}

// PHPFlag picks the php that reads the app's config, or turns it off.
func PHPFlag() cli.Flag {
	return &cli.StringFlag{Name: "php", EnvVars: []string{"LARAWORKER_PHP"},
		Usage: "the `php` binary that boots the app to read its config (default: php on PATH); off: read the .env and config files without php"}
}

// LaravelVersionFlag is the app's Laravel version, for the commands whose
// output depends on it; picks says what it decides for the command, and
// what the command does without it.
func LaravelVersionFlag(picks string) cli.Flag {
	return &cli.StringFlag{Name: "laravel-version", EnvVars: []string{"LARAWORKER_LARAVEL_VERSION"},
		Usage: "the app's Laravel `VERSION` (e.g. 8.83, 12.67), over the version read from the app: " + picks}
}

// JSONFlag switches a command's output to JSON for scripts.
func JSONFlag() cli.Flag {
	return &cli.BoolFlag{Name: "json", Usage: "print the result as JSON"}
}

// ConnectionFlags select the database and tables; every one overrides the
// .env and LARAWORKER_* values. There is deliberately no password flag
// (it would show in `ps`): use DB_PASSWORD in the .env or
// LARAWORKER_DB_PASSWORD.
func ConnectionFlags() []cli.Flag {
	return append(KeyFlags(),
		&cli.StringFlag{Name: "db", Usage: "DB_CONNECTION: mysql, mariadb, pgsql or sqlite, over the app's .env and config (with sqlite, --db-database names the file); there is no default database: without an app, a .env or DB_* variables a command stops and says so"},
		&cli.StringFlag{Name: "db-host", Usage: "DB_HOST"},
		&cli.StringFlag{Name: "db-port", Usage: "DB_PORT"},
		&cli.StringFlag{Name: "db-database", Usage: "DB_DATABASE (the file for sqlite)"},
		&cli.StringFlag{Name: "db-username", Usage: "DB_USERNAME"},
		&cli.StringFlag{Name: "db-socket", Usage: "DB_SOCKET"},
		&cli.StringFlag{Name: "connection", Usage: "the queue `CONNECTION` to serve, as php artisan queue:work CONNECTION does (config/queue.php: a database or redis one; a name the app does not define is refused); default: the bridge's connection, else queue.default (without an app: the name written to failed_jobs.connection, default database)"},
		&cli.StringFlag{Name: "table", Usage: "jobs table (default jobs)"},
		&cli.StringFlag{Name: "failed-table", Usage: "failed jobs table (default failed_jobs)"},
		&cli.StringFlag{Name: "batches-table", Usage: "job batches table (default job_batches)"},
		&cli.StringFlag{Name: "retry-after", Usage: "retry_after in seconds (default 90)"},
	)
}

// ConnectionOverrides maps set flags to the .env names LoadConfig knows.
func ConnectionOverrides(c *cli.Context) map[string]string {
	names := map[string]string{
		"db": "DB_CONNECTION", "db-host": "DB_HOST", "db-port": "DB_PORT", "db-database": "DB_DATABASE",
		"db-username": "DB_USERNAME", "db-socket": "DB_SOCKET", "connection": "QUEUE_CONNECTION_NAME",
		"table": "DB_QUEUE_TABLE", "failed-table": "QUEUE_FAILED_TABLE", "batches-table": "QUEUE_BATCHES_TABLE",
		"retry-after": "DB_QUEUE_RETRY_AFTER",
	}
	out := map[string]string{}
	for flag, key := range names {
		if c.IsSet(flag) {
			out[key] = c.String(flag)
		}
	}
	return out
}
