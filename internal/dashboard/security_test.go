package dashboard

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/clock"
	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/store/database"
)

// The attacks of issue 38 on the dashboard's HTTP layer, each as a test:
// CSRF from another origin of the same site, unbounded bodies, parallel
// guessing, sessions that never end, cookies without Secure.

const testToken = "tok-0123456789abcdef"

// send makes one request with extra headers (pairs) and returns the
// response with its body read.
func (r *rig) send(t *testing.T, method, path string, form url.Values, headers ...string) (*http.Response, string) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, r.http.URL+path, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := r.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

// signIn signs the rig's client in with the token and returns the
// session cookie's value.
func (r *rig) signIn(t *testing.T) string {
	t.Helper()
	r.post(t, "/login", url.Values{"token": {testToken}}, 303)
	return r.cookie(t, sessionCookie)
}

// cookie is the value of the client's cookie name ("" when none).
func (r *rig) cookie(t *testing.T, name string) string {
	t.Helper()
	u, _ := url.Parse(r.http.URL)
	for _, c := range r.c.Jar.Cookies(u) {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}

// withCookie is a new client of the same server holding only the cookie
// name=value (another browser, or an attacker replaying a value).
func (r *rig) withCookie(t *testing.T, name, value string) *rig {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	u, _ := url.Parse(r.http.URL)
	if value != "" {
		jar.SetCookies(u, []*http.Cookie{{Name: name, Value: value, Path: "/"}})
	}
	c := *r
	c.c = &http.Client{Jar: jar, CheckRedirect: r.c.CheckRedirect}
	return &c
}

// changes are the dashboard's state-changing requests, each with a form
// that would change something.
func changes(batch string) map[string]url.Values {
	return map[string]url.Values{
		"/control/pause":  {"scope": {"queue"}, "target": {"default"}},
		"/control/resume": {"scope": {"queue"}, "target": {"default"}},
		"/failed/retry":   {"class": {`App\Jobs\NoopJob`}, "confirm": {"yes"}},
		"/failed/forget":  {"class": {`App\Jobs\NoopJob`}, "confirm": {"yes"}},
		"/batches/cancel": {"batch": {batch}, "confirm": {"yes"}},
		"/batches/retry":  {"batch": {batch}, "confirm": {"yes"}},
	}
}

// tableState is what the changes would alter.
func tableState(t *testing.T, r *rig) string {
	t.Helper()
	p, err := r.fl.Pauses(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b, err := r.q.FindBatch(context.Background(), csrfBatch)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join([]string{itoa(int64(len(p))), itoa(int64(len(testdb.FailedRows(t, r.q)))), itoa(int64(len(testdb.JobRows(t, r.q)))),
		itoa(b.PendingJobs), strconv.FormatBool(b.Cancelled())}, " ")
}

const csrfBatch = "0c000000-0000-0000-0000-000000000003"

// seedForChanges: two failed jobs (one of NoopJob), a pending batch
// holding the other.
func seedForChanges(t *testing.T, q *database.Queue) {
	t.Helper()
	seed(t, q)
	rows := testdb.FailedRows(t, q)
	insertBatch(t, q, csrfBatch, "Import", 3, 2, 1, `["`+rows[1].UUID+`"]`, false)
}

// TestCSRFRefusesSameSiteAttacks: a page on another port of the host (or
// a sibling subdomain) can plant cookies and send forms with Origin:
// null; none of its forms may change anything, on a dashboard without
// credentials and on a token dashboard with a signed-in victim, for
// every state-changing request. The dashboard's own form still works.
func TestCSRFRefusesSameSiteAttacks(t *testing.T) {
	q := testdb.Open(t, testdb.Config(t, appconfig.EngineSQLite))
	seedForChanges(t, q)
	for _, mode := range []struct {
		name string
		opt  Options
	}{{"no credentials", Options{}}, {"token", Options{Auth: Auth{Token: testToken}}}} {
		t.Run(mode.name, func(t *testing.T) {
			r := newRig(t, q, mode.opt)
			if mode.opt.Auth.Token != "" {
				r.signIn(t)
			}
			// What the attacker plants: the double-submit cookie of old.
			planted := strings.Repeat("ab", 32)
			u, _ := url.Parse(r.http.URL)
			r.c.Jar.SetCookies(u, []*http.Cookie{{Name: "laraworker_csrf", Value: planted, Path: "/"}})
			own := r.csrf(t)
			before := tableState(t, r)
			attacks := []struct {
				name    string
				token   string
				headers []string
			}{
				{"no-referrer form: Origin null, planted token", planted, []string{"Origin", "null", "Sec-Fetch-Site", "same-site"}},
				{"Origin null, the page's token", own, []string{"Origin", "null"}},
				{"another port", own, []string{"Origin", "http://127.0.0.1:1", "Sec-Fetch-Site", "same-site"}},
				{"a sibling subdomain", own, []string{"Origin", "http://evil.localhost", "Sec-Fetch-Site", "same-site"}},
				{"no Origin, Sec-Fetch-Site same-site", own, []string{"Sec-Fetch-Site", "same-site"}},
				{"neither Origin nor Sec-Fetch-Site", own, nil},
				{"own origin, planted token", planted, []string{"Origin", r.http.URL}},
				{"own origin, another session's token", r.otherToken(t, mode.opt), []string{"Origin", r.http.URL}},
			}
			for path, form := range changes(csrfBatch) {
				for _, a := range attacks {
					f := url.Values{"_csrf": {a.token}}
					for k, v := range form {
						f[k] = v
					}
					if resp, body := r.send(t, "POST", path, f, a.headers...); resp.StatusCode != http.StatusForbidden {
						t.Errorf("%s %s: %d, want 403\n%s", path, a.name, resp.StatusCode, body)
					}
				}
			}
			if after := tableState(t, r); after != before {
				t.Fatalf("refused requests changed the tables: %s -> %s", before, after)
			}
			// The page's own form, from its origin (Sec-Fetch-Site alone,
			// as a browser that sends no Origin would, works too).
			r.post(t, "/control/pause", url.Values{"_csrf": {own}, "scope": {"queue"}, "target": {"default"}}, 303)
			if resp, _ := r.send(t, "POST", "/control/resume", url.Values{"_csrf": {own}, "scope": {"queue"}, "target": {"default"}}, "Sec-Fetch-Site", "same-origin"); resp.StatusCode != 303 {
				t.Errorf("resume with Sec-Fetch-Site: same-origin: %d", resp.StatusCode)
			}
			if after := tableState(t, r); after != before {
				t.Errorf("pause and resume left %s, want %s", after, before)
			}
		})
	}
}

// otherToken is the CSRF token of another browser's session (token
// dashboard) or "" (there is one token per process without credentials,
// and then an empty token stands in).
func (r *rig) otherToken(t *testing.T, opt Options) string {
	t.Helper()
	if opt.Auth.Token == "" {
		return ""
	}
	other := r.withCookie(t, "", "")
	other.signIn(t)
	tok := other.csrf(t)
	if tok == r.csrf(t) {
		t.Fatal("two sessions have the same CSRF token")
	}
	return tok
}

// countingBody is an endless body of 'a's that counts what is read.
type countingBody struct {
	mu   sync.Mutex
	read int64
	size int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.read >= b.size {
		return 0, io.EOF
	}
	n := min(int64(len(p)), b.size-b.read)
	for i := range p[:n] {
		p[i] = 'a'
	}
	b.read += n
	return int(n), nil
}

// TestBodiesAreBounded: a 9 MB form to /login or to a change is refused
// with 413 after reading at most its limit (plus the byte that shows it
// is over); a request refused before (no credentials, wrong origin) reads
// none of it; a multipart body is refused.
func TestBodiesAreBounded(t *testing.T) {
	q := testdb.Open(t, testdb.Config(t, appconfig.EngineSQLite))
	open := newRig(t, q, Options{})
	token := newRig(t, q, Options{Auth: Auth{Token: testToken}})
	const big = 9 << 20
	for _, c := range []struct {
		name     string
		srv      *Server
		path     string
		headers  []string
		status   int
		maxRead  int64
		wantText string
	}{
		{"sign-in", token.srv, "/login", []string{"Origin", "http://dash.example"}, 413, loginBodyMax + 1, "request body over 8192 bytes"},
		{"a change", open.srv, "/control/pause", []string{"Origin", "http://127.0.0.1:1", "Host", "127.0.0.1:1"}, 413, changeBodyMax + 1, "request body over 1048576 bytes"},
		{"a change without credentials", token.srv, "/control/pause", []string{"Origin", "http://dash.example"}, 401, 0, ""},
		{"a change from another origin", open.srv, "/control/pause", []string{"Origin", "http://127.0.0.1:2", "Host", "127.0.0.1:1"}, 403, 0, ""},
		{"multipart", token.srv, "/login", []string{"Origin", "http://dash.example", "Content-Type", "multipart/form-data; boundary=x"}, 415, 0, ""},
	} {
		body := &countingBody{size: big}
		req := httptest.NewRequest("POST", "http://dash.example/", body)
		req.URL.Path = c.path
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for i := 0; i+1 < len(c.headers); i += 2 {
			if c.headers[i] == "Host" {
				req.Host = c.headers[i+1]
			}
			req.Header.Set(c.headers[i], c.headers[i+1])
		}
		w := httptest.NewRecorder()
		c.srv.ServeHTTP(w, req)
		if w.Code != c.status || !strings.Contains(w.Body.String(), c.wantText) {
			t.Errorf("%s: %d %q, want %d %q", c.name, w.Code, w.Body.String(), c.status, c.wantText)
		}
		if body.read > c.maxRead {
			t.Errorf("%s: the handler read %d bytes of the body, the limit is %d", c.name, body.read, c.maxRead)
		}
	}
}

// TestParallelLargeSignIns: 24 clients each posting 9 MB to /login at
// once over a real connection all get 413 (the attack of issue 38 took
// the process from 37 to 422 MB).
func TestParallelLargeSignIns(t *testing.T) {
	q := testdb.Open(t, testdb.Config(t, appconfig.EngineSQLite))
	r := newRig(t, q, Options{Auth: Auth{Token: testToken}})
	payload := "token=" + strings.Repeat("x", 9<<20)
	var wg sync.WaitGroup
	statuses := make(chan int, 24)
	for range 24 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("POST", r.http.URL+"/login", strings.NewReader(payload))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Origin", r.http.URL)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			statuses <- resp.StatusCode
		}()
	}
	wg.Wait()
	close(statuses)
	for st := range statuses {
		if st != http.StatusRequestEntityTooLarge {
			t.Errorf("a 9 MB sign-in: %d, want 413", st)
		}
	}
}

// parallel runs n copies of do at once and counts their statuses.
func parallel(n int, do func() int) map[int]int {
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := make(chan struct{})
	got := map[int]int{}
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			st := do()
			mu.Lock()
			got[st]++
			mu.Unlock()
		}()
	}
	close(start)
	wg.Wait()
	return got
}

// TestGuessesAreLimited: 40 wrong tokens sent at once to /login, and 20
// wrong bearer tokens at once, are compared at most 5 times (the free
// failures); the rest are refused with 429 and Retry-After, the right
// token too, until the lockout ends. Basic credentials alike.
func TestGuessesAreLimited(t *testing.T) {
	q := testdb.Open(t, testdb.Config(t, appconfig.EngineSQLite))
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	r := newRig(t, q, Options{Auth: Auth{Token: testToken}, clock: clk})
	login := func(token string) int {
		resp, _ := r.withCookie(t, "", "").send(t, "POST", "/login", url.Values{"token": {token}}, "Origin", r.http.URL)
		return resp.StatusCode
	}
	got := parallel(40, func() int { return login("wrong-token-000000") })
	if got[401] != 5 || got[429] != 35 {
		t.Fatalf("40 parallel wrong sign-ins: %v, want 5 compared (401) and 35 refused (429)", got)
	}
	resp, _ := r.send(t, "POST", "/login", url.Values{"token": {testToken}}, "Origin", r.http.URL)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "1" {
		t.Fatalf("the right token during the lockout: %d, Retry-After %q; want 429, 1", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	clk.Advance(time.Second)
	if st := login(testToken); st != 303 {
		t.Fatalf("the right token after the lockout: %d", st)
	}
	bearer := func(token string) int {
		resp, _ := r.withCookie(t, "", "").send(t, "GET", "/api/series", nil, "Authorization", "Bearer "+token)
		return resp.StatusCode
	}
	got = parallel(20, func() int { return bearer("wrong-token-000000") })
	if got[401] != 5 || got[429] != 15 {
		t.Fatalf("20 parallel wrong bearer tokens: %v, want 5 compared (401) and 15 refused (429)", got)
	}
	if st := bearer(testToken); st != 429 {
		t.Errorf("the right bearer token during the lockout: %d", st)
	}
	clk.Advance(2 * time.Second)
	if st := bearer(testToken); st != 200 {
		t.Errorf("the right bearer token after the lockout: %d", st)
	}

	basic := newRig(t, q, Options{Auth: Auth{User: "ops", Password: "pass-for-basic"}, clock: clk})
	got = parallel(20, func() int {
		req, _ := http.NewRequest("GET", basic.http.URL+"/api/series", nil)
		req.SetBasicAuth("ops", "wrong")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	})
	if got[401] != 5 || got[429] != 15 {
		t.Fatalf("20 parallel wrong basic passwords: %v", got)
	}
}

// TestGuessesFromManyClients: guesses spread over many addresses (one
// each, through a trusted proxy) lock everyone out after the global
// budget.
func TestGuessesFromManyClients(t *testing.T) {
	q := testdb.Open(t, testdb.Config(t, appconfig.EngineSQLite))
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	r := newRig(t, q, Options{Auth: Auth{Token: testToken}, clock: clk, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})
	from := func(ip, token string) int {
		resp, _ := r.send(t, "GET", "/api/series", nil, "Authorization", "Bearer "+token, "X-Forwarded-For", ip)
		return resp.StatusCode
	}
	for i := range 100 {
		if st := from("198.51.100."+itoa(int64(i)), "wrong-token-000000"); st != 401 {
			t.Fatalf("guess %d from its own address: %d, want 401", i, st)
		}
	}
	if st := from("203.0.113.1", testToken); st != 429 {
		t.Fatalf("after 100 failures from 100 addresses, a new one: %d, want 429", st)
	}
	clk.Advance(time.Second)
	if st := from("203.0.113.1", testToken); st != 200 {
		t.Fatalf("after the global lockout: %d", st)
	}
}

// TestSessionsEnd: sign-out ends the session on the server (its cookie,
// replayed, is refused); a session ends after SessionIdle without a
// request and SessionLifetime after it began, on the fake clock; every
// sign-in makes a new id, and an id planted before it never becomes a
// session.
func TestSessionsEnd(t *testing.T) {
	q := testdb.Open(t, testdb.Config(t, appconfig.EngineSQLite))
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	const idle, life = 10 * time.Minute, time.Hour
	r := newRig(t, q, Options{Auth: Auth{Token: testToken}, clock: clk, SessionIdle: idle, SessionLifetime: life})
	signedIn := func(id string) bool {
		resp, _ := r.withCookie(t, sessionCookie, id).send(t, "GET", "/", nil)
		return resp.StatusCode == 200
	}

	planted := strings.Repeat("cd", 32)
	victim := r.withCookie(t, sessionCookie, planted)
	first := victim.signIn(t)
	if first == planted || signedIn(planted) {
		t.Fatal("the id planted before sign-in became the session")
	}
	second := victim.signIn(t)
	if second == first || signedIn(first) || !signedIn(second) {
		t.Fatal("signing in again did not replace the session")
	}
	resp, _ := victim.send(t, "POST", "/logout", url.Values{"_csrf": {victim.csrf(t)}}, "Origin", r.http.URL)
	if resp.StatusCode != 303 || resp.Header.Get("Location") != "/login" {
		t.Fatalf("sign out: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	if signedIn(second) {
		t.Fatal("the session cookie still works after sign-out")
	}
	if resp, _ := r.withCookie(t, sessionCookie, second).send(t, "GET", "/api/series", nil); resp.StatusCode != 401 {
		t.Errorf("the API with a signed-out cookie: %d", resp.StatusCode)
	}
	// Signing out of an ended session clears its cookie and goes to /login.
	if resp, _ := victim.send(t, "POST", "/logout", url.Values{}, "Origin", r.http.URL); resp.StatusCode != 303 || resp.Header.Get("Location") != "/login" {
		t.Errorf("sign out of an ended session: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}

	id := r.withCookie(t, "", "").signIn(t)
	clk.Advance(idle - time.Second)
	if !signedIn(id) {
		t.Fatal("a session ended before it was idle for SessionIdle")
	}
	clk.Advance(idle - time.Second) // used a moment ago: still on
	if !signedIn(id) {
		t.Fatal("a request did not keep the session on")
	}
	clk.Advance(idle)
	if signedIn(id) {
		t.Fatal("a session idle for SessionIdle is still on")
	}

	id = r.withCookie(t, "", "").signIn(t)
	began := clk.Now()
	for clk.Now().Sub(began) < life-idle/2 {
		clk.Advance(idle / 2)
		if !signedIn(id) {
			t.Fatalf("a busy session ended %s after it began", clk.Now().Sub(began))
		}
	}
	clk.Advance(idle / 2)
	if signedIn(id) {
		t.Fatalf("a busy session is still on %s after it began (lifetime %s)", clk.Now().Sub(began), life)
	}
}

// sessionSetCookie signs in and returns the session's Set-Cookie.
func sessionSetCookie(t *testing.T, c *http.Client, base string, headers ...string) *http.Cookie {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/login", strings.NewReader("token="+testToken))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, ck := range resp.Cookies() {
		if ck.Name == sessionCookie {
			return ck
		}
	}
	t.Fatalf("sign-in: %d, no session cookie", resp.StatusCode)
	return nil
}

// TestSessionCookieSecure: the cookie is HttpOnly, SameSite=Strict and
// has the session's lifetime; it is Secure over TLS and behind a trusted
// proxy that says https, not when an untrusted client says so.
func TestSessionCookieSecure(t *testing.T) {
	q := testdb.Open(t, testdb.Config(t, appconfig.EngineSQLite))
	plain := newRig(t, q, Options{Auth: Auth{Token: testToken}})
	ck := sessionSetCookie(t, plain.c, plain.http.URL, "Origin", plain.http.URL, "X-Forwarded-Proto", "https")
	if ck.Secure || !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.MaxAge != int(DefaultSessionLifetime/time.Second) || ck.Path != "/" {
		t.Errorf("over plain HTTP, X-Forwarded-Proto from an untrusted client: %+v", ck)
	}

	tlsSrv := httptest.NewTLSServer(plain.srv)
	defer tlsSrv.Close()
	c := tlsSrv.Client()
	c.CheckRedirect = plain.c.CheckRedirect
	if ck := sessionSetCookie(t, c, tlsSrv.URL, "Origin", tlsSrv.URL); !ck.Secure {
		t.Errorf("over TLS the cookie is not Secure: %+v", ck)
	}

	proxied := newRig(t, q, Options{Auth: Auth{Token: testToken}, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	host := strings.TrimPrefix(proxied.http.URL, "http://")
	if ck := sessionSetCookie(t, proxied.c, proxied.http.URL, "Origin", "https://"+host, "X-Forwarded-Proto", "https"); !ck.Secure {
		t.Errorf("behind a trusted proxy saying https the cookie is not Secure: %+v", ck)
	}
	// Behind the proxy, the page's origin is https: a form posted with
	// the http origin comes from elsewhere.
	resp, _ := proxied.send(t, "POST", "/login", url.Values{"token": {testToken}}, "Origin", "http://"+host, "X-Forwarded-Proto", "https")
	if resp.StatusCode != 403 {
		t.Errorf("behind an https proxy, Origin http://%s: %d, want 403", host, resp.StatusCode)
	}
}
