package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/testutil/testdsn"
	"github.com/laraworker/laraworker/laravel/bridgeproto"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/redis/go-redis/v9"
)

// hookRoutes routes the classes of the bridge hook tests (test app:
// app/Jobs/Hooks) and the existing unique and model classes to "go".
const hookRoutes = "        App\\Jobs\\Hooks\\OverlapJob::class,\n" +
	"        App\\Jobs\\Hooks\\LimitedJob::class,\n" +
	"        App\\Jobs\\Hooks\\ThrottledJob::class,\n" +
	"        App\\Jobs\\Hooks\\RedisLimitedJob::class,\n" +
	"        App\\Jobs\\Hooks\\MixedMiddlewareJob::class,\n" +
	"        App\\Jobs\\Hooks\\UntilProcessingJob::class,\n" +
	"        App\\Jobs\\Hooks\\HookedJob::class,\n" +
	"        App\\Jobs\\UniqueJob::class,\n" +
	"        App\\Jobs\\ModelsJob::class,\n" +
	"        App\\Jobs\\DeletableModelJob::class,\n"

// hooks runs `php artisan app:hooks kind` with extra environment.
func (s *suite) hooks(t *testing.T, kind string, env ...string) string {
	t.Helper()
	cmd := s.phpCmd("app:hooks", kind)
	cmd.Env = append(cmd.Env, env...)
	return s.run(t, cmd)
}

// phpWorkEnv is phpWork with extra environment.
func (s *suite) phpWorkEnv(t *testing.T, env []string, args ...string) {
	t.Helper()
	cmd := s.phpCmd(append([]string{"queue:work", "--sleep=0"}, args...)...)
	cmd.Env = append(cmd.Env, env...)
	s.run(t, cmd)
}

// dispatchedMeta dispatches kind and returns the one job it queued on "go"
// and the bridge's metadata in its payload.
func (s *suite) dispatchedMeta(t *testing.T, dispatch func()) (jobRow, *bridgeproto.Metadata) {
	t.Helper()
	before := map[int64]bool{}
	for _, j := range s.jobs(t) {
		before[j.ID] = true
	}
	dispatch()
	var added []jobRow
	for _, j := range s.jobs(t) {
		if !before[j.ID] {
			added = append(added, j)
		}
	}
	if len(added) != 1 || added[0].Queue != "go" {
		t.Fatalf("dispatch queued %+v; want one job on go", added)
	}
	p, err := payload.Parse([]byte(added[0].Payload))
	if err != nil {
		t.Fatal(err)
	}
	m, err := bridgeproto.ReadMetadata(p)
	if err != nil || m == nil {
		t.Fatalf("%s: metadata %+v, %v\n%s", added[0].Class, m, err, added[0].Payload)
	}
	if m.V != 1 || m.Laravel == "" || m.Class != added[0].Class || len(m.Errors) != 0 {
		t.Errorf("%s: metadata head %+v", added[0].Class, m)
	}
	return added[0], m
}

// keysIn lists a cache table's keys (cache or cache_locks), sorted.
func (s *suite) keysIn(t *testing.T, table string) []string {
	t.Helper()
	rows, err := s.q.DB().QueryContext(s.ctx(t), "select "+s.q.Dialect().Quote("key")+" from "+table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// limiterKeys is what RateLimiter::hit writes for keys: the counter and
// its ":timer", sorted.
func limiterKeys(keys ...string) []string {
	var out []string
	for _, k := range keys {
		out = append(out, k, k+":timer")
	}
	slices.Sort(out)
	return out
}

// TestBridgeRecordsMiddlewareKeys: the bridge records, at dispatch, each
// standard job middleware of a routed class with the cache keys Laravel
// 8.83's own middleware then writes when PHP runs the job: the
// WithoutOverlapping locks in cache_locks (read by the job while it runs),
// RateLimited's counters and timers, ThrottlesExceptions' by key, by job
// (the payload's uuid) and by class; what is not data (a custom class, a
// closure, a when() callback) is named as not carried.
func TestBridgeRecordsMiddlewareKeys(t *testing.T) { onEachDB(t, testBridgeRecordsMiddlewareKeys) }

func testBridgeRecordsMiddlewareKeys(t *testing.T, s *suite) {
	s.installBridgeConfig(t, hookRoutes)
	s.exec(t, "delete from cache_locks")

	_, m := s.dispatchedMeta(t, func() { s.hooks(t, "overlap") })
	if len(m.Middleware) != 2 || m.Middleware[0].Type != "WithoutOverlapping" || m.Middleware[1].Source != "property" || !m.Carried() {
		t.Fatalf("OverlapJob middleware %+v", m.Middleware)
	}
	s.phpWork(t, "--once", "--queue=go")
	runs := s.runs(t)
	if len(runs) != 1 {
		t.Fatalf("runs %+v", runs)
	}
	held := fmt.Sprint(runs[0].Result["locks"])
	for _, mw := range m.Middleware {
		if !strings.Contains(held, mw.CacheKey) {
			t.Errorf("the job held the locks %s, not the recorded %s", held, mw.CacheKey)
		}
	}
	if left := s.keysIn(t, "cache_locks"); len(left) != 0 {
		t.Errorf("locks left after the run: %v", left)
	}

	_, m = s.dispatchedMeta(t, func() { s.hooks(t, "limited") })
	var want []string
	for _, mw := range m.Middleware {
		for _, l := range mw.Limits {
			want = append(want, l.CacheKey)
		}
	}
	if len(want) != 3 || m.Middleware[1].Unlimited != true || m.Middleware[2].Registered {
		t.Fatalf("LimitedJob middleware %+v", m.Middleware)
	}
	s.phpWork(t, "--once", "--queue=go")
	if got := s.keysIn(t, "cache"); !slices.Equal(got, limiterKeys(want...)) {
		t.Errorf("RateLimited wrote %v\nrecorded %v", got, limiterKeys(want...))
	}

	for _, mode := range []string{"by", "job", "class"} {
		s.exec(t, "delete from cache")
		job, m := s.dispatchedMeta(t, func() { s.hooks(t, "throttled-"+mode) })
		th := m.Middleware[0]
		if th.Type != "ThrottlesExceptions" || th.DecaySeconds != 300 || th.BackoffSeconds != 120 || th.MaxAttempts != 3 || th.ByJob != (mode == "job") {
			t.Errorf("%s: %+v", mode, th)
		}
		if mode == "job" && !strings.HasSuffix(th.Key, ":"+job.UUID) {
			t.Errorf("byJob key %s does not end with the job's uuid %s", th.Key, job.UUID)
		}
		s.phpWork(t, "--once", "--queue=go")
		if got := s.keysIn(t, "cache"); !slices.Equal(got, limiterKeys(th.CacheKey)) {
			t.Errorf("%s: ThrottlesExceptions wrote %v\nrecorded %v", mode, got, limiterKeys(th.CacheKey))
		}
		s.exec(t, "delete from jobs") // released after the exception
	}

	_, m = s.dispatchedMeta(t, func() { s.hooks(t, "throttled-when") })
	if !slices.Equal(m.NotCarried, []string{`Illuminate\Queue\Middleware\ThrottlesExceptions`}) || m.Middleware[0].Type != "other" {
		t.Errorf("a when() callback: %+v, not carried %v", m.Middleware, m.NotCarried)
	}
	_, m = s.dispatchedMeta(t, func() { s.hooks(t, "mixed") })
	if !slices.Equal(m.NotCarried, []string{`App\Jobs\Middleware\CountsRuns`, "Closure"}) || m.Middleware[2].Type != "WithoutOverlapping" {
		t.Errorf("custom and closure middleware: %+v, not carried %v", m.Middleware, m.NotCarried)
	}
}

// TestBridgeRecordsUniqueAndModels: a unique class is routed to Go (no
// longer refused) and its payload names the lock dispatch() took, exactly
// as it is in cache_locks; the models are named with their table, key
// column and connection, where their rows are; deleteWhenMissingModels and
// failed() are recorded.
func TestBridgeRecordsUniqueAndModels(t *testing.T) { onEachDB(t, testBridgeRecordsUniqueAndModels) }

func testBridgeRecordsUniqueAndModels(t *testing.T, s *suite) {
	s.installBridgeConfig(t, hookRoutes)
	s.exec(t, "delete from cache_locks")
	for _, c := range []struct {
		dispatch        func()
		untilProcessing bool
		uniqueFor       int64
	}{
		{func() { s.artisan(t, "app:dispatch", "unique") }, false, 600},
		{func() { s.hooks(t, "until-processing") }, true, 0},
	} {
		job, m := s.dispatchedMeta(t, c.dispatch)
		u := m.Unique
		if u == nil || u.UntilProcessing != c.untilProcessing || u.UniqueFor != c.uniqueFor || u.Store != "database" {
			t.Fatalf("%s: unique %+v", job.Class, u)
		}
		if locks := s.keysIn(t, "cache_locks"); !slices.Contains(locks, u.CacheKey) {
			t.Errorf("%s: dispatch took the locks %v, the payload names %s", job.Class, locks, u.CacheKey)
		}
	}

	_, m := s.dispatchedMeta(t, func() { s.artisan(t, "app:dispatch", "models") })
	if len(m.Models) != 2 || m.DeleteWhenMissingModels || m.Failed {
		t.Fatalf("ModelsJob: %+v", m)
	}
	for _, md := range m.Models {
		if md.Connection != s.driver || md.Key != "id" {
			t.Errorf("%s: connection %q key %q; want %q, id", md.Class, md.Connection, md.Key, s.driver)
		}
		var n int
		if err := s.q.DB().QueryRowContext(s.ctx(t), "select count(*) from "+md.Table+" where "+md.Key+" in ("+joinRaw(md.IDs)+")").Scan(&n); err != nil || n != len(md.IDs) {
			t.Errorf("%s: %d rows of %s %v in %s (%v)", md.Class, n, md.Key, md.IDs, md.Table, err)
		}
	}
	_, m = s.dispatchedMeta(t, func() { s.artisan(t, "app:dispatch", "deletable-model") })
	if !m.DeleteWhenMissingModels || len(m.Models) != 1 || m.Models[0].Table != "podcasts" {
		t.Errorf("DeletableModelJob: %+v", m)
	}
	_, m = s.dispatchedMeta(t, func() { s.hooks(t, "hooked") })
	if !m.Failed || len(m.Models) != 0 {
		t.Errorf("HookedJob (failed(), no model): %+v", m)
	}
}

func joinRaw(ids []json.RawMessage) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = string(id)
	}
	return strings.Join(parts, ",")
}

// TestBridgeRecordsRedisKeys: with the redis cache store (phpredis, a
// REDIS_PREFIX of the test's own), the recorded keys are the ones Laravel
// writes: RateLimited's on the cache connection behind the store's
// "laravel_cache:" prefix, RateLimitedWithRedis' and
// ThrottlesExceptionsWithRedis' hashes on the default connection with no
// cache prefix, the unique lock on the lock connection.
func TestBridgeRecordsRedisKeys(t *testing.T) { onEachDB(t, testBridgeRecordsRedisKeys) }

func testBridgeRecordsRedisKeys(t *testing.T, s *suite) {
	if s != suites[0] {
		t.Skip("the keys do not depend on the database: run on the first one only")
	}
	ctx := s.ctx(t)
	conns := map[int]*redis.Client{}
	for _, db := range []int{0, 1} {
		c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379", DB: db, Protocol: 2, DisableIdentity: true})
		defer c.Close()
		conns[db] = c
	}
	if err := conns[0].Ping(ctx).Err(); err != nil {
		if testdsn.Required() {
			t.Fatalf("Redis: %v", err)
		}
		t.Skipf("no Redis: %v", err)
	}
	prefix := fmt.Sprintf("laraworker_e2e_bridgehooks_%d_", time.Now().UnixNano())
	t.Cleanup(func() {
		for _, c := range conns {
			if keys, _ := c.Keys(context.Background(), prefix+"*").Result(); len(keys) > 0 {
				c.Del(context.Background(), keys...)
			}
		}
	})
	env := []string{"CACHE_DRIVER=redis", "REDIS_PREFIX=" + prefix}
	s.installBridgeConfig(t, hookRoutes)
	exists := func(db int, key string) bool {
		n, err := conns[db].Exists(ctx, prefix+key).Result()
		return err == nil && n == 1
	}

	_, m := s.dispatchedMeta(t, func() { s.hooks(t, "limited", env...) })
	store := m.Stores[m.Middleware[0].Store]
	if store.Driver != "redis" || store.Prefix != "laravel_cache:" || store.Connection != "cache" || store.LockConnection != "default" {
		t.Errorf("redis store %+v", store)
	}
	s.phpWorkEnv(t, env, "--once", "--queue=go")
	for _, l := range m.Middleware[0].Limits {
		if !strings.HasPrefix(l.CacheKey, "laravel_cache:") || !exists(1, l.CacheKey) || !exists(1, l.CacheKey+":timer") {
			t.Errorf("no %s (and :timer) in Redis db 1", prefix+l.CacheKey)
		}
	}

	_, m = s.dispatchedMeta(t, func() { s.hooks(t, "redis-limited", env...) })
	s.phpWorkEnv(t, env, "--once", "--queue=go")
	rl, te := m.Middleware[0], m.Middleware[1]
	if rl.Type != "RateLimitedWithRedis" || rl.RedisConnection != "default" || te.Type != "ThrottlesExceptionsWithRedis" || te.DecaySeconds != 120 {
		t.Fatalf("redis middleware %+v", m.Middleware)
	}
	for _, key := range []string{rl.Limits[0].Key, rl.Limits[1].Key, te.Key} {
		if !exists(0, key) {
			t.Errorf("no hash %s in Redis db 0", prefix+key)
		}
	}

	_, m = s.dispatchedMeta(t, func() { s.hooks(t, "until-processing", env...) })
	if m.Unique == nil || !exists(0, m.Unique.CacheKey) {
		t.Errorf("the unique lock %+v is not in Redis db 0", m.Unique)
	}
}
