package redisproto

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/laraworker/laraworker/internal/phparray"
)

// LaravelOptions say which Laravel reads the config: the resolution
// rules changed between versions.
type LaravelOptions struct {
	// Version is the app's Laravel version (Application::VERSION, e.g.
	// "8.83.26"). Required: it decides whether migration_batch_size is read
	// (9.23+), whether queue names get a hash tag on a cluster (13.5+),
	// whether a connection-level "prefix" wins (phpredis 9.12+) and whether
	// phpredis sends the username (9.6+).
	Version string
	// Horizon is set when laravel/horizon is installed: its connector
	// replaces Laravel's and does not pass migration_batch_size on.
	Horizon bool
}

// FromLaravel builds the Config of the queue connection named connection
// from the app's config arrays, decoded from JSON as PHP's config()
// returns them: queueConn is config('queue.connections.<connection>'),
// redis is config('database.redis'). It resolves them as Laravel's
// RedisConnector, RedisManager, ConfigurationUrlParser and the phpredis or
// predis connector do, and names the key of anything Go cannot run with.
func FromLaravel(connection string, queueConn, redis map[string]any, opts LaravelOptions) (Config, error) {
	c, err := fromLaravel(connection, queueConn, redis, opts)
	return c, asConfigError(err)
}

func fromLaravel(connection string, queueConn, redis map[string]any, opts LaravelOptions) (Config, error) {
	if opts.Version == "" {
		return Config{}, errors.New("redisqueue: the app's Laravel version is needed to read its redis queue config")
	}
	at := func(key string) string { return fmt.Sprintf("queue.connections.%s.%s", connection, key) }
	if d := phparray.String(queueConn["driver"]); d != "redis" {
		return Config{}, fmt.Errorf("redisqueue: %s is %q, not \"redis\"", at("driver"), d)
	}
	c := Config{Connection: connection, Queue: phparray.String(queueConn["queue"])}
	if c.Queue == "" {
		return Config{}, fmt.Errorf("redisqueue: %s is not set (RedisConnector requires it)", at("queue"))
	}
	retry, err := secondsOr(queueConn["retry_after"], 60)
	if err != nil {
		return Config{}, fmt.Errorf("redisqueue: %s: %w", at("retry_after"), err)
	}
	c.RetryAfter = time.Duration(retry) * time.Second
	// Horizon's connector reads it with Arr::get, which keeps a null.
	if v, set := queueConn["retry_after"]; opts.Horizon && set && v == nil {
		c.NeverExpire = true
	}
	if v, set := queueConn["block_for"]; set && v != nil {
		block, err := secondsOr(v, 0)
		if err != nil {
			return Config{}, fmt.Errorf("redisqueue: %s: %w", at("block_for"), err)
		}
		d := time.Duration(block) * time.Second
		c.BlockFor = &d
	}
	c.AfterCommit = phparray.Truthy(queueConn["after_commit"])
	if versionAtLeast(opts.Version, 9, 23) && !opts.Horizon {
		if v, set := queueConn["migration_batch_size"]; set && v != nil {
			n, ok := phpInt(v)
			if !ok {
				return Config{}, fmt.Errorf("redisqueue: %s is not a number", at("migration_batch_size"))
			}
			if n == 0 {
				return Config{}, fmt.Errorf("redisqueue: %s is 0: Laravel would never move a delayed, released or expired job back to the queue; use a positive number or -1 (all)", at("migration_batch_size"))
			}
			if n > 0 {
				c.MigrationBatchSize = int(min(n, math.MaxInt32))
			}
		}
	}
	c.HashTagQueues = versionAtLeast(opts.Version, 13, 5)
	name := phparray.String(queueConn["connection"])
	if name == "" {
		name = "default"
	}
	c.Redis, err = redisConnection(name, redis, opts.Version)
	if err != nil {
		return Config{}, err
	}
	return c, c.Validate()
}

// RedisConnection resolves the Redis connection name of the app's
// config('database.redis') as RedisManager::resolve does (for a cache
// store's "connection", say); version is the app's Laravel version. Its
// errors are *ConfigError.
func RedisConnection(name string, redis map[string]any, version string) (RedisConfig, error) {
	if version == "" {
		return RedisConfig{}, &ConfigError{err: errors.New("redisqueue: the app's Laravel version is needed to read its redis config")}
	}
	r, err := redisConnection(name, redis, version)
	if err != nil {
		return RedisConfig{}, asConfigError(err)
	}
	return r, r.Validate()
}

// redisConnection is RedisManager::resolve(name): database.redis.<name>,
// else database.redis.clusters.<name>.
func redisConnection(name string, redis map[string]any, version string) (RedisConfig, error) {
	client := phparray.String(redis["client"])
	if client == "" {
		client = "phpredis"
	}
	if client != "phpredis" && client != "predis" {
		return RedisConfig{}, fmt.Errorf("redisqueue: database.redis.client is %q; Laravel knows phpredis and predis", client)
	}
	global := asMap(redis["options"])
	if conf, ok := redis[name]; ok && conf != nil && name != "options" && name != "clusters" && name != "client" {
		if isServerList(conf) {
			return listConnection(name, client, conf, global)
		}
		return singleConnection(name, client, conf, global, version)
	}
	clusters := asMap(redis["clusters"])
	if nodes, ok := clusters[name]; ok && name != "options" {
		return clusterConnection(name, client, nodes, asMap(clusters["options"]), global, version)
	}
	return RedisConfig{}, fmt.Errorf("redisqueue: Redis connection [%s] not configured (database.redis.%s)", name, name)
}

// singleConnection resolves one server's connection.
func singleConnection(name, client string, raw any, global map[string]any, version string) (RedisConfig, error) {
	where := "database.redis." + name
	conf, err := parseConnectionConfig(raw)
	if err != nil {
		return RedisConfig{}, fmt.Errorf("redisqueue: %s: %w", where, err)
	}
	own := asMap(conf["options"])
	// The options a client is configured with: the global ones, then the
	// connection's own. phpredis before 9.12 merges the connection's keys
	// underneath both (so its "prefix" loses); predis, and phpredis since
	// 9.12 (#42279), let a connection-level "prefix" win.
	var options map[string]any
	connPrefixWins := client == "predis" || versionAtLeast(version, 9, 12)
	if client == "phpredis" {
		options = merged(withoutKey(conf, "options"), global, own)
	} else {
		options = merged(global, own)
		// predis fills the parameters a connection leaves out from its
		// options.parameters (Connection\Factory's defaults).
		conf = withDefaults(withoutKey(conf, "options"), predisParameters(name, global, own))
	}
	if p, set := conf["prefix"]; set && connPrefixWins {
		options["prefix"] = p
	}
	r := RedisConfig{Name: name, Client: client, Prefix: phparray.String(options["prefix"])}
	if err := r.readServer(conf, client, version); err != nil {
		return RedisConfig{}, fmt.Errorf("redisqueue: %s: %w", where, err)
	}
	if err := r.readOptions(options); err != nil {
		return RedisConfig{}, fmt.Errorf("redisqueue: %s: %w", where, err)
	}
	if r.TLS {
		ssl, err := sslContext(client, version, false, options, conf)
		if err == nil {
			r.TLSOptions, err = parseSSLContext(client, ssl)
		}
		if err != nil {
			return RedisConfig{}, fmt.Errorf("redisqueue: %s: %w", where, err)
		}
	}
	return r, nil
}

// clusterConnection resolves database.redis.clusters.<name>: a list of
// nodes, with options merged from options, clusters.options and the
// cluster's own "options" entry.
func clusterConnection(name, client string, raw any, clusterOptions, global map[string]any, version string) (RedisConfig, error) {
	where := "database.redis.clusters." + name
	nodes, own, ownPrefix, ok := listEntries(raw)
	if !ok {
		return RedisConfig{}, fmt.Errorf("redisqueue: %s is not a list of nodes", where)
	}
	if len(nodes) == 0 {
		return RedisConfig{}, fmt.Errorf("redisqueue: %s has no nodes", where)
	}
	options := merged(global, clusterOptions, own)
	if ownPrefix != nil && client == "predis" {
		options["prefix"] = ownPrefix
	}
	if mode := phparray.String(options["cluster"]); client == "predis" && mode != "" && mode != "redis" {
		return RedisConfig{}, fmt.Errorf("redisqueue: %s: options.cluster is %q (predis's client-side sharding); only native Redis Cluster (\"redis\") is supported", where, mode)
	}
	r := RedisConfig{Name: name, Client: client, Cluster: true, Prefix: phparray.String(options["prefix"])}
	var first map[string]any
	for i, n := range nodes {
		conf, err := parseConnectionConfig(n)
		if err != nil {
			return RedisConfig{}, fmt.Errorf("redisqueue: %s.%d: %w", where, i, err)
		}
		if client == "predis" {
			conf = withDefaults(conf, asMap(options["parameters"]))
		}
		var node RedisConfig
		if err := node.readServer(conf, client, "99"); err != nil {
			return RedisConfig{}, fmt.Errorf("redisqueue: %s.%d: %w", where, i, err)
		}
		r.Addrs = append(r.Addrs, node.Addrs...)
		if i == 0 {
			r.Username, r.Password, r.TLS, first = node.Username, node.Password, node.TLS, conf
		}
	}
	// phpredis authenticates a cluster with options.password (and, 13.x,
	// options.username).
	if pw := phparray.String(options["password"]); pw != "" {
		r.Password = Secret(pw)
	}
	if u := phparray.String(options["username"]); u != "" {
		r.Username = u
	}
	if err := r.readOptions(options); err != nil {
		return RedisConfig{}, fmt.Errorf("redisqueue: %s: %w", where, err)
	}
	if r.TLS {
		ssl, err := sslContext(client, version, true, options, first)
		if err == nil {
			r.TLSOptions, err = parseSSLContext(client, ssl)
		}
		if err != nil {
			return RedisConfig{}, fmt.Errorf("redisqueue: %s: %w", where, err)
		}
	}
	return r, nil
}

// listEntries splits a PHP list of servers: a JSON array, or (when the
// list also has an "options" or "prefix" entry) an object whose other
// keys are the servers, in key order.
func listEntries(raw any) (entries []any, own map[string]any, ownPrefix any, ok bool) {
	switch v := raw.(type) {
	case []any:
		return v, nil, nil, true
	case map[string]any:
		own, ownPrefix = asMap(v["options"]), v["prefix"]
		keys := make([]string, 0, len(v))
		for k := range v {
			if k != "options" && k != "prefix" {
				keys = append(keys, k)
			}
		}
		slices.SortFunc(keys, func(a, b string) int {
			ai, aerr := strconv.Atoi(a)
			bi, berr := strconv.Atoi(b)
			if aerr == nil && berr == nil {
				return cmp.Compare(ai, bi)
			}
			return strings.Compare(a, b)
		})
		for _, k := range keys {
			entries = append(entries, v[k])
		}
		return entries, own, ownPrefix, true
	}
	return nil, nil, nil, false
}

// readServer reads host, port, scheme, credentials and database.
func (r *RedisConfig) readServer(conf map[string]any, client, version string) error {
	host, scheme, err := r.readScheme(conf)
	if err != nil {
		return err
	}
	if host == "" {
		// predis connects to its default host; Laravel's phpredis connector
		// reads $config['host'], which PHP reports missing.
		if client != "predis" {
			return errors.New("no host: Laravel's phpredis connector needs one (PHP fails to connect too)")
		}
		host = "127.0.0.1"
	}
	if isSocketPath(host) || scheme == "unix" {
		r.Addrs = []string{host}
	} else {
		port := int64(6379)
		if v, set := conf["port"]; set && v != nil && phparray.String(v) != "" {
			p, ok := phpInt(v)
			if !ok || p <= 0 || p > 65535 {
				return fmt.Errorf("port %q is not a port number", phparray.String(v))
			}
			port = p
		}
		r.Addrs = []string{net.JoinHostPort(host, strconv.FormatInt(port, 10))}
	}
	return r.readAuth(conf, client, version)
}

// readScheme reads the scheme (of "scheme", or of a tls:// host) and
// returns the host without it.
func (r *RedisConfig) readScheme(conf map[string]any) (host, scheme string, err error) {
	host = phparray.String(conf["host"])
	scheme = strings.ToLower(phparray.String(conf["scheme"]))
	if h, rest, ok := strings.Cut(host, "://"); ok {
		hostScheme := strings.ToLower(h)
		if scheme != "" && scheme != hostScheme {
			return "", "", fmt.Errorf("the host's scheme %q does not match \"scheme\" %q", hostScheme, scheme)
		}
		scheme, host = hostScheme, rest
	}
	switch scheme {
	case "", "tcp", "redis", "unix":
	case "tls", "rediss", "ssl":
		r.TLS = true
	default:
		return "", "", fmt.Errorf("scheme %q is not tcp or tls", scheme)
	}
	return host, scheme, nil
}

// readAuth reads the credentials and the database.
func (r *RedisConfig) readAuth(conf map[string]any, client, version string) error {
	r.Password = Secret(phparray.String(conf["password"]))
	// phpredis sends the username only since 9.6 (#41683).
	if client == "predis" || versionAtLeast(version, 9, 6) {
		r.Username = phparray.String(conf["username"])
	}
	if v, set := conf["database"]; set && v != nil && phparray.String(v) != "" {
		db, ok := phpInt(v)
		if !ok || db < 0 {
			return fmt.Errorf("database %q is not a database number", phparray.String(v))
		}
		r.DB = int(db)
	}
	return nil
}

// readOptions reads the client options Go honours and refuses those that
// change what goes over the wire.
func (r *RedisConfig) readOptions(options map[string]any) error {
	for _, key := range []string{"serializer", "compression"} {
		if v, set := options[key]; set && v != nil {
			if n, ok := phpInt(v); !ok || n != 0 {
				return fmt.Errorf("options.%s is set: phpredis then serializes plain commands but not script arguments, so PHP's own deletes miss their jobs (Laravel issues #47356, #47578); a queue connection cannot use it", key)
			}
		}
	}
	var err error
	if r.DialTimeout, err = optSeconds(options["timeout"]); err != nil {
		return fmt.Errorf("timeout: %w", err)
	}
	if r.ReadTimeout, err = optSeconds(options["read_timeout"]); err != nil {
		return fmt.Errorf("read_timeout: %w", err)
	}
	return nil
}

// sslContext is the SSL context a TLS connection's client applies:
// predis's "ssl" parameter (conf, its defaults merged in); phpredis's
// "context" option as Laravel passes it on (options): before 13.5 as
// written, which Redis::connect reads under "stream" and RedisCluster
// flat; from 13.5 (PhpRedisConnector::normalizeContext) "stream", "ssl"
// or the flat array alike.
func sslContext(client, version string, cluster bool, options, conf map[string]any) (map[string]any, error) {
	if client == "predis" {
		return asMap(conf["ssl"]), nil
	}
	ctx := asMap(options["context"])
	if ctx == nil {
		return nil, nil
	}
	normalized := versionAtLeast(version, 13, 5)
	if !cluster {
		if ctx["stream"] != nil || !normalized {
			if ctx["auth"] != nil {
				return nil, errors.New("context.auth is set: give the credentials as username and password instead")
			}
			return asMap(ctx["stream"]), nil
		}
		if ssl := asMap(ctx["ssl"]); ssl != nil {
			return ssl, nil
		}
		return ctx, nil
	}
	if normalized {
		for _, sub := range []string{"ssl", "stream"} {
			if m := asMap(ctx[sub]); m != nil {
				return m, nil
			}
		}
	}
	return ctx, nil
}

// parseConnectionConfig is RedisManager::parseConnectionConfiguration:
// ConfigurationUrlParser merges a "url" (or a bare URL string) over the
// keys, rediss:// and tls:// setting the tls scheme.
func parseConnectionConfig(raw any) (map[string]any, error) {
	conf := map[string]any{}
	switch v := raw.(type) {
	case string:
		conf["url"] = v
	case map[string]any:
		for k, x := range v {
			conf[k] = x
		}
	default:
		return nil, errors.New("not an array")
	}
	rawURL := phparray.String(conf["url"])
	delete(conf, "url")
	if rawURL == "" {
		return conf, nil
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		// The URL may hold a password: never echo it.
		return nil, errors.New("url is malformed")
	}
	switch strings.ToLower(u.Scheme) {
	case "redis", "tcp":
		conf["scheme"] = "tcp"
	case "rediss", "tls":
		conf["scheme"] = "tls"
	case "":
	default:
		return nil, fmt.Errorf("url scheme %q is not redis, rediss, tcp or tls", u.Scheme)
	}
	if h := u.Hostname(); h != "" {
		conf["host"] = h
	}
	if p := u.Port(); p != "" {
		conf["port"] = p
	}
	if u.User != nil {
		if name := u.User.Username(); name != "" {
			conf["username"] = name
		}
		if pw, ok := u.User.Password(); ok {
			conf["password"] = pw
		}
	}
	if db := strings.TrimPrefix(u.Path, "/"); db != "" {
		conf["database"] = db
	}
	for k, vs := range u.Query() {
		if len(vs) > 0 {
			conf[k] = vs[len(vs)-1]
		}
	}
	return conf, nil
}

// merged is PHP's array_merge of string-keyed arrays: later ones win.
func merged(maps ...map[string]any) map[string]any {
	out := map[string]any{}
	for _, m := range maps {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

func withoutKey(m map[string]any, key string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if k != key {
			out[k] = v
		}
	}
	return out
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// phpInt reads an integer from a number or a numeric string.
func phpInt(v any) (int64, bool) {
	switch x := v.(type) {
	case float64:
		return int64(x), !math.IsNaN(x) && !math.IsInf(x, 0)
	case int:
		return int64(x), true
	case int64:
		return x, true
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(phparray.String(v)), 64)
	if err != nil {
		return 0, false
	}
	return int64(f), true
}

// secondsOr reads a whole number of seconds, def when unset or null (the
// connectors' `??`).
func secondsOr(v any, def int64) (int64, error) {
	if v == nil {
		return def, nil
	}
	n, ok := phpInt(v)
	if !ok {
		return 0, fmt.Errorf("%q is not a number of seconds", phparray.String(v))
	}
	if n < 0 {
		return 0, fmt.Errorf("%d is negative", n)
	}
	return n, nil
}

// optSeconds reads an optional float of seconds.
func optSeconds(v any) (time.Duration, error) {
	if v == nil || phparray.String(v) == "" {
		return 0, nil
	}
	f, err := strconv.ParseFloat(phparray.String(v), 64)
	if err != nil || f < 0 {
		return 0, fmt.Errorf("%q is not a number of seconds", phparray.String(v))
	}
	return time.Duration(f * float64(time.Second)), nil
}

// versionAtLeast compares a Laravel version ("8.83.26", "v13.5.0") with
// major.minor.
func versionAtLeast(version string, major, minor int) bool {
	parts := strings.SplitN(strings.TrimPrefix(version, "v"), ".", 3)
	maj, err := strconv.Atoi(parts[0])
	if err != nil {
		return false
	}
	mnr := 0
	if len(parts) > 1 {
		mnr, _ = strconv.Atoi(parts[1])
	}
	return maj > major || (maj == major && mnr >= minor)
}
