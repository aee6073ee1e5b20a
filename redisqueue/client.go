package redisqueue

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
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
}

// Open validates cfg and connects: a *redis.Client for one server, a
// *redis.ClusterClient for a cluster. It pings, so a wrong address or
// password fails here, with the password never in the error.
func Open(ctx context.Context, cfg Config) (*Queue, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	rdb, err := newClient(cfg.Redis)
	if err != nil {
		return nil, err
	}
	q := &Queue{rdb: rdb, own: true, cfg: cfg, now: time.Now}
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
	return &Queue{rdb: rdb, cfg: cfg, now: time.Now}, nil
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

// Close closes the client if Open created it.
func (q *Queue) Close() error {
	if q.own {
		return q.rdb.Close()
	}
	return nil
}

// unix is the current Unix second, as PHP's currentTime().
func (q *Queue) unix() int64 { return q.now().Unix() }

// wrap names the connection on errors. go-redis errors carry neither the
// password nor the URL.
func (q *Queue) wrap(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("redisqueue: %s (redis connection %q): %w", q.cfg.Connection, q.cfg.Redis.Name, err)
}

// NewClient is the go-redis client for a Redis connection of the app: a
// *redis.Client for one server, a *redis.ClusterClient for a cluster.
// RESP2 and no CLIENT SETINFO: the commands a PHP client sends, on any
// server version. A command whose connection breaks is not sent again:
// go-redis would re-run a script that may have run already (pushing a job
// twice), so the error goes to the caller, which knows what is safe to
// repeat.
func NewClient(r RedisConfig) (redis.UniversalClient, error) { return newClient(r) }

func newClient(r RedisConfig) (redis.UniversalClient, error) {
	tlsConf, err := r.tlsConfig()
	if err != nil {
		return nil, err
	}
	if r.Cluster {
		return redis.NewClusterClient(&redis.ClusterOptions{
			Addrs:           r.Addrs,
			Username:        r.Username,
			Password:        r.Password.Reveal(),
			TLSConfig:       tlsConf,
			DialTimeout:     r.DialTimeout,
			ReadTimeout:     r.ReadTimeout,
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
		TLSConfig:       tlsConf,
		DialTimeout:     r.DialTimeout,
		ReadTimeout:     r.ReadTimeout,
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

// tlsConfig is the TLS setup of a tls:// connection, nil otherwise.
func (r RedisConfig) tlsConfig() (*tls.Config, error) {
	if !r.TLS {
		return nil, nil
	}
	conf := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: r.TLSSkipVerify} // only when the app says verify_peer => false
	if len(r.Addrs) > 0 && !r.Cluster {
		if host, _, err := net.SplitHostPort(r.Addrs[0]); err == nil {
			conf.ServerName = host
		}
	}
	if r.TLSCAFile != "" {
		pem, err := os.ReadFile(r.TLSCAFile)
		if err != nil {
			return nil, fmt.Errorf("redisqueue: the redis connection %q: reading its cafile: %w", r.Name, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("redisqueue: the redis connection %q: its cafile %s holds no PEM certificate", r.Name, r.TLSCAFile)
		}
		conf.RootCAs = pool
	}
	return conf, nil
}

// isNil reports go-redis's "no value" reply.
func isNil(err error) bool { return errors.Is(err, redis.Nil) }
