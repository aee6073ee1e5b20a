package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/redisproto"
	"github.com/laraworker/laraworker/internal/testutil/testredis"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/laravel/phpserialize"
	"github.com/redis/go-redis/v9"
)

// redisApp is the Laravel app on its "redis" queue connection, pointed at
// a private redis-server (or a private three-master cluster), and package
// internal/redisproto on the same connection, configured from the app's own config.
type redisApp struct {
	s       *suite
	srv     *testredis.Server  // nil on a cluster
	cluster *testredis.Cluster // nil on one server
	rc      redis.UniversalClient
	q       *redisproto.Queue
	env     []string // QUEUE_CONNECTION=redis, the REDIS_* variables, the hooks queue
	cfg     redisproto.Config
}

// hooksOnTheDatabase: the bridge (installed in the test app) has Go push
// its hook jobs onto a database queue, as an app on redis configures it.
const hooksOnTheDatabase = "LARAWORKER_HOOKS_CONNECTION=database"

// redisQueue starts a redis-server for the test, reads the app's redis
// queue connection with PHP (config('queue.connections.redis') and
// config('database.redis') as the app resolves them) and opens it.
func (s *suite) redisQueue(t *testing.T, extraEnv ...string) *redisApp {
	t.Helper()
	srv := testredis.Start(t)
	a := &redisApp{s: s, srv: srv, rc: srv.Client(t)}
	a.env = append([]string{"QUEUE_CONNECTION=redis", "REDIS_HOST=127.0.0.1", fmt.Sprintf("REDIS_PORT=%d", srv.Port), hooksOnTheDatabase}, extraEnv...)
	a.open(t)
	if a.cfg.Redis.Cluster || a.cfg.Redis.Addrs[0] != srv.Addr {
		t.Fatalf("the app's redis connection read as %s", a.cfg.Redis)
	}
	return a
}

// redisClusterQueue starts a three-master Redis Cluster for the test and
// points the app's redis queue connection at it (database.redis.clusters
// with phpredis: the test app's "cluster" connection, its seeds from
// REDIS_CLUSTER_HOST and REDIS_CLUSTER_PORT_1..3), with the connection's
// queue hash-tagged, {default}, as Laravel's docs say.
func (s *suite) redisClusterQueue(t *testing.T, extraEnv ...string) *redisApp {
	t.Helper()
	cl := testredis.StartCluster(t)
	a := &redisApp{s: s, cluster: cl, rc: cl.Client(t)}
	seeds := []string{"REDIS_QUEUE_CONNECTION=cluster"}
	for i, addr := range cl.Addrs {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, "REDIS_CLUSTER_HOST="+host, fmt.Sprintf("REDIS_CLUSTER_PORT_%d=%s", i+1, port))
	}
	a.env = append(append([]string{"QUEUE_CONNECTION=redis", "REDIS_QUEUE={default}", hooksOnTheDatabase}, seeds...), extraEnv...)
	a.open(t)
	if !a.cfg.Redis.Cluster || len(a.cfg.Redis.Addrs) != 3 || a.cfg.Queue != "{default}" {
		t.Fatalf("the app's redis connection read as %s, queue %q", a.cfg.Redis, a.cfg.Queue)
	}
	return a
}

// tagged is a queue name as the app must spell it on its connection: in a
// hash tag on a cluster ({name}), as is on one server.
func (a *redisApp) tagged(name string) string {
	if a.cluster != nil {
		return "{" + name + "}"
	}
	return name
}

// open reads the app's redis queue connection through its PHP and opens
// package internal/redisproto on it.
func (a *redisApp) open(t *testing.T) {
	t.Helper()
	var conf struct {
		Version string
		Queue   map[string]any
		Redis   map[string]any
	}
	out := a.php(t, `echo json_encode(['version' => app()->version(), 'queue' => config('queue.connections.redis'), 'redis' => config('database.redis')]);`)
	if err := json.Unmarshal([]byte(out), &conf); err != nil {
		t.Fatalf("app config %q: %v", out, err)
	}
	cfg, err := redisproto.FromLaravel("redis", conf.Queue, conf.Redis, redisproto.LaravelOptions{Version: conf.Version})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Redis.Prefix != "laravel_database_" {
		t.Fatalf("the app's redis connection read as %s", cfg.Redis)
	}
	a.cfg = cfg
	if a.q, err = redisproto.Open(a.s.ctx(t), cfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.q.Close() })
}

// php runs PHP code inside the booted app (its container, config and
// queue manager) with the redis environment and returns what it printed.
func (a *redisApp) php(t *testing.T, code string) string {
	t.Helper()
	boot := `require 'bootstrap/autoload.php'; $app = require 'bootstrap/app.php'; ` +
		`$app->make(Illuminate\Contracts\Console\Kernel::class)->bootstrap(); `
	cmd := a.s.phpCmd()
	cmd.Args = []string{"php", "-r", boot + code}
	cmd.Env = a.s.env(a.env...)
	return a.s.run(t, cmd)
}

// artisan runs `php artisan args...` on the redis connection.
func (a *redisApp) artisan(t *testing.T, args ...string) string {
	t.Helper()
	cmd := a.s.phpCmd(args...)
	cmd.Env = a.s.env(a.env...)
	return a.s.run(t, cmd)
}

// work is `php artisan queue:work redis --sleep=0 args...` (its default
// --tries=1 fails any second attempt).
func (a *redisApp) work(t *testing.T, args ...string) string {
	t.Helper()
	return a.artisan(t, append([]string{"queue:work", "redis", "--sleep=0"}, args...)...)
}

// list is the ready list of queue.
func (a *redisApp) list(t *testing.T, queue string) []string {
	t.Helper()
	v, err := a.rc.LRange(a.s.ctx(t), a.cfg.Keys(queue).Ready, 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// phpPop pops queue with the app's own RedisQueue and returns the raw and
// reserved strings, leaving the job reserved.
func (a *redisApp) phpPop(t *testing.T, queue string) (raw, reserved string) {
	t.Helper()
	out := a.php(t, fmt.Sprintf(`$job = app('queue')->connection('redis')->pop(%q); echo json_encode($job ? [$job->getRawBody(), $job->getReservedJob()] : null);`, queue))
	var pair []string
	if err := json.Unmarshal([]byte(out), &pair); err != nil || len(pair) != 2 {
		t.Fatalf("PHP pop printed %q: %v", out, err)
	}
	return pair[0], pair[1]
}

func popOne(t *testing.T, a *redisApp, queue string) *redisproto.Job {
	t.Helper()
	res, err := a.q.Pop(a.s.ctx(t), queue, redisproto.PopOptions{})
	if err != nil || len(res.Jobs) != 1 {
		t.Fatalf("Go pop of %s: %+v %v", queue, res, err)
	}
	return res.Jobs[0]
}

// TestRedisPHPDispatchesGoPops: a job PHP's dispatch() put on the redis
// queue is popped by Go with the very reservation PHP's pop makes (the
// reserved member byte for byte, attempts 1) and deleted.
func TestRedisPHPDispatchesGoPops(t *testing.T) { onEachDB(t, testRedisPHPDispatchesGoPops) }

func testRedisPHPDispatchesGoPops(t *testing.T, s *suite) {
	a := s.redisQueue(t)
	ctx := s.ctx(t)
	a.artisan(t, "app:dispatch", "scalars")
	pushed := a.list(t, "default")
	if len(pushed) != 1 {
		t.Fatalf("PHP's dispatch left %d jobs in queues:default", len(pushed))
	}
	raw := pushed[0]
	// The same bytes on a second queue, for PHP's own pop.
	if _, err := a.q.Push(ctx, "copy", []byte(raw)); err != nil {
		t.Fatal(err)
	}
	job := popOne(t, a, "default")
	phpRaw, phpReserved := a.phpPop(t, "copy")
	if string(job.Payload) != raw || phpRaw != raw {
		t.Fatalf("raw payloads differ:\n dispatched %s\n go pop     %s\n php pop    %s", raw, job.Payload, phpRaw)
	}
	if job.Reserved != phpReserved {
		t.Fatalf("reserved members differ:\n go  %s\n php %s", job.Reserved, phpReserved)
	}
	p, err := payload.Parse(job.Payload)
	if err != nil {
		t.Fatal(err)
	}
	if job.Attempts != 1 || job.UUID != p.UUID || len(job.ID) != 32 || job.Queue != "default" {
		t.Fatalf("job %+v", job)
	}
	for _, q := range []string{"default", "copy"} {
		members, _ := a.rc.ZRange(ctx, a.cfg.Keys(q).Reserved, 0, -1).Result()
		if len(members) != 1 || members[0] != phpReserved {
			t.Fatalf("queues:%s:reserved holds %q", q, members)
		}
	}
	if lost, err := a.q.Delete(ctx, job); err != nil || len(lost) != 0 {
		t.Fatalf("delete: %v %v", lost, err)
	}
	if n, _ := a.rc.Exists(ctx, a.cfg.Keys("default").Reserved, a.cfg.Keys("default").Ready).Result(); n != 0 {
		t.Fatal("the deleted job is still in Redis")
	}
}

// TestRedisGoPushesPHPRuns: a payload built as dispatch() writes it
// (payload.BuildObjectPayload, then PreparePayload for Redis's id and
// attempts) is, but for uuid and id, the bytes PHP's dispatch pushes, and
// `queue:work redis` runs it with the values Go wrote.
func TestRedisGoPushesPHPRuns(t *testing.T) { onEachDB(t, testRedisGoPushesPHPRuns) }

func testRedisGoPushesPHPRuns(t *testing.T, s *suite) {
	a := s.redisQueue(t)
	ctx := s.ctx(t)
	// Laravel's own payload: without the key the bridge adds to every job
	// it records (which a Go push does not write).
	cmd := s.phpCmd("app:dispatch", "scalars")
	cmd.Env = s.env(append(a.env, "LARAWORKER_RECORD=routed")...)
	s.run(t, cmd)
	fromPHP := a.list(t, "default")[0]
	phpPayload, err := payload.Parse([]byte(fromPHP))
	if err != nil {
		t.Fatal(err)
	}
	var phpKeys struct{ ID string }
	_ = json.Unmarshal([]byte(fromPHP), &phpKeys)

	props, err := payload.FromJSON([]byte(scalarsDefaults))
	if err != nil {
		t.Fatal(err)
	}
	var entries []phpserialize.Entry
	for _, e := range props.Entries {
		entries = append(entries, phpserialize.Public(e.Key.String(), e.Value))
	}
	built, err := payload.BuildObjectPayload(payload.NewCommand(`App\Jobs\ScalarsJob`, entries, payload.Dispatch{}), payload.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	raw, id, err := redisproto.PreparePayload(built)
	if err != nil {
		t.Fatal(err)
	}
	goPayload, _ := payload.Parse(raw)
	if got := strings.NewReplacer(goPayload.UUID, phpPayload.UUID, id, phpKeys.ID).Replace(string(raw)); got != fromPHP {
		t.Errorf("Go's push differs from PHP's dispatch (modulo uuid and id):\n go  %s\n php %s", got, fromPHP)
	}
	if pushedID, err := a.q.Push(ctx, "", raw); err != nil || pushedID != id {
		t.Fatalf("push: %q %v", pushedID, err)
	}
	a.work(t, "--stop-when-empty")
	if n := len(s.failed(t)); n != 0 {
		t.Fatalf("%d jobs failed in PHP: %+v", n, s.failed(t))
	}
	runs := runsByUUID(s.runs(t))
	goRun, phpRun := runs[goPayload.UUID], runs[phpPayload.UUID]
	if len(goRun) != 1 || len(phpRun) != 1 || goRun[0].Attempt != 1 || goRun[0].Worker != "php" {
		t.Fatalf("runs: go's job %+v, php's job %+v", goRun, phpRun)
	}
	if goRun[0].Raw != phpRun[0].Raw {
		t.Errorf("PHP saw different values in Go's push:\n go  %s\n php %s", goRun[0].Raw, phpRun[0].Raw)
	}
	if got := s.redisLeft(t, a); got != "" {
		t.Errorf("left in Redis after the runs: %s", got)
	}
}

// TestRedisGoReleasesPHPRuns: a job Go releases with a delay is in the
// delayed set (its reserved copy, attempts counted) until due; PHP's
// worker does not run it before and runs it as attempt 2 after.
func TestRedisGoReleasesPHPRuns(t *testing.T) { onEachDB(t, testRedisGoReleasesPHPRuns) }

func testRedisGoReleasesPHPRuns(t *testing.T, s *suite) {
	a := s.redisQueue(t)
	ctx := s.ctx(t)
	a.artisan(t, "app:dispatch", "noop")
	job := popOne(t, a, "default")
	if err := a.q.Release(ctx, job, 3*time.Second); err != nil {
		t.Fatal(err)
	}
	delayed, err := a.rc.ZRangeWithScores(ctx, a.cfg.Keys("").Delayed, 0, -1).Result()
	if err != nil || len(delayed) != 1 || delayed[0].Member != job.Reserved {
		t.Fatalf("delayed set %+v %v", delayed, err)
	}
	due := int64(delayed[0].Score)
	if now := time.Now().Unix(); due < now+2 || due > now+3 {
		t.Fatalf("released until %d, now %d: want now+3", due, now)
	}
	a.work(t, "--once", "--tries=3")
	if time.Now().Unix() < due && len(s.runs(t)) != 0 {
		t.Fatal("PHP ran a job released for 3 s at once")
	}
	untilUnix(due)
	a.work(t, "--stop-when-empty", "--tries=3")
	runs := runsByUUID(s.runs(t))[job.UUID]
	if len(runs) != 1 || runs[0].Attempt != 2 || runs[0].Worker != "php" {
		t.Fatalf("runs %+v, want one by php, attempt 2", runs)
	}
	if got := s.redisLeft(t, a); got != "" {
		t.Errorf("left in Redis: %s", got)
	}
}

// TestRedisExpiredReservationPHPTakesOver: Go holds a job past
// retry_after; PHP's next pop moves it back and runs it; Go's late
// delete and release then write nothing.
func TestRedisExpiredReservationPHPTakesOver(t *testing.T) {
	onEachDB(t, testRedisExpiredReservationPHPTakesOver)
}

func testRedisExpiredReservationPHPTakesOver(t *testing.T, s *suite) {
	a := s.redisQueue(t, "REDIS_QUEUE_RETRY_AFTER=1")
	if a.cfg.RetryAfter != time.Second {
		t.Fatalf("retry_after read as %s", a.cfg.RetryAfter)
	}
	ctx := s.ctx(t)
	a.artisan(t, "app:dispatch", "noop")
	job := popOne(t, a, "default")
	untilUnix(job.ReservedUntil + 1)
	a.work(t, "--once", "--tries=3")
	runs := runsByUUID(s.runs(t))[job.UUID]
	if len(runs) != 1 || runs[0].Attempt != 2 {
		t.Fatalf("runs %+v, want PHP's run as attempt 2", runs)
	}
	if lost, err := a.q.Delete(ctx, job); err != nil || len(lost) != 1 {
		t.Fatalf("Go's late delete: lost %v, %v", lost, err)
	}
	if err := a.q.Release(ctx, job, 0); !errors.Is(err, redisproto.ErrReservationLost) {
		t.Fatalf("Go's late release: %v", err)
	}
	if got := s.redisLeft(t, a); got != "" {
		t.Fatalf("Go's late writes left: %s", got)
	}
}

// TestRedisUnreservedJobsRunInPHP: jobs Go pops and gives back run in PHP
// in their order, as first attempts.
func TestRedisUnreservedJobsRunInPHP(t *testing.T) { onEachDB(t, testRedisUnreservedJobsRunInPHP) }

func testRedisUnreservedJobsRunInPHP(t *testing.T, s *suite) {
	a := s.redisQueue(t)
	ctx := s.ctx(t)
	a.artisan(t, "app:dispatch", "noop", "--count=3")
	before := a.list(t, "default")
	res, err := a.q.Pop(ctx, "", redisproto.PopOptions{Max: 2})
	if err != nil || len(res.Jobs) != 2 {
		t.Fatalf("pop: %+v %v", res, err)
	}
	if lost, err := a.q.Unreserve(ctx, res.Jobs...); err != nil || len(lost) != 0 {
		t.Fatalf("unreserve: %v %v", lost, err)
	}
	if after := a.list(t, "default"); strings.Join(after, "\n") != strings.Join(before, "\n") {
		t.Fatalf("the list after unreserve is not the list before:\n%v\n%v", before, after)
	}
	a.work(t, "--stop-when-empty")
	runs := s.runs(t)
	if len(runs) != 3 {
		t.Fatalf("%d runs, want 3", len(runs))
	}
	for i, r := range runs {
		p, _ := payload.Parse([]byte(before[i]))
		if r.UUID != p.UUID || r.Attempt != 1 {
			t.Errorf("run %d: %s attempt %d, want %s attempt 1", i, r.UUID, r.Attempt, p.UUID)
		}
	}
}

// redisLeft lists the app's keys still in Redis (on every master of a
// cluster), sorted.
func (s *suite) redisLeft(t *testing.T, a *redisApp) string {
	t.Helper()
	var keys []string
	add := func(ctx context.Context, c *redis.Client) error {
		k, err := c.Keys(ctx, "*").Result()
		keys = append(keys, k...)
		return err
	}
	var err error
	if cc, ok := a.rc.(*redis.ClusterClient); ok {
		var mu sync.Mutex
		err = cc.ForEachMaster(s.ctx(t), func(ctx context.Context, c *redis.Client) error {
			mu.Lock()
			defer mu.Unlock()
			return add(ctx, c)
		})
	} else {
		err = add(s.ctx(t), a.rc.(*redis.Client))
	}
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(keys)
	return strings.Join(keys, " ")
}
