package e2e

import (
	"fmt"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/testutil/testwait"
	"github.com/laraworker/laraworker/laravel/bridgeproto"
	"github.com/laraworker/laraworker/laravel/payload"
)

// Issue 22's combined test: one class that uses everything a moved class
// may use at once (test app: App\Jobs\Hooks\EpisodeImportJob: failed(),
// WithoutOverlapping keyed by its podcast's id, RateLimited
// 'episode-import' at 8 a minute in all, members of two Bus::batch with
// then/catch/finally), moved to Go with the bridge while a PHP
// `queue:work` runs throughout on the same tables: PHP runs the jobs that
// were queued on its queue (as jobs queued before the move are) and every
// hook Go hands back.

const (
	episodeImportClass = `App\Jobs\Hooks\EpisodeImportJob`
	episodeLimit       = 8 // HooksServiceProvider's 'episode-import' limiter, per minute
)

// episodeJob is one dispatched EpisodeImportJob as its jobs row shows it.
type episodeJob struct {
	uuid, queue, label string
	podcast            int64
	fails              bool
}

// TestMoveEverythingToGo: app:hooks episode-import queues a batch of 4
// that all succeed and a batch of 6 (allowFailures) of which 2 fail, both
// routed to "go" by the bridge, and 4 jobs (1 failing) on PHP's queue. A
// Go worker (4 at once) and PHP's queue:work run them together. Every job
// ran exactly once, by the side its queue names; each failing one failed
// exactly once (failed_jobs), its failed() ran once in PHP and JobFailed
// fired once; the first batch ran then and finally once and catch never,
// the second catch and finally once and then never, with Laravel's
// counters; no two runs of one podcast overlapped; no minute held more
// than 8 runs across PHP and Go, and the excess waited for the next
// window; nothing is left queued or locked. (PHP's RateLimited checks and
// hits in two steps: a Go hit landing in between, a few milliseconds per
// PHP run, would pass the limit by one, as a second PHP worker's would.)
func TestMoveEverythingToGo(t *testing.T) {
	onEachDB(t, func(t *testing.T, s *suite) { testMoveEverything(t, s, 0) })
}

// TestMoveEverythingToGoWithKills: the same, with the Go worker SIGKILLed
// several times while it holds a job, and started again: no hook is lost
// or run twice and the same assertions hold, except that a job whose Go
// worker was killed while it held it may run again (at least once, as in
// PHP): only those run more than once, at most once more per kill that
// interrupted them.
func TestMoveEverythingToGoWithKills(t *testing.T) {
	onEachDB(t, func(t *testing.T, s *suite) { testMoveEverything(t, s, 6) })
}

func testMoveEverything(t *testing.T, s *suite, kills int) {
	needConcurrentPHP(t, s)
	s.installBridgeConfig(t, "        App\\Jobs\\Hooks\\EpisodeImportJob::class,\n")
	s.exec(t, "delete from cache_locks")
	// A job whose Go worker was killed comes back after retry_after: keep
	// it short.
	env := []string{"QUEUE_RETRY_AFTER=3"}

	out := s.hooks(t, "episode-import", env...)
	batchIDs := strings.Fields(strings.SplitN(dispatchedBatch(t, out), " and ", 2)[0])
	if len(batchIDs) != 2 {
		t.Fatalf("batch ids in %q", out)
	}
	jobs, limiterKey := s.episodeJobs(t)
	queues := map[string]int{}
	for _, j := range jobs {
		queues[j.queue]++
	}
	if len(jobs) != 14 || queues["go"] != 10 || queues["default"] != 4 {
		t.Fatalf("dispatched %d jobs on %v; want 10 on go (the batches) and 4 on default", len(jobs), queues)
	}

	windows := s.watchLimiter(t, limiterKey)
	phpCmd := s.phpCmd("queue:work", "--queue=default", "--sleep=1")
	phpCmd.Env = append(phpCmd.Env, env...)
	php := s.start(t, phpCmd)
	goCmd := func() *exec.Cmd {
		cmd := s.lwCmd("work", "--queue", "go", "--sleep", "0.2", "--concurrency", "4",
			s.route(episodeImportClass, "-hold", "300ms", "-fail", "boom in Go", "-when", "fails=true"))
		cmd.Env = append(cmd.Env, env...)
		return cmd
	}
	// interrupted counts, per job, the reservations a kill left behind.
	// The kills alternate between two moments: when the worker has just
	// taken a job (in its middleware: the overlap lock, the limiter's hit)
	// and when a handler has just recorded its run (before or while the
	// worker writes the outcome: the delete, failed_jobs, the batch
	// counters and the hook jobs, in one transaction).
	interrupted := map[string]int{}
	killed := 0
	goRuns := func() int { return len(runsOf(s.runs(t), episodeImportClass, "go")) }
	var goWorker *background
	for goWorker == nil {
		// The reservations a killed worker left: not the new worker's.
		taken := map[int64]int64{}
		for _, j := range s.jobsOn(t, "go") {
			if j.ReservedAt.Valid {
				taken[j.ID] = j.Attempts
			}
		}
		ran := goRuns()
		w := s.start(t, goCmd())
		if killed == kills {
			goWorker = w
			break
		}
		onRun := killed%2 == 1
		moment := map[bool]string{false: "the Go worker to take a job", true: "a Go handler to record its run"}[onRun]
		now := false
		testwait.Until(t, 3*time.Minute, moment+" (or the go queue to empty)", func() bool {
			left := s.jobsOn(t, "go")
			if onRun {
				now = goRuns() > ran
			}
			for _, j := range left {
				if a, ok := taken[j.ID]; !onRun && j.ReservedAt.Valid && (!ok || a != j.Attempts) {
					now = true
				}
			}
			return now || len(left) == 0
		})
		if !now {
			goWorker = w
			break
		}
		killWorker(w.cmd)
		<-w.done
		w.done <- nil
		killed++
		for _, j := range s.jobsOn(t, "go") {
			if a, ok := taken[j.ID]; j.ReservedAt.Valid && (!ok || a != j.Attempts) {
				interrupted[j.UUID]++
			}
		}
	}
	t.Logf("%d kills of the Go worker, %d reservations interrupted", killed, sum(interrupted))
	if killed < kills {
		t.Errorf("only %d kills of %d: the run ended first", killed, kills)
	}

	// Once the jobs table is empty, every job and every hook job PHP ran
	// is done: a hook job stays in the table (reserved) while it runs.
	testwait.Until(t, 5*time.Minute, "every job and hook job to be done", func() bool {
		return len(s.jobs(t)) == 0
	})
	stop(t, php)
	stop(t, goWorker)
	hits := windows()

	runs := s.runs(t)
	failures := failedByUUID(s.failed(t))
	checkEpisodeRuns(t, jobs, runsOf(runs, episodeImportClass, ""), failures, interrupted)
	if kills > 0 {
		again := 0
		for _, rs := range runsByUUID(runsOf(runs, episodeImportClass, "")) {
			again += len(rs) - 1
		}
		t.Logf("%d runs again of jobs whose handler ran when their worker was killed", again)
	}
	checkEpisodeHooks(t, jobs, runs, failures)
	checkEpisodeBatches(t, s, batchIDs, runs)

	timed := episodeRuns(t, runsOf(runs, episodeImportClass, ""), jobs)
	for podcast := int64(1); podcast <= 3; podcast++ {
		var mine []syncRun
		for _, r := range timed {
			if r.podcast == podcast {
				mine = append(mine, r)
			}
		}
		checkNoOverlap(t, podcast, mine)
	}
	checkLimiterWindows(t, timed, hits, episodeLimit)

	// A killed worker cannot release its overlap lock: the lock stays
	// until it expires (expireAfter 10), as after a PHP worker's crash.
	var live int
	d := s.q.Dialect()
	if err := s.q.DB().QueryRowContext(s.ctx(t), d.Rebind("select count(*) from cache_locks where expiration > ?"), s.now()).Scan(&live); err != nil {
		t.Fatal(err)
	}
	if locks := s.keysIn(t, "cache_locks"); live != 0 || (kills == 0 && len(locks) != 0) {
		t.Errorf("locks left: %v (%d unexpired)", locks, live)
	}
}

// episodeJobs reads the queued EpisodeImportJobs and checks the bridge
// recorded their middleware and failed() for Go.
func (s *suite) episodeJobs(t *testing.T) (jobs map[string]episodeJob, limiterKey string) {
	t.Helper()
	out := map[string]episodeJob{}
	for _, j := range s.jobs(t) {
		if j.Class != episodeImportClass {
			t.Fatalf("queued %s", j.Class)
		}
		p, err := payload.Parse([]byte(j.Payload))
		if err != nil {
			t.Fatal(err)
		}
		cmd, err := payload.DecodeCommand(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		label, err1 := cmd.Object.Prop("label")
		fails, err2 := cmd.Object.Prop("fails")
		if err1 != nil || err2 != nil {
			t.Fatalf("label, fails: %v, %v", err1, err2)
		}
		out[j.UUID] = episodeJob{uuid: j.UUID, queue: j.Queue, label: string(label.Deref().Str), fails: fails.Deref().Bool, podcast: jobPodcast(t, j)}

		m, err := bridgeproto.ReadMetadata(p)
		if err != nil || m == nil {
			t.Fatalf("%s: no bridge metadata (%v)", j.UUID, err)
		}
		var types []string
		for _, mw := range m.Middleware {
			types = append(types, mw.Type)
		}
		if got := strings.Join(types, ","); got != "WithoutOverlapping,RateLimited" || !m.Failed || len(m.NotCarried) != 0 || len(m.Middleware[1].Limits) != 1 {
			t.Fatalf("%s: the bridge recorded middleware %s, failed %v, not carried %v", j.UUID, got, m.Failed, m.NotCarried)
		}
		limiterKey = m.Middleware[1].Limits[0].CacheKey
	}
	return out, limiterKey
}

// watchLimiter samples the database cache rows of a RateLimited key (its
// counter and its ":timer", the Unix time its window ends) until the
// returned func is called, which gives the windows seen: the most hits
// counted in each, by the window's end. A window lasts a minute and its
// count only grows, so sampling every few milliseconds sees each window
// and, but for a hit in its last moments, its final count.
func (s *suite) watchLimiter(t *testing.T, key string) func() map[int64]int64 {
	t.Helper()
	d := s.q.Dialect()
	query := d.Rebind("select " + d.Quote("key") + ", " + d.Quote("value") + ", expiration from cache where " + d.Quote("key") + " in (?, ?)")
	windows := map[int64]int64{}
	done, stopped := make(chan struct{}), make(chan error, 1)
	go func() {
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				stopped <- nil
				return
			case <-tick.C:
			}
			rows, err := s.q.DB().Query(query, key, key+":timer")
			if err != nil {
				stopped <- err
				return
			}
			var end, hits int64
			now := time.Now().Unix()
			for rows.Next() {
				var k, v string
				var expiration int64
				if err := rows.Scan(&k, &v, &expiration); err != nil {
					stopped <- err
					return
				}
				n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimPrefix(v, "i:"), ";"), 10, 64)
				switch {
				case expiration <= now: // gone for Laravel, whatever the row says
				case k == key:
					hits = n
				default:
					end = n
				}
			}
			rows.Close()
			if end != 0 && hits > windows[end] {
				windows[end] = hits
			}
		}
	}()
	return func() map[int64]int64 {
		close(done)
		if err := testwait.Recv(t, stopped, time.Minute, "the limiter's watcher to stop"); err != nil {
			t.Fatalf("watching the limiter: %v", err)
		}
		return windows
	}
}

// checkLimiterWindows: no window of the limiter counted more than max
// hits, each run (its hit comes just before it starts) falls in the last
// window opened by its start (or ended moments before it), no window holds
// more than max runs, and
// there were at least two: the excess waited for the next.
func checkLimiterWindows(t *testing.T, runs []syncRun, hits map[int64]int64, max int) {
	t.Helper()
	var ends []int64
	for end, n := range hits {
		ends = append(ends, end)
		if n > int64(max) {
			t.Errorf("the limiter's window ending at %d counted %d hits; the limit is %d", end, n, max)
		}
	}
	sort.Slice(ends, func(i, j int) bool { return ends[i] < ends[j] })
	in := make([]int, len(ends))
	for _, r := range runs {
		k := sort.Search(len(ends), func(i int) bool { return float64(ends[i]-60) > r.start }) - 1
		// A hit in a window's last moment may start its run a little
		// after the window ended (Go starts the handler's process then).
		if k < 0 || r.start >= float64(ends[k])+5 {
			t.Errorf("%s (%s) started at %.3f outside every window of the limiter (ends %v)", r.uuid, r.worker, r.start, ends)
			continue
		}
		in[k]++
	}
	var desc []string
	for k, end := range ends {
		desc = append(desc, fmt.Sprintf("%d runs, %d hits", in[k], hits[end]))
		if in[k] > max {
			t.Errorf("%d runs in the window ending at %d; the limit is %d", in[k], end, max)
		}
	}
	t.Logf("limiter windows (PHP and Go together): %s", strings.Join(desc, "; "))
	if len(ends) < 2 {
		t.Errorf("%d windows: want the excess held back into a second one", len(ends))
	}
}

// checkEpisodeRuns: every job ran, by the side its queue names (Go for
// "go", PHP for "default"), once, or more only after kills that
// interrupted it; each failing job has one failed_jobs row, with its side's
// exception, and no other job has one.
func checkEpisodeRuns(t *testing.T, jobs map[string]episodeJob, runs []runRow, failures map[string]failedRow, interrupted map[string]int) {
	t.Helper()
	byJob := runsByUUID(runs)
	for uuid, j := range jobs {
		want := map[string]string{"go": "go", "default": "php"}[j.queue]
		mine := byJob[uuid]
		for _, r := range mine {
			if r.Worker != want {
				t.Errorf("%s (%s, on %s) ran in %s", j.label, uuid, j.queue, r.Worker)
			}
		}
		if n := len(mine); n == 0 || n > 1+interrupted[uuid] {
			t.Errorf("%s (%s) ran %d times; interrupted by %d kills", j.label, uuid, n, interrupted[uuid])
		}
		f, failed := failures[uuid]
		if failed != j.fails {
			t.Errorf("%s (%s): in failed_jobs %v, want %v", j.label, uuid, failed, j.fails)
			continue
		}
		wantException := map[string]string{"go": "boom in Go", "default": "RuntimeException: episode " + j.label + " failed in PHP"}[j.queue]
		if failed && (!strings.Contains(f.Exception, wantException) || f.Connection != "database" || f.Queue != j.queue) {
			t.Errorf("%s: failed_jobs row on %s/%s, exception %.200q; want database/%s, %q", j.label, f.Connection, f.Queue, f.Exception, j.queue, wantException)
		}
	}
	for uuid, f := range failures {
		if _, ok := jobs[uuid]; !ok {
			t.Errorf("failed_jobs holds a job that was not dispatched: %.200s", f.Payload)
		}
	}
	if len(failures) != 3 {
		t.Errorf("%d failed jobs, want 3 (2 in Go, 1 in PHP)", len(failures))
	}
}

// checkEpisodeHooks: failed() ran in PHP once per failed job, with the
// exception of the side that failed it, and for no other job; JobFailed
// fired once per failed job.
func checkEpisodeHooks(t *testing.T, jobs map[string]episodeJob, runs []runRow, failures map[string]failedRow) {
	t.Helper()
	byLabel := map[string]episodeJob{}
	for _, j := range jobs {
		byLabel[j.label] = j
	}
	calls := map[string]int{}
	for _, r := range runsOf(runs, "failed:"+episodeImportClass, "") {
		label := fmt.Sprint(r.Result["label"])
		calls[label]++
		j, ok := byLabel[label]
		wantException := map[string]string{"go": goJobException, "default": "RuntimeException"}[j.queue]
		if !ok || r.Worker != "php" || r.Result["exception"] != wantException {
			t.Errorf("failed() of %s ran in %s with %v; want in php with %s", label, r.Worker, r.Result, wantException)
		}
	}
	for uuid := range failures {
		if label := jobs[uuid].label; calls[label] != 1 {
			t.Errorf("failed() of %s ran %d times; want once", label, calls[label])
		}
	}
	if len(calls) != len(failures) {
		t.Errorf("failed() ran for %v; %d jobs failed", calls, len(failures))
	}
	events := map[string]int{}
	for _, r := range runsOf(runs, "event:JobFailed", "php") {
		events[fmt.Sprint(r.Result["uuid"])]++
	}
	for uuid := range failures {
		if events[uuid] != 1 {
			t.Errorf("JobFailed fired %d times for %s (%s); want once", events[uuid], jobs[uuid].label, uuid)
		}
	}
	if len(events) != len(failures) {
		t.Errorf("JobFailed fired for %d jobs, %d failed", len(events), len(failures))
	}
}

// checkEpisodeBatches: the batch whose members all succeeded ran then and
// finally once (pending 0) and catch never; the one with 2 failures
// (allowFailures) ran catch once (with Go's exception) and finally once
// (when every member had run: pending = failed = 2) and then never. The
// callbacks ran in PHP, and job_batches holds Laravel's counters.
func checkEpisodeBatches(t *testing.T, s *suite, ids []string, runs []runRow) {
	t.Helper()
	got := map[string]map[string][]runRow{}
	for _, what := range []string{"batch:then", "batch:catch", "batch:finally"} {
		for _, r := range runsOf(runs, what, "") {
			name := fmt.Sprint(r.Result["batch"])
			if got[name] == nil {
				got[name] = map[string][]runRow{}
			}
			got[name][what] = append(got[name][what], r)
			if r.Worker != "php" {
				t.Errorf("%s of %s ran in %s", what, name, r.Worker)
			}
		}
	}
	for name, want := range map[string]map[string]int{
		"all-ok":    {"batch:then": 1, "batch:catch": 0, "batch:finally": 1},
		"some-fail": {"batch:then": 0, "batch:catch": 1, "batch:finally": 1},
	} {
		for what, n := range want {
			if len(got[name][what]) != n {
				t.Errorf("batch %s: %s ran %d times, want %d", name, what, len(got[name][what]), n)
			}
		}
	}
	if r := got["all-ok"]["batch:then"]; len(r) == 1 && num(t, r[0].Result["pending"]) != 0 {
		t.Errorf("then ran with %v; want pending 0", r[0].Result)
	}
	if r := got["some-fail"]["batch:catch"]; len(r) == 1 && (r[0].Result["exception"] != goJobException || !strings.Contains(fmt.Sprint(r[0].Result["message"]), "boom in Go")) {
		t.Errorf("catch ran with %v; want Go's exception", r[0].Result)
	}
	for name, want := range map[string]int64{"all-ok": 0, "some-fail": 2} {
		if r := got[name]["batch:finally"]; len(r) == 1 && (num(t, r[0].Result["pending"]) != want || num(t, r[0].Result["failed"]) != want) {
			t.Errorf("batch %s: finally ran with %v; want pending = failed = %d", name, r[0].Result, want)
		}
	}
	for i, want := range []struct {
		name                   string
		total, pending, failed int64
		finished               bool
	}{{"all-ok", 4, 0, 0, true}, {"some-fail", 6, 2, 2, false}} {
		b, err := s.batch(t, ids[i])
		if err != nil || b.Name != want.name || b.Total != want.total ||
			b.Pending != want.pending || b.Failed != want.failed || b.FinishedAt.Valid != want.finished || b.CancelledAt.Valid {
			t.Errorf("job_batches %+v (%v); want %+v", b, err, want)
		}
	}
}

// episodeRuns are the runs with their podcast and times, by start.
func episodeRuns(t *testing.T, runs []runRow, jobs map[string]episodeJob) []syncRun {
	t.Helper()
	var out []syncRun
	for _, r := range runs {
		start, err1 := strconv.ParseFloat(fmt.Sprint(r.Result["start"]), 64)
		end, err2 := strconv.ParseFloat(fmt.Sprint(r.Result["end"]), 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("run %d has no times: %s", r.ID, r.Raw)
		}
		out = append(out, syncRun{uuid: r.UUID, worker: r.Worker, podcast: jobs[r.UUID].podcast, start: start, end: end})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].start < out[j].start })
	return out
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
