package e2e

import (
	"context"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/laraworker/laraworker/internal/fleet"
)

// The dashboard's operations pages and the CLI's pause, continue and
// inspect, on each database: jobs pushed and run by `php artisan`, Go
// workers run by `laraworker work`, pages driven in a headless Chromium.
// Screenshots go to LARAWORKER_SCREENSHOTS (docs/DASHBOARD.md's come from a
// MariaDB run: docs/dashboard-*.png).

// TestDashboardBatchRetry: a batch whose member PHP failed is listed with
// Laravel's progress; its page links the failed job; "Retry failed jobs"
// (after its confirmation page) pushes it back as queue:retry-batch does,
// and PHP runs it: the batch, cancelled by its first failure, counts the
// member as done and lists no failed job any more.
func TestDashboardBatchRetry(t *testing.T) { onEachDB(t, testDashboardBatchRetry) }

func testDashboardBatchRetry(t *testing.T, s *suite) {
	s.fleetTables(t)
	key := s.appKey(t)
	id := dispatchedBatch(t, s.artisan(t, "app:dispatch", "batch-fail"))
	s.phpWork(t, "--stop-when-empty")
	failed := s.failed(t)
	if len(failed) != 1 {
		t.Fatalf("%d failed jobs, want member 2", len(failed))
	}
	if b, err := s.batch(t, id); err != nil || b.Pending != 1 || b.Failed != 1 || !b.CancelledAt.Valid {
		t.Fatalf("batch after PHP: %+v %v", b, err)
	}
	base, _ := s.startDashboard(t, nil)
	b := newBrowser(t)
	row := `#batches tr[data-batch="` + id + `"]`
	b.visit(t, base, "/batches", "", key)
	if p := b.text(t, row+" .progress"); p != "50%" {
		t.Errorf("the batch's progress is %q, want 50%% (1 of 2 processed)", p)
	}
	b.screenshot(t, "dashboard-batches")
	b.run(t, chromedp.Click(chromedp.CSS(row+" a")), chromedp.WaitVisible(chromedp.CSS("#batch-failed-jobs")))
	if st := b.text(t, "#batch-state"); st != "cancelled" {
		t.Errorf("batch state %q, want cancelled (its first failure cancels a batch without allowFailures)", st)
	}
	b.screenshot(t, "dashboard-batch")
	b.run(t, chromedp.Click(chromedp.CSS(`#batch-failed-jobs tr[data-uuid="`+failed[0].UUID+`"] a`)), chromedp.WaitVisible(chromedp.CSS("#exception")))
	if exc := b.text(t, "#exception"); !strings.Contains(exc, "Batch member 2 failed") {
		t.Errorf("the failed job's page shows %q", exc)
	}
	b.visit(t, base, "/batches/"+id, "", key)
	b.run(t, chromedp.Click(chromedp.CSS("#retry-batch")), chromedp.WaitVisible(chromedp.CSS("#confirm")))
	if title := b.text(t, "#confirm-title"); title != "Retry 1 failed job(s) of batch "+id+"?" {
		t.Errorf("confirmation title %q", title)
	}
	if n := len(s.failed(t)); n != 1 {
		t.Fatalf("the confirmation page retried already (%d failed rows)", n)
	}
	b.screenshot(t, "dashboard-batch-confirm")
	b.run(t, chromedp.Click(chromedp.CSS("#confirm")), chromedp.WaitVisible(chromedp.CSS("#notice")))
	if n := b.text(t, "#notice"); !strings.HasPrefix(n, "1 failed job(s) of the batch pushed back") {
		t.Errorf("notice %q", n)
	}
	if n := len(s.failed(t)); n != 0 {
		t.Fatalf("%d failed jobs after the retry", n)
	}
	if jobs := s.jobs(t); len(jobs) != 1 || jobs[0].UUID != failed[0].UUID || jobs[0].Attempts != 0 {
		t.Fatalf("jobs after the retry: %+v", jobs)
	}
	s.phpWork(t, "--stop-when-empty")
	bt, err := s.batch(t, id)
	if err != nil || bt.Pending != 0 || bt.FailedJobIDs != "[]" || bt.Failed != 1 {
		t.Errorf("batch after PHP ran the retried member: %+v %v; want pending 0, no failed ids (Laravel never lowers failed_jobs)", bt, err)
	}
	runs := runsByUUID(s.runs(t))[failed[0].UUID]
	if len(runs) != 2 || runs[1].Result["skipped"] != "cancelled" {
		t.Errorf("runs of the retried member: %+v, want a second one seeing the batch cancelled", runs)
	}
	b.visit(t, base, "/batches/"+id, "", key)
	if p := b.text(t, "#batch-pending"); p != "0" {
		t.Errorf("the batch page says %s pending", p)
	}
	if !strings.Contains(b.text(t, "#batch-failed-jobs"), "No failed job.") {
		t.Errorf("the batch page still lists failed jobs: %s", b.text(t, "#batch-failed-jobs"))
	}
}

// TestDashboardBatchCancel: "Cancel batch", confirmed, marks the batch as
// Batch::cancel() does; the members PHP runs afterwards see it cancelled.
func TestDashboardBatchCancel(t *testing.T) { onEachDB(t, testDashboardBatchCancel) }

func testDashboardBatchCancel(t *testing.T, s *suite) {
	s.fleetTables(t)
	id := dispatchedBatch(t, s.artisan(t, "app:dispatch", "batch"))
	base, _ := s.startDashboard(t, nil)
	b := newBrowser(t)
	b.visit(t, base, "/batches/"+id, "", s.appKey(t))
	b.run(t, chromedp.Click(chromedp.CSS("#cancel-batch")), chromedp.WaitVisible(chromedp.CSS("#confirm")))
	if bt, _ := s.batch(t, id); bt.CancelledAt.Valid {
		t.Fatal("the confirmation page cancelled already")
	}
	before := time.Now().Unix()
	b.run(t, chromedp.Click(chromedp.CSS("#confirm")), chromedp.WaitVisible(chromedp.CSS("#notice")))
	bt, err := s.batch(t, id)
	if err != nil || !bt.CancelledAt.Valid || !bt.FinishedAt.Valid || bt.CancelledAt.Int64 < before-1 || bt.CancelledAt.Int64 != bt.FinishedAt.Int64 || bt.Pending != 2 {
		t.Fatalf("batch after cancel: %+v %v; want cancelled_at = finished_at = now, pending 2", bt, err)
	}
	if st := b.text(t, "#batch-state"); st != "cancelled" {
		t.Errorf("batch state %q", st)
	}
	s.phpWork(t, "--stop-when-empty")
	runs := s.runs(t)
	if len(runs) != 2 {
		t.Fatalf("runs %+v", runs)
	}
	for _, r := range runs {
		if r.Result["skipped"] != "cancelled" || r.Result["batchId"] != id {
			t.Errorf("PHP's run %+v does not see the batch cancelled", r)
		}
	}
}

// TestDashboardMetricsAndRecent: jobs run by a Go worker and by a PHP
// worker the bridge records show on the metrics page per class (the jobs
// of the history, with runtime and wait percentiles) and on the recent
// jobs page, each with its runtime and worker.
func TestDashboardMetricsAndRecent(t *testing.T) { onEachDB(t, testDashboardMetricsAndRecent) }

func testDashboardMetricsAndRecent(t *testing.T, s *suite) {
	own := s.fleetTables(t)
	s.installFleetConfig(t)
	s.artisan(t, "app:dispatch", "noop", "--count=5")
	s.artisan(t, "app:dispatch", "throws")
	s.work(t, "--stop-when-empty", "--name", "metrics-go", s.route(`App\Jobs\NoopJob`), s.route(`App\Jobs\FailingJob`, "-fail", "no podcast"))
	s.artisan(t, "app:dispatch", "scalars", "--count=3")
	s.phpWork(t, "--stop-when-empty", "--name=metrics-php")
	base, _ := s.startDashboard(t, nil)
	b := newBrowser(t)
	b.visit(t, base, "/stats", "", s.appKey(t))
	cells := func(class string) map[string]string {
		return eval[map[string]string](t, b, `(() => { const tr = Array.from(document.querySelectorAll('#stats tbody tr')).find(r => r.dataset.class === `+strconv.Quote(class)+`);
			if (!tr) return {}; const o = {}; for (const td of tr.querySelectorAll('td[class]')) o[td.className.replace('n ', '')] = td.textContent.trim(); return o; })()`)
	}
	for class, want := range map[string][2]string{`App\Jobs\NoopJob`: {"5", "0"}, `App\Jobs\FailingJob`: {"1", "1"}, `App\Jobs\ScalarsJob`: {"3", "0"}} {
		c := cells(class)
		if c["jobs"] != want[0] || c["failed"] != want[1] || !strings.HasPrefix(c["run-p50"], "≤ ") || !strings.HasPrefix(c["wait-p99"], "≤ ") {
			t.Errorf("metrics of %s: %v, want %s jobs, %s failed, with percentiles", class, c, want[0], want[1])
		}
	}
	b.screenshot(t, "dashboard-metrics")
	b.run(t, chromedp.Click(chromedp.CSS(`#stats tr[data-class="App\\Jobs\\ScalarsJob"] a`)), chromedp.WaitVisible(chromedp.CSS("#recent")))
	rows := eval[[][]string](t, b, `Array.from(document.querySelectorAll('#recent tbody tr[data-job]')).map(tr => [tr.children[1].textContent.trim(), tr.dataset.outcome, tr.children[7].textContent.trim()])`)
	if len(rows) != 3 {
		t.Errorf("recent ScalarsJobs: %v, want the 3 PHP ran", rows)
	}
	for _, r := range rows {
		if r[0] != `App\Jobs\ScalarsJob` || r[1] != "done" || !strings.HasPrefix(r[2], "metrics-php (") {
			t.Errorf("recent row %v", r)
		}
	}
	b.visit(t, base, "/recent", "dashboard-recent", s.appKey(t))
	all := eval[[]string](t, b, `Array.from(document.querySelectorAll('#recent tbody tr[data-job]')).map(tr => tr.dataset.outcome + ' ' + tr.children[7].textContent.trim().split(' ')[0])`)
	slices.Sort(all)
	// PHP also ran the bridge's hook job of Go's failure (RunFailureHooks:
	// FailingJob's failed() and JobFailed).
	want := []string{"done metrics-go", "done metrics-go", "done metrics-go", "done metrics-go", "done metrics-go", "done metrics-php", "done metrics-php", "done metrics-php", "done metrics-php", "failed metrics-go"}
	if !slices.Equal(all, want) {
		t.Errorf("recent jobs %v, want %v", all, want)
	}
	recent, err := own.Recent(s.ctx(t), 100, "")
	if err != nil || len(recent) != 10 {
		t.Errorf("the table holds %d recent jobs: %v", len(recent), err)
	}
	hooks := 0
	for _, r := range recent {
		if hookJobClasses[r.Class] {
			hooks++
		}
	}
	if hooks != 1 {
		t.Errorf("%d of the recent jobs are the bridge's hook jobs, want Go's failure's", hooks)
	}
}

// TestDashboardTags: jobs PHP pushed holding models carry Horizon's tags
// (App\Models\Podcast:42, one per user of the collection); searching a tag
// lists exactly the jobs and failed jobs holding that model.
func TestDashboardTags(t *testing.T) { onEachDB(t, testDashboardTags) }

func testDashboardTags(t *testing.T, s *suite) {
	s.fleetTables(t)
	s.artisan(t, "app:dispatch", "models", "--count=2")
	s.artisan(t, "app:dispatch", "noop")
	s.work(t, "--once", s.route(`App\Jobs\ModelsJob`, "-fail", "podcast feed unreachable"))
	if n := len(s.failed(t)); n != 1 {
		t.Fatalf("%d failed jobs, want one ModelsJob", n)
	}
	base, _ := s.startDashboard(t, nil)
	b := newBrowser(t)
	tagged := func() []string {
		return eval[[]string](t, b, `Array.from(document.querySelectorAll('#joblist tbody tr[data-job]')).map(tr => tr.children[1].textContent.trim())`)
	}
	eventually(t, 15*time.Second, func() string {
		b.visit(t, base, "/jobs", "", s.appKey(t))
		if n := eval[int](t, b, `document.querySelectorAll('#joblist td.tags a.tag').length`); n != 3 {
			return "the jobs list shows " + strconv.Itoa(n) + " tags, want the ModelsJob's 3"
		}
		return ""
	})
	b.run(t, chromedp.SendKeys(chromedp.CSS(`.filters input[name=tag]`), `App\Models\User:2`), chromedp.Submit(chromedp.CSS(`.filters input[name=tag]`)))
	b.waitForPage(t, "tag=")
	if got := tagged(); !slices.Equal(got, []string{`App\Jobs\ModelsJob`}) {
		t.Errorf("the tag search lists %v", got)
	}
	b.screenshot(t, "dashboard-tags")
	b.visit(t, base, "/failed", "", s.appKey(t))
	b.run(t, chromedp.Click(chromedp.CSS(`#failedlist td.tags a.tag`)))
	b.waitForPage(t, "tag=")
	loc := eval[string](t, b, `location.search`)
	if q, _ := url.ParseQuery(strings.TrimPrefix(loc, "?")); q.Get("tag") != `App\Models\Podcast:42` {
		t.Errorf("the tag's link is %s", loc)
	}
	if n := eval[int](t, b, `document.querySelectorAll('#failedlist tbody tr[data-uuid]').length`); n != 1 {
		t.Errorf("the failed jobs tagged with the podcast: %d, want 1", n)
	}
	b.visit(t, base, "/jobs?tag="+url.QueryEscape(`App\Models\User:9`), "", s.appKey(t))
	if got := tagged(); len(got) != 0 {
		t.Errorf("a tag no job holds lists %v", got)
	}
}

// waitForPage waits until the browser has loaded a page whose address
// holds part (after a click or a submit the old page is still there for a
// while, with the same elements).
func (b *browser) waitForPage(t *testing.T, part string) {
	t.Helper()
	eventually(t, 15*time.Second, func() string {
		ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
		defer cancel()
		// A page being replaced has no context to evaluate in: not loaded.
		loaded, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`location.href.includes(`+strconv.Quote(part)+`) && document.readyState === 'complete'`))
		if err != nil || !loaded {
			return "the page " + part + " is not loaded"
		}
		return ""
	})
}

// TestDashboardHidesStoppedWorkers: the overview lists the running
// workers and hides the stopped ones until asked.
func TestDashboardHidesStoppedWorkers(t *testing.T) { onEachDB(t, testDashboardHidesStoppedWorkers) }

func testDashboardHidesStoppedWorkers(t *testing.T, s *suite) {
	s.fleetTables(t)
	s.artisan(t, "app:dispatch", "noop")
	s.work(t, "--stop-when-empty", "--name", "finished-go", s.route(`App\Jobs\NoopJob`))
	s.start(t, s.lwCmd("work", "--queue", "idle", "--name", "live-go", "--sleep", "0.2", s.route(`App\Jobs\NoopJob`)))
	base, _ := s.startDashboard(t, nil)
	b := newBrowser(t)
	names := func() []string {
		return eval[[]string](t, b, `Array.from(document.querySelectorAll('#workers tr[data-worker]')).map(tr => tr.children[2].textContent.trim() + ':' + tr.querySelector('.state').textContent.trim())`)
	}
	eventually(t, 15*time.Second, func() string {
		b.visit(t, base, "/", "", s.appKey(t))
		if got := names(); !slices.Equal(got, []string{"live-go:running"}) {
			return "the overview lists " + strings.Join(got, ", ")
		}
		return ""
	})
	if f := b.text(t, "#workers-filter"); f != "1 stopped hidden · show stopped" {
		t.Errorf("filter %q", f)
	}
	b.run(t, chromedp.Click(chromedp.CSS("#show-stopped")), chromedp.WaitVisible(chromedp.CSS("#hide-stopped")))
	got := names()
	slices.Sort(got)
	if !slices.Equal(got, []string{"finished-go:stopped", "live-go:running"}) {
		t.Errorf("with stopped shown: %v", got)
	}
}

// TestCLIPauseAndContinue: `laraworker pause --queue` stops a running Go
// worker from claiming that queue (jobs PHP pushes stay unclaimed, the
// dashboard shows the queue paused), `continue` lets it drain them; the
// same by the worker's name.
func TestCLIPauseAndContinue(t *testing.T) { onEachDB(t, testCLIPauseAndContinue) }

func testCLIPauseAndContinue(t *testing.T, s *suite) {
	own := s.fleetTables(t)
	const queue = "clipause"
	s.start(t, s.lwCmd("work", "--queue", queue, "--name", "cli-paused", "--sleep", "0.2", s.route(`App\Jobs\NoopJob`)))
	s.artisan(t, "app:dispatch", "noop", "--queue="+queue)
	drained := func() string {
		if n := len(s.jobs(t)); n != 0 {
			return strconv.Itoa(n) + " jobs left"
		}
		return ""
	}
	eventually(t, 20*time.Second, drained)
	worker := func() fleet.WorkerRow {
		for _, w := range s.fleetWorkers(t, own) {
			if w.Name == "cli-paused" && w.StoppedAt == nil {
				return w
			}
		}
		t.Fatal("the worker has no row")
		return fleet.WorkerRow{}
	}
	if out := s.laraworker(t, "pause", "--queue", queue); !strings.Contains(out, "Paused queue ["+queue+"].") {
		t.Errorf("pause said %q", out)
	}
	// The worker's row reports the queues it paused: it applied the pause.
	eventually(t, 15*time.Second, func() string {
		if w := worker(); !slices.Contains(w.PausedQs, queue) {
			return "the worker reports paused queues " + strings.Join(w.PausedQs, ",")
		}
		return ""
	})
	s.artisan(t, "app:dispatch", "noop", "--count=3", "--queue="+queue)
	time.Sleep(2 * time.Second) // a claim would take 0.2 s
	for _, j := range s.jobs(t) {
		if j.ReservedAt.Valid || j.Attempts != 0 {
			t.Fatalf("job %d was claimed from the paused queue", j.ID)
		}
	}
	base, _ := s.startDashboard(t, nil)
	b := newBrowser(t)
	eventually(t, 15*time.Second, func() string {
		b.visit(t, base, "/control", "", s.appKey(t))
		if n := eval[int](t, b, `document.querySelectorAll('#control-queues tr[data-queue="`+queue+`"] .resume-queue').length`); n != 1 {
			return "the control page does not show the queue paused"
		}
		return ""
	})
	if out := s.laraworker(t, "continue", "--queue", queue); !strings.Contains(out, "Continued queue ["+queue+"].") {
		t.Errorf("continue said %q", out)
	}
	eventually(t, 15*time.Second, drained)

	var res struct {
		Paused []struct {
			Target string `json:"target"`
		} `json:"paused"`
	}
	if err := json.Unmarshal([]byte(s.laraworker(t, "pause", "--worker", "cli-paused", "--json")), &res); err != nil || len(res.Paused) != 1 || res.Paused[0].Target != worker().ID {
		t.Fatalf("pause --worker cli-paused --json: %+v %v", res, err)
	}
	eventually(t, 15*time.Second, func() string {
		if !worker().Paused {
			return "the worker does not report itself paused"
		}
		return ""
	})
	s.artisan(t, "app:dispatch", "noop", "--queue="+queue)
	time.Sleep(2 * time.Second)
	if jobs := s.jobs(t); len(jobs) != 1 || jobs[0].ReservedAt.Valid {
		t.Fatalf("jobs while the worker is paused: %+v", jobs)
	}
	s.laraworker(t, "continue", "--worker", "cli-paused")
	eventually(t, 15*time.Second, drained)
}

// TestCLIInspectByIDAndUUID: `laraworker inspect --id` and `--uuid` print
// a job PHP pushed as inspect FILE prints its payload, with the row; a job
// PHP failed is found by its uuid in failed_jobs, with the exception.
func TestCLIInspectByIDAndUUID(t *testing.T) { onEachDB(t, testCLIInspectByIDAndUUID) }

func testCLIInspectByIDAndUUID(t *testing.T, s *suite) {
	s.artisan(t, "app:dispatch", "models")
	jobs := s.jobs(t)
	if len(jobs) != 1 {
		t.Fatalf("jobs %+v", jobs)
	}
	type doc struct {
		Payload map[string]any `json:"payload"`
		Command json.RawMessage
		Row     map[string]any `json:"row"`
	}
	read := func(args ...string) doc {
		t.Helper()
		var d doc
		out := s.laraworker(t, append([]string{"inspect", "--compact"}, args...)...)
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatalf("inspect %v: %v\n%s", args, err, out)
		}
		return d
	}
	byID := read("--id", strconv.FormatInt(jobs[0].ID, 10))
	if byID.Row["table"] != "jobs" || byID.Row["queue"] != "default" || byID.Payload["uuid"] != jobs[0].UUID ||
		!regexp.MustCompile(`"model":"App\\\\Models\\\\Podcast"`).Match(byID.Command) {
		t.Errorf("inspect --id: row %v, uuid %v, command %s", byID.Row, byID.Payload["uuid"], byID.Command)
	}
	// The payload copied out by hand prints the same document, row aside.
	path := filepath.Join(t.TempDir(), "payload.json")
	if err := os.WriteFile(path, []byte(jobs[0].Payload), 0o600); err != nil {
		t.Fatal(err)
	}
	if file := read(path); string(file.Command) != string(byID.Command) || file.Row != nil || file.Payload["uuid"] != jobs[0].UUID {
		t.Errorf("inspect FILE differs from inspect --id: %s", file.Command)
	}
	if byUUID := read("--uuid", jobs[0].UUID); byUUID.Row["id"] != float64(jobs[0].ID) || string(byUUID.Command) != string(byID.Command) {
		t.Errorf("inspect --uuid differs from --id: %v", byUUID.Row)
	}
	s.artisan(t, "app:dispatch", "throws")
	s.phpWork(t, "--stop-when-empty")
	failed := s.failed(t)
	if len(failed) != 1 {
		t.Fatalf("failed %+v", failed)
	}
	f := read("--uuid", failed[0].UUID)
	if f.Row["table"] != "failed_jobs" || !strings.Contains(f.Row["exception"].(string), "could not be processed") || f.Payload["displayName"] != `App\Jobs\FailingJob` {
		t.Errorf("inspect --uuid of the failed job: %v", f.Row)
	}
	id, _ := f.Row["id"].(float64)
	if g := read("--failed", "--id", strconv.FormatFloat(id, 'f', 0, 64)); g.Row["uuid"] != failed[0].UUID {
		t.Errorf("inspect --failed --id: %v", g.Row)
	}
}
