package appconfig

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/laraworker/laraworker/internal/phparray"
)

// This file is the fallback when PHP cannot be run: the app's .env, the
// config files Go can read (config/queue.php, config/cache.php,
// config/app.php, or all of bootstrap/cache/config.php when the config is
// cached) and, for what they leave open, the defaults of the laravel/laravel
// skeleton of the detected Laravel version.

// appFiles is the configuration Go could read from an app's files.
type appFiles struct {
	dir    string
	cached *phpNode            // bootstrap/cache/config.php, when present
	files  map[string]*phpNode // config/<name>.php by name
	env    phpEnv
	info   *AppInfo
}

// get evaluates a dotted config key ("queue.connections.database.table"),
// with ok false when the files do not say or say it in a way Go does not
// evaluate.
func (f *appFiles) get(key string) (phpValue, bool) {
	path := strings.Split(key, ".")
	var n *phpNode
	if f.cached != nil {
		n = f.cached.lookup(path...)
	} else if root := f.file(path[0]); root != nil {
		n = root.lookup(path[1:]...)
	}
	if n == nil {
		return phpValue{}, false
	}
	v := n.eval(f.env)
	return v, v.known()
}

// str is get for string settings; null is "".
func (f *appFiles) str(key string) (string, bool) {
	v, ok := f.get(key)
	if !ok {
		return "", false
	}
	return v.String(), true
}

func (f *appFiles) file(name string) *phpNode {
	if n, ok := f.files[name]; ok {
		return n
	}
	path := filepath.Join(f.dir, "config", name+".php")
	src, err := os.ReadFile(path)
	var n *phpNode
	if err == nil {
		n, err = parsePHPConfig(string(src))
		if err != nil {
			f.info.Warnings = append(f.info.Warnings, fmt.Sprintf("config/%s.php could not be read without php (%v): skeleton defaults used", name, err))
		} else {
			f.info.Read = append(f.info.Read, "config/"+name+".php")
		}
	}
	f.files[name] = n
	return n
}

// loadFromFiles builds the Config without PHP.
func loadFromFiles(appDir, envFile string, environ []string, opts Options, info AppInfo) (Config, AppInfo, error) {
	envVals, err := envValues(envFile, environ)
	if err != nil {
		return Config{}, info, err
	}
	info.Version, info.VersionFrom = DetectLaravelVersion(appDir)
	f := &appFiles{dir: appDir, files: map[string]*phpNode{}, info: &info,
		env: func(k string) (string, bool) { v, ok := envVals[k]; return v, ok }}
	if cached := cachedConfigPath(appDir, envVals); cached != "" {
		if src, err := os.ReadFile(cached); err == nil {
			if n, err := parsePHPConfig(string(src)); err == nil {
				f.cached = n
				info.Read = append(info.Read, relTo(appDir, cached)+" (config:cache; .env not used by Laravel)")
			}
		}
	}
	values := map[string]string{}
	for _, k := range configKeys {
		if v, ok := envVals[k]; ok {
			values[k] = v
		}
	}
	f.apply(values, opts.Connection)
	info.Secrets = f.credentials()
	cfg, err := configFromLayers(values, environ, opts.Overrides, appDir)
	return cfg, info, err
}

// envValues is what Laravel's env() sees: the .env file, with real
// environment variables winning (the immutable dotenv repository).
func envValues(envFile string, environ []string) (map[string]string, error) {
	envMap := environMap(environ)
	out := map[string]string{}
	if envFile != "" {
		src, err := os.ReadFile(envFile)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("appconfig: reading %s: %w", envFile, err)
		}
		vals, err := ParseDotenv(string(src), func(k string) (string, bool) { v, ok := envMap[k]; return v, ok })
		if err != nil {
			return nil, fmt.Errorf("appconfig: %s: %w", envFile, err)
		}
		for k, v := range vals {
			out[k] = v
		}
	}
	for k, v := range envMap {
		out[k] = v
	}
	return out, nil
}

// cachedConfigPath is Application::getCachedConfigPath() (APP_CONFIG_CACHE
// or bootstrap/cache/config.php), "" when there is no such file.
func cachedConfigPath(appDir string, env map[string]string) string {
	p := filepath.Join(appDir, "bootstrap", "cache", "config.php")
	if v := env["APP_CONFIG_CACHE"]; v != "" {
		p = v
		if !filepath.IsAbs(p) {
			p = filepath.Join(appDir, p)
		}
	}
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}

func relTo(base, p string) string {
	if r, err := filepath.Rel(base, p); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return p
}

// apply writes into values (by .env name) what the files say, and the
// detected version's skeleton defaults for what they do not.
func (f *appFiles) apply(values map[string]string, connection string) {
	info := f.info
	modern := info.Version != "" && VersionCompare(info.Version, "11") >= 0
	queueDefault, ok := f.str("queue.default")
	if !ok {
		queueDefault = f.env2("QUEUE_CONNECTION")
	}
	if queueDefault == "" {
		// The skeleton's default: sync before 11, database from 11 (and
		// laraworker's own when the version is unknown).
		queueDefault = "database"
		if info.Version != "" && !modern {
			queueDefault = "sync"
		}
	}
	info.Connection, info.ConnectionFrom = connection, "--connection"
	if connection == "" {
		info.Connection, info.ConnectionFrom = queueDefault, "queue.default"
	}
	values["QUEUE_CONNECTION_NAME"] = info.Connection
	base := "queue.connections." + info.Connection
	if conns := f.root("queue").lookup("connections"); conns != nil && conns.kind == "array" {
		info.QueueConnections = map[string]string{}
		for _, k := range conns.keys {
			d, _ := f.str("queue.connections." + k.String() + ".driver")
			info.QueueConnections[k.String()] = orDefault(d, "?")
		}
		info.QueueDriver = info.QueueConnections[info.Connection]
	}
	prefix := f.dbPrefix()
	values["DB_TABLE_PREFIX"] = prefix
	if v, ok := f.str(base + ".table"); ok {
		values["DB_QUEUE_TABLE"] = prefix + v
	}
	if v, ok := f.str(base + ".queue"); ok {
		values["DB_QUEUE"] = v
	}
	if v, ok := f.get(base + ".retry_after"); ok {
		values["DB_QUEUE_RETRY_AFTER"] = strconv.FormatInt(v.toInt().Int, 10)
	} else if f.root("queue") != nil && f.root("queue").lookup("connections", info.Connection) != nil &&
		f.root("queue").lookup("connections", info.Connection, "retry_after") == nil {
		values["DB_QUEUE_RETRY_AFTER"] = "60" // DatabaseConnector's default for a missing key
	}
	if v, ok := f.str("queue.failed.table"); ok {
		values["QUEUE_FAILED_TABLE"] = prefix + v
	}
	if v, ok := f.str("queue.batching.table"); ok {
		values["QUEUE_BATCHES_TABLE"] = prefix + v
	}
	if v, ok := f.str("app.timezone"); ok && v != "" {
		values["APP_TIMEZONE"] = v
	}
	if v, ok := f.str("app.cipher"); ok && v != "" {
		values["APP_CIPHER"] = v
	}
	if f.cached != nil {
		f.applyCachedSecrets(values)
	}
	store := f.applyCache(values, modern, prefix)
	switch info.QueueDriver {
	case "redis":
		f.redisQueueFromFiles(store)
	case "beanstalkd":
		f.beanstalkdQueueFromFiles()
	case "sqs":
		f.sqsQueueFromFiles()
	}
	f.sharedRedisFromFiles(store, values["CACHE_STORE"] == "redis")
	f.markServerList(values)
}

// queueDB is the queue connection's database connection name ("" when the
// files do not say): for a redis queue connection, whose "connection"
// names a Redis connection, and for a beanstalkd or an sqs one,
// queue.failed's database.
func (f *appFiles) queueDB() string {
	key := "queue.connections." + f.info.Connection + ".connection"
	if f.info.QueueDriver == "redis" || f.info.QueueDriver == "beanstalkd" || f.info.QueueDriver == "sqs" {
		key = "queue.failed.database"
	}
	db, _ := f.str(key)
	if db == "" {
		db, _ = f.str("database.default")
	}
	return db
}

// dbPrefix is the table prefix of the queue's database connection.
func (f *appFiles) dbPrefix() string {
	db := f.queueDB()
	if db == "" {
		return ""
	}
	p, _ := f.str("database.connections." + db + ".prefix")
	return p
}

// env2 reads an environment value (the .env merged with the process's).
func (f *appFiles) env2(k string) string {
	v, _ := f.env(k)
	return v
}

func (f *appFiles) root(name string) *phpNode {
	if f.cached != nil {
		return f.cached.lookup(name)
	}
	return f.file(name)
}

// applyCachedSecrets: a cached config holds the database settings and the
// app key as Laravel will use them; the .env is not read at all.
func (f *appFiles) applyCachedSecrets(values map[string]string) {
	base := "database.connections." + f.queueDB()
	for key, name := range map[string]string{"driver": "DB_CONNECTION", "host": "DB_HOST", "port": "DB_PORT", "database": "DB_DATABASE",
		"username": "DB_USERNAME", "password": "DB_PASSWORD", "unix_socket": "DB_SOCKET", "url": "DB_URL"} {
		if v, ok := f.str(base + "." + key); ok {
			values[name] = v
		}
	}
	if v, ok := f.str("app.key"); ok {
		values["APP_KEY"] = v
	}
}

// applyCache decides the cache store, table and prefix, and returns the
// store's name.
func (f *appFiles) applyCache(values map[string]string, modern bool, prefix string) string {
	info := f.info
	store, ok := f.str("cache.default")
	if !ok {
		// Skeleton: CACHE_DRIVER (default file) before 11, CACHE_STORE
		// (default database) from 11.
		switch {
		case info.Version == "":
			store = orDefault(values["CACHE_STORE"], values["CACHE_DRIVER"])
		case modern:
			store = orDefault(f.env2("CACHE_STORE"), "database")
			info.Guessed = append(info.Guessed, "cache.default")
		default:
			store = orDefault(f.env2("CACHE_DRIVER"), "file")
			info.Guessed = append(info.Guessed, "cache.default")
		}
	}
	driver := store
	if d, ok := f.str("cache.stores." + store + ".driver"); ok {
		driver = d
	}
	values["CACHE_STORE"] = driver
	delete(values, "CACHE_DRIVER")
	if v, ok := f.str("cache.stores." + store + ".table"); ok {
		values["DB_CACHE_TABLE"] = prefix + v
	}
	if v, ok := f.str("cache.stores." + store + ".prefix"); ok {
		values["CACHE_PREFIX"] = v
		return store
	}
	if v, ok := f.str("cache.prefix"); ok {
		values["CACHE_PREFIX"] = v
		return store
	}
	if _, set := f.env("CACHE_PREFIX"); set {
		values["CACHE_PREFIX"] = f.env2("CACHE_PREFIX")
		return store
	}
	if info.Version == "" {
		return store // configFromValues' guess from CACHE_STORE/CACHE_DRIVER
	}
	name := orDefault(f.env2("APP_NAME"), "laravel")
	guess, ok := skeletonCachePrefix(info.Version, name)
	if !ok {
		info.Warnings = append(info.Warnings, "APP_NAME is not ASCII: the skeleton's cache prefix (Str::slug) cannot be computed without php; set CACHE_PREFIX")
		return store
	}
	values["CACHE_PREFIX"] = guess
	info.Guessed = append(info.Guessed, "cache.prefix")
	return store
}

// skeletonCachePrefix is the default cache prefix of the laravel/laravel
// skeleton of a version: slug(name, '_')."_cache" (8.x), ."_cache_" (9.x to
// 12.0), slug(name)."-cache-" (12.1+).
func skeletonCachePrefix(version, appName string) (string, bool) {
	switch {
	case VersionCompare(version, "9") < 0:
		s, ok := StrSlug(appName, "_")
		return s + "_cache", ok
	case VersionCompare(version, "12.1") < 0:
		s, ok := StrSlug(appName, "_")
		return s + "_cache_", ok
	}
	s, ok := StrSlug(appName, "-")
	return s + "-cache-", ok
}

var frameworkVersionRE = regexp.MustCompile(`const\s+VERSION\s*=\s*'([^']+)'`)

// DetectLaravelVersion reads the framework version an app runs: from
// vendor/laravel/framework (Application::VERSION), else composer.lock.
func DetectLaravelVersion(appDir string) (version, from string) {
	app := filepath.Join(appDir, "vendor", "laravel", "framework", "src", "Illuminate", "Foundation", "Application.php")
	if src, err := os.ReadFile(app); err == nil {
		if m := frameworkVersionRE.FindSubmatch(src); m != nil {
			return string(m[1]), "vendor/laravel/framework"
		}
	}
	lock, err := os.ReadFile(filepath.Join(appDir, "composer.lock"))
	if err != nil {
		return "", ""
	}
	var l struct {
		Packages []struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"packages"`
	}
	if phparray.Unmarshal(lock, &l) != nil {
		return "", ""
	}
	for _, p := range l.Packages {
		if p.Name == "laravel/framework" {
			return strings.TrimPrefix(p.Version, "v"), "composer.lock"
		}
	}
	return "", ""
}
