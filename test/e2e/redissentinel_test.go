package e2e

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/testutil/testdsn"
	"github.com/laraworker/laraworker/internal/testutil/testredis"
)

// sentinelService is the name the test sentinels monitor the master under.
const sentinelService = "lwmaster"

// redisSentinelQueue starts a master, its replica and a sentinel watching
// them, and points the app's redis queue connection at the sentinel as
// Laravel configures it with predis (the test app's "sentinel"
// connection: the sentinels as the connection's list, options.replication
// "sentinel", options.service). It returns the app and the servers; a.rc
// is Go's own client, which follows the sentinel.
func (s *suite) redisSentinelQueue(t *testing.T) (*redisApp, *testredis.Server, *testredis.Server, *testredis.Server) {
	t.Helper()
	requirePredis(t)
	master := testredis.Start(t)
	replica := testredis.StartReplica(t, master, nil)
	rc := replica.Client(t)
	waitFor(t, 20*time.Second, "the replica in sync with the master", func() bool {
		info, err := rc.Info(context.Background(), "replication").Result()
		return err == nil && strings.Contains(info, "master_link_status:up")
	})
	sentinel := testredis.StartSentinel(t, sentinelService, master, testredis.SentinelOptions{})
	a := &redisApp{s: s, srv: master}
	a.env = []string{"QUEUE_CONNECTION=redis", "REDIS_CLIENT=predis", "REDIS_QUEUE_CONNECTION=sentinel",
		fmt.Sprintf("REDIS_SENTINEL_PORT=%d", sentinel.Port), "REDIS_SENTINEL_SERVICE=" + sentinelService, hooksOnTheDatabase}
	a.open(t)
	if a.cfg.Redis.Sentinel == nil || a.cfg.Redis.Sentinel.Addrs[0] != sentinel.Addr {
		t.Fatalf("the app's redis connection read as %s", a.cfg.Redis)
	}
	a.rc = a.q.Client()
	return a, master, replica, sentinel
}

// requirePredis skips (or fails, when the test servers are required)
// without Debian's php-predis: Laravel reads a Sentinel connection with
// predis only.
func requirePredis(t *testing.T) {
	t.Helper()
	out, err := exec.Command("php", "-r", `echo stream_resolve_include_path('Predis/autoload.php') ? 'yes' : 'no';`).Output()
	if err == nil && string(out) == "yes" {
		return
	}
	if testdsn.Required() {
		t.Fatal("predis is not installed (Debian: php-predis; testdata/setup-php.sh installs it)")
	}
	t.Skip("predis is not installed (Debian: php-predis)")
}

// TestRedisSentinelPHPAndGo: the app's redis queue connection goes
// through Redis Sentinel with predis, as Laravel configures it. `php
// artisan` dispatches through the sentinel and `laraworker size` counts
// those jobs (it used to read 127.0.0.1:6379); `php artisan queue:work`
// and `laraworker work` drain one queue together, each job once; then,
// with the Go worker running, the master dies, the sentinel promotes the
// replica, and the jobs PHP dispatches to the new master are run by the
// same Go worker.
func TestRedisSentinelPHPAndGo(t *testing.T) { onMariaDB(t, testRedisSentinelPHPAndGo) }

func testRedisSentinelPHPAndGo(t *testing.T, s *suite) {
	a, master, replica, sentinel := s.redisSentinelQueue(t)
	a.artisan(t, "app:dispatch", "noop", "--count=7")
	if n, err := master.Client(t).LLen(s.ctx(t), a.cfg.Keys("default").Ready).Result(); err != nil || n != 7 {
		t.Fatalf("the master holds %d jobs (%v), want the 7 PHP dispatched through the sentinel", n, err)
	}
	if out := a.lw(t, "size", "--connection", "redis"); !strings.Contains(out, "default") || !strings.Contains(out, "7") {
		t.Fatalf("laraworker size through the sentinel:\n%s", out)
	}
	a.work(t, "--stop-when-empty")
	s.reset(t)
	redisPHPAndGoDrainOneQueue(t, a, 300)
	s.reset(t)

	goRun := s.start(t, a.goCmd(t, noopJob, nil, "--sleep", "100ms"))
	a.artisan(t, "app:dispatch", "noop", "--count=5")
	waitFor(t, time.Minute, "Go's runs before the failover", func() bool { return len(s.runs(t)) == 5 })
	mc := master.Client(t)
	if n, err := mc.Do(s.ctx(t), "WAIT", 1, 5000).Int(); err != nil || n != 1 {
		t.Fatalf("WAIT for the replica: %d %v", n, err)
	}
	master.Kill()
	testredis.WaitMaster(t, sentinel, sentinelService, replica.Addr, time.Minute)
	a.artisan(t, "app:dispatch", "noop", "--count=5")
	if n, err := replica.Client(t).LLen(s.ctx(t), a.cfg.Keys("default").Ready).Result(); err != nil || n+int64(len(s.runs(t))) < 10 {
		t.Fatalf("PHP's jobs after the failover are not on the promoted replica: %d (%v)", n, err)
	}
	waitFor(t, time.Minute, "Go's runs after the failover", func() bool { return len(s.runs(t)) == 10 })
	for uuid, rs := range runsByUUID(s.runs(t)) {
		if len(rs) != 1 || rs[0].Worker != "go" {
			t.Errorf("job %s ran %+v", uuid, rs)
		}
	}
	if !goRun.running() {
		t.Fatalf("the Go worker stopped:\n%s", tail(goRun.stderr.String()))
	}
	// The worker's log says where it went, in its own format.
	if log := goRun.killForStderr(); !strings.Contains(log, `"component":"go-redis"`) || !strings.Contains(log, "sentinel: new master") || !strings.Contains(log, replica.Addr) {
		t.Errorf("the Go worker's log does not tell the failover:\n%s", log)
	}
}

// redisTLSQueue starts a redis-server that takes TLS only and requires
// client certificates (of a CA made for the test), and points the app's
// redis queue connection at it with the test app's "tls" connection
// (phpredis, the certificates in context.stream).
func (s *suite) redisTLSQueue(t *testing.T) (*redisApp, *testredis.PKI) {
	t.Helper()
	pki := testredis.NewPKI(t)
	srv := testredis.StartTLS(t, pki)
	a := &redisApp{s: s, srv: srv, rc: srv.Client(t)}
	a.env = []string{"QUEUE_CONNECTION=redis", "REDIS_QUEUE_CONNECTION=tls", "REDIS_HOST=127.0.0.1", fmt.Sprintf("REDIS_PORT=%d", srv.Port),
		"REDIS_TLS_CA=" + pki.CA, "REDIS_TLS_CERT=" + pki.ClientCert, "REDIS_TLS_KEY=" + pki.ClientKey, hooksOnTheDatabase}
	a.open(t)
	if !a.cfg.Redis.TLS || a.cfg.Redis.TLSOptions.LocalCert != pki.ClientCert {
		t.Fatalf("the app's redis connection read as %s", a.cfg.Redis)
	}
	return a, pki
}

// TestRedisTLSPHPAndGo: the app's redis queue connection is TLS with a
// client certificate, as phpredis takes it: `php artisan queue:work` and
// `laraworker work` drain one queue together; a Go worker whose
// certificate file is missing, or whose app names a phpredis connection
// through Sentinel (which Laravel's phpredis connector cannot read), stops
// at start with exit status 2 and the cause, before touching a job.
func TestRedisTLSPHPAndGo(t *testing.T) { onMariaDB(t, testRedisTLSPHPAndGo) }

func testRedisTLSPHPAndGo(t *testing.T, s *suite) {
	a, _ := s.redisTLSQueue(t)
	redisPHPAndGoDrainOneQueue(t, a, 300)

	a.artisan(t, "app:dispatch", "noop")
	missing := filepath.Join(t.TempDir(), "missing.crt")
	cases := map[string]struct {
		env  []string
		want string
	}{
		"missing certificate": {[]string{"REDIS_TLS_CERT=" + missing}, "local_cert: open " + missing},
		"phpredis sentinel":   {[]string{"REDIS_QUEUE_CONNECTION=sentinel"}, "has no Sentinel support"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cmd := a.goCmd(t, noopJob, nil, "--stop-when-empty")
			cmd.Env = append(cmd.Env, tc.env...)
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(string(out), tc.want) {
				t.Fatalf("work: %v, want exit status 2 saying %q:\n%s", err, tc.want, out)
			}
		})
	}
	// 300 jobs and PHP's probe job ran before the refused starts.
	if l := a.list(t, "default"); len(l) != 1 || len(s.runs(t)) != 301 {
		t.Fatalf("after the refused starts: %d jobs queued, %d runs; want the job untouched", len(l), len(s.runs(t)))
	}
}

// TestRedisSentinelCacheOnADatabaseQueue: on a database queue, the app's
// redis cache store is on a Sentinel connection (predis): the unique lock
// PHP's dispatch takes through the sentinel is released by Go's run, and
// `php artisan queue:restart`'s stamp, written through the sentinel, stops
// the Go worker, which gives no warning about the cache store (TestRedis
// CacheOnADatabaseQueue's scenario). With the store on a TLS connection
// whose client certificate Go cannot read, `laraworker work` stops at
// start with exit status 2 and the cause, as it would not share
// queue:restart or the unique locks.
func TestRedisSentinelCacheOnADatabaseQueue(t *testing.T) {
	onMariaDB(t, testRedisSentinelCacheOnADatabaseQueue)
}

func testRedisSentinelCacheOnADatabaseQueue(t *testing.T, s *suite) {
	requirePredis(t)
	master := testredis.Start(t)
	sentinel := testredis.StartSentinel(t, sentinelService, master, testredis.SentinelOptions{})
	prefix := fmt.Sprintf("laraworker_e2e_sentinelcache_%d_", time.Now().UnixNano())
	env := []string{"CACHE_DRIVER=redis", "REDIS_PREFIX=" + prefix, "REDIS_CLIENT=predis",
		"REDIS_CACHE_CONNECTION=sentinel", "REDIS_CACHE_LOCK_CONNECTION=sentinel",
		fmt.Sprintf("REDIS_SENTINEL_PORT=%d", sentinel.Port), "REDIS_SENTINEL_SERVICE=" + sentinelService}
	mc := master.Client(t)
	redisCacheOnADatabaseQueue(t, s, env, prefix, mc, mc)

	pki := testredis.NewPKI(t)
	missing := filepath.Join(t.TempDir(), "missing.crt")
	cmd := s.lwCmd("work", "--queue", "go", "--stop-when-empty", s.route(`App\Jobs\UniqueJob`))
	cmd.Env = append(cmd.Env, "CACHE_DRIVER=redis", "REDIS_CACHE_CONNECTION=tls", "REDIS_CACHE_LOCK_CONNECTION=tls",
		"REDIS_TLS_CA="+pki.CA, "REDIS_TLS_CERT="+missing, "REDIS_TLS_KEY="+pki.ClientKey)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(string(out), "local_cert: open "+missing) {
		t.Fatalf("work with an unreadable certificate for the cache store: %v, want exit status 2 naming it:\n%s", err, out)
	}
}
