package e2e

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/testutil/testwait"
	"github.com/laraworker/laraworker/laravel/payload"
)

// The job middleware of a class moved to Go with the bridge, while
// `php artisan queue:work` runs jobs of the same class: one overlap lock
// and one rate limit across PHP and Go (TestMovedMiddlewareSharedWithPHP),
// one exception budget (TestThrottledExceptionsSharedWithPHP).

const (
	podcastSyncClass = `App\Jobs\Hooks\PodcastSyncJob`
	flakyFeedClass   = `App\Jobs\Hooks\FlakyFeedJob`
	middlewareRoutes = "        App\\Jobs\\Hooks\\PodcastSyncJob::class,\n        App\\Jobs\\Hooks\\FlakyFeedJob::class,\n"
)

// syncRun is one run of a PodcastSyncJob.
type syncRun struct {
	uuid, worker string
	podcast      int64
	start, end   float64
}

// TestMovedMiddlewareSharedWithPHP: PodcastSyncJob, WithoutOverlapping
// keyed by its podcast's id and RateLimited 3 a minute per podcast, routed
// to Go by the bridge; twelve jobs, six per podcast, half on PHP's queue.
// A PHP queue:work and a Go worker (4 at once) run them together: no two
// runs of one podcast overlap (start and end times each side recorded),
// no limiter window holds more than 3 runs of a podcast, every job ran
// exactly once (the excess ones were released into the next window), by
// both sides, and nothing failed.
func TestMovedMiddlewareSharedWithPHP(t *testing.T) { onEachDB(t, testMovedMiddlewareSharedWithPHP) }

func testMovedMiddlewareSharedWithPHP(t *testing.T, s *suite) {
	s.installBridgeConfig(t, middlewareRoutes)
	s.exec(t, "delete from cache_locks")
	s.hooks(t, "podcast-sync")
	podcastOf := map[string]int64{}
	queues := map[string]int{}
	for _, j := range s.jobs(t) {
		podcastOf[j.UUID] = jobPodcast(t, j)
		queues[j.Queue]++
	}
	if len(podcastOf) != 12 || queues["go"] != 6 || queues["default"] != 6 {
		t.Fatalf("dispatched %d jobs on %v; want 6 on go and 6 on default", len(podcastOf), queues)
	}

	php := s.phpCmd("queue:work", "--queue=default", "--sleep=1")
	s.start(t, php)
	goWorker := s.start(t, s.lwCmd("work", "--queue", "go", "--sleep", "0.2", "--concurrency", "4",
		s.route(podcastSyncClass, "-hold", "500ms")))
	// Two windows of a minute: the first lets 3 runs of each podcast
	// through, the excess waits for the second.
	testwait.Until(t, 3*time.Minute, "every job to run", func() bool {
		return len(s.runs(t)) >= 12 && len(s.jobs(t)) == 0
	})
	killGroup(php)
	killGroup(goWorker.cmd)

	runs := syncRuns(t, s.runs(t), podcastOf)
	byWorker := map[string]int{}
	seen := map[string]int{}
	for _, r := range runs {
		byWorker[r.worker]++
		seen[r.uuid]++
	}
	for uuid := range podcastOf {
		if seen[uuid] != 1 {
			t.Errorf("job %s ran %d times; want once", uuid, seen[uuid])
		}
	}
	if byWorker["php"] != 6 || byWorker["go"] != 6 {
		t.Errorf("runs by worker %v; want 6 by php and 6 by go", byWorker)
	}
	if f := s.failed(t); len(f) != 0 {
		t.Errorf("failed jobs: %+v", f)
	}
	for podcast := int64(1); podcast <= 2; podcast++ {
		var mine []syncRun
		for _, r := range runs {
			if r.podcast == podcast {
				mine = append(mine, r)
			}
		}
		checkNoOverlap(t, podcast, mine)
		checkWindows(t, fmt.Sprintf("podcast %d", podcast), mine, 3)
	}
	if locks := s.keysIn(t, "cache_locks"); len(locks) != 0 {
		t.Errorf("locks left: %v", locks)
	}
}

// jobPodcast is the podcast id a PodcastSyncJob's command holds.
func jobPodcast(t *testing.T, j jobRow) int64 {
	t.Helper()
	p, err := payload.Parse([]byte(j.Payload))
	if err != nil {
		t.Fatal(err)
	}
	cmd, err := payload.DecodeCommand(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range cmd.Models() {
		if m.Path == "podcast" {
			id, err := strconv.ParseInt(fmt.Sprint(m.Model.ID), 10, 64)
			if err != nil {
				t.Fatalf("podcast id %v: %v", m.Model.ID, err)
			}
			return id
		}
	}
	t.Fatalf("no podcast in %s", j.Payload)
	return 0
}

// syncRuns reads the PodcastSyncJob runs with their times.
func syncRuns(t *testing.T, rows []runRow, podcastOf map[string]int64) []syncRun {
	t.Helper()
	var out []syncRun
	for _, r := range rows {
		if r.Class != podcastSyncClass {
			continue
		}
		start, err1 := strconv.ParseFloat(fmt.Sprint(r.Result["start"]), 64)
		end, err2 := strconv.ParseFloat(fmt.Sprint(r.Result["end"]), 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("run %d has no times: %s", r.ID, r.Raw)
		}
		out = append(out, syncRun{uuid: r.UUID, worker: r.Worker, podcast: podcastOf[r.UUID], start: start, end: end})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].start < out[j].start })
	return out
}

// checkNoOverlap: runs sorted by start; each must end before the next
// starts.
func checkNoOverlap(t *testing.T, podcast int64, runs []syncRun) {
	t.Helper()
	for i := 1; i < len(runs); i++ {
		if prev := runs[i-1]; runs[i].start < prev.end {
			t.Errorf("podcast %d: %s run by %s [%.3f, %.3f] overlaps %s by %s [%.3f, %.3f]", podcast,
				runs[i].uuid, runs[i].worker, runs[i].start, runs[i].end, prev.uuid, prev.worker, prev.start, prev.end)
		}
	}
}

// checkWindows: RateLimited's windows are fixed: the first hit opens one
// for 60 s (its timer, in whole seconds), the first hit after it closes
// opens the next. A run starts just after its hit, so a window is counted
// from a run's start for 58 s (the timer's second may have begun up to a
// second before the hit, and the next window's first run may start a
// moment after its hit): no such span may hold more than max runs, and
// all runs are accounted for.
func checkWindows(t *testing.T, what string, runs []syncRun, max int) {
	t.Helper()
	var windows []string
	for i := 0; i < len(runs); {
		open := runs[i].start
		n := 0
		for i < len(runs) && runs[i].start < open+58 {
			n++
			i++
		}
		windows = append(windows, strconv.Itoa(n))
		if n > max {
			t.Errorf("%s: %d runs within a minute from %.3f; the limit is %d", what, n, open, max)
		}
	}
	t.Logf("%s: runs per window %s", what, strings.Join(windows, ", "))
	if len(windows) < 2 {
		t.Errorf("%s: runs fell into windows of %s runs; want the excess held back into a second window", what, strings.Join(windows, ", "))
	}
}

// TestThrottledExceptionsSharedWithPHP: FlakyFeedJob always throws;
// ThrottlesExceptions(3, 1) by('flaky-feed') counts every exception, PHP's
// and Go's, in one key: PHP's run, Go's run and PHP's run use the budget
// (the exceptions swallowed, the jobs released), then neither side runs a
// job of the key: each is released until the window ends. Nothing failed,
// nothing was lost.
func TestThrottledExceptionsSharedWithPHP(t *testing.T) {
	onEachDB(t, testThrottledExceptionsSharedWithPHP)
}

func testThrottledExceptionsSharedWithPHP(t *testing.T, s *suite) {
	s.installBridgeConfig(t, middlewareRoutes)
	s.hooks(t, "flaky-feed")
	if n := len(s.jobs(t)); n != 6 {
		t.Fatalf("%d jobs dispatched; want 6", n)
	}
	goOnce := func() {
		s.work(t, "--queue", "go", "--once", s.route(flakyFeedClass, "-fail", "the feed is down"))
	}
	s.phpWork(t, "--once", "--queue=default")
	goOnce()
	s.phpWork(t, "--once", "--queue=default")
	runs := s.runs(t)
	if len(runs) != 3 || runs[0].Worker != "php" || runs[1].Worker != "go" || runs[2].Worker != "php" {
		t.Fatalf("runs %+v; want php, go, php", runs)
	}
	key := "laravel_cachelaravel_throttles_exceptions:flaky-feed"
	if v := s.cacheValue(t, key); v != "i:3;" {
		t.Errorf("the exceptions' count %q; want i:3; (PHP's two and Go's one)", v)
	}
	// The budget is used up: each side's next job is released, not run.
	goOnce()
	s.phpWork(t, "--once", "--queue=default")
	if n := len(s.runs(t)); n != 3 {
		t.Errorf("%d runs after the budget was used up; want still 3", n)
	}
	jobs := s.jobs(t)
	if len(jobs) != 6 || len(s.failed(t)) != 0 {
		t.Fatalf("jobs %d, failed %+v; want the 6 jobs back on their queues and no failure", len(jobs), s.failed(t))
	}
	held := 0
	for _, j := range jobs {
		if d := j.AvailableAt - s.now(); d > 30 && d <= 64 {
			held++
		}
	}
	if held != 2 {
		t.Errorf("%d jobs held back until the window ends; want the 2 claimed after the budget ran out", held)
	}
}

// cacheValue is the cache table's value of key ("" when missing).
func (s *suite) cacheValue(t *testing.T, key string) string {
	t.Helper()
	var v string
	d := s.q.Dialect()
	err := s.q.DB().QueryRowContext(s.ctx(t), d.Rebind("select "+d.Quote("value")+" from cache where "+d.Quote("key")+" = ?"), key).Scan(&v)
	if err != nil {
		return ""
	}
	return v
}
