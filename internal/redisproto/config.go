package redisproto

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Config is one Laravel queue connection with driver "redis"
// (config/queue.php connections.<name>) and the Redis connection it names
// (config/database.php redis.<connection> or redis.clusters.<connection>),
// as RedisConnector and RedisManager resolve them. FromLaravel builds it
// from the app's config arrays.
type Config struct {
	// Connection is the queue connection's name, e.g. "redis": what
	// failed_jobs.connection records and what the worker is started on.
	Connection string
	// Queue is the default queue name (the connection's "queue").
	Queue string
	// RetryAfter is how long a reservation holds before a pop on the queue
	// (any worker's) moves the job back to the list: "retry_after", 60 s
	// when unset or null (the connector's `?? 60`). Whole seconds.
	RetryAfter time.Duration
	// NeverExpire is RedisQueue's retryAfter null, which Horizon's
	// connector passes for `'retry_after' => null` (Laravel's gives 60):
	// reservations are scored now and never moved back, so a crashed
	// worker's job stays reserved for good. RetryAfter is then ignored.
	NeverExpire bool
	// BlockFor is "block_for": nil never blocks; otherwise an empty pop
	// waits up to this long on the queue's notify list (BLPOP). Laravel's 0
	// blocks forever; here it blocks until a job comes or the pop's
	// context ends (see PopOptions.Block).
	BlockFor *time.Duration
	// AfterCommit is "after_commit": dispatch-side only (a push inside a
	// database transaction waits for the commit); kept so the config
	// round-trips.
	AfterCommit bool
	// MigrationBatchSize is "migration_batch_size" (Laravel 9.23+): at most
	// this many due delayed or expired reserved jobs move to the list per
	// migration; 0 or negative moves all. Laravel 8 and Horizon ignore the
	// key (FromLaravel then leaves it 0); FromLaravel rejects a configured
	// 0, with which Laravel would never move a job.
	MigrationBatchSize int
	// HashTagQueues wraps a queue name that has no hash tag in braces in
	// its keys on a cluster, as Laravel 13.5+ does (queues:{name}); before
	// 13.5 the app names its queues {name} itself.
	HashTagQueues bool

	Redis RedisConfig
}

// RedisConfig is the Redis connection a queue connection uses.
type RedisConfig struct {
	// Name is the connection's name under database.redis (or
	// database.redis.clusters), "default" unless the queue connection says.
	Name string
	// Client is database.redis.client: phpredis or predis. Both put the
	// prefix before every key, script keys included.
	Client string
	// Addrs is host:port of the server, or of every seed node of a cluster;
	// empty for a Sentinel connection (Sentinel.Addrs).
	Addrs []string
	// Cluster is a Redis Cluster connection (database.redis.clusters).
	Cluster bool
	// Sentinel is set for a connection through Redis Sentinel (predis's
	// options.replication "sentinel"): the client asks the sentinels for
	// the master of Sentinel.Service and follows its failovers. Username,
	// Password, DB, TLS and TLSOptions are then the master's (predis's
	// options.parameters).
	Sentinel *SentinelConfig
	Username string
	Password Secret
	// DB is the SELECTed database (always 0 on a cluster).
	DB int
	// Prefix is options.prefix, put before every key the queue uses, as
	// phpredis's OPT_PREFIX and predis's prefix processor do (never before
	// values or script arguments).
	Prefix string
	// TLS is set by a tls:// or rediss:// URL, a "scheme" => "tls" or a
	// tls:// host.
	TLS bool
	// TLSOptions are the SSL context options of a TLS connection
	// (phpredis's "context", predis's "ssl"), as PHP applies them.
	TLSOptions TLSOptions
	// DialTimeout is "timeout", ReadTimeout "read_timeout" (0: go-redis
	// defaults).
	DialTimeout time.Duration
	ReadTimeout time.Duration
}

// SentinelConfig is where a Sentinel connection finds its master.
type SentinelConfig struct {
	// Service is options.service, the name the sentinels monitor the
	// master under.
	Service string
	// Addrs is host:port of each sentinel, in the config's order.
	Addrs []string
	// Username and Password authenticate to every sentinel (a sentinel's
	// own parameters, as predis 2.0.3+ sends them; predis 1.x sends none).
	Username string
	Password Secret
	// TLS is, per entry of Addrs, the sentinel's TLS options (nil: plain
	// TCP); the master's are RedisConfig.TLS and TLSOptions.
	TLS []*TLSOptions
}

// Validate reports the first setting Go cannot run with, naming it (a
// *ConfigError).
func (c Config) Validate() error { return asConfigError(c.validate()) }

func (c Config) validate() error {
	if c.Queue == "" {
		return errors.New("redisqueue: the queue connection has no default queue (\"queue\")")
	}
	if c.RetryAfter < 0 {
		return errors.New("redisqueue: retry_after is negative")
	}
	if c.RetryAfter%time.Second != 0 {
		return fmt.Errorf("redisqueue: retry_after %s is not whole seconds", c.RetryAfter)
	}
	if c.BlockFor != nil && *c.BlockFor < 0 {
		return errors.New("redisqueue: block_for is negative")
	}
	return c.Redis.validate()
}

// Validate reports the first connection setting Go cannot run with (a
// *ConfigError).
func (r RedisConfig) Validate() error { return asConfigError(r.validate()) }

func (r RedisConfig) validate() error {
	if r.Sentinel != nil {
		return r.validateSentinel()
	}
	if len(r.Addrs) == 0 {
		return fmt.Errorf("redisqueue: the redis connection %q has no host", r.Name)
	}
	if !r.Cluster && len(r.Addrs) > 1 {
		return fmt.Errorf("redisqueue: the redis connection %q has %d addresses but is not a cluster", r.Name, len(r.Addrs))
	}
	if r.DB < 0 {
		return fmt.Errorf("redisqueue: the redis connection %q has a negative database", r.Name)
	}
	if r.Cluster && r.DB != 0 {
		return fmt.Errorf("redisqueue: the redis cluster %q names database %d; a cluster has only database 0", r.Name, r.DB)
	}
	return nil
}

func (r RedisConfig) validateSentinel() error {
	s := r.Sentinel
	switch {
	case r.Cluster:
		return fmt.Errorf("redisqueue: the redis connection %q is both a cluster and a Sentinel connection", r.Name)
	case len(r.Addrs) > 0:
		return fmt.Errorf("redisqueue: the redis connection %q names servers beside its sentinels; the master comes from the sentinels", r.Name)
	case s.Service == "":
		return fmt.Errorf("redisqueue: the redis connection %q goes through Sentinel but names no service (options.service: the master's name the sentinels monitor)", r.Name)
	case len(s.Addrs) == 0:
		return fmt.Errorf("redisqueue: the redis connection %q goes through Sentinel but lists no sentinel", r.Name)
	case len(s.TLS) != 0 && len(s.TLS) != len(s.Addrs):
		return fmt.Errorf("redisqueue: the redis connection %q has %d sentinels but TLS options for %d", r.Name, len(s.Addrs), len(s.TLS))
	case r.DB < 0:
		return fmt.Errorf("redisqueue: the redis connection %q has a negative database", r.Name)
	}
	return nil
}

// ConfigError is a Redis connection setting Go cannot honour, or one that
// is malformed: what FromLaravel, RedisConnection, Validate and NewClient
// find before any connection is made (laraworker's CLI then stops with exit
// status 2). Its message names the setting and never holds a secret.
type ConfigError struct{ err error }

func (e *ConfigError) Error() string { return e.err.Error() }

// Unwrap gives the underlying error.
func (e *ConfigError) Unwrap() error { return e.err }

// IsConfigError reports whether err is, or wraps, a *ConfigError.
func IsConfigError(err error) bool {
	var c *ConfigError
	return errors.As(err, &c)
}

// asConfigError marks a non-nil error as a *ConfigError.
func asConfigError(err error) error {
	if err == nil || IsConfigError(err) {
		return err
	}
	return &ConfigError{err: err}
}

// String prints the config with the password redacted.
func (c Config) String() string {
	block := "null"
	if c.BlockFor != nil {
		block = c.BlockFor.String()
	}
	retry := c.RetryAfter.String()
	if c.NeverExpire {
		retry = "null"
	}
	return fmt.Sprintf("redisqueue.Config{Connection:%s Queue:%s RetryAfter:%s BlockFor:%s AfterCommit:%t MigrationBatchSize:%d HashTagQueues:%t Redis:%s}",
		c.Connection, c.Queue, retry, block, c.AfterCommit, c.MigrationBatchSize, c.HashTagQueues, c.Redis)
}

// GoString makes %#v redacting too.
func (c Config) GoString() string { return c.String() }

// String prints the connection with the password redacted.
func (r RedisConfig) String() string {
	var sentinel string
	if s := r.Sentinel; s != nil {
		sentinel = fmt.Sprintf(" Sentinel:{Service:%s Addrs:[%s] Username:%s Password:%s}", s.Service, strings.Join(s.Addrs, " "), s.Username, s.Password)
	}
	return fmt.Sprintf("redisqueue.RedisConfig{Name:%s Client:%s Addrs:[%s] Cluster:%t%s Username:%s Password:%s DB:%d Prefix:%q TLS:%t%s}",
		r.Name, r.Client, strings.Join(r.Addrs, " "), r.Cluster, sentinel, r.Username, r.Password, r.DB, r.Prefix, r.TLS, r.TLSOptions.summary())
}

// GoString makes %#v redacting too.
func (r RedisConfig) GoString() string { return r.String() }

// Secret holds a password. Every formatting path (%v, %s, %q, %x, %#v,
// JSON and text marshalling) prints "[redacted]" (empty stays empty), so a
// Config can be logged. Reveal gives the value.
type Secret string

const redacted = "[redacted]"

// Reveal returns the secret. Callers must never log it.
func (s Secret) Reveal() string { return string(s) }

// IsSet reports whether the secret is non-empty.
func (s Secret) IsSet() bool { return s != "" }

func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return redacted
}

// GoString covers %#v.
func (s Secret) GoString() string { return `"` + s.String() + `"` }

// Format covers the verbs that would print the underlying string.
func (s Secret) Format(f fmt.State, verb rune) {
	if verb == 'q' {
		fmt.Fprint(f, `"`+s.String()+`"`)
		return
	}
	fmt.Fprint(f, s.String())
}

// MarshalText covers JSON, YAML and text encoders.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }
