package dashboard

import (
	"context"
	"regexp"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/fleet"
	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/store/database"
)

// TestPHPWorkerRows: rows of kind php, as the bridge's recorder writes
// them, are listed like Go ones; "running now" names the PHP worker whose
// row holds the job; a PHP worker silent past aliveFor while the job its
// row names is still reserved is busy, not lost (it cannot write during a
// job), where a Go worker or a PHP worker naming no held job is lost.
func TestPHPWorkerRows(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, q *database.Queue) {
		ctx := context.Background()
		if _, err := q.Push(ctx, jobqueue.PushItem{Queue: "default", Payload: fixture(t, "noop", "")}); err != nil {
			t.Fatal(err)
		}
		jobs, err := q.Claim(ctx, []string{"default"}, 1, jobqueue.ClaimOptions{})
		if err != nil || len(jobs) != 1 {
			t.Fatalf("claim: %v %v", jobs, err)
		}
		job := jobs[0]
		r := newRig(t, q, Options{})
		now := time.Now().Unix()
		silent := now - 120
		php := func(id string, lastSeen int64, running ...fleet.RunningJob) fleet.WorkerRow {
			return fleet.WorkerRow{ID: id, Kind: fleet.KindPHP, Name: "default", Host: "web-1", PID: 4242, Queues: []string{"default"},
				Concurrency: 1, StartedAt: now - 600, LastSeenAt: lastSeen, Done: 7, Running: running, Version: "Laravel 8.83.27"}
		}
		held := fleet.RunningJob{ID: job.ID, UUID: fleet.UUIDOf(job.Payload), Class: `App\Jobs\NoopJob`, Queue: "default", Attempt: 1, Since: silent}
		for _, w := range []fleet.WorkerRow{
			php("php:web-1:4242:1", silent, held),
			php("php:web-1:4343:1", silent, fleet.RunningJob{ID: job.ID + 1000, Class: `App\Jobs\NoopJob`, Queue: "default", Attempt: 1, Since: silent}),
			php("php:web-1:4444:1", now),
			{ID: "go:web-1:99:1", Kind: fleet.KindGo, Name: "default", Host: "web-1", PID: 99, Queues: []string{"go"}, Concurrency: 8,
				StartedAt: now - 600, LastSeenAt: silent},
		} {
			if err := r.fl.UpsertWorker(ctx, w); err != nil {
				t.Fatal(err)
			}
		}
		r.refresh(t)
		home := r.get(t, "/", 200)
		for id, want := range map[string]string{"php:web-1:4242:1": "busy", "php:web-1:4343:1": "lost", "php:web-1:4444:1": "running", "go:web-1:99:1": "lost"} {
			m := regexp.MustCompile(`<tr data-worker="` + regexp.QuoteMeta(id) + `">\s*<td><span class="state (\w+)"`).FindStringSubmatch(home)
			if m == nil || m[1] != want {
				t.Errorf("worker %s: state %v, want %s", id, m, want)
			}
		}
		running := r.get(t, "/running", 200)
		if m := regexp.MustCompile(`<td class="holder">([^<]*)</td>`).FindStringSubmatch(running); m == nil || m[1] != "default (web-1:4242)" {
			t.Errorf("running now names the holder %v", m)
		}
	})
}
