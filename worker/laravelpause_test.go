package worker

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/internal/queuepause"
	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/internal/testutil/testwait"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/store/database"
)

// pauseAllFixture is the cache row `php artisan queue:pause --all` wrote
// on Laravel 13.26 (fixtures laravel-13.26/features/pause-all-cache.txt):
// key (with the app's cache prefix) and value.
func pauseAllFixture(t *testing.T) (key, value string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "testdata", "laravel-13.26", "features", "pause-all-cache.txt"))
	if err != nil {
		t.Fatal(err)
	}
	key, value, ok := strings.Cut(strings.TrimSpace(string(raw)), "\t")
	if !ok {
		t.Fatalf("pause-all-cache.txt: want key<TAB>value, got %q", raw)
	}
	return key, value
}

// claimedQueues records the queue lists the worker claims from.
type claimedQueues struct {
	*database.Queue
	mu    chan struct{}
	lists [][]string
	n     atomic.Int64
}

func newClaimedQueues(q *database.Queue) *claimedQueues {
	return &claimedQueues{Queue: q, mu: make(chan struct{}, 1)}
}

func (c *claimedQueues) Claim(ctx context.Context, queues []string, n int, opts jobqueue.ClaimOptions) ([]jobqueue.JobRow, error) {
	c.mu <- struct{}{}
	c.lists = append(c.lists, slices.Clone(queues))
	<-c.mu
	c.n.Add(1)
	return c.Queue.Claim(ctx, queues, n, opts)
}

func (c *claimedQueues) last() []string {
	c.mu <- struct{}{}
	defer func() { <-c.mu }()
	if len(c.lists) == 0 {
		return nil
	}
	return c.lists[len(c.lists)-1]
}

// pausedCacheQueue is a SQLite queue with the app's database cache store
// (prefix laravel_cache, as the Laravel 8 skeleton's).
func pausedCacheQueue(t *testing.T) *database.Queue {
	t.Helper()
	q := testdb.Open(t, testdb.WithCache(t, testdb.Config(t, appconfig.EngineSQLite)))
	testdb.CreateCacheTable(t, q)
	return q
}

// TestLaravelQueuePauseStopsClaims: the key `php artisan queue:pause
// database:default` stores (12.40+) stops the worker claiming from that
// queue, not from the others, within a read (about a second);
// `queue:continue` (the key forgotten) lets it claim again as fast; the
// worker's default queue ("" configured) is paused under its real name;
// false values pause nothing.
func TestLaravelQueuePauseStopsClaims(t *testing.T) {
	t.Parallel() // waits on real time: beside the other waiting tests
	q := pausedCacheQueue(t)
	ctx := context.Background()
	reg, ran := countingClassA()
	cfg := daemonConfig()
	cfg.Queues = []string{"", "other"}
	w, logs := newTestWorker(t, q, reg, cfg, nil)
	run := startWorker(w, time.Minute)
	defer run.wait(t)
	defer run.stop()

	// A false value (b:0;) pauses nothing: PHP casts it to bool.
	if err := q.Cache().Put(ctx, queuepause.QueueKey("database", "other"), []byte("b:0;"), time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := q.Cache().Put(ctx, queuepause.QueueKey("database", "default"), []byte("b:1;"), 24*time.Hour); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, 5*time.Second, "the worker to read the pause", func() bool {
		return slices.Equal(w.Stats().LaravelPausedQueues, []string{"default"})
	})
	mustContain(t, "log", logs.String(), "paused by Laravel", `"queues":["default"]`)
	held := push(t, q, "", classA)
	other := push(t, q, "other", classA)
	testwait.Until(t, 5*time.Second, "the other queue's job to run", func() bool { return ran.count(other) == 1 })
	loops := w.Stats().Loops
	testwait.Until(t, 5*time.Second, "more claims", func() bool { return w.Stats().Loops >= loops+5 })
	if ran.count(held) != 0 {
		t.Fatal("a job of the paused queue ran")
	}
	if rows := jobRows(t, q); len(rows) != 1 || rows[0].Queue != "default" || rows[0].Attempts != 0 || rows[0].ReservedAt.Valid {
		t.Fatalf("the paused queue's job should wait untouched: %+v", rows)
	}

	// queue:continue forgets the key.
	resumed := time.Now()
	if err := q.Cache().Forget(ctx, queuepause.QueueKey("database", "default")); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, 5*time.Second, "the paused job to run after queue:continue", func() bool { return ran.count(held) == 1 })
	// The key is read about once a second; 3 s leaves room for a loaded
	// machine under -race and still fails a key read less often.
	if took := time.Since(resumed); took > 3*time.Second {
		t.Errorf("resumed after %s; want within about a second", took)
	}
	mustContain(t, "log", logs.String(), "resumed by Laravel")
}

// TestLaravelPauseAllAndTTL: the row `queue:pause --all` wrote on Laravel
// 13.26 (the fixture, under this app's prefix) pauses every queue and the
// idle worker claims nothing at all; forgetting it resumes them. A pause
// with a TTL (pauseFor) ends when it expires, as PHP reads it.
func TestLaravelPauseAllAndTTL(t *testing.T) {
	t.Parallel() // waits on real time: beside the other waiting tests
	fixtureKey, value := pauseAllFixture(t)
	if !strings.HasSuffix(fixtureKey, queuepause.AllKey) || value != "b:1;" {
		t.Fatalf("the fixture's row %q = %q is not the key and value this worker reads", fixtureKey, value)
	}
	q := pausedCacheQueue(t)
	ctx := context.Background()
	reg, ran := countingClassA()
	cfg := daemonConfig()
	cfg.Queues = []string{"default", "other"}
	store := newClaimedQueues(q)
	w, logs := newTestWorker(t, store, reg, cfg, nil)
	if err := q.Cache().Put(ctx, queuepause.AllKey, []byte(value), 24*time.Hour); err != nil {
		t.Fatal(err)
	}
	a, b := push(t, q, "default", classA), push(t, q, "other", classA)
	run := startWorker(w, time.Minute)
	defer run.wait(t)
	defer run.stop()
	testwait.Until(t, 5*time.Second, "a few loops", func() bool { return w.Stats().Loops >= 5 })
	if n := store.n.Load(); n != 0 || ran.total() != 0 {
		t.Fatalf("with every queue paused the worker claimed %d times and ran %d jobs", n, ran.total())
	}
	mustContain(t, "log", logs.String(), `"all":true`)
	if err := q.Cache().Forget(ctx, queuepause.AllKey); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, 5*time.Second, "both jobs after queue:resume --all", func() bool { return ran.count(a) == 1 && ran.count(b) == 1 })

	// pauseFor(…, 2): the key expires and the queue is claimed again.
	if err := q.Cache().Put(ctx, queuepause.QueueKey("database", "other"), []byte("b:1;"), 2*time.Second); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, 5*time.Second, "the timed pause to be read", func() bool {
		return slices.Equal(w.Stats().LaravelPausedQueues, []string{"other"})
	})
	c := push(t, q, "other", classA)
	testwait.Until(t, 10*time.Second, "the timed pause to end", func() bool { return ran.count(c) == 1 })
}

// TestQueueForwardClaimsTheTarget: with Queue::forward('old', 'new') the
// worker given --queue old claims from new (as queue:work pops it), and
// Laravel's pause of old (the name given) still holds it.
func TestQueueForwardClaimsTheTarget(t *testing.T) {
	t.Parallel() // waits on real time: beside the other waiting tests
	q := pausedCacheQueue(t)
	ctx := context.Background()
	reg, ran := countingClassA()
	cfg := daemonConfig()
	cfg.Queues = []string{"old", "", "new"}
	cfg.QueueForwards = map[string]string{"old": "new", "default": "dflt"}
	store := newClaimedQueues(q)
	w, _ := newTestWorker(t, store, reg, cfg, nil)
	forwarded := push(t, q, "new", classA)
	push(t, q, "old", classA) // PHP never puts one here once the forward exists: not claimed
	run := startWorker(w, time.Minute)
	defer run.wait(t)
	defer run.stop()
	testwait.Until(t, 5*time.Second, "the forwarded queue's job", func() bool { return ran.count(forwarded) == 1 })
	if got := store.last(); !slices.Equal(got, []string{"new", "dflt"}) {
		t.Fatalf("claimed from %q; want [new dflt]", got)
	}
	if err := q.Cache().Put(ctx, queuepause.QueueKey("database", "old"), []byte("b:1;"), time.Hour); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, 5*time.Second, "the pause of old, the name given", func() bool {
		return slices.Equal(store.last(), []string{"dflt", "new"})
	})
}

// TestLaravelBeforeQueuePauseReadsNoPauseKey: on an app whose Laravel
// predates `queue:pause` (12.40) its PHP workers read no pause key, so Go
// reads none either: a key found there (not Laravel's) holds nothing and
// the worker's cache sees no read of it; from 12.40 (and when the version
// is unknown) the same key holds the queue.
func TestLaravelBeforeQueuePauseReadsNoPauseKey(t *testing.T) {
	for _, c := range []struct {
		version string
		holds   bool
	}{{"8.83", false}, {"12.39", false}, {"12.40", true}, {"", true}} {
		t.Run("laravel "+c.version, func(t *testing.T) {
			q := pausedCacheQueue(t)
			ctx := context.Background()
			reg, ran := countingClassA()
			cfg := daemonConfig()
			cfg.LaravelVersion = c.version
			reads := &countingCache{Cache: q.Cache()}
			cfg.Cache = reads
			w, _ := newTestWorker(t, q, reg, cfg, nil)
			if err := q.Cache().Put(ctx, queuepause.QueueKey("database", "default"), []byte("b:1;"), time.Hour); err != nil {
				t.Fatal(err)
			}
			job := push(t, q, "", classA)
			run := startWorker(w, time.Minute)
			defer run.wait(t)
			defer run.stop()
			if !c.holds {
				testwait.Until(t, 5*time.Second, "the job to run", func() bool { return ran.count(job) == 1 })
				if n := reads.of(queuepause.QueueKey("database", "default")); n != 0 {
					t.Fatalf("the pause key was read %d times", n)
				}
				return
			}
			loops := w.Stats().Loops
			testwait.Until(t, 5*time.Second, "more claims", func() bool { return w.Stats().Loops >= loops+5 })
			if ran.count(job) != 0 || reads.of(queuepause.QueueKey("database", "default")) == 0 {
				t.Fatalf("the paused queue's job ran (%d) or the key was not read", ran.count(job))
			}
		})
	}
}

// countingCache counts the reads of each key.
type countingCache struct {
	jobqueue.Cache
	mu    sync.Mutex
	reads map[string]int
}

func (c *countingCache) Get(ctx context.Context, key string) ([]byte, bool, error) {
	c.mu.Lock()
	if c.reads == nil {
		c.reads = map[string]int{}
	}
	c.reads[key]++
	c.mu.Unlock()
	return c.Cache.Get(ctx, key)
}

func (c *countingCache) of(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reads[key]
}

// countingClassA is a registry whose classA handler counts its runs.
func countingClassA() (*handlers.Registry, *counter) {
	ran := newCounter()
	reg := handlers.NewRegistry()
	reg.HandleFunc(classA, func(_ context.Context, job *handlers.Job) error { ran.add(job); return nil })
	return reg, ran
}

// daemonConfig is testConfig for a worker that keeps running when the
// queues are empty, as the daemon does.
func daemonConfig() Config {
	cfg := testConfig()
	cfg.StopWhenEmpty = false
	return cfg
}
