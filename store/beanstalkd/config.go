package beanstalkd

import (
	"fmt"
	"math"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/laraworker/laraworker/internal/beanstalkproto"
	"github.com/laraworker/laraworker/internal/phparray"
)

// Config is one Laravel queue connection with driver "beanstalkd", as
// BeanstalkdConnector reads config/queue.php.
type Config struct {
	// Connection is the queue connection's name (failed_jobs.connection).
	Connection string
	// Host and Port are where beanstalkd listens (port 11300 by default).
	Host string
	Port int
	// Queue is the default tube ("queue").
	Queue string
	// RetryAfter is retry_after: the time-to-run of every job pushed
	// (pheanstalk's 60 when the key is missing), and how long a
	// reservation holds before beanstalkd gives the job to another worker.
	RetryAfter time.Duration
	// BlockFor is block_for: how long a claim that finds every tube
	// empty waits for a job (0: it does not wait).
	BlockFor time.Duration
	// ConnectTimeout is "timeout", pheanstalk's connect timeout (2 s by
	// default).
	ConnectTimeout time.Duration
	// AfterCommit is after_commit (dispatch side only).
	AfterCommit bool
}

// Addr is "host:port".
func (c Config) Addr() string { return net.JoinHostPort(c.Host, strconv.Itoa(c.Port)) }

// TTR is the time-to-run a push gives a job: retry_after in seconds
// (beanstalkd makes 0 one second).
func (c Config) TTR() int64 { return beanstalkproto.Seconds(c.RetryAfter) }

// defaultConnectTimeout is pheanstalk 4's Connection::DEFAULT_CONNECT_TIMEOUT.
const defaultConnectTimeout = 2 * time.Second

// FromLaravel reads config('queue.connections.<connection>') (decoded
// from JSON) as BeanstalkdConnector does, refusing what Laravel could not
// connect with, each error naming the key.
func FromLaravel(connection string, conf map[string]any) (Config, error) {
	c := Config{Connection: connection}
	fail := func(format string, args ...any) (Config, error) {
		return Config{}, fmt.Errorf("queue connection %q (driver beanstalkd): "+format, append([]any{connection}, args...)...)
	}
	if conf == nil {
		return fail("its configuration was not read")
	}
	if d := phparray.String(conf["driver"]); d != "beanstalkd" {
		return fail("its driver is %q", d)
	}
	c.Host = strings.TrimSpace(phparray.String(conf["host"]))
	if c.Host == "" {
		return fail("no host (config/queue.php's host, BEANSTALKD_QUEUE_HOST)")
	}
	port, err := wholeOr(conf["port"], beanstalkproto.DefaultPort)
	if err != nil || port < 1 || port > 65535 {
		return fail("port %q is not a TCP port", phparray.String(conf["port"]))
	}
	c.Port = int(port)
	c.Queue = phparray.String(conf["queue"])
	if err := beanstalkproto.CheckTube(c.Queue); err != nil {
		return fail("queue (the default tube): %v", err)
	}
	ttr, err := wholeOr(conf["retry_after"], beanstalkproto.DefaultTTR)
	if err != nil {
		return fail("retry_after: %v", err)
	}
	c.RetryAfter = time.Duration(ttr) * time.Second
	block, err := wholeOr(conf["block_for"], 0)
	if err != nil {
		return fail("block_for: %v", err)
	}
	c.BlockFor = time.Duration(block) * time.Second
	c.ConnectTimeout = defaultConnectTimeout
	if t, ok := conf["timeout"]; ok && t != nil {
		f, err := strconv.ParseFloat(strings.TrimSpace(phparray.String(t)), 64)
		if err != nil || f <= 0 || math.IsInf(f, 0) {
			return fail("timeout %q is not a number of seconds", phparray.String(t))
		}
		c.ConnectTimeout = time.Duration(f * float64(time.Second))
	}
	c.AfterCommit = phparray.Truthy(conf["after_commit"])
	return c, nil
}

// wholeOr reads a whole, non-negative number (a number or a numeric
// string, as an env() value is), def when the key is missing or null (the
// connector's `??`).
func wholeOr(v any, def int64) (int64, error) {
	if v == nil {
		return def, nil
	}
	s := strings.TrimSpace(phparray.String(v))
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	if f < 0 || f != math.Trunc(f) {
		return 0, fmt.Errorf("%q is not a whole number of seconds", s)
	}
	return int64(f), nil
}
