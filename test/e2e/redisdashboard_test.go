package e2e

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/redis/go-redis/v9"
)

// redisQueueCells are the overview's cells as Redis itself holds them:
// per queue LLEN and ZCARD/ZCOUNT of the delayed and reserved sets (a due
// delayed job is ready, an expired reservation apart), with the failed
// jobs of failed_jobs.
func (s *suite) redisQueueCells(t *testing.T, a *redisApp) map[string]queueCells {
	t.Helper()
	ctx := s.ctx(t)
	names, err := a.q.Queues(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]queueCells{}
	for _, name := range names {
		c, err := a.q.Counts(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		cells := queueCells{Ready: c.Ready + c.DelayedDue, Delayed: c.Delayed - c.DelayedDue, Reserved: c.Reserved - c.ReservedExpired, Expired: c.ReservedExpired}
		if cells != (queueCells{}) {
			out[name] = cells
		}
	}
	for _, f := range s.failed(t) {
		c := out[f.Queue]
		c.Failed++
		out[f.Queue] = c
	}
	return out
}

// TestDashboardOnRedisQueue: `laraworker dashboard` on the app's redis
// connection, jobs dispatched by `php artisan` and run by `php artisan
// queue:work redis` and the Go worker: the overview's ready, delayed,
// reserved and expired counts equal Redis's, failed jobs come from
// failed_jobs, the Go worker holding a job is in the workers table and
// named on Running now, the jobs list opens a job by its payload id, and
// a job by number says Redis jobs have none.
func TestDashboardOnRedisQueue(t *testing.T) { onMariaDB(t, testDashboardOnRedisQueue) }

func testDashboardOnRedisQueue(t *testing.T, s *suite) {
	a := s.redisQueue(t)
	ctx := s.ctx(t)
	key := s.appKey(t)
	// laraworker's tables in the app's database, from the redis connection.
	tables := s.lwCmd("tables", "--connection", "redis")
	tables.Env = append(tables.Env, a.env...)
	s.run(t, tables)
	// PHP fails a job (failed_jobs, connection redis).
	a.artisan(t, "app:dispatch", "throws")
	a.work(t, "--stop-when-empty")
	if f := s.failed(t); len(f) != 1 || f[0].Connection != "redis" {
		t.Fatalf("failed jobs %+v", f)
	}
	// Go drains a queue (its history, a stopped worker).
	a.artisan(t, "app:dispatch", "noop", "--count=5", "--queue=bulk")
	a.goWork(t, noopJob, nil, "--queue", "bulk", "--name", "bulk", "--stop-when-empty")
	// Ready, delayed, a job PHP popped and never finished (a crashed
	// worker: its reservation expired), and one the Go worker holds.
	a.artisan(t, "app:dispatch", "noop", "--count=3")
	a.artisan(t, "app:dispatch", "delayed", "--delay=3600")
	a.artisan(t, "app:dispatch", "noop", "--queue=crashed")
	_, reserved := a.phpPop(t, "crashed")
	if err := a.rc.ZAddXX(ctx, a.cfg.Keys("crashed").Reserved, redis.Z{Score: float64(time.Now().Unix() - 10), Member: reserved}).Err(); err != nil {
		t.Fatal(err)
	}
	a.artisan(t, "app:dispatch", "scalars", "--queue=slow")
	holder := s.start(t, a.goCmd(t, "", nil, "--queue", "slow", "--name", "holder", `--route=App\Jobs\ScalarsJob=exec:/bin/sleep 50`))
	eventually(t, 20*time.Second, func() string {
		if n, _ := a.rc.ZCard(ctx, a.cfg.Keys("slow").Reserved).Result(); n != 1 {
			return "the Go worker has not reserved the job"
		}
		return ""
	})

	base, _ := s.startDashboard(t, a.env, "--connection", "redis")
	b := newBrowser(t)
	var page, want map[string]queueCells
	eventually(t, 20*time.Second, func() string {
		b.visit(t, base, "/", "", key)
		page, want = b.pageQueues(t), s.redisQueueCells(t, a)
		if !sameQueues(page, want) {
			return "overview " + strconv.Quote(toString(page)) + " != Redis " + strconv.Quote(toString(want))
		}
		return ""
	})
	t.Logf("overview equals Redis: %s", toString(page))
	for queue, cells := range map[string]queueCells{"default": {Ready: 3, Failed: 1}, "high": {Delayed: 1}, "crashed": {Expired: 1}, "slow": {Reserved: 1}} {
		if page[queue] != cells {
			t.Errorf("queue %s: %+v, want %+v", queue, page[queue], cells)
		}
	}
	eventually(t, 15*time.Second, func() string {
		b.visit(t, base, "/", "", key)
		st := eval[string](t, b, `(Array.from(document.querySelectorAll('#workers tr[data-worker]'))
			.find(tr => tr.children[2].textContent.trim() === 'holder') || {querySelector: () => ({textContent: 'absent'})})
			.querySelector('.state').textContent.trim()`)
		if st != "running" {
			return "the holder worker's state is " + st
		}
		return ""
	})
	b.screenshot(t, "redis-overview")
	eventually(t, 10*time.Second, func() string {
		html := b.visit(t, base, "/running", "", key)
		holders := eval[[]string](t, b, `Array.from(document.querySelectorAll('#running td.holder')).map(td => td.textContent.trim()).sort()`)
		if len(holders) != 2 || !strings.HasPrefix(holders[0], "holder (") || holders[1] != "unknown" || !strings.Contains(html, "past retry_after") {
			return "Running now names " + strings.Join(holders, ", ")
		}
		return ""
	})
	b.screenshot(t, "redis-running")
	b.visit(t, base, "/jobs", "redis-jobs", key)
	if n := eval[int](t, b, `document.querySelectorAll('#joblist tbody tr[data-job]').length`); n != 6 {
		t.Errorf("the jobs list shows %d jobs, want 6 (3 ready, 1 delayed, 2 reserved)", n)
	}
	b.run(t, chromedp.Click(chromedp.CSS(`#joblist tbody tr[data-queue="default"] a`)), chromedp.WaitVisible(chromedp.CSS("#decoded")))
	if decoded := b.text(t, "#decoded"); !strings.Contains(decoded, "commandName") || !strings.Contains(decoded, `"attempts"`) {
		t.Errorf("the job page shows %.500s", decoded)
	}
	if html := b.visit(t, base, "/jobs/1", "", key); !strings.Contains(html, "jobs on a Redis queue have no number") {
		t.Error("a job page by number does not say Redis jobs have none")
	}
	b.visit(t, base, "/failed", "", key)
	killGroup(holder.cmd)
}
