package dashboard

import (
	"context"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/dashboard/snapshot"
	"github.com/laraworker/laraworker/internal/fleet"
	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/store/database"
)

// TestStoppedWorkersHidden: the overview lists stopped workers only when
// asked, and says how many it hides.
func TestStoppedWorkersHidden(t *testing.T) {
	q := testdb.Open(t, testdb.Config(t, appconfig.EngineSQLite))
	r := newRig(t, q, Options{})
	now := time.Now().Unix()
	stopped := now - 10
	for _, w := range []fleet.WorkerRow{
		{ID: "go:h:1:1", Kind: fleet.KindGo, Name: "live", Host: "h", PID: 1, StartedAt: now, LastSeenAt: now},
		{ID: "go:h:2:1", Kind: fleet.KindGo, Name: "gone-1", Host: "h", PID: 2, StartedAt: now - 90, LastSeenAt: stopped, StoppedAt: &stopped},
		{ID: "php:h:3:1", Kind: fleet.KindPHP, Name: "gone-2", Host: "h", PID: 3, StartedAt: now - 90, LastSeenAt: stopped, StoppedAt: &stopped},
	} {
		if err := r.fl.UpsertWorker(context.Background(), w); err != nil {
			t.Fatal(err)
		}
	}
	r.refresh(t)
	home := r.get(t, "/", 200)
	if strings.Count(home, `<tr data-worker=`) != 1 || !strings.Contains(home, `data-worker="go:h:1:1"`) || !strings.Contains(home, "2 stopped hidden") {
		t.Errorf("default overview lists %d workers:\n%s", strings.Count(home, `<tr data-worker=`), home)
	}
	all := r.get(t, "/?stopped=1", 200)
	if strings.Count(all, `<tr data-worker=`) != 3 || !strings.Contains(all, `hx-get="/?stopped=1"`) {
		t.Errorf("?stopped=1 lists %d workers (and refreshes %v)", strings.Count(all, `<tr data-worker=`), strings.Contains(all, `hx-get="/?stopped=1"`))
	}
}

// TestStatsAndRecentPages: the metrics page adds up what the workers
// recorded per class over the hour (not the older minutes) with its
// percentiles; the recent page lists the jobs newest first and filters
// by class.
func TestStatsAndRecentPages(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, q *database.Queue) {
		r := newRig(t, q, Options{})
		ctx := context.Background()
		minute := time.Now().Unix() / 60 * 60
		var fast, slow, wait fleet.Histogram
		for range 99 {
			fast.Observe(3 * time.Millisecond)
		}
		slow.Observe(4 * time.Second)
		wait.Observe(20 * time.Millisecond)
		rows := []fleet.HistoryRow{
			{Minute: minute, Queue: "default", Class: `App\Jobs\A`, Done: 99, Run: fast, Wait: wait},
			{Minute: minute - 60, Queue: "default", Class: `App\Jobs\A`, Failed: 1, Run: slow},
			{Minute: minute - 2*3600, Queue: "default", Class: `App\Jobs\A`, Done: 1000},
		}
		if err := r.fl.AddHistory(ctx, rows); err != nil {
			t.Fatal(err)
		}
		page := r.get(t, "/stats", 200)
		row := regexp.MustCompile(`(?s)<tr data-class="App\\Jobs\\A" data-queue="default">(.*?)</tr>`).FindStringSubmatch(page)
		if row == nil {
			t.Fatalf("no row for A:\n%s", page)
		}
		for _, want := range []string{`<td class="n jobs">100</td>`, `<td class="n failed">1</td>`, `<td class="n run-p50">≤ 5ms</td>`,
			`<td class="n run-p99">≤ 5ms</td>`, `<td class="n wait-p50">≤ 25ms</td>`} {
			if !strings.Contains(row[1], want) {
				t.Errorf("the hour's row lacks %s:\n%s", want, row[1])
			}
		}
		if day := r.get(t, "/stats?span=day", 200); !strings.Contains(day, `<td class="n jobs">1,100</td>`) {
			t.Errorf("the day's row does not count 1,100 jobs")
		}

		jobs := []fleet.RecentJob{
			{Slot: 0, JobID: 11, UUID: "u-11", Queue: "default", Class: `App\Jobs\A`, Outcome: fleet.OutcomeDone, Attempt: 1, FinishedAt: time.Now().Unix() - 5, RunMS: 1500, WaitMS: 20},
			{Slot: 1, JobID: 12, UUID: "u-12", Queue: "default", Class: `App\Jobs\B`, Outcome: fleet.OutcomeFailed, Attempt: 3, FinishedAt: time.Now().Unix(), RunMS: 7},
		}
		if err := r.fl.PutRecent(ctx, "go:h:1:1", jobs); err != nil {
			t.Fatal(err)
		}
		recent := r.get(t, "/recent", 200)
		if i, j := strings.Index(recent, `data-job="12"`), strings.Index(recent, `data-job="11"`); i < 0 || j < 0 || i > j {
			t.Errorf("recent lists 12 then 11? %d %d", i, j)
		}
		for _, want := range []string{`<td class="n runtime">1.5s</td>`, `<td class="n runtime">7ms</td>`, `href="/failed/uuid/u-12"`} {
			if !strings.Contains(recent, want) {
				t.Errorf("recent lacks %s", want)
			}
		}
		if only := r.get(t, "/recent?class="+url.QueryEscape(`App\Jobs\B`), 200); strings.Contains(only, `data-job="11"`) || !strings.Contains(only, `data-job="12"`) {
			t.Error("the class filter of recent jobs")
		}
		r.get(t, "/failed/uuid/u-12", 404)
	})
}

// TestTagsSearch: jobs and failed jobs holding models are tagged with
// them as Horizon tags them, and a tag finds exactly those; with
// --hide-payloads no tag is read or shown.
func TestTagsSearch(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, q *database.Queue) {
		ctx := context.Background()
		if err := q.PushMany(ctx, []jobqueue.PushItem{
			{Queue: "default", Payload: fixture(t, "noop", "")},
			{Queue: "default", Payload: fixture(t, "models", "")},
			{Queue: "other", Payload: fixture(t, "models", "")},
		}); err != nil {
			t.Fatal(err)
		}
		if _, err := q.Push(ctx, jobqueue.PushItem{Queue: "fails", Payload: fixture(t, "models", "")}); err != nil {
			t.Fatal(err)
		}
		jobs, err := q.Claim(ctx, []string{"fails"}, 1, jobqueue.ClaimOptions{})
		if err != nil || len(jobs) != 1 {
			t.Fatalf("claim: %v %v", jobs, err)
		}
		if err := q.Fail(ctx, jobs[0], fleet.UUIDOf(jobs[0].Payload), "RuntimeException: no", jobqueue.Followup{}); err != nil {
			t.Fatal(err)
		}
		r := newRig(t, q, Options{})
		list := r.get(t, "/jobs", 200)
		if n := strings.Count(list, `>App\Models\Podcast:42</a>`); n != 2 {
			t.Errorf("the jobs list tags %d jobs with the podcast, want 2", n)
		}
		if !strings.Contains(list, `>App\Models\User:2</a>`) {
			t.Error("a collection's models are not tagged one by one")
		}
		tagged := r.get(t, "/jobs?tag="+url.QueryEscape(`App\Models\User:1`), 200)
		if n := strings.Count(tagged, `<tr data-job=`); n != 2 {
			t.Errorf("tag search found %d jobs, want 2", n)
		}
		if n := strings.Count(r.get(t, "/jobs?queue=other&tag="+url.QueryEscape(`App\Models\User:1`), 200), `<tr data-job=`); n != 1 {
			t.Errorf("tag and queue found %d jobs, want 1", n)
		}
		if n := strings.Count(r.get(t, "/jobs?tag="+url.QueryEscape(`App\Models\User:3`), 200), `<tr data-job=`); n != 0 {
			t.Errorf("an unknown tag found %d jobs", n)
		}
		failed := r.get(t, "/failed?tag="+url.QueryEscape(`App\Models\Podcast:42`), 200)
		if n := strings.Count(failed, `data-uuid=`); n != 1 {
			t.Errorf("failed tag search found %d, want 1", n)
		}
		fids, _ := r.srv.Snapshot().FailedIDs(snapshot.FailedFilter{}, 0, 10)
		if page := r.get(t, "/failed/"+itoa(fids[0]), 200); !strings.Contains(page, `id="tags"`) {
			t.Error("the failed job's page shows no tags")
		}
		// A job leaving the table takes its tags along.
		other := firstJob(t, r, snapshot.JobFilter{Queue: "other"})
		execSQL(t, q, "delete from {jobs} where id = ?", other.ID)
		r.refresh(t)
		r.refresh(t)
		if n := strings.Count(r.get(t, "/jobs?tag="+url.QueryEscape(`App\Models\User:1`), 200), `<tr data-job=`); n != 1 {
			t.Errorf("after the delete, %d jobs hold the tag", n)
		}

		hidden := newRig(t, q, Options{HidePayloads: true})
		for _, path := range []string{"/jobs", "/failed", "/jobs?tag=" + url.QueryEscape(`App\Models\User:1`)} {
			if page := hidden.get(t, path, 200); strings.Contains(page, `App\Models\`) {
				t.Errorf("%s shows model ids with --hide-payloads", path)
			}
		}
	})
}

// insertBatch writes a job_batches row as Laravel's store() and the
// counters after failures would leave it.
func insertBatch(t *testing.T, q *database.Queue, id, name string, total, pending, failed int, failedIDs string, finished bool) {
	t.Helper()
	var fin any
	if finished {
		fin = time.Now().Unix()
	}
	table := q.Dialect().Quote(q.Config().BatchesTable)
	if _, err := q.DB().Exec(q.Dialect().Rebind("insert into "+table+
		" (id, name, total_jobs, pending_jobs, failed_jobs, failed_job_ids, options, cancelled_at, created_at, finished_at) values (?, ?, ?, ?, ?, ?, ?, null, ?, ?)"),
		id, name, total, pending, failed, failedIDs, `a:1:{s:13:"allowFailures";b:1;}`, time.Now().Unix()-60, fin); err != nil {
		t.Fatal(err)
	}
}

// TestBatchesPagesAndActions: batches list newest first with Laravel's
// progress; a batch's page links its failed jobs; retry pushes them back
// (queue:retry-batch) and cancel marks the batch (Batch::cancel()), each
// only after its confirmation page and never in read-only mode.
func TestBatchesPagesAndActions(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, q *database.Queue) {
		ctx := context.Background()
		var uuids []string
		for range 2 {
			if _, err := q.Push(ctx, jobqueue.PushItem{Queue: "imports", Payload: fixture(t, "noop", "")}); err != nil {
				t.Fatal(err)
			}
			jobs, err := q.Claim(ctx, []string{"imports"}, 1, jobqueue.ClaimOptions{})
			if err != nil || len(jobs) != 1 {
				t.Fatal(err)
			}
			u := fleet.UUIDOf(jobs[0].Payload)
			if err := q.Fail(ctx, jobs[0], u, "RuntimeException: row 7 is bad", jobqueue.Followup{}); err != nil {
				t.Fatal(err)
			}
			uuids = append(uuids, u)
		}
		insertBatch(t, q, "0a000000-0000-0000-0000-000000000001", "Old import", 4, 0, 0, "[]", true)
		insertBatch(t, q, "0b000000-0000-0000-0000-000000000002", "CSV import", 10, 6, 2, `["`+uuids[0]+`","`+uuids[1]+`","gone-uuid"]`, false)
		r := newRig(t, q, Options{RetryHook: nil})
		list := r.get(t, "/batches", 200)
		i, j := strings.Index(list, `data-batch="0b000000`), strings.Index(list, `data-batch="0a000000`)
		if i < 0 || j < 0 || i > j {
			t.Fatalf("batches not listed newest first:\n%s", list)
		}
		if !strings.Contains(list, `<span class="progress">40%</span>`) || !strings.Contains(list, `<span class="progress">100%</span>`) {
			t.Errorf("progress is not Laravel's (total - pending) / total")
		}
		id := "0b000000-0000-0000-0000-000000000002"
		page := r.get(t, "/batches/"+id, 200)
		if strings.Count(page, `<a href="/failed/`) != 2 || !strings.Contains(page, "not in failed_jobs") || !strings.Contains(page, `id="cancel-batch"`) {
			t.Errorf("the batch page:\n%s", page)
		}
		r.get(t, "/batches/nope", 404)
		tok := r.csrf(t)
		r.post(t, "/batches/retry", url.Values{"batch": {id}}, 403) // no CSRF token
		confirm := r.post(t, "/batches/retry", url.Values{"_csrf": {tok}, "batch": {id}}, 200)
		_ = confirm
		if n := len(testdb.FailedRows(t, q)); n != 2 {
			t.Fatalf("the confirmation page retried already: %d failed rows", n)
		}
		resp := r.post(t, "/batches/retry", url.Values{"_csrf": {tok}, "batch": {id}, "confirm": {"yes"}}, 303)
		if loc := resp.Header.Get("Location"); loc != "/batches/"+id+"?batchretried=2&errors=1" {
			t.Errorf("redirect to %s", loc)
		}
		if n := len(testdb.FailedRows(t, q)); n != 0 {
			t.Errorf("%d failed rows after the batch's retry", n)
		}
		if n := len(testdb.JobRows(t, q)); n != 2 {
			t.Errorf("%d jobs after the batch's retry, want 2", n)
		}
		r.post(t, "/batches/cancel", url.Values{"_csrf": {tok}, "batch": {id}, "confirm": {"yes"}}, 303)
		b, err := q.FindBatch(ctx, id)
		if err != nil || !b.Cancelled() || !b.Finished() {
			t.Fatalf("after cancel: %+v %v", b, err)
		}
		r.post(t, "/batches/cancel", url.Values{"_csrf": {tok}, "batch": {id}, "confirm": {"yes"}}, 409)
		r.post(t, "/batches/retry", url.Values{"_csrf": {tok}, "batch": {"0a000000-0000-0000-0000-000000000001"}}, 400)

		ro := newRig(t, q, Options{ReadOnly: true})
		if page := ro.get(t, "/batches/"+id, 200); strings.Contains(page, `<form method="post"`) {
			t.Error("a read-only batch page offers a change")
		}
		ro.post(t, "/batches/cancel", url.Values{"_csrf": {ro.csrf(t)}, "batch": {id}, "confirm": {"yes"}}, 403)

		hidden := newRig(t, q, Options{HidePayloads: true})
		if page := hidden.get(t, "/batches", 200); strings.Contains(page, "CSV import") {
			t.Error("batch names shown with --hide-payloads")
		}
	})
}
