package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/fleet"
)

// The bridge's fleet recorder: `php artisan queue:work` processes of the
// Laravel 8.83 app record themselves in laraworker's tables when
// config/laraworker.php says 'fleet' => true.

// installFleetConfig writes config/laraworker.php with the recorder on and
// no routes; the test removes it when it ends.
func (s *suite) installFleetConfig(t *testing.T) {
	t.Helper()
	path := filepath.Join(s.app, "config", "laraworker.php")
	if err := os.WriteFile(path, []byte("<?php\n\nreturn [\n    'jobs' => [],\n    'fleet' => true,\n];\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(path) })
}

// phpLog returns what the app logged since the last call, and starts a
// new log.
func (s *suite) phpLog(t *testing.T) string {
	t.Helper()
	path := filepath.Join(s.app, "storage", "logs", "laravel.log")
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// laraworkerLines are the log lines the bridge wrote.
func laraworkerLines(log string) []string {
	var out []string
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, "laraworker:") {
			out = append(out, line)
		}
	}
	return out
}

// fleetTables gives the test laraworker's tables as `laraworker tables`
// creates them, emptied, and empties them again when it ends.
func (s *suite) fleetTables(t *testing.T) *fleet.Store {
	t.Helper()
	s.laraworker(t, "tables")
	own := fleet.On(s.q.DB(), s.q.Dialect(), s.q.Config().TablePrefix)
	empty := func() {
		for _, table := range []string{"laraworker_workers", "laraworker_pauses", "laraworker_history", "laraworker_recent"} {
			s.exec(t, "delete from "+table)
		}
	}
	empty()
	t.Cleanup(empty)
	return own
}

func (s *suite) dropFleetTables(t *testing.T) {
	t.Helper()
	if err := fleet.On(s.q.DB(), s.q.Dialect(), s.q.Config().TablePrefix).DropTables(s.ctx(t)); err != nil {
		t.Fatal(err)
	}
	// The other tests find them as `laraworker tables` makes them.
	t.Cleanup(func() {
		if err := fleet.On(s.q.DB(), s.q.Dialect(), s.q.Config().TablePrefix).DropTables(s.ctx(t)); err != nil {
			t.Error(err)
		}
		s.laraworker(t, "tables")
	})
}

func (s *suite) fleetWorkers(t *testing.T, own *fleet.Store) []fleet.WorkerRow {
	t.Helper()
	rows, err := own.Workers(s.ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// historyByClass sums the history rows of each queue and class over
// their minutes.
func (s *suite) historyByClass(t *testing.T, own *fleet.Store) map[string]fleet.HistoryRow {
	t.Helper()
	rows, err := own.History(s.ctx(t), 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]fleet.HistoryRow{}
	for _, r := range rows {
		k := r.Queue + " " + r.Class
		sum := out[k]
		sum.Queue, sum.Class = r.Queue, r.Class
		sum.Done += r.Done
		sum.Failed += r.Failed
		sum.Released += r.Released
		out[k] = sum
	}
	return out
}

// TestPHPWorkerInFleet: with the recorder on and laraworker's tables
// there, a `php artisan queue:work --stop-when-empty` over jobs that
// succeed, fail and are released (then succeed) leaves one row of kind
// php with its identity, counts and stopped_at, and adds its counts per
// class to the history rows already there for those minutes.
func TestPHPWorkerInFleet(t *testing.T) { onEachDB(t, testPHPWorkerInFleet) }

func testPHPWorkerInFleet(t *testing.T, s *suite) {
	own := s.fleetTables(t)
	s.installFleetConfig(t)
	s.phpLog(t)
	// Another worker's counts for this minute and the next: the worker's
	// minute is one of them, and it must add to them, not replace them.
	minute := time.Now().Unix() / 60 * 60
	if err := own.AddHistory(s.ctx(t), []fleet.HistoryRow{
		{Minute: minute, Queue: "default", Class: `App\Jobs\NoopJob`, Done: 100, Released: 10},
		{Minute: minute + 60, Queue: "default", Class: `App\Jobs\NoopJob`, Done: 100, Released: 10},
	}); err != nil {
		t.Fatal(err)
	}
	s.artisan(t, "app:dispatch", "noop", "--count=3")
	s.artisan(t, "app:dispatch", "throws")         // fails at once (--tries=1)
	s.artisan(t, "app:dispatch", "declared-retry") // throws on attempts 1 and 2 (released, no backoff), done on 3
	started := time.Now().Unix()
	s.phpWork(t, "--stop-when-empty", "--name=fleet-php")
	stopped := time.Now().Unix()

	if left := s.jobs(t); len(left) != 0 {
		t.Fatalf("jobs left: %+v", left)
	}
	if n := len(s.failed(t)); n != 1 {
		t.Fatalf("%d failed jobs, want 1", n)
	}
	workers := s.fleetWorkers(t, own)
	if len(workers) != 1 {
		t.Fatalf("%d worker rows, want 1: %+v", len(workers), workers)
	}
	w := workers[0]
	host, _ := os.Hostname()
	if w.Kind != fleet.KindPHP || w.Name != "fleet-php" || w.Host != host || w.PID <= 0 ||
		w.ID != "php:"+host+":"+itoa(w.PID)+":"+itoa(w.StartedAt) || strings.Join(w.Queues, ",") != "default" ||
		w.Concurrency != 1 || w.Paused || len(w.PausedQs) != 0 || len(w.Running) != 0 || !strings.HasPrefix(w.Version, "Laravel 8.83.") {
		t.Errorf("worker row: %+v", w)
	}
	if w.StartedAt < started || w.StoppedAt == nil || *w.StoppedAt < w.StartedAt || *w.StoppedAt > stopped ||
		w.LastSeenAt != *w.StoppedAt {
		t.Errorf("times: started %d, last seen %d, stopped %v; the run was %d to %d", w.StartedAt, w.LastSeenAt, w.StoppedAt, started, stopped)
	}
	if w.Done != 4 || w.Failed != 1 || w.Released != 2 {
		t.Errorf("counts done %d failed %d released %d, want 4, 1, 2", w.Done, w.Failed, w.Released)
	}
	if w.MemoryBytes < 1<<20 || w.MemoryBytes > 1<<30 {
		t.Errorf("memory_bytes %d", w.MemoryBytes)
	}
	want := map[string]fleet.HistoryRow{
		`default App\Jobs\NoopJob`:          {Done: 200 + 3, Released: 20},
		`default App\Jobs\FailingJob`:       {Failed: 1},
		`default App\Jobs\DeclaredRetryJob`: {Done: 1, Released: 2},
	}
	got := s.historyByClass(t, own)
	for k, wantRow := range want {
		g := got[k]
		if g.Done != wantRow.Done || g.Failed != wantRow.Failed || g.Released != wantRow.Released {
			t.Errorf("history %s: done %d failed %d released %d, want %d %d %d", k, g.Done, g.Failed, g.Released, wantRow.Done, wantRow.Failed, wantRow.Released)
		}
	}
	if len(got) != len(want) {
		t.Errorf("history classes %v, want those of %v", got, want)
	}
	if lines := laraworkerLines(s.phpLog(t)); len(lines) != 0 {
		t.Errorf("the recorder logged: %q", lines)
	}
	s.checkPHPTimings(t, own, w, stopped-started)
	s.checkDashboardShows(t, w)
}

// checkPHPTimings: the PHP worker counted a runtime and a wait for each
// of its 7 runs (in the history's buckets, beside the other worker's
// counts that have none) and listed each in the recent jobs.
func (s *suite) checkPHPTimings(t *testing.T, own *fleet.Store, w fleet.WorkerRow, took int64) {
	t.Helper()
	stats, err := own.ClassStats(s.ctx(t), 0)
	if err != nil {
		t.Fatal(err)
	}
	runs := map[string]int64{}
	for _, c := range stats {
		if c.Run.Count() != c.Wait.Count() {
			t.Errorf("%s: %d runtimes but %d waits", c.Class, c.Run.Count(), c.Wait.Count())
		}
		if slowest, over, _ := c.Run.Quantile(1); over || slowest > time.Duration(took+1)*time.Second {
			t.Errorf("%s: a runtime of up to %s in a run of %d s", c.Class, slowest, took)
		}
		runs[c.Class] = c.Run.Count()
	}
	if runs[`App\Jobs\NoopJob`] != 3 || runs[`App\Jobs\FailingJob`] != 1 || runs[`App\Jobs\DeclaredRetryJob`] != 3 {
		t.Errorf("runtimes counted per class: %v, want NoopJob 3, FailingJob 1, DeclaredRetryJob 3", runs)
	}
	recent, err := own.Recent(s.ctx(t), 100, "")
	if err != nil {
		t.Fatal(err)
	}
	outcomes := map[string]int{}
	for _, j := range recent {
		if j.Worker != w.ID || j.JobID <= 0 || j.UUID == "" || j.Attempt < 1 || j.RunMS < 0 || j.FinishedAt < w.StartedAt {
			t.Errorf("recent job %+v of worker %s", j, w.ID)
		}
		outcomes[j.Class+" "+j.Outcome]++
	}
	want := map[string]int{`App\Jobs\NoopJob done`: 3, `App\Jobs\FailingJob failed`: 1, `App\Jobs\DeclaredRetryJob released`: 2, `App\Jobs\DeclaredRetryJob done`: 1}
	if len(recent) != 7 || len(outcomes) != len(want) {
		t.Errorf("recent jobs by outcome %v, want %v", outcomes, want)
	}
	for k, n := range want {
		if outcomes[k] != n {
			t.Errorf("recent %s: %d, want %d", k, outcomes[k], n)
		}
	}
}

// TestPHPWorkerOnEarlierFleetTables: on laraworker's tables of an earlier
// version (a history without runtime columns, no recent jobs table) a PHP
// worker still records its counts and logs nothing; once `laraworker
// tables` added what is missing, the next worker records runtimes and
// recent jobs too.
func TestPHPWorkerOnEarlierFleetTables(t *testing.T) { onEachDB(t, testPHPWorkerOnEarlierFleetTables) }

func testPHPWorkerOnEarlierFleetTables(t *testing.T, s *suite) {
	own := s.fleetTables(t)
	s.exec(t, "drop table laraworker_history")
	s.exec(t, "drop table laraworker_recent")
	s.exec(t, "create table laraworker_history (minute bigint not null, queue varchar(191) not null, class varchar(191) not null, "+
		"done bigint not null, failed bigint not null, released bigint not null, primary key (minute, queue, class))")
	t.Cleanup(func() { s.laraworker(t, "tables") })
	s.installFleetConfig(t)
	s.phpLog(t)
	s.artisan(t, "app:dispatch", "noop", "--count=2")
	s.phpWork(t, "--stop-when-empty")
	if lines := laraworkerLines(s.phpLog(t)); len(lines) != 0 {
		t.Errorf("the recorder logged on the earlier tables: %q", lines)
	}
	if h := s.historyByClass(t, own)[`default App\Jobs\NoopJob`]; h.Done != 2 {
		t.Errorf("history on the earlier table: %+v", h)
	}
	s.laraworker(t, "tables")
	s.artisan(t, "app:dispatch", "noop", "--count=2")
	s.phpWork(t, "--stop-when-empty")
	stats, err := own.ClassStats(s.ctx(t), 0)
	if err != nil || len(stats) != 1 || stats[0].Done != 4 || stats[0].Run.Count() != 2 {
		t.Errorf("after laraworker tables: %+v %v, want 4 done of which 2 timed", stats, err)
	}
	if recent, err := own.Recent(s.ctx(t), 10, ""); err != nil || len(recent) != 2 {
		t.Errorf("recent jobs after laraworker tables: %d %v", len(recent), err)
	}
}

// checkDashboardShows: `laraworker dashboard` lists the PHP worker's row
// as it lists Go workers' (among the stopped ones) and charts its jobs.
func (s *suite) checkDashboardShows(t *testing.T, w fleet.WorkerRow) {
	t.Helper()
	base, _ := s.startDashboard(t, nil)
	var row []string
	// The first read of the tables may not have ended when the page is asked.
	eventually(t, 15*time.Second, func() string {
		home := httpGet(t, base+"/?stopped=1") // the worker has stopped
		if row = regexp.MustCompile(`(?s)<tr data-worker="` + regexp.QuoteMeta(w.ID) + `">(.*?)</tr>`).FindStringSubmatch(home); row == nil {
			return "the overview does not list " + w.ID
		}
		return ""
	})
	var cells []string
	for _, m := range regexp.MustCompile(`<td[^>]*>(.*?)</td>`).FindAllStringSubmatch(row[1], -1) {
		cells = append(cells, regexp.MustCompile(`<[^>]+>`).ReplaceAllString(m[1], ""))
	}
	want := []string{"stopped", "php", w.Name, w.Host, itoa(w.PID), "default", "1"}
	// done, failed, released; a PHP worker gives nothing back to itself ("–").
	if len(cells) != 14 || strings.Join(cells[:7], "|") != strings.Join(want, "|") || strings.Join(cells[9:13], "|") != "4|1|2|–" {
		t.Errorf("overview row %q, want %q ... 4|1|2|–", cells, want)
	}
	var series struct {
		Done []struct {
			Label string  `json:"label"`
			Data  []int64 `json:"data"`
		} `json:"done"`
	}
	if err := json.Unmarshal([]byte(httpGet(t, base+"/api/series?span=hour")), &series); err != nil {
		t.Fatal(err)
	}
	var retried int64
	for _, l := range series.Done {
		if l.Label == `App\Jobs\DeclaredRetryJob` {
			for _, v := range l.Data {
				retried += v
			}
		}
	}
	if retried != 1 {
		t.Errorf("the chart counts %d DeclaredRetryJobs done, want 1: %+v", retried, series.Done)
	}
}

func httpGet(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
	}
	return string(b)
}

// TestPHPWorkerInFleetRunningJob: a worker that starts a job when its
// heartbeat is due (here after --rest=6 following the first job) writes
// its row naming that job: id, uuid, class, queue, attempt, since; the
// dashboard's "running now" uses it to name the PHP worker holding a job.
func TestPHPWorkerInFleetRunningJob(t *testing.T) { onEachDB(t, testPHPWorkerInFleetRunningJob) }

func testPHPWorkerInFleetRunningJob(t *testing.T, s *suite) {
	own := s.fleetTables(t)
	s.installFleetConfig(t)
	s.artisan(t, "app:dispatch", "noop", "--count=2")
	ids := map[int64]string{}
	for _, j := range s.jobs(t) {
		ids[j.ID] = j.UUID
	}
	worker := s.start(t, s.phpCmd("queue:work", "--stop-when-empty", "--sleep=0", "--rest=6"))
	var named fleet.RunningJob
	eventually(t, 30*time.Second, func() string {
		for _, w := range s.fleetWorkers(t, own) {
			if len(w.Running) == 1 {
				named = w.Running[0]
				return ""
			}
		}
		return "no worker row names a running job"
	})
	worker.wait(t, time.Minute)
	if uuid, ok := ids[named.ID]; !ok || named.UUID != uuid || named.Class != `App\Jobs\NoopJob` || named.Queue != "default" ||
		named.Attempt != 1 || named.Since < time.Now().Unix()-60 {
		t.Errorf("running job %+v, dispatched %v", named, ids)
	}
	if w := s.fleetWorkers(t, own); len(w) != 1 || len(w[0].Running) != 0 || w[0].StoppedAt == nil || w[0].Done != 2 {
		t.Errorf("after the stop: %+v", w)
	}
}

// TestPHPWorkerWithoutFleetTables: with the recorder on but no
// laraworker tables, the worker runs its jobs as without the bridge,
// logs nothing about laraworker and creates nothing.
func TestPHPWorkerWithoutFleetTables(t *testing.T) { onEachDB(t, testPHPWorkerWithoutFleetTables) }

func testPHPWorkerWithoutFleetTables(t *testing.T, s *suite) {
	s.dropFleetTables(t)
	s.installFleetConfig(t)
	s.phpLog(t)
	s.artisan(t, "app:dispatch", "noop", "--count=2")
	s.artisan(t, "app:dispatch", "throws")
	out := s.phpWork(t, "--stop-when-empty")
	if n := strings.Count(out, "Processed:"); n != 2 || strings.Count(out, "Failed:") != 1 || strings.Contains(out, "laraworker") {
		t.Errorf("worker output:\n%s", out)
	}
	if left := s.jobs(t); len(left) != 0 {
		t.Errorf("jobs left: %+v", left)
	}
	if runs := s.runs(t); len(runs) != 3 {
		t.Errorf("%d runs, want 3", len(runs))
	}
	if lines := laraworkerLines(s.phpLog(t)); len(lines) != 0 {
		t.Errorf("the recorder logged: %q", lines)
	}
	if _, err := fleet.On(s.q.DB(), s.q.Dialect(), s.q.Config().TablePrefix).Workers(s.ctx(t)); err == nil {
		t.Errorf("laraworker_workers exists after the run")
	}
}

// TestPHPWorkerFleetWritesFail: a laraworker_workers table the recorder
// cannot write (columns missing) does not stop or fail the worker: every
// job runs, the failure is logged once, and after 3 failed writes the
// recorder says it stops recording.
func TestPHPWorkerFleetWritesFail(t *testing.T) { onEachDB(t, testPHPWorkerFleetWritesFail) }

func testPHPWorkerFleetWritesFail(t *testing.T, s *suite) {
	s.dropFleetTables(t)
	s.exec(t, "create table laraworker_workers (id varchar(191) not null primary key)")
	s.installFleetConfig(t)
	s.phpLog(t)
	s.artisan(t, "app:dispatch", "noop", "--count=3")
	s.phpWork(t, "--stop-when-empty")
	if left := s.jobs(t); len(left) != 0 {
		t.Errorf("jobs left: %+v", left)
	}
	if runs := s.runs(t); len(runs) != 3 {
		t.Errorf("%d runs, want 3", len(runs))
	}
	lines := laraworkerLines(s.phpLog(t))
	if len(lines) != 2 || !strings.Contains(lines[0], "laraworker: writing the worker's row failed") ||
		!strings.Contains(lines[1], "3 writes to laraworker's tables failed in a row") {
		t.Errorf("log lines: %q", lines)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestFleetTablesBehindPrefix: on an app whose database connection has a
// table prefix (DB_PREFIX=lw_ in the test app), `laraworker tables`
// creates lw_laraworker_workers..., and a PHP worker (through Laravel's
// query builder) and a Go worker (through the app's config) both record
// themselves there, not in the unprefixed tables.
func TestFleetTablesBehindPrefix(t *testing.T) { onEachDB(t, testFleetTablesBehindPrefix) }

func testFleetTablesBehindPrefix(t *testing.T, s *suite) {
	const prefix = "lw_"
	prefixed := func(cmd *exec.Cmd) *exec.Cmd {
		cmd.Env = append(cmd.Env, "DB_PREFIX="+prefix)
		return cmd
	}
	unprefixed := s.fleetTables(t)
	s.installFleetConfig(t)
	own := fleet.NewStore(s.q.DB(), s.q.Dialect(), fleet.TablesWithPrefix(prefix+"laraworker_"))
	// The app's tables behind the prefix, as its migrations make them;
	// dropped before (a failed run leaves them) and after.
	dropAll := func() {
		if err := own.DropTables(s.ctx(t)); err != nil {
			t.Error(err)
		}
		for _, table := range []string{"users", "failed_jobs", "jobs", "job_batches", "cache", "cache_locks", "podcasts", "job_runs", "migrations"} {
			s.exec(t, "drop table if exists "+prefix+table)
		}
	}
	dropAll()
	t.Cleanup(dropAll)
	s.run(t, prefixed(s.phpCmd("migrate", "--force")))
	s.run(t, prefixed(s.lwCmd("tables")))

	s.run(t, prefixed(s.phpCmd("app:dispatch", "noop", "--count=2")))
	s.run(t, prefixed(s.phpCmd("queue:work", "--stop-when-empty", "--sleep=0")))
	s.run(t, prefixed(s.phpCmd("app:dispatch", "noop")))
	s.run(t, prefixed(s.lwCmd("work", "--stop-when-empty", "--sleep", "0.2", "--route", `App\Jobs\NoopJob=noop`)))

	done := map[string]int64{}
	for _, w := range s.fleetWorkers(t, own) {
		done[w.Kind] += w.Done
	}
	if len(done) != 2 || done[fleet.KindPHP] != 2 || done[fleet.KindGo] != 1 {
		t.Errorf("jobs done by kind in %s: %v, want php 2 and go 1", own.Tables().Workers, done)
	}
	if h := s.historyByClass(t, own)[`default App\Jobs\NoopJob`]; h.Done != 3 {
		t.Errorf("history in %s: %+v, want 3 NoopJobs done", own.Tables().History, h)
	}
	if w := s.fleetWorkers(t, unprefixed); len(w) != 0 {
		t.Errorf("rows in the unprefixed table: %+v", w)
	}
}
