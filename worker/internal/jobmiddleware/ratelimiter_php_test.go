package jobmiddleware

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	osexec "os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/cache/rediscache"
	"github.com/laraworker/laraworker/internal/cache/redislimiter"
	"github.com/laraworker/laraworker/internal/cache/redislock"
	"github.com/laraworker/laraworker/internal/testutil/phptest"
	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/internal/testutil/testredis"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/store/database"
	"github.com/redis/go-redis/v9"
)

// The state the job middleware share with PHP is only shared if Go writes
// it exactly as Laravel does: these tests run one list of operations
// through Laravel 8.83's own RateLimiter, Cache::lock and DurationLimiter
// (the test app's `php artisan app:cache-ops`) under the prefix "php:",
// and the same list through laraworker under "go:", then compare the
// operations' answers and every row and key they left, byte for byte
// (times within a few seconds where Laravel reads the clock itself).

// cacheOp is one operation of app:cache-ops.
type cacheOp struct {
	Op      string `json:"op"`
	Key     string `json:"key,omitempty"`
	Value   int64  `json:"value"`
	TTL     int64  `json:"ttl,omitempty"`
	Decay   int64  `json:"decay,omitempty"`
	Max     int64  `json:"max,omitempty"`
	Name    string `json:"name,omitempty"`
	Seconds int64  `json:"seconds"`
	Owner   string `json:"owner,omitempty"`
	MS      int    `json:"ms,omitempty"`
}

// limiterOps exercise RateLimiter: hits, a used-up limit, availableIn,
// clear, a counter at its maximum whose timer is gone (reset), add on an
// existing key, put and forget.
var limiterOps = []cacheOp{
	{Op: "tooManyAttempts", Key: "k1", Max: 2},
	{Op: "hit", Key: "k1", Decay: 60},
	{Op: "hit", Key: "k1", Decay: 60},
	{Op: "tooManyAttempts", Key: "k1", Max: 2},
	{Op: "availableIn", Key: "k1"},
	{Op: "clear", Key: "k1"},
	{Op: "tooManyAttempts", Key: "k1", Max: 2},
	{Op: "add", Key: "k2", Value: 3, TTL: 60},
	{Op: "tooManyAttempts", Key: "k2", Max: 3},
	{Op: "add", Key: "k2", Value: 0, TTL: 90},
	{Op: "hit", Key: "k3", Decay: 30},
	{Op: "add", Key: "k3", Value: 5, TTL: 60},
	{Op: "put", Key: "k4", Value: 7, TTL: 60},
	{Op: "put", Key: "k4", Value: 8, TTL: 120},
	{Op: "hit", Key: "k5", Decay: 3600},
	{Op: "forget", Key: "k4"},
}

// lockOps exercise Cache::lock: taken, refused to another owner, released
// only by its owner, a lock without expiry, force release, and an expired
// lock taken over.
var lockOps = []cacheOp{
	{Op: "lock", Name: "l1", Seconds: 10, Owner: "ownerA"},
	{Op: "lock", Name: "l1", Seconds: 10, Owner: "ownerB"},
	{Op: "release", Name: "l1", Owner: "ownerB"},
	{Op: "lock", Name: "l2", Seconds: 0, Owner: "ownerA"},
	{Op: "lock", Name: "l4", Seconds: 0, Owner: "ownerA"},
	{Op: "release", Name: "l1", Owner: "ownerA"},
	{Op: "lock", Name: "l1", Seconds: 60, Owner: "ownerB"}, // outlives a slow PHP run: DatabaseLock's lottery sweeps expired locks
	{Op: "forceRelease", Name: "l2"},
	{Op: "lock", Name: "l3", Seconds: 1, Owner: "ownerA"},
	{Op: "sleep", MS: 2100},
	{Op: "lock", Name: "l3", Seconds: 10, Owner: "ownerB"},
}

// durationOps exercise DurationLimiter (keys get the side's prefix).
var durationOps = []cacheOp{
	{Op: "duration.tooManyAttempts", Key: "d1", Max: 2, Decay: 60},
	{Op: "duration.acquire", Key: "d1", Max: 2, Decay: 60},
	{Op: "duration.acquire", Key: "d1", Max: 2, Decay: 60},
	{Op: "duration.acquire", Key: "d1", Max: 2, Decay: 60},
	{Op: "duration.tooManyAttempts", Key: "d1", Max: 2, Decay: 60},
	{Op: "duration.acquire", Key: "d2", Max: 5, Decay: 10},
	{Op: "duration.acquire", Key: "d3", Max: 1, Decay: 10},
	{Op: "duration.clear", Key: "d3"},
}

// slack is how far apart the two sides' clocks may read: each run takes a
// second or two, PHP's boot included.
const slack = 6

func TestMiddlewareStateOnTheDatabaseStoreAsLaravel(t *testing.T) {
	phptest.NeedPHP(t)
	app := phptest.CopyAppWithoutBridge(t)
	testdb.ForEachEngine(t, func(t *testing.T, engine string) {
		cfg := testdb.WithLocks(t, testdb.Config(t, engine))
		q := testdb.Open(t, cfg)
		testdb.CreateCacheTable(t, q)
		testdb.CreateLockTable(t, q)
		now := time.Now().Truncate(time.Second)
		ops := append(append([]cacheOp{}, limiterOps...), lockOps...)

		phpOut := runPHPOps(t, app, phpDBEnv(t, cfg), map[string]any{
			"now": now.Unix(), "ops": ops,
			"store": map[string]any{"driver": "database", "table": cfg.CacheTable, "lock_table": cfg.CacheLockTable, "prefix": "php:"},
		})
		// The cache side on a clock frozen as Carbon is; the locks on the
		// real clock, as DatabaseLock reads time().
		frozen := openFrozen(t, cfg, func() time.Time { return now })
		st := jobqueue.StateStore{Cache: frozen.StateStores()["database"].Cache, Locks: q.StateStores()["database"].Locks}
		goOut := runGoOps(t, ops, "go:", st, nil, func() time.Time { return now })
		compareAnswers(t, ops, phpOut, goOut)

		compareRows(t, dumpTable(t, q, cfg.CacheTable, "value"), 0)
		compareRows(t, dumpTable(t, q, cfg.CacheLockTable, "owner"), slack)
	})
}

func TestMiddlewareStateOnRedisAsLaravel(t *testing.T) {
	phptest.NeedPHP(t)
	app := phptest.CopyAppWithoutBridge(t)
	srv := testredis.Start(t)
	rc := srv.Client(t)
	// As the app: the client prefix on every key; the cache store's
	// values on connection "cache", its locks and the limiters on
	// "default" (both on this server, database 0).
	const clientPrefix = "cmp_"
	now := time.Now().Truncate(time.Second)
	ops := append(append(append([]cacheOp{}, limiterOps...), lockOps...), durationOps...)
	dir := t.TempDir()
	phpOut := runPHPOps(t, app, []string{"DB_CONNECTION=sqlite", "DB_DATABASE=" + dir + "/unused.sqlite", "REDIS_CACHE_DB=0"}, map[string]any{
		"now": now.Unix(), "ops": sideKeys(ops, "php:"),
		"redis": map[string]any{"host": "127.0.0.1", "port": srv.Port, "prefix": clientPrefix},
		"store": map[string]any{"driver": "redis", "connection": "cache", "lock_connection": "default", "prefix": "php"},
	})
	// Laravel 8's RedisStore puts ":" after the cache prefix.
	st := jobqueue.StateStore{Driver: "redis", Prefix: "go:", Cache: rediscache.New(rc, clientPrefix), Locks: redislock.NewWithClient(rc, clientPrefix)}
	goOut := runGoOps(t, sideKeys(ops, "go:"), "go:", st, redislimiter.New(rc, clientPrefix, nil), func() time.Time { return now })
	compareAnswers(t, ops, phpOut, goOut)
	compareRows(t, dumpRedis(t, rc, clientPrefix), slack)
}

// sideKeys gives the DurationLimiter keys the side's prefix (they have no
// store prefix).
func sideKeys(ops []cacheOp, side string) []cacheOp {
	out := append([]cacheOp{}, ops...)
	for i := range out {
		if strings.HasPrefix(out[i].Op, "duration.") {
			out[i].Key = side + out[i].Key
		}
	}
	return out
}

// phpDBEnv points the app at the test's database.
func phpDBEnv(t *testing.T, cfg appconfig.Config) []string {
	env := []string{"DB_CONNECTION=" + cfg.Driver, "DB_DATABASE=" + cfg.Database}
	if cfg.Driver != appconfig.EngineSQLite {
		env = append(env, "DB_HOST="+cfg.Host, "DB_PORT="+strconv.Itoa(cfg.Port), "DB_USERNAME="+cfg.Username, "DB_PASSWORD="+cfg.Password.Reveal())
	}
	return env
}

// openFrozen opens a second queue on cfg's database whose clock is now.
func openFrozen(t *testing.T, cfg appconfig.Config, now func() time.Time) *database.Queue {
	q, err := database.Open(context.Background(), cfg, database.Options{Clock: now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	return q
}

// runPHPOps runs `php artisan app:cache-ops` with input on stdin.
func runPHPOps(t *testing.T, app string, env []string, input map[string]any) []any {
	t.Helper()
	in, err := json.Marshal(input)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := osexec.CommandContext(ctx, "php", "artisan", "app:cache-ops")
	cmd.Dir, cmd.Stdin = app, bytes.NewReader(in)
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "APP_KEY=base64:" + strings.Repeat("A", 43) + "=", "LOG_CHANNEL=stderr", "CACHE_DRIVER=array"}, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("app:cache-ops: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	var out []any
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("app:cache-ops printed %q: %v", stdout.String(), err)
	}
	return out
}

// runGoOps runs the operations through laraworker: the worker's
// RateLimiter, the stores' Add, Put, Forget and locks, the Redis
// DurationLimiter. Keys get the side's prefix, as the store's prefix.
func runGoOps(t *testing.T, ops []cacheOp, side string, st jobqueue.StateStore, lim jobqueue.DurationLimiter, now func() time.Time) []any {
	t.Helper()
	ctx := context.Background()
	r := RateLimiter{Cache: st.Cache, Now: now}
	out := make([]any, 0, len(ops))
	check := func(v any, err error) any {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	ttl := func(s int64) time.Duration { return time.Duration(s) * time.Second }
	for _, op := range ops {
		key, name := side+op.Key, side+op.Name
		var v any
		switch op.Op {
		case "add":
			v = check(st.Cache.Add(ctx, key, phpInt(op.Value), ttl(op.TTL)))
		case "put":
			v = check(true, st.Cache.Put(ctx, key, phpInt(op.Value), ttl(op.TTL)))
		case "forget":
			v = check(true, st.Cache.Forget(ctx, key))
		case "hit":
			v = check(r.Hit(ctx, key, op.Decay))
		case "tooManyAttempts":
			v = check(r.TooManyAttempts(ctx, key, op.Max))
		case "availableIn":
			v = check(r.AvailableIn(ctx, key))
		case "clear":
			v = check(nil, r.Clear(ctx, key))
		case "lock":
			v = check(st.Locks.Acquire(ctx, name, op.Owner, op.Seconds))
		case "release":
			v = check(nil, st.Locks.ReleaseOwned(ctx, name, op.Owner))
		case "forceRelease":
			v = check(nil, st.Locks.ForceRelease(ctx, name))
		case "sleep":
			time.Sleep(time.Duration(op.MS) * time.Millisecond)
		case "duration.acquire":
			w := check(lim.Acquire(ctx, op.Key, op.Max, op.Decay)).(jobqueue.DurationWindow)
			v = []any{w.Acquired, w.DecaysAt, w.Remaining}
		case "duration.tooManyAttempts":
			w := check(lim.TooManyAttempts(ctx, op.Key, op.Max, op.Decay)).(jobqueue.DurationWindow)
			v = []any{w.TooMany(), w.DecaysAt, w.Remaining}
		case "duration.clear":
			v = check(nil, lim.Clear(ctx, op.Key))
		default:
			t.Fatalf("unknown op %s", op.Op)
		}
		out = append(out, v)
	}
	return out
}

// compareAnswers compares each operation's answer; numbers that are
// times (a window's end, or what remains of a window not open) may be
// slack apart. release's answer is not compared: Go's ReleaseOwned does
// not say whether it held the lock (the rows are compared instead).
func compareAnswers(t *testing.T, ops []cacheOp, php, goOut []any) {
	t.Helper()
	if len(php) != len(goOut) {
		t.Fatalf("PHP answered %d operations, Go %d", len(php), len(goOut))
	}
	for i, op := range ops {
		if op.Op == "release" {
			continue
		}
		p, g := normalize(php[i]), normalize(goOut[i])
		if !sameAnswer(p, g) {
			t.Errorf("op %d %+v: PHP %v, Go %v", i, op, p, g)
		}
	}
}

// normalize turns an answer into JSON's types (numbers as float64).
func normalize(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

func sameAnswer(p, g any) bool {
	pl, ok1 := p.([]any)
	gl, ok2 := g.([]any)
	if !ok1 || !ok2 {
		return fmt.Sprint(p) == fmt.Sprint(g)
	}
	if len(pl) != len(gl) {
		return false
	}
	for i := range pl {
		pf, pok := pl[i].(float64)
		gf, gok := gl[i].(float64)
		if pok && gok && pf > 1e9 {
			if math.Abs(pf-gf) > slack {
				return false
			}
			continue
		}
		if fmt.Sprint(pl[i]) != fmt.Sprint(gl[i]) {
			return false
		}
	}
	return true
}

// stored is one row or key as a side left it.
type stored struct {
	value string
	// times are the values that are clock readings (expiration, TTL, a
	// hash's start and end).
	times []int64
}

// compareRows compares what each side stored under its prefix: the same
// names, the same values, times at most tolerance apart.
func compareRows(t *testing.T, rows map[string]stored, tolerance int64) {
	t.Helper()
	php, goSide := map[string]stored{}, map[string]stored{}
	for k, v := range rows {
		switch {
		case strings.HasPrefix(k, "php:"):
			php[strings.TrimPrefix(k, "php:")] = v
		case strings.HasPrefix(k, "go:"):
			goSide[strings.TrimPrefix(k, "go:")] = v
		}
	}
	if len(php) == 0 {
		t.Fatal("PHP stored nothing")
	}
	for name, p := range php {
		g, ok := goSide[name]
		if !ok {
			t.Errorf("%s: PHP stored %+v, Go nothing", name, p)
			continue
		}
		if p.value != g.value || len(p.times) != len(g.times) {
			t.Errorf("%s: PHP stored %+v, Go %+v", name, p, g)
			continue
		}
		for i := range p.times {
			if d := p.times[i] - g.times[i]; d < -tolerance || d > tolerance {
				t.Errorf("%s: PHP's time %d, Go's %d", name, p.times[i], g.times[i])
			}
		}
	}
	for name, g := range goSide {
		if _, ok := php[name]; !ok {
			t.Errorf("%s: Go stored %+v, PHP nothing", name, g)
		}
	}
}

// dumpTable reads a cache or cache_locks table: key, value (or owner),
// expiration.
func dumpTable(t *testing.T, q *database.Queue, table, column string) map[string]stored {
	t.Helper()
	d := q.Dialect()
	rows, err := q.DB().Query(fmt.Sprintf("select %s, %s, %s from %s", d.Quote("key"), d.Quote(column), d.Quote("expiration"), d.Quote(table)))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]stored{}
	for rows.Next() {
		var key, value string
		var exp int64
		if err := rows.Scan(&key, &value, &exp); err != nil {
			t.Fatal(err)
		}
		out[key] = stored{value: value, times: []int64{exp}}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// dumpRedis reads every key under prefix: a string's value, a hash's
// count with its start and end as times, and the TTL (-1: none).
func dumpRedis(t *testing.T, rc *redis.Client, prefix string) map[string]stored {
	t.Helper()
	ctx := context.Background()
	keys, err := rc.Keys(ctx, prefix+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]stored{}
	for _, k := range keys {
		ttl, err := rc.TTL(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		secs := int64(-1)
		if ttl > 0 {
			secs = int64(math.Round(ttl.Seconds()))
		}
		var s stored
		switch typ, _ := rc.Type(ctx, k).Result(); typ {
		case "string":
			v, _ := rc.Get(ctx, k).Result()
			s = stored{value: v, times: []int64{secs}}
		case "hash":
			h, _ := rc.HGetAll(ctx, k).Result()
			start, _ := strconv.ParseInt(h["start"], 10, 64)
			end, _ := strconv.ParseInt(h["end"], 10, 64)
			s = stored{value: fmt.Sprintf("hash count=%s end-start=%d", h["count"], end-start), times: []int64{start, end, secs}}
		default:
			t.Fatalf("%s: unexpected type %s", k, typ)
		}
		out[strings.TrimPrefix(k, prefix)] = s
	}
	return out
}
