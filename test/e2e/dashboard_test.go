package e2e

import (
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/laraworker/laraworker/laravel/appconfig"
)

// The dashboard's browser tests: `laraworker dashboard` on the app's
// MariaDB database, jobs pushed by `php artisan app:dispatch` and run by
// `php artisan queue:work` and `laraworker work`, pages driven in a real
// headless Chromium. Each test saves screenshots of the pages it visits
// (LARAWORKER_SCREENSHOTS=dir to keep them, e.g. docs/screenshots).

func onMariaDB(t *testing.T, test func(t *testing.T, s *suite)) {
	onEachDB(t, func(t *testing.T, s *suite) {
		if s.driver != "mysql" {
			t.Skip("the dashboard's browser tests run on MariaDB")
		}
		s.laraworker(t, "tables")
		clearOwn := func() {
			// A pause left behind would stop the other tests' workers.
			for _, table := range []string{"laraworker_workers", "laraworker_pauses", "laraworker_history", "laraworker_recent"} {
				s.exec(t, "delete from "+table)
			}
		}
		clearOwn()
		t.Cleanup(clearOwn)
		test(t, s)
	})
}

// appKey is the APP_KEY of the suite's .env, which no page may show.
func (s *suite) appKey(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(s.envFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "APP_KEY="); ok {
			return strings.Trim(v, `'"`)
		}
	}
	t.Fatal("no APP_KEY in the .env")
	return ""
}

// visit opens path, checks the page shows no secret, and saves a
// screenshot named shot (none when empty).
func (b *browser) visit(t *testing.T, base, path, shot string, secrets ...string) string {
	t.Helper()
	b.run(t, chromedp.Navigate(base+path), chromedp.WaitReady(chromedp.CSS("body")))
	html := value(t, b, chromedp.OuterHTML(chromedp.CSS("html")))
	for _, sec := range secrets {
		if sec != "" && strings.Contains(html, strings.TrimPrefix(sec, "base64:")) {
			t.Fatalf("%s shows a secret", path)
		}
	}
	if shot != "" {
		b.screenshot(t, shot)
	}
	return html
}

type queueCells struct {
	Ready, Delayed, Reserved, Expired, Failed int64
}

// pageQueues reads the overview's queue table.
func (b *browser) pageQueues(t *testing.T) map[string]queueCells {
	t.Helper()
	rows := eval[[][]string](t, b, `Array.from(document.querySelectorAll('#queues tbody tr[data-queue]')).map(tr =>
		[tr.dataset.queue].concat(['ready','delayed','reserved','expired','failed'].map(c => tr.querySelector('td.'+c).textContent.trim())))`)
	out := map[string]queueCells{}
	for _, r := range rows {
		out[r[0]] = queueCells{atoi(t, r[1]), atoi(t, r[2]), atoi(t, r[3]), atoi(t, r[4]), atoi(t, r[5])}
	}
	return out
}

// tableQueues is the same from the tables themselves (full scans).
func (s *suite) tableQueues(t *testing.T) map[string]queueCells {
	t.Helper()
	sizes, err := s.q.Sizes(s.ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]queueCells{}
	for _, z := range sizes {
		out[z.Queue] = queueCells{Ready: z.Ready, Delayed: z.Delayed, Reserved: z.Reserved, Expired: z.Expired}
	}
	for _, f := range s.failed(t) {
		c := out[f.Queue]
		c.Failed++
		out[f.Queue] = c
	}
	return out
}

// sameQueues: the page lists every queue of the tables with their
// counts; any other queue it lists (one that drained, or that a worker
// watches) is all zeros.
func sameQueues(page, tables map[string]queueCells) bool {
	for k, v := range tables {
		if page[k] != v {
			return false
		}
	}
	for k, v := range page {
		if _, ok := tables[k]; !ok && v != (queueCells{}) {
			return false
		}
	}
	return true
}

// TestDashboardOverviewEqualsTables: the overview's per-queue counts
// equal full scans of jobs and failed_jobs; the Go worker holding a job
// is listed in the fleet and named on Running now; every page is
// screenshotted and none shows APP_KEY.
func TestDashboardOverviewEqualsTables(t *testing.T) { onMariaDB(t, testDashboardOverview) }

func testDashboardOverview(t *testing.T, s *suite) {
	key := s.appKey(t)
	s.artisan(t, "app:dispatch", "throws")
	s.phpWork(t, "--stop-when-empty")
	// Jobs a Go worker finishes: the history the charts draw, and a
	// stopped worker in the fleet.
	s.artisan(t, "app:dispatch", "noop", "--count=20", "--queue=bulk")
	s.work(t, "--stop-when-empty", "--queue", "bulk", "--name", "bulk", s.route(`App\Jobs\NoopJob`))
	s.artisan(t, "app:dispatch", "noop", "--count=3")
	s.artisan(t, "app:dispatch", "scalars", "--count=2", "--queue=emails")
	s.artisan(t, "app:dispatch", "delayed", "--delay=3600")
	s.artisan(t, "app:dispatch", "scalars", "--queue=slow")
	holder := s.start(t, s.lwCmd("work", "--queue", "slow", "--name", "holder", "--sleep", "0.2",
		`--route=App\Jobs\ScalarsJob=exec:/bin/sleep 50`))
	eventually(t, 20*time.Second, func() string {
		for _, j := range s.jobs(t) {
			if j.Queue == "slow" && j.ReservedAt.Valid {
				return ""
			}
		}
		return "the Go worker has not reserved the job"
	})

	base, _ := s.startDashboard(t, nil)
	b := newBrowser(t)
	var page, want map[string]queueCells
	eventually(t, 15*time.Second, func() string {
		b.visit(t, base, "/", "", key)
		page, want = b.pageQueues(t), s.tableQueues(t)
		if !sameQueues(page, want) {
			return "overview " + strconv.Quote(toString(page)) + " != tables " + strconv.Quote(toString(want))
		}
		return ""
	})
	t.Logf("overview equals the tables: %s", toString(page))
	eventually(t, 15*time.Second, func() string {
		b.visit(t, base, "/", "", key)
		// The row named holder: the bulk worker, stopped, may have started
		// within the same second and be listed first.
		st := eval[string](t, b, `(Array.from(document.querySelectorAll('#workers tr[data-worker]'))
			.find(tr => tr.children[2].textContent.trim() === 'holder') || {querySelector: () => ({textContent: 'absent'})})
			.querySelector('.state').textContent.trim()`)
		if st != "running" {
			return "the holder worker's state is " + st + "; its log:\n" + tail(holder.stderr.String())
		}
		return ""
	})
	// Let the charts load before the picture.
	b.run(t, chromedp.WaitVisible(chromedp.CSS(".chart .uplot")))
	eventually(t, 10*time.Second, func() string {
		if n := eval[int](t, b, `document.querySelectorAll('.chart .uplot').length`); n != 4 {
			return fmt.Sprintf("%d of 4 charts drawn", n)
		}
		return ""
	})
	// The legends name the classes (no "--" for values off the plot), and
	// the counts' axes step by whole jobs (one failure: 0, 1; not 0.2).
	if legends := eval[string](t, b, `Array.from(document.querySelectorAll('.chart .u-legend')).map(l => l.textContent).join('|')`); strings.Contains(legends, "--") ||
		!strings.Contains(legends, `App\Jobs\FailingJob`) {
		t.Errorf("chart legends %q", legends)
	}
	if ticks := eval[[]float64](t, b, `[].concat(...Array.from(document.querySelectorAll('.chart')).map(el => el.uplot.axes[1]._splits))`); len(ticks) == 0 ||
		slices.ContainsFunc(ticks, func(v float64) bool { return v != math.Trunc(v) }) {
		t.Errorf("the charts' count axes have ticks %v: want whole numbers", ticks)
	}
	b.screenshot(t, "overview")

	eventually(t, 10*time.Second, func() string {
		b.visit(t, base, "/running", "", key)
		if h := b.text(t, "#running td.holder"); !strings.HasPrefix(h, "holder (") {
			return "Running now names the holder as " + strconv.Quote(h)
		}
		return ""
	})
	b.screenshot(t, "running")
	b.visit(t, base, "/jobs", "jobs", key)
	first := eval[string](t, b, `document.querySelector('#joblist tbody tr[data-job]').dataset.job`)
	html := b.visit(t, base, "/jobs/"+first, "job", key)
	if !strings.Contains(html, "commandName") {
		t.Errorf("the job page does not show the decoded payload")
	}
	b.visit(t, base, "/failed", "failed", key)
	b.visit(t, base, "/control", "control", key)
	killGroup(holder.cmd)
}

func toString(m map[string]queueCells) string {
	var parts []string
	for k, v := range m {
		parts = append(parts, k+":"+strconv.FormatInt(v.Ready, 10)+"/"+strconv.FormatInt(v.Delayed, 10)+"/"+
			strconv.FormatInt(v.Reserved, 10)+"/"+strconv.FormatInt(v.Expired, 10)+"/"+strconv.FormatInt(v.Failed, 10))
	}
	return strings.Join(parts, " ")
}

// TestDashboardRetryFromPage: a job PHP failed is selected on the failed
// page, retried after the confirmation, and PHP runs it again.
func TestDashboardRetryFromPage(t *testing.T) { onMariaDB(t, testDashboardRetry) }

func testDashboardRetry(t *testing.T, s *suite) {
	s.artisan(t, "app:dispatch", "throws")
	s.phpWork(t, "--stop-when-empty")
	failed := s.failed(t)
	if len(failed) != 1 {
		t.Fatalf("%d failed jobs, want 1", len(failed))
	}
	uuid := failed[0].UUID
	base, _ := s.startDashboard(t, nil)
	b := newBrowser(t)
	row := `#failedlist tr[data-uuid="` + uuid + `"]`
	eventually(t, 15*time.Second, func() string {
		html := b.visit(t, base, "/failed", "", s.appKey(t))
		if !strings.Contains(html, uuid) {
			return "the failed page does not list " + uuid
		}
		return ""
	})
	b.run(t, chromedp.Click(chromedp.CSS(row+` a`)), chromedp.WaitVisible(chromedp.CSS("#exception")))
	if exc := b.text(t, "#exception"); !strings.Contains(exc, "could not be processed") {
		t.Errorf("the failed job page shows exception %q", exc)
	}
	b.screenshot(t, "failed-job")
	b.visit(t, base, "/failed", "", s.appKey(t))
	b.run(t, chromedp.Click(chromedp.CSS(row+` input[name=id]`)), chromedp.Click(chromedp.CSS("#retry-selected")),
		chromedp.WaitVisible(chromedp.CSS("#confirm")))
	if title := b.text(t, "#confirm-title"); title != "Retry 1 failed job(s)?" {
		t.Errorf("confirmation title %q", title)
	}
	if n := len(s.failed(t)); n != 1 {
		t.Fatalf("the confirmation page changed failed_jobs already (%d rows)", n)
	}
	b.screenshot(t, "confirm")
	b.run(t, chromedp.Click(chromedp.CSS("#confirm")), chromedp.WaitVisible(chromedp.CSS("#notice")))
	if n := b.text(t, "#notice"); !strings.HasPrefix(n, "1 failed job(s) pushed back") {
		t.Errorf("notice %q", n)
	}
	if n := len(s.failed(t)); n != 0 {
		t.Fatalf("%d failed jobs after the retry", n)
	}
	jobs := s.jobs(t)
	if len(jobs) != 1 || jobs[0].UUID != uuid || jobs[0].Attempts != 0 || jobs[0].ReservedAt.Valid {
		t.Fatalf("jobs after the retry: %+v", jobs)
	}
	s.phpWork(t, "--stop-when-empty")
	rs := runsByUUID(s.runs(t))[uuid]
	if len(rs) != 2 || rs[1].Worker != "php" || rs[1].Attempt != 1 {
		t.Errorf("runs of %s: %+v, want a second PHP run on attempt 1", uuid, rs)
	}
}

// TestDashboardPauseStopsGoWorker: a pause clicked on the control page
// stops a running `laraworker work` from claiming within 5 s (jobs
// pushed 5 s after the click stay unclaimed); resume lets it drain them.
func TestDashboardPauseStopsGoWorker(t *testing.T) { onMariaDB(t, testDashboardPause) }

func testDashboardPause(t *testing.T, s *suite) {
	const queue = "pausable"
	s.start(t, s.lwCmd("work", "--queue", queue, "--name", "pausable-worker", "--sleep", "0.2", s.route(`App\Jobs\NoopJob`)))
	s.artisan(t, "app:dispatch", "noop", "--queue="+queue)
	eventually(t, 20*time.Second, func() string {
		if n := len(s.jobs(t)); n != 0 {
			return "the worker did not run the first job"
		}
		return ""
	})
	base, _ := s.startDashboard(t, nil)
	b := newBrowser(t)
	eventually(t, 15*time.Second, func() string {
		html := b.visit(t, base, "/control", "", s.appKey(t))
		if !strings.Contains(html, "pause-worker") {
			return "the control page offers no pause for the worker"
		}
		return ""
	})
	b.run(t, chromedp.Click(chromedp.CSS("#control-workers .pause-worker")), chromedp.WaitVisible(chromedp.CSS("#notice")))
	clicked := time.Now()
	// artisan boots for about a second before it inserts: started 4 s
	// after the click, its rows are written about 5 s after it.
	time.Sleep(4*time.Second - time.Since(clicked))
	s.artisan(t, "app:dispatch", "noop", "--count=3", "--queue="+queue)
	pushed := time.Now()
	time.Sleep(3 * time.Second)
	jobs := s.jobs(t)
	for _, j := range jobs {
		if j.ReservedAt.Valid || j.Attempts != 0 {
			t.Fatalf("job %d was claimed %s after the pause was clicked", j.ID, time.Since(clicked).Round(time.Millisecond))
		}
		if after := j.CreatedAt - clicked.Unix(); after > 5 {
			t.Errorf("job %d was pushed %d s after the click: the test proves less than \"within 5 s\"", j.ID, after)
		}
	}
	if len(jobs) != 3 {
		t.Fatalf("%d jobs left while paused, want 3", len(jobs))
	}
	t.Logf("paused: 3 jobs pushed by %s after the click stayed unclaimed for %s", pushed.Sub(clicked).Round(time.Millisecond), time.Since(pushed).Round(time.Millisecond))
	eventually(t, 10*time.Second, func() string {
		html := b.visit(t, base, "/control", "", s.appKey(t))
		if !strings.Contains(html, "resume-worker") {
			return "the control page does not show the worker paused"
		}
		return ""
	})
	b.screenshot(t, "control-paused")
	b.run(t, chromedp.Click(chromedp.CSS("#control-workers .resume-worker")), chromedp.WaitVisible(chromedp.CSS("#notice")))
	eventually(t, 10*time.Second, func() string {
		if n := len(s.jobs(t)); n != 0 {
			return strconv.Itoa(n) + " jobs left after resume"
		}
		return ""
	})
}

// nonLoopbackIP is an address of this machine other than loopback, or
// "" when it has none.
func nonLoopbackIP() string {
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && !ipn.IP.IsLoopback() && ipn.IP.To4() != nil {
			return ipn.IP.String()
		}
	}
	return ""
}

// TestDashboardRefusesUnauthenticated: on a non-loopback address the
// dashboard does not start without credentials, and with them it
// refuses every request that does not carry them.
func TestDashboardRefusesUnauthenticated(t *testing.T) { onMariaDB(t, testDashboardAuth) }

func testDashboardAuth(t *testing.T, s *suite) {
	port := strconv.Itoa(freePort(t))
	out, err := s.lwCmd("dashboard", "--addr", "0.0.0.0:"+port).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "LARAWORKER_DASHBOARD_TOKEN") {
		t.Fatalf("dashboard on 0.0.0.0 without credentials: %v\n%s", err, out)
	}
	cmd := s.lwCmd("dashboard", "--addr", "0.0.0.0:"+port)
	cmd.Env = append(cmd.Env, "LARAWORKER_DASHBOARD_USER=ops", "LARAWORKER_DASHBOARD_PASSWORD=e2e-basic-pass")
	bg := s.start(t, cmd)
	host := nonLoopbackIP()
	if host == "" {
		t.Log("this machine has no non-loopback IPv4 address; requests go to 127.0.0.1 (the server still binds 0.0.0.0)")
		host = "127.0.0.1"
	}
	base := "http://" + net.JoinHostPort(host, port)
	waitHTTP(t, base+"/assets/app.css", bg)
	for _, path := range []string{"/", "/failed", "/api/series", "/control"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || strings.Contains(string(body), "Queues") {
			t.Errorf("GET %s without credentials: %d", path, resp.StatusCode)
		}
	}
	resp, err := http.PostForm(base+"/control/pause", url.Values{"scope": {"queue"}, "target": {"default"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("POST without credentials: %d", resp.StatusCode)
	}
	req, _ := http.NewRequest("GET", base+"/", nil)
	req.SetBasicAuth("ops", "e2e-basic-pass")
	if resp, err = http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET / with credentials: %v %v", err, resp)
	}
	resp.Body.Close()
	b := newBrowser(t)

	// A token: the browser signs in on /login.
	tokCmd := s.lwCmd("dashboard", "--addr", "0.0.0.0:"+strconv.Itoa(freePort(t)))
	tokPort := tokCmd.Args[len(tokCmd.Args)-1][len("0.0.0.0:"):]
	tokCmd.Env = append(tokCmd.Env, "LARAWORKER_DASHBOARD_TOKEN=e2e-token-0123456789")
	tb := s.start(t, tokCmd)
	tokBase := "http://" + net.JoinHostPort(host, tokPort)
	waitHTTP(t, tokBase+"/assets/app.css", tb)
	// The browser is sent to the sign-in page, and the API refuses it.
	b.run(t, chromedp.Navigate(tokBase+"/"), chromedp.WaitVisible(chromedp.CSS(`input[name=token]`)))
	if st := eval[int64](t, b, `fetch('/api/series').then(r => r.status)`, chromedp.EvalAwaitPromise); st != http.StatusUnauthorized {
		t.Errorf("the browser's API request without a session: %d", st)
	}
	b.screenshot(t, "login")
	b.run(t, chromedp.SendKeys(chromedp.CSS(`input[name=token]`), "e2e-token-0123456789"),
		chromedp.Submit(chromedp.CSS(`input[name=token]`)), chromedp.WaitVisible(chromedp.CSS("#queues")))
}

// TestDashboardRefusesPostWithoutCSRF: a state-changing POST from the
// page's own origin but without the CSRF token is refused and changes
// nothing; the page's own form (with the token) works.
func TestDashboardRefusesPostWithoutCSRF(t *testing.T) { onMariaDB(t, testDashboardCSRF) }

func testDashboardCSRF(t *testing.T, s *suite) {
	base, _ := s.startDashboard(t, nil)
	b := newBrowser(t)
	b.visit(t, base, "/control", "", s.appKey(t))
	post := func(body string) int64 {
		return eval[int64](t, b, `fetch('/control/pause', {method: 'POST', redirect: 'manual',
			headers: {'Content-Type': 'application/x-www-form-urlencoded'}, body: `+strconv.Quote(body)+`}).then(r => r.status)`,
			chromedp.EvalAwaitPromise)
	}
	if st := post("scope=queue&target=default"); st != http.StatusForbidden {
		t.Errorf("POST without the CSRF token: %d, want 403", st)
	}
	if st := post("scope=queue&target=default&_csrf=" + strings.Repeat("a", 64)); st != http.StatusForbidden {
		t.Errorf("POST with a wrong CSRF token: %d, want 403", st)
	}
	var n int64
	if err := s.q.DB().QueryRowContext(s.ctx(t), "select count(*) from laraworker_pauses").Scan(&n); err != nil || n != 0 {
		t.Fatalf("a refused POST paused something: %v %d", err, n)
	}
	// From a client that is not the page (no Origin, no token): refused too.
	resp, err := http.PostForm(base+"/control/pause", url.Values{"scope": {"queue"}, "target": {"default"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("POST without Origin or token: %d", resp.StatusCode)
	}
	token := eval[string](t, b, `document.querySelector('input[name=_csrf]') ? document.querySelector('input[name=_csrf]').value : ''`)
	if token == "" {
		// No queue or worker yet: the page has no form; push a job so
		// that it has one.
		s.artisan(t, "app:dispatch", "noop")
		eventually(t, 10*time.Second, func() string {
			b.visit(t, base, "/control", "", s.appKey(t))
			token = eval[string](t, b, `document.querySelector('input[name=_csrf]') ? document.querySelector('input[name=_csrf]').value : ''`)
			if token == "" {
				return "the control page has no form"
			}
			return ""
		})
	}
	if st := post("scope=queue&target=default&_csrf=" + token); st != 0 && st != http.StatusSeeOther {
		t.Errorf("POST with the page's token: %d", st) // redirect: 'manual' gives an opaque 0
	}
	if err := s.q.DB().QueryRowContext(s.ctx(t), "select count(*) from laraworker_pauses").Scan(&n); err != nil || n != 1 {
		t.Fatalf("the page's own POST did not pause the queue: %v %d", err, n)
	}
}

var _ = context.Background
var _ = appconfig.EngineMySQL
