package appconfig

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Engine names as used by Laravel's DB_CONNECTION / PDO driver names.
const (
	EngineMySQL   = "mysql"
	EngineMariaDB = "mariadb"
	EnginePgSQL   = "pgsql"
	EngineSQLite  = "sqlite"
)

// Config is everything the worker needs to talk to Laravel's database
// queue. Secrets are of type Secret so printing a Config never leaks them.
//
// The zero value is usable: an unset field means Laravel's default, which
// WithDefaults fills in (the loaders and database.Open call it), as an
// unset field of worker.Config means the worker's default.
type Config struct {
	// Driver is mysql, mariadb, pgsql or sqlite (DB_CONNECTION or the
	// DB_QUEUE_CONNECTION override).
	Driver   string
	Host     string
	Port     int
	Database string // sqlite: file path (absolute after Load)
	Username string
	Password Secret
	Socket   string
	// ServerVersion overrides the detected server version for the
	// lock-for-popping decision, like the DB connection's 'version' config
	// key in Laravel (env DB_VERSION / LARAWORKER_DB_VERSION).
	ServerVersion string

	AppKey          Secret
	AppPreviousKeys []Secret
	AppCipher       string
	AppTimezone     string

	// ConnectionName is the queue connection name written to
	// failed_jobs.connection (Laravel's queue connection, not the DB one).
	ConnectionName string
	JobsTable      string
	FailedTable    string
	BatchesTable   string
	// TablePrefix is the table prefix of the queue's database connection
	// (Laravel's 'prefix'), as the app's config says; the table names
	// above already carry it. laraworker's own tables take it too, as the
	// bridge's PHP writes them through Laravel's query builder.
	TablePrefix  string
	DefaultQueue string
	// RetryAfter is retry_after in whole seconds: how long a reservation
	// holds before any worker may take the job again. 0 means Laravel's
	// default, 90. An app whose configuration says 0 (every reservation
	// expires at once) is read as RetryAfterZero, so that it never turns
	// into the default; RetryAfterSeconds is the value in effect.
	RetryAfter int

	// CacheStore is the app's default cache store (CACHE_STORE, 11+, or
	// CACHE_DRIVER before). Only "database" can be shared with Go: it holds
	// the maxExceptions counters and the queue:restart signal.
	CacheStore string
	// CacheTable is the database store's table (DB_CACHE_TABLE, "cache").
	CacheTable string
	// CachePrefix is prepended to every cache key (CACHE_PREFIX, else the
	// skeleton's default from APP_NAME).
	CachePrefix string
	// CacheLockTable is the database store's lock table
	// (DB_CACHE_LOCK_TABLE, "cache_locks"), where unique jobs' locks live.
	CacheLockTable string
	// Redis is the app's Redis lock connection, for unique-job locks held
	// in the redis cache store.
	Redis RedisConfig
}

// configKeys are the only keys the loader reads.
var configKeys = []string{
	"DB_CONNECTION", "DB_HOST", "DB_PORT", "DB_DATABASE", "DB_USERNAME", "DB_PASSWORD",
	"DB_SOCKET", "DB_URL", "DATABASE_URL", "DB_VERSION",
	"APP_KEY", "APP_PREVIOUS_KEYS", "APP_CIPHER", "APP_TIMEZONE",
	"DB_QUEUE_TABLE", "DB_QUEUE", "DB_QUEUE_RETRY_AFTER", "DB_QUEUE_CONNECTION",
	"QUEUE_CONNECTION_NAME", "QUEUE_FAILED_TABLE", "QUEUE_BATCHES_TABLE",
	"CACHE_STORE", "CACHE_DRIVER", "DB_CACHE_TABLE", "CACHE_PREFIX", "APP_NAME", "DB_CACHE_LOCK_TABLE",
	"REDIS_CLIENT", "REDIS_URL", "REDIS_HOST", "REDIS_PORT", "REDIS_USERNAME", "REDIS_PASSWORD", "REDIS_DB",
	"REDIS_CACHE_DB", "REDIS_PREFIX", "REDIS_CACHE_LOCK_CONNECTION",
}

// loadEnvOnly reads the .env and the environment alone: the .env, the
// process environment over it (Laravel's immutable dotenv repository lets
// real variables win), LARAWORKER_* variables over both, overrides last.
func loadEnvOnly(envFile, baseDir string, environ []string, overrides map[string]string) (Config, error) {
	if envFile == "" {
		envFile = filepath.Join(orDefault(baseDir, "."), ".env")
	}
	if baseDir == "" {
		baseDir = filepath.Dir(envFile)
	}
	if environ == nil {
		environ = os.Environ()
	}
	envMap := environMap(environ)
	lookup := func(k string) (string, bool) { v, ok := envMap[k]; return v, ok }

	values := map[string]string{}
	if src, err := os.ReadFile(envFile); err == nil {
		fileVals, err := ParseDotenv(string(src), lookup)
		if err != nil {
			return Config{}, fmt.Errorf("appconfig: %s: %w", envFile, err)
		}
		for _, k := range configKeys {
			if v, ok := fileVals[k]; ok {
				values[k] = v
			}
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return Config{}, fmt.Errorf("appconfig: reading %s: %w", envFile, err)
	}
	for _, k := range configKeys {
		if v, ok := envMap[k]; ok {
			values[k] = v
		}
	}
	return configFromLayers(values, environ, overrides, baseDir)
}

func environMap(environ []string) map[string]string {
	m := make(map[string]string, len(environ))
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// configFromValues builds the Config from the resolved values (by .env
// name): what no value sets takes Laravel's default (WithDefaults), a
// relative SQLite path is the app's (baseDir), and the result is
// validated.
func configFromValues(v map[string]string, baseDir string) (Config, error) {
	cfg := Config{
		Driver:         v["DB_CONNECTION"],
		Host:           v["DB_HOST"],
		Database:       v["DB_DATABASE"],
		Username:       v["DB_USERNAME"],
		Password:       Secret(v["DB_PASSWORD"]),
		Socket:         v["DB_SOCKET"],
		ServerVersion:  v["DB_VERSION"],
		AppKey:         Secret(v["APP_KEY"]),
		AppCipher:      v["APP_CIPHER"],
		AppTimezone:    v["APP_TIMEZONE"],
		ConnectionName: v["QUEUE_CONNECTION_NAME"],
		JobsTable:      v["DB_QUEUE_TABLE"],
		FailedTable:    v["QUEUE_FAILED_TABLE"],
		BatchesTable:   v["QUEUE_BATCHES_TABLE"],
		TablePrefix:    v["DB_TABLE_PREFIX"],
		DefaultQueue:   v["DB_QUEUE"],
		CacheLockTable: v["DB_CACHE_LOCK_TABLE"],
	}
	cfg.CacheStore, cfg.CacheTable, cfg.CachePrefix = cacheSettings(v)
	cfg.AppPreviousKeys = previousKeys(v["APP_PREVIOUS_KEYS"])
	// DB_QUEUE_CONNECTION names a connection of config/database.php; the
	// skeleton's connections are named after their drivers.
	if qc := v["DB_QUEUE_CONNECTION"]; qc != "" {
		cfg.Driver = qc
	}
	if err := cfg.applyNumbers(v); err != nil {
		return Config{}, err
	}
	if rawURL := orDefault(v["DB_URL"], v["DATABASE_URL"]); rawURL != "" {
		if err := cfg.applyURL(rawURL); err != nil {
			return Config{}, err
		}
	}
	var err error
	if cfg.Redis, err = redisSettings(v); err != nil {
		return Config{}, err
	}
	cfg.Redis.StorePrefix = RedisStorePrefix(cfg.CachePrefix, guessedVersion(v))
	cfg = cfg.WithDefaults()
	cfg.resolveSQLitePath(baseDir)
	if err := cfg.Validate(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// guessedVersion is the Laravel version the variables point to when it is
// not known: CACHE_STORE is 11+, CACHE_DRIVER before.
func guessedVersion(v map[string]string) string {
	if v["CACHE_STORE"] != "" {
		return "11"
	}
	return "10"
}

func previousKeys(list string) []Secret {
	var keys []Secret
	for _, k := range strings.Split(list, ",") {
		if k = strings.TrimSpace(k); k != "" {
			keys = append(keys, Secret(k))
		}
	}
	return keys
}

// applyNumbers reads retry_after and the port. An explicit retry_after of
// 0 becomes RetryAfterZero (0 is the default's spelling).
func (c *Config) applyNumbers(v map[string]string) error {
	if ra := v["DB_QUEUE_RETRY_AFTER"]; ra != "" {
		n, err := strconv.Atoi(strings.TrimSpace(ra))
		if err != nil || n < 0 {
			return fmt.Errorf("appconfig: DB_QUEUE_RETRY_AFTER must be a non-negative integer")
		}
		c.RetryAfter = n
		if n == 0 {
			c.RetryAfter = RetryAfterZero
		}
	}
	if port := v["DB_PORT"]; port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n <= 0 || n > 65535 {
			return fmt.Errorf("appconfig: DB_PORT is not a valid port number")
		}
		c.Port = n
	}
	return nil
}

// cacheSettings reads the cache store the way the skeleton's
// config/cache.php does. The default prefix changed in 11.x, which is also
// when CACHE_STORE replaced CACHE_DRIVER, so the variable that is set tells
// which default applies: slug(APP_NAME)_cache before 11, _cache_ from 11.
func cacheSettings(v map[string]string) (store, table, prefix string) {
	store, modern := v["CACHE_STORE"], true
	if store == "" {
		store, modern = v["CACHE_DRIVER"], false
	}
	table = orDefault(v["DB_CACHE_TABLE"], "cache")
	prefix, set := v["CACHE_PREFIX"]
	if !set {
		prefix = phpSlug(orDefault(v["APP_NAME"], "laravel")) + "_cache"
		if modern {
			prefix += "_"
		}
	}
	return store, table, prefix
}

// phpSlug approximates Str::slug($s, '_') for ASCII names.
func phpSlug(s string) string {
	var b strings.Builder
	sep := false
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			if sep && b.Len() > 0 {
				b.WriteByte('_')
			}
			b.WriteRune(r)
			sep = false
			continue
		}
		sep = true
	}
	return b.String()
}

// NormalizeDriver maps the driver names Laravel accepts (postgres, sqlite3...)
// to the engine names this module uses.
func NormalizeDriver(d string) string {
	switch strings.ToLower(d) {
	case "postgres", "postgresql", "pgsql":
		return EnginePgSQL
	case "sqlite", "sqlite3":
		return EngineSQLite
	case "mysql":
		return EngineMySQL
	case "mariadb":
		return EngineMariaDB
	}
	return d
}

// applyURL merges DB_URL over the individual keys, as Laravel's
// ConfigurationUrlParser does. The URL text never appears in errors.
func (c *Config) applyURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		return errors.New("appconfig: DB_URL is not a valid URL")
	}
	c.Driver = NormalizeDriver(u.Scheme)
	if c.Driver == EngineSQLite {
		// sqlite:///abs/path.sqlite, sqlite://relative.sqlite
		path := u.Host + u.Path
		if u.Opaque != "" {
			path = u.Opaque
		}
		if path != "" {
			c.Database = path
		}
		return nil
	}
	if h := u.Hostname(); h != "" {
		c.Host = h
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil {
			return errors.New("appconfig: DB_URL has an invalid port")
		}
		c.Port = n
	}
	if u.User != nil {
		c.Username = u.User.Username()
		if pw, ok := u.User.Password(); ok {
			c.Password = Secret(pw)
		}
	}
	if db := strings.TrimPrefix(u.Path, "/"); db != "" {
		c.Database = db
	}
	return nil
}

// RetryAfterZero is Config.RetryAfter for an app whose retry_after is 0:
// a reservation expires as soon as it is made, so any worker may take a
// running job again (a Go worker refuses to run on it).
const RetryAfterZero = -1

// WithDefaults returns c with every unset field at Laravel's default, so
// that a Config that names only what differs is complete:
//
//   - Driver: sqlite (Laravel 11's DB_CONNECTION default); postgres,
//     sqlite3... are normalised to pgsql, sqlite...
//   - Database: database/database.sqlite for SQLite (relative to the
//     working directory: the loaders resolve it against the app's folder),
//     laravel otherwise; Host 127.0.0.1, Port 3306 (MySQL, MariaDB) or 5432
//     (PostgreSQL), Username root, as config/database.php
//   - ConnectionName database; JobsTable jobs, FailedTable failed_jobs,
//     BatchesTable job_batches; DefaultQueue default; RetryAfter 90 (the
//     skeleton's config/queue.php)
//   - AppCipher AES-256-CBC, AppTimezone UTC (config/app.php)
//   - CacheTable cache, CacheLockTable cache_locks (config/cache.php)
//
// Fields whose empty value means something stay as they are: Password,
// Socket, TablePrefix, ServerVersion, the APP_KEY, CacheStore (no shared
// cache store), CachePrefix (no prefix) and Redis (read by the loaders
// only). Every loader returns a Config with defaults applied, and
// database.Open applies them to the Config it is given, so
// database.Open(ctx, Config{Driver: "sqlite", Database: path}, ...) works.
func (c Config) WithDefaults() Config {
	c.Driver = NormalizeDriver(orDefault(c.Driver, EngineSQLite))
	c.applyDriverDefaults()
	c.AppCipher = orDefault(c.AppCipher, "AES-256-CBC")
	c.AppTimezone = orDefault(c.AppTimezone, "UTC")
	c.ConnectionName = orDefault(c.ConnectionName, "database")
	c.JobsTable = orDefault(c.JobsTable, "jobs")
	c.FailedTable = orDefault(c.FailedTable, "failed_jobs")
	c.BatchesTable = orDefault(c.BatchesTable, "job_batches")
	c.DefaultQueue = orDefault(c.DefaultQueue, "default")
	if c.RetryAfter == 0 {
		c.RetryAfter = 90
	}
	c.CacheTable = orDefault(c.CacheTable, "cache")
	c.CacheLockTable = orDefault(c.CacheLockTable, "cache_locks")
	return c
}

// RetryAfterSeconds is the retry_after in effect, in seconds: 90 when
// unset, 0 for RetryAfterZero.
func (c Config) RetryAfterSeconds() int {
	switch {
	case c.RetryAfter == 0:
		return 90
	case c.RetryAfter < 0:
		return 0
	}
	return c.RetryAfter
}

// applyDriverDefaults mirrors the defaults of Laravel 11's
// config/database.php.
func (c *Config) applyDriverDefaults() {
	switch c.Driver {
	case EngineSQLite:
		c.Database = orDefault(c.Database, filepath.Join("database", "database.sqlite"))
	case EngineMySQL, EngineMariaDB:
		c.Host = orDefault(c.Host, "127.0.0.1")
		if c.Port == 0 {
			c.Port = 3306
		}
		c.Database = orDefault(c.Database, "laravel")
		c.Username = orDefault(c.Username, "root")
	case EnginePgSQL:
		c.Host = orDefault(c.Host, "127.0.0.1")
		if c.Port == 0 {
			c.Port = 5432
		}
		c.Database = orDefault(c.Database, "laravel")
		c.Username = orDefault(c.Username, "root")
	}
}

// resolveSQLitePath makes a relative SQLite path the app's, as Laravel's
// database_path() does.
func (c *Config) resolveSQLitePath(baseDir string) {
	if c.Driver == EngineSQLite && c.Database != ":memory:" && !filepath.IsAbs(c.Database) {
		c.Database = filepath.Join(baseDir, c.Database)
	}
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// ValidIdentifier reports whether s is a plain SQL identifier (letters,
// digits, underscores, not starting with a digit).
func ValidIdentifier(s string) bool { return identRE.MatchString(s) }

// ValidateTableName accepts `name` or `schema.name`, each part a plain SQL
// identifier of at most 64 characters. Table names are interpolated into
// SQL (quoted), so nothing else is allowed.
func ValidateTableName(name string) error {
	parts := strings.Split(name, ".")
	if len(parts) > 2 {
		return fmt.Errorf("appconfig: invalid table name %q", name)
	}
	for _, p := range parts {
		if len(p) > 64 || !identRE.MatchString(p) {
			return fmt.Errorf("appconfig: invalid table name %q", name)
		}
	}
	return nil
}

// Validate checks the fields that reach SQL or select a driver.
func (c Config) Validate() error {
	switch c.Driver {
	case EngineMySQL, EngineMariaDB, EnginePgSQL, EngineSQLite:
	default:
		return fmt.Errorf("appconfig: unsupported DB connection %q (want mysql, mariadb, pgsql or sqlite)", c.Driver)
	}
	tables := []string{c.JobsTable, c.FailedTable, c.BatchesTable}
	if c.CacheStore == "database" {
		tables = append(tables, c.CacheTable)
	}
	if c.CacheLockTable != "" {
		tables = append(tables, c.CacheLockTable)
	}
	for _, t := range tables {
		if err := ValidateTableName(t); err != nil {
			return err
		}
	}
	if c.RetryAfter < RetryAfterZero {
		return errors.New("appconfig: retry_after must not be negative (RetryAfterZero is a retry_after of 0)")
	}
	if _, err := time.LoadLocation(c.AppTimezone); err != nil {
		return fmt.Errorf("appconfig: unknown APP_TIMEZONE %q", c.AppTimezone)
	}
	return nil
}

// Location returns the app timezone (validated by Validate).
func (c Config) Location() *time.Location {
	loc, err := time.LoadLocation(c.AppTimezone)
	if err != nil {
		return time.UTC
	}
	return loc
}

// String prints the configuration with secrets redacted.
func (c Config) String() string {
	prev := make([]string, len(c.AppPreviousKeys))
	for i := range prev {
		prev[i] = redacted
	}
	pw := ""
	if c.Password.IsSet() {
		pw = redacted
	}
	key := ""
	if c.AppKey.IsSet() {
		key = redacted
	}
	return fmt.Sprintf("appconfig.Config{Driver:%s Host:%s Port:%d Database:%s Username:%s Password:%s Socket:%s ServerVersion:%s AppKey:%s AppPreviousKeys:[%s] AppCipher:%s AppTimezone:%s ConnectionName:%s JobsTable:%s FailedTable:%s BatchesTable:%s DefaultQueue:%s RetryAfter:%d}",
		c.Driver, c.Host, c.Port, c.Database, c.Username, pw, c.Socket, c.ServerVersion, key,
		strings.Join(prev, " "), c.AppCipher, c.AppTimezone, c.ConnectionName, c.JobsTable,
		c.FailedTable, c.BatchesTable, c.DefaultQueue, c.RetryAfterSeconds())
}

// GoString makes %#v redacting too.
func (c Config) GoString() string { return c.String() }

// Format routes every verb through String so no formatting path prints the
// raw struct.
func (c Config) Format(f fmt.State, verb rune) { fmt.Fprint(f, c.String()) }
