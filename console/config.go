package console

import (
	"github.com/laraworker/laraworker/appconfig"
	"github.com/laraworker/laraworker/payload"
	"github.com/urfave/cli/v2"
)

// envFlag points at the Laravel app's .env (default ./.env when present).
func envFlag() cli.Flag {
	return &cli.StringFlag{Name: "env", Usage: "path to the Laravel app's `.env` (default ./.env when present)", EnvVars: []string{"LARAWORKER_ENV"}}
}

// keyFlags select the APP_KEY used to decrypt ShouldBeEncrypted commands.
// The key's value is never shown: not in --help, not in errors.
func keyFlags() []cli.Flag {
	return []cli.Flag{
		envFlag(), appFlag(), phpFlag(),
		&cli.StringFlag{Name: "key-file", Usage: "`FILE` holding the APP_KEY to decrypt encrypted commands (default: APP_KEY from the environment, LARAWORKER_APP_KEY or the .env; a key is never taken from the command line, where `ps` shows it)"},
		&cli.StringFlag{Name: "cipher", Usage: "APP_CIPHER (default AES-256-CBC)"},
	}
}

// loadConfig reads the app's configuration (see loadAppConfig), with flag
// overrides keyed by their .env names.
func loadConfig(c *cli.Context, overrides map[string]string) (appconfig.Config, error) {
	cfg, _, err := loadAppConfig(c, overrides)
	return cfg, err
}

// encrypterFromFlags returns nil (and no error) when no key is configured:
// plain commands need none, encrypted ones then fail with ErrEncrypted.
func encrypterFromFlags(c *cli.Context) (*payload.Encrypter, error) {
	cfg, err := loadConfig(c, nil)
	if err != nil {
		return nil, err
	}
	return encrypterFor(cfg)
}

func encrypterFor(cfg appconfig.Config) (*payload.Encrypter, error) {
	if !cfg.AppKey.IsSet() {
		return nil, nil
	}
	key, err := payload.ParseKey(cfg.AppKey.Reveal())
	if err != nil {
		return nil, err
	}
	var previous [][]byte
	for _, pk := range cfg.AppPreviousKeys {
		k, err := payload.ParseKey(pk.Reveal())
		if err != nil {
			return nil, err
		}
		previous = append(previous, k)
	}
	cipher := cfg.AppCipher
	if cipher == "" {
		cipher = "AES-256-CBC"
	}
	return payload.NewEncrypter(key, cipher, previous...)
}

// connectionFlags select the database and tables; every one overrides the
// .env and LARAWORKER_* values. There is deliberately no password flag
// (it would show in `ps`): use DB_PASSWORD in the .env or
// LARAWORKER_DB_PASSWORD.
func connectionFlags() []cli.Flag {
	return append(keyFlags(),
		&cli.StringFlag{Name: "db", Usage: "DB_CONNECTION: mysql, mariadb, pgsql or sqlite (default sqlite at database/database.sqlite)"},
		&cli.StringFlag{Name: "db-host", Usage: "DB_HOST"},
		&cli.StringFlag{Name: "db-port", Usage: "DB_PORT"},
		&cli.StringFlag{Name: "db-database", Usage: "DB_DATABASE (the file for sqlite)"},
		&cli.StringFlag{Name: "db-username", Usage: "DB_USERNAME"},
		&cli.StringFlag{Name: "db-socket", Usage: "DB_SOCKET"},
		&cli.StringFlag{Name: "connection", Usage: "queue connection name written to failed_jobs.connection (default database)"},
		&cli.StringFlag{Name: "table", Usage: "jobs table (default jobs)"},
		&cli.StringFlag{Name: "failed-table", Usage: "failed jobs table (default failed_jobs)"},
		&cli.StringFlag{Name: "batches-table", Usage: "job batches table (default job_batches)"},
		&cli.StringFlag{Name: "retry-after", Usage: "retry_after in seconds (default 90)"},
	)
}

// connectionOverrides maps set flags to the .env names LoadConfig knows.
func connectionOverrides(c *cli.Context) map[string]string {
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
