package appconfig

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/laraworker/laraworker/internal/phparray"
	"github.com/laraworker/laraworker/internal/phprun"
)

// readConfigPHP boots a Laravel app with its own PHP and prints the
// configuration laraworker needs (see the script's header).
//
//go:embed php/read-config.php
var readConfigPHP []byte

// Options says where Load reads a Laravel app's configuration. The zero
// value reads ./.env, and the app in the current folder when it holds
// artisan, through the php on the PATH.
type Options struct {
	// AppDir is the app's root (the folder holding artisan). Empty: the
	// EnvFile's folder when it holds artisan, else no app (the .env alone).
	AppDir string
	// EnvFile is the .env path. Empty: AppDir/.env (or ./.env).
	EnvFile string
	// EnvOnly reads the .env and the environment alone, as without an app
	// folder, even when artisan is beside the .env: no PHP, no config
	// files (a program or test that writes the .env itself). A missing
	// EnvFile is then no error: Laravel runs on the environment alone.
	EnvOnly bool
	// BaseDir resolves a relative SQLite path when there is no app folder.
	// Empty: the .env's folder, else ".".
	BaseDir string
	// PHP is the php binary used to read the app's configuration as Laravel
	// resolves it. Empty: "php" from PATH when there is one. "off": never
	// run PHP, read the .env and the config files instead.
	PHP string
	// Connection is the queue connection laraworker serves; empty: the
	// bridge's (config/laraworker.php), else queue.default.
	Connection string
	// Environ lists the process environment ("K=V"); nil means
	// os.Environ(). Tests pass an explicit slice.
	Environ []string
	// Overrides are explicit values (the CLI's flags) keyed by their .env
	// names (DB_HOST, DB_QUEUE_TABLE, DB_QUEUE_RETRY_AFTER...). They win
	// over every other source.
	Overrides map[string]string
	// Timeout bounds the PHP run (default 30s).
	Timeout time.Duration
}

// PHPOff is the Options.PHP value that never runs PHP.
const PHPOff = "off"

// AppInfo says where a Config came from and what else the app's
// configuration told: the things startup checks and logs need.
type AppInfo struct {
	// Source is "php" (the app booted with its PHP), "files" (.env and the
	// config files Go could read) or "env" (a .env or the environment only:
	// no app folder).
	Source string
	// Why explains a "files" or "env" source (php not found, --php off).
	Why string
	// AppDir and EnvFile are the app folder and .env used ("" when none).
	AppDir, EnvFile string
	// Version is the app's Laravel version ("" when unknown) and
	// VersionFrom where it was read (Application::VERSION, vendor/...,
	// composer.lock).
	Version, VersionFrom string
	// Connection is the queue connection served, ConnectionFrom how it was
	// chosen, QueueDriver its driver ("" when the app has no such
	// connection), QueueConnections every queue connection's driver.
	Connection, ConnectionFrom, QueueDriver string
	QueueConnections                        map[string]string
	// Read lists the configuration files read without PHP, Guessed the
	// settings that fell back to a version's skeleton default.
	Read, Guessed []string
	// Warnings are setup problems worth a log line (not errors).
	Warnings []string
	// Bridge is config('laraworker') when the bridge is installed (read
	// through the app's PHP only; nil otherwise).
	Bridge *BridgeConfig
	// DBConnection is the database connection (config/database.php's
	// name) the queue's tables are on: the queue connection's for a
	// database queue, queue.failed.database's for a redis or beanstalkd
	// one ("" when
	// read without PHP).
	DBConnection string
	// RedisQueue is what the served queue connection is served from when
	// its driver is "redis"; nil otherwise, or when the config files do
	// not say it in a way Go evaluates.
	RedisQueue *RedisQueueConfig
	// BeanstalkdQueue is config('queue.connections.<connection>') when the
	// served queue connection's driver is "beanstalkd" (decoded from JSON,
	// for package store/beanstalkd); nil otherwise, or when the config
	// files do not say it in a way Go evaluates.
	BeanstalkdQueue map[string]any
	// SQSQueue is the served queue connection's configuration when its
	// driver is "sqs"; nil otherwise, or when the config files do not say
	// it in a way Go evaluates.
	SQSQueue *SQSQueueConfig
	// QueueForwards are the app's Queue::forward registrations (Laravel
	// 13.26+), which PHP keeps in memory only: read through its PHP (nil
	// otherwise). QueueForwardsFor applies them to a connection.
	QueueForwards []QueueForward
	// SharedRedis is what the app keeps in Redis for its queue workers,
	// whatever the served connection's driver (package redisshared opens
	// it): config('database.redis') and, when the default cache store's
	// driver is "redis", that store's config. Nil when config('database.
	// redis') was not read (the config files do not say it in a way Go
	// evaluates).
	SharedRedis *SharedRedisConfig
	// Secrets are the credentials of the app's configuration besides the
	// Config's own: every database and Redis connection's password (and
	// the password of their urls), the SQS connections' AWS secret and
	// session token, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN. Only to
	// keep them out of what laraworker shows (SecretValues); they are
	// never printed.
	Secrets []Secret
	// Pulse is Laravel Pulse's configuration when laravel/pulse is
	// installed (read through the app's PHP only; nil otherwise), and
	// PulseErr why it could not be read whole (its database connection's
	// settings).
	Pulse    *PulseConfig
	PulseErr error
	// HorizonWaits is config('horizon.waits') ("connection:queue" =>
	// seconds) when laravel/horizon is installed (read through the app's
	// PHP only): nil when it is not, empty when it sets none.
	HorizonWaits map[string]any
}

// SharedRedisConfig is the app's Redis configuration that its workers
// share through Redis besides a redis queue: the default cache store, when
// it is a redis one (the queue:restart signal, maxExceptions counters,
// unique locks, job middleware state), and the Redis connections of the
// ...WithRedis job middleware.
type SharedRedisConfig struct {
	// Redis is config('database.redis'), the Redis connections.
	Redis RedisArrays
	// CacheStore is config('cache.stores.<cache.default>') when its driver
	// is "redis"; nil for any other driver (their arrays may hold
	// credentials Go has no use for).
	CacheStore map[string]any
}

// RedisQueueConfig is the app's configuration of a queue connection with
// driver "redis", as config() returns it (decoded from JSON), for package
// store/redis.
type RedisQueueConfig struct {
	// Queue is config('queue.connections.<connection>').
	Queue map[string]any
	// Redis is config('database.redis'), the Redis connections.
	Redis RedisArrays
	// CacheStore is config('cache.stores.<cache.default>').
	CacheStore map[string]any
	// Horizon: laravel/horizon is installed (its connector reads the
	// connection's config).
	Horizon bool
	// HorizonConfig is config('horizon') as far as Horizon's records need
	// it (prefix, use, trim, silenced), when Horizon is installed; nil when
	// it could not be read (Horizon's defaults apply).
	HorizonConfig map[string]any
}

// SQSQueueConfig is the app's configuration of a queue connection with
// driver "sqs", for package store/sqs.
type SQSQueueConfig struct {
	// Queue is config('queue.connections.<connection>'): key, secret and
	// token included (every printing path redacts it).
	Queue SecretArray
	// Vapor: laravel/vapor-core serves the connection (its service
	// provider is registered: read through PHP; from the files, the
	// package is installed).
	Vapor bool
}

// SecretArray is a config array that holds credentials: every printing
// and marshalling path redacts it; pass map[string]any(a) to what reads
// it.
type SecretArray map[string]any

func (SecretArray) String() string                 { return "[config array redacted]" }
func (a SecretArray) GoString() string             { return a.String() }
func (a SecretArray) Format(f fmt.State, _ rune)   { fmt.Fprint(f, a.String()) }
func (a SecretArray) MarshalJSON() ([]byte, error) { return json.Marshal(a.String()) }

// RedisArrays is config('database.redis'). It holds the connections'
// passwords: every printing and marshalling path redacts it; pass
// map[string]any(r) to what connects.
type RedisArrays map[string]any

func (RedisArrays) String() string                 { return "[redis connections redacted]" }
func (r RedisArrays) GoString() string             { return r.String() }
func (r RedisArrays) Format(f fmt.State, _ rune)   { fmt.Fprint(f, r.String()) }
func (r RedisArrays) MarshalJSON() ([]byte, error) { return json.Marshal(r.String()) }

// BridgeConfig is the bridge's config/laraworker.php as the app resolves it.
type BridgeConfig struct {
	Queue      string        `json:"queue"`
	Connection string        `json:"connection"`
	Jobs       []BridgeRoute `json:"jobs"`
	// Installed: the bridge's service provider is registered in the app
	// (config('laraworker') alone may be a published file without it).
	Installed bool `json:"installed"`
	// Capabilities are LaraworkerServiceProvider::CAPABILITIES: what the
	// installed bridge does with a laraworker that supports it
	// (bridgeproto.Cap*); empty for a bridge that predates the list.
	Capabilities []string `json:"capabilities"`
	// RecordVersion is the version ("v") of the payload key the installed
	// bridge records (JobMetadata::VERSION; bridgeproto.MetadataVersion is
	// the one this laraworker reads); 0 when not known.
	RecordVersion int `json:"record_version"`
	// HooksQueue is where Go pushes the bridge's hook jobs (hooks_queue).
	HooksQueue BridgeHooksQueue `json:"hooks_queue"`
	// RouteBatchesWithCallbacks is route_batches_with_callbacks.
	RouteBatchesWithCallbacks bool `json:"route_batches_with_callbacks"`
	// Record is which jobs carry the bridge's record: "all" or "routed"
	// ("" for a bridge that predates the setting: the routed ones).
	Record string `json:"record"`
}

// RecordsAll reports whether the installed bridge records every queued
// job (the record-all capability, and 'record' not "routed"), so a class
// routed to Go by `work --route` carries its record too.
func (b *BridgeConfig) RecordsAll() bool {
	// "record-all" is bridgeproto.CapRecordAll (appconfig does not import
	// the protocol's package).
	return b != nil && b.Installed && slices.Contains(b.Capabilities, "record-all") && b.Record == "all"
}

// BridgeHooksQueue is the bridge's hooks_queue, resolved as the bridge
// resolves it (its connection, else laraworker's, else queue.default;
// its queue, else that connection's default queue).
type BridgeHooksQueue struct {
	// Connection is the queue connection; Defined that config/queue.php
	// has it, Driver its driver.
	Connection string `json:"connection"`
	Queue      string `json:"queue"`
	Defined    bool   `json:"defined"`
	Driver     string `json:"driver"`
	// DBConnection is the database connection (config/database.php) the
	// queue connection uses, Table its jobs table behind that
	// connection's table prefix.
	DBConnection string `json:"db_connection"`
	Table        string `json:"table"`
}

// BridgeRoute is one entry of the bridge's jobs list.
type BridgeRoute struct {
	Class      string `json:"class"`
	Queue      string `json:"queue"`
	Connection string `json:"connection"`
}

// ErrAppNotFound is returned when --app or --env names something missing.
var ErrAppNotFound = errors.New("appconfig: not found")

// Load reads the app's configuration, every setting from one place, in
// this order (the first that says wins):
//
//  1. a flag (Options.Overrides: --retry-after, --db-host, --table...);
//  2. a LARAWORKER_<NAME> environment variable
//     (LARAWORKER_DB_QUEUE_RETRY_AFTER...);
//  3. the app's configuration as its own PHP resolves it (read-config.php
//     boots the app as `php artisan` does: config('queue.connections.
//     database.retry_after')), when there is an app folder and a php;
//  4. else the config files Go can evaluate (config/queue.php...,
//     bootstrap/cache/config.php when the config is cached);
//  5. the .env's and the process environment's own variables
//     (DB_QUEUE_RETRY_AFTER), the environment over the .env as Laravel's
//     immutable dotenv repository has it: directly when there is no app,
//     otherwise as the config's env() calls read them in 3 and 4;
//  6. the default of the app's Laravel version's skeleton (without PHP:
//     for what the files leave open, e.g. retry_after 60 for a database
//     connection that has no such key, the queue and cache defaults);
//  7. Laravel's default (Config.WithDefaults: retry_after 90...).
//
// AppInfo says which source was read (Source, Describe). Errors name the
// setting or file at fault and never hold a secret.
func Load(ctx context.Context, opts Options) (Config, AppInfo, error) {
	environ := opts.Environ
	if environ == nil {
		environ = os.Environ()
	}
	if opts.EnvOnly {
		cfg, err := loadEnvOnly(opts.EnvFile, opts.BaseDir, environ, opts.Overrides)
		info := AppInfo{Source: "env", Why: "the .env alone was asked for", EnvFile: opts.EnvFile}
		info.Secrets = envFileCredentials(opts.EnvFile, opts.BaseDir, environ)
		return cfg, info, err
	}
	appDir, envFile, err := resolveAppPaths(opts.AppDir, opts.EnvFile)
	if err != nil {
		return Config{}, AppInfo{}, err
	}
	info := AppInfo{AppDir: appDir, EnvFile: envFile}
	if appDir == "" {
		info.Source, info.Why = "env", "no artisan beside the .env, and no --app"
		cfg, err := loadEnvOnly(envFile, opts.BaseDir, environ, opts.Overrides)
		info.Secrets = envFileCredentials(envFile, opts.BaseDir, environ)
		return cfg, info, err
	}
	php, why := phpBinary(opts.PHP)
	if php != "" && noSecretsPipe != "" {
		php, why = "", noSecretsPipe
	}
	if php == "" {
		info.Source, info.Why = "files", why
		return loadFromFiles(appDir, envFile, environ, opts, info)
	}
	return loadThroughPHP(ctx, php, opts, environ, info)
}

// loadThroughPHP reads the configuration as the app's PHP resolves it, then
// applies the LARAWORKER_* variables and the overrides.
func loadThroughPHP(ctx context.Context, php string, opts Options, environ []string, info AppInfo) (Config, AppInfo, error) {
	ans, sec, err := runReadConfig(ctx, php, info.AppDir, info.EnvFile, opts, environ)
	if err != nil {
		return Config{}, info, err
	}
	info.Source = "php"
	info.Version, info.VersionFrom = ans.Version, "Application::VERSION"
	info.QueueForwards = ans.QueueForwards
	values := ans.values(sec, &info)
	info.Pulse, info.PulseErr = ans.pulseConfig(sec, info.DBConnection)
	if ans.HorizonWaits != nil {
		info.HorizonWaits = ans.HorizonWaits
	}
	cfg, err := configFromLayers(values, environ, opts.Overrides, info.AppDir)
	cfg.Redis.StorePrefix = RedisStorePrefix(cfg.CachePrefix, info.Version)
	return cfg, info, err
}

// resolveAppPaths applies the defaults: the app is the .env's folder when
// it holds artisan; the .env is the app's. Paths that were named and do
// not exist are errors, never silently replaced by defaults.
func resolveAppPaths(appDir, envFile string) (string, string, error) {
	if appDir != "" {
		st, err := os.Stat(appDir)
		if err != nil || !st.IsDir() {
			return "", "", fmt.Errorf("%w: --app %s is not a folder", ErrAppNotFound, appDir)
		}
		if _, err := os.Stat(filepath.Join(appDir, "artisan")); err != nil {
			return "", "", fmt.Errorf("%w: --app %s holds no artisan: not a Laravel app", ErrAppNotFound, appDir)
		}
	}
	if envFile != "" {
		if st, err := os.Stat(envFile); err != nil || st.IsDir() {
			return "", "", fmt.Errorf("%w: --env %s does not exist (give the path of the app's .env, or --app DIR)", ErrAppNotFound, envFile)
		}
	}
	if envFile == "" {
		envFile = filepath.Join(orDefault(appDir, "."), ".env")
		if _, err := os.Stat(envFile); err != nil {
			envFile = "" // no .env: Laravel runs on the environment alone
		}
	}
	if appDir == "" {
		dir := "."
		if envFile != "" {
			dir = filepath.Dir(envFile)
		}
		if _, err := os.Stat(filepath.Join(dir, "artisan")); err == nil {
			appDir = dir
		}
	}
	if appDir != "" {
		if abs, err := filepath.Abs(appDir); err == nil {
			appDir = abs
		}
	}
	if envFile != "" {
		if abs, err := filepath.Abs(envFile); err == nil {
			envFile = abs
		}
	}
	return appDir, envFile, nil
}

// phpBinary returns the php to run, or "" and why none.
func phpBinary(want string) (string, string) {
	switch want {
	case PHPOff:
		return "", "--php off"
	case "":
		p, err := exec.LookPath("php")
		if err != nil {
			return "", "php not found on PATH"
		}
		return p, ""
	}
	return want, ""
}

// appAnswer is read-config.php's stdout.
type appAnswer struct {
	Version          string            `json:"version"`
	QueueForwards    []QueueForward    `json:"queue_forwards"`
	QueueDefault     *string           `json:"queue_default"`
	Connection       string            `json:"connection"`
	ConnectionFrom   string            `json:"connection_from"`
	QueueConnections map[string]string `json:"queue_connections"`
	Queue            struct {
		Driver      *string `json:"driver"`
		Table       *string `json:"table"`
		Queue       *string `json:"queue"`
		RetryAfter  *int    `json:"retry_after"`
		AfterCommit bool    `json:"after_commit"`
		Connection  *string `json:"connection"`
	} `json:"queue"`
	DBConnection *string  `json:"db_connection"`
	DB           answerDB `json:"db"`
	Failed       struct {
		Driver, Database, Table *string
	} `json:"failed"`
	Batching struct {
		Database, Table *string
	} `json:"batching"`
	Cache struct {
		Store, Driver, Table, Connection, Prefix *string
		LockTable                                *string `json:"lock_table"`
	} `json:"cache"`
	App struct {
		Name, Timezone, Cipher *string
	} `json:"app"`
	Redis  answerRedis   `json:"redis"`
	Bridge *BridgeConfig `json:"bridge"`
	Pulse  *answerPulse  `json:"pulse"`
	// HorizonWaits is config('horizon.waits') when Horizon is installed.
	HorizonWaits map[string]any `json:"horizon_waits"`
	// RedisCacheStore is config('cache.stores.<cache.default>') when its
	// driver is "redis".
	RedisCacheStore map[string]any `json:"redis_cache_store"`
	RedisQueue      *struct {
		Queue      map[string]any `json:"queue"`
		CacheStore map[string]any `json:"cache_store"`
		Horizon    bool           `json:"horizon"`
		// HorizonConfig is config('horizon')'s prefix, use, trim and
		// silenced, when Horizon is installed.
		HorizonConfig map[string]any `json:"horizon_config"`
	} `json:"redis_queue"`
	BeanstalkdQueue map[string]any `json:"beanstalkd_queue"`
	SQSQueue        *struct {
		Vapor bool `json:"vapor"`
	} `json:"sqs_queue"`
}

// answerRedis is the redis connection the cache store locks on.
type answerRedis struct {
	Client         *string `json:"client"`
	LockConnection string  `json:"lock_connection"`
	Defined        bool    `json:"defined"`
	Scheme         *string `json:"scheme"`
	Host           *string `json:"host"`
	Port           *string `json:"port"`
	Database       *string `json:"database"`
	Username       *string `json:"username"`
	Prefix         *string `json:"prefix"`
	// Servers: the connection is a list of servers (Redis Sentinel).
	Servers bool `json:"servers"`
}

// answerDB is the queue's database connection, its url merged in.
type answerDB struct {
	Driver     *string `json:"driver"`
	Host       *string `json:"host"`
	Port       *string `json:"port"`
	Database   *string `json:"database"`
	Username   *string `json:"username"`
	UnixSocket *string `json:"unix_socket"`
	Prefix     *string `json:"prefix"`
	Version    *string `json:"version"`
}

// appSecrets is what the script writes to file descriptor 3.
type appSecrets struct {
	DBPassword      *string  `json:"db_password"`
	AppKey          *string  `json:"app_key"`
	AppPreviousKeys []string `json:"app_previous_keys"`
	RedisPassword   *string  `json:"redis_password"`
	// RedisConfig is config('database.redis') (null when the app has
	// none, or it is not JSON).
	RedisConfig map[string]any `json:"redis_config"`
	// SQSConfig is the served sqs connection's array (null for another
	// driver).
	SQSConfig map[string]any `json:"sqs_config"`
	// Credentials are every connection's credentials (AppInfo.Secrets).
	Credentials []string `json:"credentials"`
	// PulseDBPassword is the password of Pulse's database connection.
	PulseDBPassword *string `json:"pulse_db_password"`
}

// runReadConfig runs read-config.php with the app's PHP. The secrets come
// back on a pipe (fd 3), never in argv, stdout or errors.
func runReadConfig(ctx context.Context, php, appDir, envFile string, opts Options, environ []string) (appAnswer, appSecrets, error) {
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	secretsR, secretsW, err := os.Pipe()
	if err != nil {
		return appAnswer{}, appSecrets{}, err
	}
	defer secretsR.Close()
	cmd := exec.CommandContext(ctx, php, "-d", "display_errors=stderr", "-d", "log_errors=0", "--", appDir, envFile, opts.Connection)
	cmd.Dir = appDir
	cmd.Env = environ
	cmd.Stdin = bytes.NewReader(phprun.WithAppBoot(readConfigPHP))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &limitedBuffer{max: 64 << 10, buf: &stderr}
	cmd.ExtraFiles = []*os.File{secretsW}
	killTreeOnCancel(cmd)
	if err := cmd.Start(); err != nil {
		secretsW.Close()
		return appAnswer{}, appSecrets{}, fmt.Errorf("appconfig: running %s to read the app's config: %w", php, err)
	}
	secretsW.Close()
	secretBytes := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(secretsR, 1<<20))
		secretBytes <- b
	}()
	err = cmd.Wait()
	sb := <-secretBytes
	if ctx.Err() == context.DeadlineExceeded {
		return appAnswer{}, appSecrets{}, fmt.Errorf("appconfig: %s did not finish reading the app's config in %s (pass --php off to read the .env and config files instead)", php, timeout)
	}
	if err != nil {
		return appAnswer{}, appSecrets{}, fmt.Errorf("appconfig: booting the app in %s with %s to read its config failed (%v): %s (fix it, or pass --php off to read the .env and config files instead)",
			appDir, php, err, phpError(stderr.String()))
	}
	// json_encode wrote the config's arrays: an empty one is [] where a
	// map is read.
	var ans appAnswer
	if err := phparray.Unmarshal(lastLine(stdout.Bytes()), &ans); err != nil {
		return appAnswer{}, appSecrets{}, fmt.Errorf("appconfig: %s printed no readable config for %s: %v", php, appDir, err)
	}
	var sec appSecrets
	if len(sb) > 0 {
		if err := phparray.Unmarshal(sb, &sec); err != nil {
			return appAnswer{}, appSecrets{}, errors.New("appconfig: the app's secrets came back unreadable")
		}
	}
	return ans, sec, nil
}

// limitedBuffer keeps the first max bytes of what is written.
type limitedBuffer struct {
	max int
	buf *bytes.Buffer
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.max - l.buf.Len(); room > 0 {
		if len(p) > room {
			l.buf.Write(p[:room])
		} else {
			l.buf.Write(p)
		}
	}
	return len(p), nil
}

func lastLine(b []byte) []byte {
	b = bytes.TrimRight(b, "\r\n")
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		return b[i+1:]
	}
	return b
}

// phpError is the script's own "laraworker: ..." line when it wrote one,
// else the last lines PHP printed.
func phpError(stderr string) string {
	lines := strings.Split(stderr, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if msg, ok := strings.CutPrefix(lines[i], "laraworker: "); ok {
			return msg
		}
	}
	return lastLines(stderr, 3)
}

func lastLines(s string, n int) string {
	lines := strings.FieldsFunc(strings.TrimSpace(s), func(r rune) bool { return r == '\n' })
	var kept []string
	for _, l := range lines {
		if l = strings.TrimSpace(l); l != "" {
			kept = append(kept, l)
		}
	}
	if len(kept) > n {
		kept = kept[len(kept)-n:]
	}
	if len(kept) == 0 {
		return "no error output"
	}
	return strings.Join(kept, " | ")
}

// values turns the PHP answer into the .env-named values configFromValues
// understands, and fills info.
func (a appAnswer) values(sec appSecrets, info *AppInfo) map[string]string {
	v := map[string]string{}
	set := func(k string, p *string) {
		if p != nil {
			v[k] = *p
		}
	}
	info.Connection, info.ConnectionFrom, info.QueueConnections = a.Connection, a.ConnectionFrom, a.QueueConnections
	info.Bridge = a.Bridge
	if a.DBConnection != nil {
		info.DBConnection = *a.DBConnection
	}
	if a.Queue.Driver != nil {
		info.QueueDriver = *a.Queue.Driver
	}
	if r := a.RedisQueue; r != nil {
		info.RedisQueue = &RedisQueueConfig{Queue: r.Queue, Redis: sec.RedisConfig, CacheStore: r.CacheStore, Horizon: r.Horizon, HorizonConfig: r.HorizonConfig}
	}
	info.BeanstalkdQueue = a.BeanstalkdQueue
	if a.SQSQueue != nil && sec.SQSConfig != nil {
		info.SQSQueue = &SQSQueueConfig{Queue: sec.SQSConfig, Vapor: a.SQSQueue.Vapor}
	}
	if sec.RedisConfig != nil {
		info.SharedRedis = &SharedRedisConfig{Redis: sec.RedisConfig, CacheStore: a.RedisCacheStore}
	}
	for _, c := range sec.Credentials {
		info.Secrets = append(info.Secrets, Secret(c))
	}
	prefix := deref(a.DB.Prefix)
	v["DB_TABLE_PREFIX"] = prefix
	v["QUEUE_CONNECTION_NAME"] = a.Connection
	set("DB_CONNECTION", a.DB.Driver)
	set("DB_HOST", a.DB.Host)
	set("DB_PORT", a.DB.Port)
	set("DB_DATABASE", a.DB.Database)
	set("DB_USERNAME", a.DB.Username)
	set("DB_SOCKET", a.DB.UnixSocket)
	set("DB_VERSION", a.DB.Version)
	set("DB_PASSWORD", sec.DBPassword)
	set("APP_KEY", sec.AppKey)
	v["APP_PREVIOUS_KEYS"] = strings.Join(sec.AppPreviousKeys, ",")
	set("APP_CIPHER", a.App.Cipher)
	set("APP_TIMEZONE", a.App.Timezone)
	if a.Queue.Table != nil {
		v["DB_QUEUE_TABLE"] = prefix + *a.Queue.Table
	}
	set("DB_QUEUE", a.Queue.Queue)
	if a.Queue.RetryAfter != nil {
		v["DB_QUEUE_RETRY_AFTER"] = strconv.Itoa(*a.Queue.RetryAfter)
	}
	v["QUEUE_FAILED_TABLE"] = prefix + orDefault(deref(a.Failed.Table), "failed_jobs")
	v["QUEUE_BATCHES_TABLE"] = prefix + orDefault(deref(a.Batching.Table), "job_batches")
	db := deref(a.DBConnection)
	sameDB := func(name *string) bool { return name == nil || *name == "" || *name == db }
	store := deref(a.Cache.Driver)
	if store == "database" && !sameDB(a.Cache.Connection) {
		info.Warnings = append(info.Warnings, fmt.Sprintf("the cache store %q uses database connection %q, not the queue's %q: maxExceptions counters and queue:restart are not shared with PHP", deref(a.Cache.Store), *a.Cache.Connection, db))
		store = "database on " + *a.Cache.Connection
	}
	v["CACHE_STORE"] = store
	if a.Cache.Table != nil {
		v["DB_CACHE_TABLE"] = prefix + *a.Cache.Table
	}
	v["CACHE_PREFIX"] = deref(a.Cache.Prefix)
	if a.Cache.LockTable != nil {
		v["DB_CACHE_LOCK_TABLE"] = prefix + *a.Cache.LockTable
	}
	a.Redis.values(v, sec)
	if !sameDB(a.Failed.Database) {
		info.Warnings = append(info.Warnings, fmt.Sprintf("queue.failed.database is %q, not the queue's database connection %q: laraworker writes failed jobs to the queue's database", *a.Failed.Database, db))
	}
	if d := deref(a.Failed.Driver); d != "" && d != "database-uuids" && d != "database" {
		info.Warnings = append(info.Warnings, fmt.Sprintf("queue.failed.driver is %q: laraworker writes failed jobs to the %s table all the same", d, v["QUEUE_FAILED_TABLE"]))
	}
	if !sameDB(a.Batching.Database) {
		info.Warnings = append(info.Warnings, fmt.Sprintf("queue.batching.database is %q, not the queue's database connection %q: laraworker updates batches in the queue's database", *a.Batching.Database, db))
	}
	return v
}

// values puts the lock connection's settings where redisSettings reads
// them: whatever its name in config/database.php, it becomes the
// "default" slot, with its own database number.
func (r answerRedis) values(v map[string]string, sec appSecrets) {
	if !r.Defined {
		v["REDIS_CACHE_LOCK_CONNECTION"] = r.LockConnection // redisSettings says it is unknown
		return
	}
	v["REDIS_CACHE_LOCK_CONNECTION"] = "default"
	v[lockConnectionName] = r.LockConnection
	if r.Servers {
		v[lockConnectionServers] = r.LockConnection
	}
	set := func(k string, p *string) {
		if p != nil {
			v[k] = *p
		}
	}
	set("REDIS_CLIENT", r.Client)
	set("REDIS_HOST", r.Host)
	set("REDIS_PORT", r.Port)
	set("REDIS_DB", r.Database)
	set("REDIS_USERNAME", r.Username)
	set("REDIS_PASSWORD", sec.RedisPassword)
	v["REDIS_PREFIX"] = deref(r.Prefix)
	if s := deref(r.Scheme); s == "tls" || s == "rediss" {
		v["REDIS_URL"] = s + "://" + net.JoinHostPort(deref(r.Host), orDefault(deref(r.Port), "6379"))
	}
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// configFromLayers applies, over the app's values, the LARAWORKER_*
// variables and then the overrides (flags), and builds the Config.
func configFromLayers(values map[string]string, environ []string, overrides map[string]string, baseDir string) (Config, error) {
	envMap := environMap(environ)
	for _, k := range configKeys {
		if x, ok := envMap["LARAWORKER_"+k]; ok {
			values[k] = x
		}
	}
	for k, x := range overrides {
		values[strings.ToUpper(k)] = x
	}
	return configFromValues(values, baseDir)
}

// Describe is the one line that says where the configuration came from.
func (i AppInfo) Describe() string {
	var b strings.Builder
	switch i.Source {
	case "php":
		fmt.Fprintf(&b, "read through php from the app in %s", i.AppDir)
	case "files":
		fmt.Fprintf(&b, "read without php (%s) from %s", i.Why, strings.Join(append([]string{orDefault(i.EnvFile, "no .env")}, i.Read...), ", "))
	default:
		fmt.Fprintf(&b, "read from %s and the environment only (%s)", orDefault(i.EnvFile, "no .env"), i.Why)
	}
	if i.Version != "" {
		fmt.Fprintf(&b, "; Laravel %s (%s)", i.Version, i.VersionFrom)
	} else if i.Source != "php" {
		b.WriteString("; Laravel version unknown")
	}
	if len(i.Guessed) > 0 {
		fmt.Fprintf(&b, "; skeleton defaults used for %s", strings.Join(i.Guessed, ", "))
	}
	return b.String()
}

// QueueForward is one Queue::forward(from, to, connection) registration.
type QueueForward struct {
	From string `json:"from"`
	// Connection limits the forward to one queue connection ("": all).
	Connection string `json:"connection"`
	// To is the queue jobs go to ("": the same name, on Connection).
	To string `json:"to"`
}

// QueueForwardsFor is QueueRoutes::forwardedQueue for the queues of one
// connection: from => to, for the forwards that apply to it (no
// connection, or this one) and change the queue's name.
func (i AppInfo) QueueForwardsFor(connection string) map[string]string {
	var out map[string]string
	for _, f := range i.QueueForwards {
		if (f.Connection == "" || f.Connection == connection) && f.To != "" && f.To != f.From {
			if out == nil {
				out = map[string]string{}
			}
			out[f.From] = f.To
		}
	}
	return out
}
