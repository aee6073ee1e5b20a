package redisjobs

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/dashboard"
	"github.com/laraworker/laraworker/internal/dashboard/internal/testdash"
	"github.com/laraworker/laraworker/internal/dashboard/snapshot"
	"github.com/laraworker/laraworker/internal/fleet"
	"github.com/laraworker/laraworker/internal/redisproto"
	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/rs/zerolog"
)

// TestDashboardOnARedisQueue serves the dashboard's pages from a Redis
// queue (failed_jobs and the fleet in SQLite, as an app's database): the
// overview's counts, the Go worker holding a job on Running now (by the
// job's uuid: Redis jobs have no number), the jobs list and one job by
// its payload id, and a job page by number saying why there is none.
func TestDashboardOnARedisQueue(t *testing.T) {
	r := newRig(t)
	r.c.unix.Store(time.Now().Unix()) // the pages' clock is the real one
	ctx := ctxT(t)
	db := testdb.Open(t, testdb.Config(t, appconfig.EngineSQLite))
	fl := testdash.Fleet(t, db)
	for range 3 {
		r.push(t, "default", job(t, "noop", "", ""))
	}
	r.later(t, "default", time.Hour, job(t, "scalars", "", ""))
	r.push(t, "slow", job(t, "scalars", "", ""))
	res, err := r.q.Pop(ctx, "slow", redisproto.PopOptions{})
	if err != nil || len(res.Jobs) != 1 {
		t.Fatalf("pop: %+v %v", res, err)
	}
	held := res.Jobs[0]
	now := time.Now().Unix()
	if err := fl.UpsertWorker(ctx, fleet.WorkerRow{ID: "go:web-1:7:1", Kind: fleet.KindGo, Name: "holder", Host: "web-1", PID: 7,
		Queues: []string{"slow"}, Concurrency: 1, StartedAt: now - 60, LastSeenAt: now,
		Running: []fleet.RunningJob{{ID: 1, UUID: held.UUID, Class: `App\Jobs\ScalarsJob`, Queue: "slow", Attempt: 1, Since: now - 5}}}); err != nil {
		t.Fatal(err)
	}
	cfg := db.Config()
	srv, err := dashboard.New(dashboard.Options{
		Tables: snapshot.Tables{DB: db.DB(), Dialect: db.Dialect(), Failed: cfg.FailedTable, Location: cfg.Location(), RetryAfter: r.q.RetryAfter()},
		Jobs:   New(r.q, Options{Queues: []string{"default"}}), Store: db, Fleet: fl, Logger: zerolog.Nop(),
	})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Snapshot().Run(ctx)
	if err := srv.Snapshot().Refreshed(ctx); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	get := func(path string, want int) string {
		t.Helper()
		resp, err := http.Get(hs.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != want {
			t.Fatalf("GET %s: %d, want %d\n%.2000s", path, resp.StatusCode, want, b)
		}
		return string(b)
	}
	home := get("/", 200)
	for queue, cells := range map[string]string{"default": "3 1 0 0", "slow": "0 0 1 0"} {
		m := regexp.MustCompile(`(?s)<tr data-queue="` + queue + `">.*?ready">([\d,]+)<.*?delayed">([\d,]+)<.*?reserved">([\d,]+)<.*?expired">([\d,]+)<`).FindStringSubmatch(home)
		if m == nil || strings.Join(m[1:], " ") != cells {
			t.Errorf("overview row of %s: %v, want %s", queue, m, cells)
		}
	}
	if !strings.Contains(home, `data-worker="go:web-1:7:1"`) {
		t.Error("the overview does not list the worker")
	}
	running := get("/running", 200)
	if !strings.Contains(running, `<td class="holder">holder (web-1:7)</td>`) || !strings.Contains(running, held.ID) {
		t.Errorf("running now: %.3000s", running)
	}
	jobs := get("/jobs?queue=default", 200)
	if n := strings.Count(jobs, `<tr data-job=`); n != 4 || !strings.Contains(jobs, `id="sampled"`) {
		t.Errorf("the jobs list of default shows %d jobs: %.3000s", n, jobs)
	}
	link := regexp.MustCompile(`href="(/jobs/[A-Za-z0-9]{32}\?queue=default)"`).FindStringSubmatch(jobs)
	if link == nil {
		t.Fatalf("no job link on the jobs page")
	}
	u, _ := url.Parse(link[1])
	if one := get(u.String(), 200); !strings.Contains(one, "commandName") {
		t.Errorf("the job's page does not show its payload: %.2000s", one)
	}
	if page := get("/jobs/12", 404); !strings.Contains(page, "jobs on a Redis queue have no number") {
		t.Errorf("a job by number: %.2000s", page)
	}
}
