package redisproto

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Queue runs Laravel's Redis queue protocol on one queue connection. It
// is safe for concurrent use.
type Queue struct {
	rdb redis.UniversalClient
	own bool
	cfg Config
	now func() time.Time
	// retrySeconds, migrationLimit and migrateSets are derived from cfg
	// (newQueue).
	retrySeconds   int64
	migrationLimit int
	migrateSets    string

	// waiter blocks on the notify lists (NotifyWaiter), made on first use.
	waitOnce sync.Once
	waiter   *NotifyWaiter

	// keyCache holds each queue's queueKeys (keys.go), cached counts them.
	keyCache sync.Map
	cached   atomic.Int32
	// lastClasses is the class filter of the last pop, rendered (pop.go).
	lastClasses atomic.Pointer[classArgs]
}

// Open validates cfg and connects (see NewClient): to one server, a
// cluster, or the master a Sentinel connection's sentinels name. It pings,
// so a wrong address, password or certificate fails here, with the
// password never in the error.
func Open(ctx context.Context, cfg Config) (*Queue, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	rdb, err := newClient(cfg.Redis)
	if err != nil {
		return nil, err
	}
	q := newQueue(rdb, cfg)
	q.own = true
	if err := q.Ping(ctx); err != nil {
		rdb.Close()
		return nil, err
	}
	return q, nil
}

// New runs the protocol over an existing client (a *redis.Client or
// *redis.ClusterClient set up as cfg.Redis says); Close leaves it open.
func New(rdb redis.UniversalClient, cfg Config) (*Queue, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return newQueue(rdb, cfg), nil
}

// newQueue works out once what each pop and release sends: the
// reservation's length (availableAt(null) is now when retry_after is
// null), the migration's LIMIT count (-1 for all) and the sets a pop
// migrates (claimScript's "1": the delayed one, "2": the reserved one
// too; RedisQueue::migrate skips the reserved one when retryAfter is
// null).
func newQueue(rdb redis.UniversalClient, cfg Config) *Queue {
	q := &Queue{rdb: rdb, cfg: cfg, now: time.Now, migrationLimit: -1, migrateSets: "1"}
	if !cfg.NeverExpire {
		q.retrySeconds = int64(cfg.RetryAfter / time.Second)
		q.migrateSets = "2"
	}
	if cfg.MigrationBatchSize > 0 {
		q.migrationLimit = cfg.MigrationBatchSize
	}
	// The default queue's keys, under "" and under its name: a worker
	// that names no queue claims with "" and writes each job's outcome
	// with its row's queue, the name (the first job worked both out).
	def := q.keys("")
	q.keyCache.Store(def.name, def)
	q.cached.Add(1)
	return q
}

// SetClock replaces the clock the scores are computed from (tests;
// Laravel's are PHP's clock, Carbon::now()).
func (q *Queue) SetClock(now func() time.Time) { q.now = now }

// Now is the clock the scores are computed from.
func (q *Queue) Now() time.Time { return q.now() }

// Config is the configuration the queue runs with.
func (q *Queue) Config() Config { return q.cfg }

// Client is the underlying go-redis client.
func (q *Queue) Client() redis.UniversalClient { return q.rdb }

// Connection is the queue connection's name (failed_jobs.connection).
func (q *Queue) Connection() string { return q.cfg.Connection }

// RetryAfter is how long a reservation holds.
func (q *Queue) RetryAfter() time.Duration { return q.cfg.RetryAfter }

// Ping checks that Redis answers (every master, on a cluster).
func (q *Queue) Ping(ctx context.Context) error {
	if cc, ok := q.rdb.(*redis.ClusterClient); ok {
		return q.wrap(cc.ForEachShard(ctx, func(ctx context.Context, c *redis.Client) error {
			return c.Ping(ctx).Err()
		}))
	}
	return q.wrap(q.rdb.Ping(ctx).Err())
}

// Close closes the client if Open created it, and the notify waiter's.
func (q *Queue) Close() error {
	if q.waiter != nil {
		_ = q.waiter.Close()
	}
	if q.own {
		return q.rdb.Close()
	}
	return nil
}

// wrap names the connection on errors. go-redis errors carry neither the
// password nor the URL.
func (q *Queue) wrap(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("redisqueue: %s (redis connection %q): %w", q.cfg.Connection, q.cfg.Redis.Name, err)
}

// NewClient is the go-redis client for a Redis connection of the app: a
// *redis.Client for one server, a *redis.ClusterClient for a cluster, and
// for a Sentinel connection go-redis's failover *redis.Client, which asks
// the sentinels for the master and follows its failovers. TLS connections
// check the server as PHP does with the same SSL context options (see
// TLSOptions). RESP2 and no CLIENT SETINFO: the commands a PHP client
// sends, on any server version. A command whose connection breaks is not
// sent again: go-redis would re-run a script that may have run already
// (pushing a job twice), so the error goes to the caller, which knows what
// is safe to repeat. A setting it cannot honour, or a certificate file it
// cannot read, is a *ConfigError; it does not connect (go-redis dials on
// first use).
func NewClient(r RedisConfig) (redis.UniversalClient, error) { return newClient(r) }

func newClient(r RedisConfig) (redis.UniversalClient, error) { return newClientPool(r, 0) }

// newClientPool is newClient with pool connections per server (0: go-redis's
// default).
func newClientPool(r RedisConfig, pool int) (redis.UniversalClient, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	dial, err := r.dialer()
	if err != nil {
		return nil, &ConfigError{err: fmt.Errorf("redisqueue: the redis connection %q: %w", r.Name, err)}
	}
	switch {
	case r.Sentinel != nil:
		return redis.NewFailoverClient(&redis.FailoverOptions{
			MasterName:       r.Sentinel.Service,
			SentinelAddrs:    r.Sentinel.Addrs,
			SentinelUsername: r.Sentinel.Username,
			SentinelPassword: r.Sentinel.Password.Reveal(),
			Username:         r.Username,
			Password:         r.Password.Reveal(),
			DB:               r.DB,
			Dialer:           dial,
			DialTimeout:      r.DialTimeout,
			ReadTimeout:      r.ReadTimeout,
			PoolSize:         pool,
			Protocol:         2,
			DisableIdentity:  true,
			MaxRetries:       -1,
		}), nil
	case r.Cluster:
		return redis.NewClusterClient(&redis.ClusterOptions{
			Addrs:           r.Addrs,
			Username:        r.Username,
			Password:        r.Password.Reveal(),
			Dialer:          dial,
			DialTimeout:     r.DialTimeout,
			ReadTimeout:     r.ReadTimeout,
			PoolSize:        pool,
			Protocol:        2,
			DisableIdentity: true,
			MaxRetries:      -1,
		}), nil
	}
	opts := &redis.Options{
		Addr:            r.Addrs[0],
		Username:        r.Username,
		Password:        r.Password.Reveal(),
		DB:              r.DB,
		Dialer:          dial,
		DialTimeout:     r.DialTimeout,
		ReadTimeout:     r.ReadTimeout,
		PoolSize:        pool,
		Protocol:        2,
		DisableIdentity: true,
		MaxRetries:      -1,
	}
	if isSocketPath(r.Addrs[0]) {
		opts.Network = "unix"
	}
	return redis.NewClient(opts), nil
}

// isSocketPath: phpredis takes a host starting with "/" as a Unix socket.
func isSocketPath(addr string) bool { return len(addr) > 0 && addr[0] == '/' }

// dialer is the go-redis Dialer of a connection with TLS anywhere (nil
// without: go-redis's own). A Sentinel connection's sentinels are dialed
// with their own options, every other address (the master sentinels name)
// with the master's.
func (r RedisConfig) dialer() (func(context.Context, string, string) (net.Conn, error), error) {
	var master *tlsClient
	if r.TLS {
		c, err := newTLSClient(r.TLSOptions)
		if err != nil {
			return nil, err
		}
		master = c
	}
	sentinels := map[string]*tlsClient{}
	anyTLS := master != nil
	if s := r.Sentinel; s != nil {
		for i, addr := range s.Addrs {
			var c *tlsClient
			if i < len(s.TLS) && s.TLS[i] != nil {
				var err error
				if c, err = newTLSClient(*s.TLS[i]); err != nil {
					return nil, fmt.Errorf("sentinel %s: %w", addr, err)
				}
				anyTLS = true
			}
			sentinels[addr] = c
		}
	}
	if !anyTLS {
		return nil, nil
	}
	d := dialer{timeout: r.DialTimeout, tlsFor: func(addr string) *tlsClient {
		if c, isSentinel := sentinels[addr]; isSentinel {
			return c
		}
		return master
	}}
	return d.dial, nil
}

// isNil reports go-redis's "no value" reply.
func isNil(err error) bool { return errors.Is(err, redis.Nil) }
