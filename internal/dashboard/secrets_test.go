package dashboard

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"html"
	"html/template"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/laraworker/laraworker/internal/dashboard/snapshot"
	"github.com/laraworker/laraworker/internal/fleet"
	"github.com/laraworker/laraworker/internal/phpjson"
	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/internal/visible"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/laravel/phpserialize"
	"github.com/laraworker/laraworker/store/database"
)

// The attack: a DB password with + / & < > ' and an APP_KEY with
// + and /, in a failed job's exception and in payloads as PHP writes them.
const (
	hostilePassword = `Zq+8/&<>'pw`
	// hostileKey's base64 holds both + and /; about 3 random keys in 4 do.
	hostileKey = "base64:q+/7VkB8d2hQmF3xY1sTz9oWc4eLrN0uK6gJ5iAaPpE="
)

// secretLeaks lists the ways text shows secret on a page or in JSON, each
// computed with the standard library or PHP's rules (not with the
// redaction code): as written, as html/template escapes it in text and in
// attributes, as PHP's json_encode and Go's encoding/json escape it, JSON
// escaped again for HTML, and URL-encoded.
func secretLeaks(secret string) map[string]string {
	php, _ := phpjson.String(secret, 0)
	phpU, _ := phpjson.String(secret, phpjson.UnescapedUnicode)
	goj, _ := json.Marshal(secret)
	forms := map[string]string{"raw": secret, "php json": php[1 : len(php)-1], "php json unicode": phpU[1 : len(phpU)-1], "go json": string(goj[1 : len(goj)-1]), "query": url.QueryEscape(secret)}
	for name, f := range map[string]string{"raw": secret, "php json": php[1 : len(php)-1], "go json": string(goj[1 : len(goj)-1])} {
		var b strings.Builder
		_ = template.Must(template.New("").Parse(`{{.}}`)).Execute(&b, f)
		forms["html "+name] = b.String()
		forms["html.EscapeString "+name] = html.EscapeString(f)
	}
	return forms
}

// keyLeaks adds an APP_KEY's other spellings: without its prefix, its raw
// bytes' URL and unpadded base64.
func keyLeaks(key string) map[string]string {
	body := strings.TrimPrefix(key, "base64:")
	raw, _ := base64.StdEncoding.DecodeString(body)
	out := map[string]string{}
	for _, s := range []string{key, body, base64.RawStdEncoding.EncodeToString(raw), base64.URLEncoding.EncodeToString(raw), base64.RawURLEncoding.EncodeToString(raw)} {
		for name, f := range secretLeaks(s) {
			out[s[:6]+" "+name] = f
		}
	}
	return out
}

// assertNoLeak fails when body shows any form of the secrets, or (the
// page text as a browser shows it) the first half of one: a value cut
// short must not show part of a secret.
func assertNoLeak(t *testing.T, what, body string, leaks map[string]string, secrets ...string) {
	t.Helper()
	for name, f := range leaks {
		if f != "" && strings.Contains(body, f) {
			t.Errorf("%s shows a secret (%s: %q)", what, name, f)
		}
	}
	shown := html.UnescapeString(body)
	for _, s := range secrets {
		if half := s[:len(s)/2]; strings.Contains(shown, half) {
			t.Errorf("%s shows the start of a secret (%q)", what, half)
		}
	}
}

// leakyPayload is a job named class, built as Laravel writes it (PHP's
// JSON: "/" as "\/"), whose command holds the secrets as properties, in a
// DSN (URL encoded) and in JSON inside it.
func leakyPayload(t *testing.T, class string, secrets ...string) []byte {
	t.Helper()
	inner, _ := phpjson.StringList(secrets, 0)
	props := []phpserialize.Entry{phpserialize.Public("config", phpserialize.String(`{"secrets":`+inner+`}`))}
	for i, s := range secrets {
		props = append(props, phpserialize.Public("secret"+string(rune('a'+i)), phpserialize.String(s)),
			phpserialize.Public("dsn"+string(rune('a'+i)), phpserialize.String("mysql://app:"+url.QueryEscape(s)+"@db/app")))
	}
	p, err := payload.BuildObjectPayload(phpserialize.Object(`App\Jobs\Leak`, props...), payload.BuildOptions{Shape: payload.ShapeOf(12, 0)})
	if err != nil {
		t.Fatal(err)
	}
	// The class is the payload's displayName (what the pages show) only:
	// a PHP class name cannot hold a secret's characters.
	name, _ := phpjson.String(class, phpjson.UnescapedUnicode)
	return []byte(strings.Replace(string(p), `"displayName":"App\\Jobs\\Leak"`, `"displayName":`+name, 1))
}

// seedLeaks pushes a pending job and fails another, both holding the
// secrets; the failed one's exception has them raw, the first one placed
// across the failed list's 140-character cut.
func seedLeaks(t *testing.T, q *database.Queue, class string, secrets ...string) {
	t.Helper()
	ctx := context.Background()
	if _, err := q.Push(ctx, jobqueue.PushItem{Queue: "leaky", Payload: leakyPayload(t, class, secrets...)}); err != nil {
		t.Fatal(err)
	}
	failing := leakyPayload(t, class, secrets...)
	if _, err := q.Push(ctx, jobqueue.PushItem{Queue: "failing", Payload: failing}); err != nil {
		t.Fatal(err)
	}
	jobs, err := q.Claim(ctx, []string{"failing"}, 1, jobqueue.ClaimOptions{})
	if err != nil || len(jobs) != 1 {
		t.Fatalf("claim: %v %d", err, len(jobs))
	}
	// The first secret straddles the failed list's 140-character cut.
	first := secrets[0]
	exc := "PDOException: SQLSTATE[HY000] [1045] Access denied "
	exc += strings.Repeat("x", 140-len([]rune(exc))-2*len([]rune(first))/3) + first + " (using password: " + strings.Join(secrets, " and ") +
		") in /app/Jobs/Leak.php:12\nStack trace:\n#0 {main}"
	if err := q.Fail(ctx, jobs[0], fleet.UUIDOf(jobs[0].Payload), exc, jobqueue.Followup{}); err != nil {
		t.Fatal(err)
	}
}

// secretPages are every page and JSON endpoint that shows queue data.
func secretPages(t *testing.T, r *rig, q *database.Queue) []string {
	t.Helper()
	pages := []string{"/", "/running", "/jobs", "/jobs?queue=leaky", "/failed", "/failed?queue=failing", "/stats", "/recent",
		"/batches", "/control", "/api/series", "/api/series?span=day"}
	for _, j := range testdb.JobRows(t, q) {
		pages = append(pages, "/jobs/"+itoa(j.ID))
	}
	ids, _ := r.srv.Snapshot().FailedIDs(snapshot.FailedFilter{}, 0, 100)
	for _, id := range ids {
		pages = append(pages, "/failed/"+itoa(id))
	}
	return pages
}

// TestHostileSecretsNeverShown is the attack: a DB password with
// + / & < > ' and an APP_KEY with + and / in a failed job's exception and
// in payloads; no page or JSON endpoint shows either, in any escaping,
// nor the key without its prefix, nor the start of a secret cut short.
func TestHostileSecretsNeverShown(t *testing.T) {
	if !strings.ContainsAny(strings.TrimPrefix(hostileKey, "base64:"), "+") || !strings.Contains(hostileKey[7:], "/") {
		t.Fatal("the key must hold + and /")
	}
	q := testdb.Open(t, testdb.Config(t, appconfig.EngineSQLite))
	keyBody := strings.TrimPrefix(hostileKey, "base64:")
	seedLeaks(t, q, `App\Jobs\Leak`, hostilePassword, hostileKey, keyBody)
	r := newRig(t, q, Options{Secrets: []string{hostilePassword, hostileKey}})
	leaks := secretLeaks(hostilePassword)
	for k, v := range keyLeaks(hostileKey) {
		leaks[k] = v
	}
	for _, path := range secretPages(t, r, q) {
		body := r.getBody(t, path)
		assertNoLeak(t, path, body, leaks, hostilePassword, keyBody)
	}
	if failed := r.getBody(t, "/failed"); !strings.Contains(failed, "x[redac") {
		t.Error("the failed list does not show [redacted] where the secrets were")
	}
}

// postBody is a POST that must answer wantStatus; the body is not checked.
func (r *rig) postBody(t *testing.T, path string, form url.Values, wantStatus int) string {
	t.Helper()
	req, _ := http.NewRequest("POST", r.http.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", r.http.URL) // as the dashboard's own page sends it
	resp, err := r.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != wantStatus {
		t.Fatalf("POST %s: %d, want %d\n%s", path, resp.StatusCode, wantStatus, b)
	}
	return string(b)
}

// getBody is a GET that must answer 200; the body is not checked.
func (r *rig) getBody(t *testing.T, path string) string {
	t.Helper()
	resp, err := r.c.Get(r.http.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d\n%s", path, resp.StatusCode, b)
	}
	return string(b)
}

const printableASCII = " !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~"

// randomSecret is 8 to 40 characters of printable ASCII, one secret in
// three with non-ASCII characters among them.
func randomSecret(r *rand.Rand) string {
	extra := []rune("éñß€✗日😀Ωж")
	withUnicode := r.IntN(3) == 0
	var b strings.Builder
	for range 8 + r.IntN(33) {
		if withUnicode && r.IntN(4) == 0 {
			b.WriteRune(extra[r.IntN(len(extra))])
		} else {
			b.WriteByte(printableASCII[r.IntN(len(printableASCII))])
		}
	}
	return b.String()
}

func randomAppKey(r *rand.Rand) string {
	raw := make([]byte, 32)
	for i := range raw {
		raw[i] = byte(r.IntN(256))
	}
	return "base64:" + base64.StdEncoding.EncodeToString(raw)
}

// TestRandomSecretsNeverShown: random DB passwords and tokens (printable
// ASCII, some non-ASCII) and random APP_KEYs, in pending and failed jobs'
// payloads and exceptions, a queue name and a class name; no page, JSON
// endpoint or error response shows any of them in any escaping.
func TestRandomSecretsNeverShown(t *testing.T) {
	for seed := range uint64(3) {
		t.Run("seed "+itoa(int64(seed)), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 38))
			var secrets, keys []string
			for range 6 {
				secrets = append(secrets, randomSecret(r))
			}
			for range 2 {
				keys = append(keys, randomAppKey(r))
			}
			all := append(append([]string{}, secrets...), keys...)
			q := testdb.Open(t, testdb.Config(t, appconfig.EngineSQLite))
			seedLeaks(t, q, `App\Jobs\Leak`+secrets[1], all...)
			ctx := context.Background()
			if _, err := q.Push(ctx, jobqueue.PushItem{Queue: "q-" + secrets[0], Payload: fixture(t, "noop", "")}); err != nil {
				t.Fatal(err)
			}
			rg := newRig(t, q, Options{Secrets: all})
			leaks := map[string]string{}
			for _, s := range secrets {
				for k, v := range secretLeaks(s) {
					leaks[s+" "+k] = v
				}
			}
			for _, k := range keys {
				for name, v := range keyLeaks(k) {
					leaks[k+" "+name] = v
				}
			}
			var long []string
			for _, s := range all {
				if len(s) >= 16 {
					long = append(long, s)
				}
			}
			pages := append(secretPages(t, rg, q), "/failed?q="+url.QueryEscape(secrets[2]), "/jobs?queue="+url.QueryEscape("q-"+secrets[0]))
			for _, path := range pages {
				assertNoLeak(t, path, rg.getBody(t, path), leaks, long...)
			}
			if series := rg.getBody(t, "/api/series"); !strings.Contains(series, `"label":"App\\Jobs\\Leak[redacted]"`) {
				t.Errorf("/api/series does not name the class with its secret redacted: %s", series)
			}
			// An error answer quotes what was sent.
			for _, s := range all {
				body := rg.postBody(t, "/failed/retry", url.Values{"_csrf": {rg.csrf(t)}, "id": {s}}, 400)
				assertNoLeak(t, "the answer to a retry of id "+s, body, leaks, long...)
			}
		})
	}
}

// TestEveryResponseIsRedacted: a handler that writes secrets straight into
// its answer (no value redacted first: a path the pages' own step would
// miss) still answers without them, as HTML, JSON and text; a secret that
// is a word of the dashboard's markup ("password") or shorter than 8
// bytes is left to the values' step, so the pages stay whole.
func TestEveryResponseIsRedacted(t *testing.T) {
	q := testdb.Open(t, testdb.Config(t, appconfig.EngineSQLite))
	r := newRig(t, q, Options{Secrets: []string{hostilePassword, hostileKey, "password", "short"}})
	php, _ := phpjson.String(hostilePassword+" "+hostileKey, 0)
	r.srv.mux.HandleFunc("GET /test/html", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_ = template.Must(template.New("").Parse(`<pre title="{{.}}">{{.}}</pre>`)).Execute(w, "pw "+php)
	})
	r.srv.mux.HandleFunc("GET /test/json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"pw": hostilePassword, "key": strings.TrimPrefix(hostileKey, "base64:")})
	})
	r.srv.mux.HandleFunc("GET /test/text", func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "failed: "+hostilePassword+" short", http.StatusBadRequest)
	})
	leaks := secretLeaks(hostilePassword)
	for k, v := range keyLeaks(hostileKey) {
		leaks[k] = v
	}
	for _, path := range []string{"/test/html", "/test/json"} {
		body := r.getBody(t, path)
		assertNoLeak(t, path, body, leaks)
		if !strings.Contains(body, "[redacted]") {
			t.Errorf("%s: %s", path, body)
		}
	}
	var doc map[string]string
	if err := json.Unmarshal([]byte(r.getBody(t, "/test/json")), &doc); err != nil || doc["pw"] != "[redacted]" || doc["key"] != "[redacted]" {
		t.Errorf("the JSON answer: %v %v", err, doc)
	}
	if text := r.postOrGet(t, "GET", "/test/text", 400); text != "failed: [redacted] [redacted]\n" {
		t.Errorf("the text answer: %q", text)
	}
	// The token form keeps its password field; "short" and "password" in
	// values are still redacted.
	tok := newRig(t, q, Options{Secrets: []string{"password", "short"}, Auth: Auth{Token: "tok-0123456789abcdef"}})
	if login := tok.postOrGet(t, "GET", "/login", 200); !strings.Contains(login, `type="password"`) {
		t.Errorf("the sign-in page lost its password field: %s", login)
	}
	if _, err := q.Push(context.Background(), jobqueue.PushItem{Queue: "password-short", Payload: fixture(t, "noop", "")}); err != nil {
		t.Fatal(err)
	}
	r2 := newRig(t, q, Options{Secrets: []string{"password", "short"}})
	if home := r2.getBody(t, "/"); strings.Contains(home, "password-short") || !strings.Contains(home, `data-queue="[redacted]-[redacted]"`) {
		t.Errorf("the overview shows a queue named after short or markup-word secrets: %.3000s", home)
	}
}

// postOrGet sends a request without body and returns the answer's body.
func (r *rig) postOrGet(t *testing.T, method, path string, wantStatus int) string {
	t.Helper()
	req, _ := http.NewRequest(method, r.http.URL+path, nil)
	req.Header.Set("Origin", r.http.URL)
	resp, err := r.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != wantStatus {
		t.Fatalf("%s %s: %d, want %d\n%s", method, path, resp.StatusCode, wantStatus, b)
	}
	return string(b)
}

// TestUnknownClassListsNothing: a filter nothing matches lists no failed
// job (an unknown class listed every row), and a retry of an unknown
// class confirms 0 jobs with no preview.
func TestUnknownClassListsNothing(t *testing.T) {
	q := testdb.Open(t, testdb.Config(t, appconfig.EngineSQLite))
	seed(t, q)
	r := newRig(t, q, Options{})
	if all := r.get(t, "/failed", 200); strings.Count(all, "data-uuid=") != 2 {
		t.Fatalf("the failed list shows %d rows, want 2", strings.Count(all, "data-uuid="))
	}
	for _, path := range []string{"/failed?class=unknown", "/failed?queue=unknown", "/failed?class=" + url.QueryEscape(`App\Jobs\NoopJob`) + "&from=2099-01-01",
		"/failed?class=unknown&q=leaked"} {
		page := r.get(t, path, 200)
		if n := strings.Count(page, "data-uuid="); n != 0 || !strings.Contains(page, "No failed job matches.") {
			t.Errorf("%s lists %d failed jobs, want none", path, n)
		}
	}
	page := r.postBody(t, "/failed/retry", url.Values{"_csrf": {r.csrf(t)}, "class": {"unknown"}}, 200)
	if !strings.Contains(page, "Retry 0 failed job(s)?") || strings.Contains(page, `<td class="mono">`) {
		t.Errorf("the confirmation of a retry of an unknown class: %.3000s", page)
	}
}

// TestHiddenCharactersShownEscaped: bidi overrides, ESC and C1 controls
// in a queue name, a class name and an exception reach no page or JSON
// answer raw; pages show them as \u202e, \x1b.
func TestHiddenCharactersShownEscaped(t *testing.T) {
	q := testdb.Open(t, testdb.Config(t, appconfig.EngineSQLite))
	ctx := context.Background()
	queue, class := "mail\u202efdp.exe", "App\\Jobs\\\u2066Invoice\u2069\x1b[31m"
	if _, err := q.Push(ctx, jobqueue.PushItem{Queue: queue, Payload: leakyPayload(t, class)}); err != nil {
		t.Fatal(err)
	}
	if _, err := q.Push(ctx, jobqueue.PushItem{Queue: "spoof", Payload: leakyPayload(t, class)}); err != nil {
		t.Fatal(err)
	}
	jobs, err := q.Claim(ctx, []string{"spoof"}, 1, jobqueue.ClaimOptions{})
	if err != nil || len(jobs) != 1 {
		t.Fatal(err)
	}
	if err := q.Fail(ctx, jobs[0], fleet.UUIDOf(jobs[0].Payload), "RuntimeException: \x1b]0;owned\x07 paid \u202e0001$ \u0085\u009b in /app/X.php:1", jobqueue.Followup{}); err != nil {
		t.Fatal(err)
	}
	r := newRig(t, q, Options{})
	for _, path := range secretPages(t, r, q) {
		body := r.getBody(t, path)
		for _, c := range body {
			if visible.Hidden(c) {
				t.Errorf("%s shows %U raw", path, c)
				break
			}
		}
	}
	if home := r.getBody(t, "/"); !strings.Contains(home, `mail\u202efdp.exe`) {
		t.Errorf("the overview does not show the queue's bidi override escaped")
	}
	ids, _ := r.srv.Snapshot().FailedIDs(snapshot.FailedFilter{}, 0, 1)
	if exc := r.getBody(t, "/failed/"+itoa(ids[0])); !strings.Contains(exc, `\x1b]0;owned\x07 paid \u202e0001$ \u0085\u009b`) {
		t.Errorf("the failed job page does not show the exception's controls escaped")
	}
	if series := r.getBody(t, "/api/series"); !strings.Contains(series, `\\u2066Invoice\\u2069\\x1b[31m`) {
		t.Errorf("/api/series does not label the class with its controls made visible: %s", series)
	}
}
