package dashboard

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/dashboard/snapshot"
	"github.com/laraworker/laraworker/internal/fleet"
	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/store/database"
	"github.com/rs/zerolog"
)

// Secrets the pages must never show, planted in a failed job's
// exception and a payload.
const (
	dbPassword = "pw-Zq81-secret"
	appKey     = "base64:c2VjcmV0LWtleS1mb3ItdGhlLWRhc2hib2FyZC10ZXN0"
)

type rig struct {
	q    *database.Queue
	fl   *fleet.Store
	srv  *Server
	http *httptest.Server
	c    *http.Client
}

// newRig serves a dashboard on q over a loopback httptest server, with
// a client that keeps cookies.
func newRig(t *testing.T, q *database.Queue, opt Options) *rig {
	t.Helper()
	r := &rig{q: q, fl: fleetFor(t, q)}
	if opt.Secrets == nil {
		opt.Secrets = []string{dbPassword, appKey}
	}
	opt.Tables, opt.Store, opt.Fleet, opt.Logger = tablesOf(q), q, r.fl, zerolog.Nop()
	srv, err := New(opt)
	if err != nil {
		t.Fatal(err)
	}
	r.srv = srv
	ctx, cancel := context.WithCancel(context.Background())
	go srv.Snapshot().Run(ctx)
	t.Cleanup(cancel)
	r.http = httptest.NewServer(srv)
	t.Cleanup(r.http.Close)
	jar, _ := cookiejar.New(nil)
	r.c = &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	r.refresh(t)
	return r
}

func (r *rig) refresh(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := r.srv.Snapshot().Refreshed(ctx); err != nil {
		t.Fatal(err)
	}
}

func (r *rig) get(t *testing.T, path string, wantStatus int) string {
	t.Helper()
	resp, err := r.c.Get(r.http.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != wantStatus {
		t.Fatalf("GET %s: %d, want %d\n%s", path, resp.StatusCode, wantStatus, b)
	}
	body := string(b)
	for _, secret := range []string{dbPassword, appKey, strings.TrimPrefix(appKey, "base64:")} {
		if strings.Contains(body, secret) {
			t.Fatalf("GET %s shows a secret", path)
		}
	}
	return body
}

// csrf is the CSRF token the dashboard's pages give this client (its
// session's).
func (r *rig) csrf(t *testing.T) string {
	t.Helper()
	return csrfIn(t, r.get(t, "/", 200))
}

var csrfMeta = regexp.MustCompile(`<meta name="csrf-token" content="([0-9a-f]{64})">`)

// csrfIn is the CSRF token a page carries.
func csrfIn(t *testing.T, page string) string {
	t.Helper()
	m := csrfMeta.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no CSRF token in the page: %.2000s", page)
	}
	return m[1]
}

// post sends a form as the dashboard's own page would: from its origin.
func (r *rig) post(t *testing.T, path string, form url.Values, wantStatus int) *http.Response {
	t.Helper()
	return r.postFrom(t, r.http.URL, path, form, wantStatus)
}

// postFrom sends a form with the Origin header origin ("": none).
func (r *rig) postFrom(t *testing.T, origin, path string, form url.Values, wantStatus int) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("POST", r.http.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	resp, err := r.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != wantStatus {
		t.Fatalf("POST %s: %d, want %d\n%s", path, resp.StatusCode, wantStatus, b)
	}
	return resp
}

// seed pushes two jobs (one delayed) and two failed jobs whose exception
// and payload hold the secrets.
func seed(t *testing.T, q *database.Queue) {
	t.Helper()
	ctx := context.Background()
	if err := q.PushMany(ctx, []jobqueue.PushItem{
		{Queue: "default", Payload: fixture(t, "scalars", "")},
		{Queue: "mail", Payload: fixture(t, "noop", ""), Delay: time.Hour},
	}); err != nil {
		t.Fatal(err)
	}
	for i, p := range [][]byte{fixture(t, "noop", ""), []byte(strings.Replace(string(fixture(t, "scalars", "")), "Héllo", dbPassword, 1))} {
		if _, err := q.Push(ctx, jobqueue.PushItem{Queue: "default", Payload: p}); err != nil {
			t.Fatal(err)
		}
		jobs, err := q.Claim(ctx, []string{"default"}, 5, jobqueue.ClaimOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range jobs {
			if string(j.Payload) != string(p) {
				if err := q.Unreserve(ctx, j); err != nil {
					t.Fatal(err)
				}
				continue
			}
			exc := "RuntimeException: the key " + appKey + " and " + dbPassword + " leaked " + string(rune('A'+i)) + " in /app/Jobs/X.php:12\nStack trace:\n#0 {main}"
			if err := q.Fail(ctx, j, fleet.UUIDOf(j.Payload), exc, jobqueue.Followup{}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func TestPagesShowTheTables(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, q *database.Queue) {
		seed(t, q)
		r := newRig(t, q, Options{})
		home := r.get(t, "/", 200)
		for _, want := range []string{`data-queue="default"`, `data-queue="mail"`, "Workers", "Throughput"} {
			if !strings.Contains(home, want) {
				t.Errorf("overview lacks %s", want)
			}
		}
		sum := r.srv.Snapshot().Current()
		if len(sum.Queues) != 2 || sum.Queues[0].Ready != 1 || sum.Queues[1].Delayed != 1 || sum.FailedTotal != 2 {
			t.Errorf("summary: %+v failed %d", sum.Queues, sum.FailedTotal)
		}
		r.get(t, "/running", 200)
		jobs := r.get(t, "/jobs", 200)
		if !strings.Contains(jobs, `App\Jobs\ScalarsJob`) || !strings.Contains(jobs, "within an hour") {
			t.Errorf("jobs page: %.2000s", jobs)
		}
		one := r.get(t, "/jobs/"+itoa(firstJob(t, r, snapshot.JobFilter{Queue: "default"}).ID), 200)
		if !strings.Contains(one, `&#34;podcastId&#34;`) || !strings.Contains(one, `Héllo`) {
			t.Errorf("job page does not show the decoded command: %.3000s", one)
		}
		failed := r.get(t, "/failed", 200)
		if !strings.Contains(failed, "[redacted]") || strings.Count(failed, `data-uuid=`) != 2 {
			t.Errorf("failed page: %.3000s", failed)
		}
		fids, _ := r.srv.Snapshot().FailedIDs(snapshot.FailedFilter{}, 0, 10)
		detail := r.get(t, "/failed/"+itoa(fids[0]), 200)
		if !strings.Contains(detail, "RuntimeException") || !strings.Contains(detail, "Stack trace") {
			t.Errorf("failed job page: %.3000s", detail)
		}
		search := r.get(t, "/failed?q=leaked+B", 200)
		if strings.Count(search, `data-uuid=`) != 1 {
			t.Errorf("exception search found %d rows", strings.Count(search, `data-uuid=`))
		}
		byClass := r.get(t, "/failed?class="+url.QueryEscape(`App\Jobs\NoopJob`), 200)
		if strings.Count(byClass, `data-uuid=`) != 1 {
			t.Errorf("class filter found %d rows", strings.Count(byClass, `data-uuid=`))
		}
		r.get(t, "/control", 200)
		r.get(t, "/api/series?span=day", 200)
		r.get(t, "/jobs/999999999", 404)
	})
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// firstJob is the first job the snapshot lists for f.
func firstJob(t *testing.T, r *rig, f snapshot.JobFilter) snapshot.JobRow {
	t.Helper()
	rows, _, err := r.srv.Snapshot().Jobs().List(context.Background(), f, "", 1)
	if err != nil || len(rows) == 0 {
		t.Fatalf("no job listed for %+v: %v", f, err)
	}
	return rows[0]
}

func TestRetryAndForgetFromThePage(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, q *database.Queue) {
		seed(t, q)
		r := newRig(t, q, Options{})
		r.get(t, "/failed", 200)
		tok := r.csrf(t)
		fids, _ := r.srv.Snapshot().FailedIDs(snapshot.FailedFilter{}, 0, 10)
		// Without confirm: a confirmation page, nothing changes.
		confirm := r.post(t, "/failed/retry", url.Values{"_csrf": {tok}, "id": {itoa(fids[0])}}, 200)
		_ = confirm
		if n := len(testdb.FailedRows(t, q)); n != 2 {
			t.Fatalf("retry without confirmation changed failed_jobs: %d rows", n)
		}
		before := len(testdb.JobRows(t, q))
		r.post(t, "/failed/retry", url.Values{"_csrf": {tok}, "id": {itoa(fids[0])}, "confirm": {"yes"}}, 303)
		if n := len(testdb.FailedRows(t, q)); n != 1 {
			t.Errorf("%d failed rows after retry, want 1", n)
		}
		if n := len(testdb.JobRows(t, q)); n != before+1 {
			t.Errorf("%d jobs after retry, want %d", n, before+1)
		}
		r.post(t, "/failed/forget", url.Values{"_csrf": {tok}, "class": {`App\Jobs\NoopJob`}, "confirm": {"yes"}}, 303)
		rest := testdb.FailedRows(t, q)
		for _, f := range rest {
			if strings.Contains(f.Payload, `App\\Jobs\\NoopJob`) {
				t.Errorf("forget all of NoopJob left %s", f.UUID)
			}
		}
	})
}

func TestCSRFAndReadOnly(t *testing.T) {
	q := testdb.Open(t, testdb.Config(t, appconfig.EngineSQLite))
	r := newRig(t, q, Options{})
	form := url.Values{"scope": {"queue"}, "target": {"default"}}
	r.post(t, "/control/pause", form, 403) // no cookie, no token
	r.get(t, "/control", 200)
	r.post(t, "/control/pause", form, 403) // cookie, no token
	form.Set("_csrf", strings.Repeat("0", 64))
	r.post(t, "/control/pause", form, 403) // wrong token
	form.Set("_csrf", r.csrf(t))
	r.post(t, "/control/pause", form, 303)
	if p, err := r.fl.Pauses(context.Background()); err != nil || len(p) != 1 || p[0].Target != "default" {
		t.Fatalf("pauses after the page's pause: %v %+v", err, p)
	}
	r.post(t, "/control/resume", form, 303)
	if p, _ := r.fl.Pauses(context.Background()); len(p) != 0 {
		t.Fatalf("pauses after resume: %+v", p)
	}

	ro := newRig(t, q, Options{ReadOnly: true})
	page := ro.get(t, "/control", 200)
	if strings.Contains(page, "<form method=\"post\"") {
		t.Error("a read-only page offers a form that changes state")
	}
	form.Set("_csrf", ro.csrf(t))
	ro.post(t, "/control/pause", form, 403)
}

func TestAuthentication(t *testing.T) {
	q := testdb.Open(t, testdb.Config(t, appconfig.EngineSQLite))
	if err := CheckBind("0.0.0.0:8089", Auth{}); err == nil {
		t.Error("CheckBind accepted a public address without credentials")
	}
	if err := CheckBind("127.0.0.1:8089", Auth{}); err != nil {
		t.Error(err)
	}
	basic := newRig(t, q, Options{Auth: Auth{User: "ops", Password: "pass-for-basic"}})
	basic.get(t, "/", 401)
	req, _ := http.NewRequest("GET", basic.http.URL+"/", nil)
	req.SetBasicAuth("ops", "pass-for-basic")
	if resp, err := basic.c.Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("basic auth: %v %v", err, resp)
	}
	token := newRig(t, q, Options{Auth: Auth{Token: "tok-0123456789abcdef"}})
	token.get(t, "/", 303) // to /login
	token.get(t, "/api/series", 401)
	token.post(t, "/login", url.Values{"token": {"nope"}}, 401)
	token.post(t, "/login", url.Values{"token": {"tok-0123456789abcdef"}}, 303)
	token.get(t, "/", 200)

	// Without credentials only localhost names are served (DNS rebinding).
	open := newRig(t, q, Options{})
	req, _ = http.NewRequest("GET", open.http.URL+"/", nil)
	req.Host = "evil.example:80"
	if resp, err := open.c.Do(req); err != nil || resp.StatusCode != 403 {
		t.Fatalf("foreign Host: %v %v", err, resp.StatusCode)
	}
}

func TestHidePayloads(t *testing.T) {
	q := testdb.Open(t, testdb.Config(t, appconfig.EngineSQLite))
	seed(t, q)
	r := newRig(t, q, Options{HidePayloads: true})
	fids, _ := r.srv.Snapshot().FailedIDs(snapshot.FailedFilter{}, 0, 10)
	for _, path := range []string{"/failed", "/failed/" + itoa(fids[0]), "/failed/" + itoa(fids[1]), "/failed?q=leaked"} {
		page := r.get(t, path, 200)
		if strings.Contains(page, "leaked") || strings.Contains(page, "podcastId") || strings.Contains(page, "Stack trace") {
			t.Errorf("%s shows hidden text", path)
		}
	}
	if page := r.get(t, "/jobs/"+itoa(firstJob(t, r, snapshot.JobFilter{}).ID), 200); strings.Contains(page, "podcastId") {
		t.Error("a job page shows the command with --hide-payloads")
	}
}
