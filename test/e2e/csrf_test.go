package e2e

import (
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestDashboardCSRFFromAnotherPort is the CSRF attack of issue 38 in
// Chromium: a page served from another port of the same host (same
// site: the browser sends the dashboard's SameSite=Strict cookies with
// its forms) plants a CSRF cookie and auto-submits a form carrying the
// planted value, under <meta name=referrer content=no-referrer>, which
// makes Chromium send "Origin: null". Against POST /control/pause,
// /failed/retry, /failed/forget, /batches/retry and /batches/cancel, on
// the dashboard without credentials and on a token dashboard whose
// victim is signed in: every form is refused and nothing changes in the
// database. The victim's own pause button still works, and "Sign out"
// ends the token sign-in.
func TestDashboardCSRFFromAnotherPort(t *testing.T) { onMariaDB(t, testDashboardCSRFFromAnotherPort) }

func testDashboardCSRFFromAnotherPort(t *testing.T, s *suite) {
	for _, mode := range []struct {
		name string
		env  []string
	}{{"no credentials", nil}, {"token", []string{"LARAWORKER_DASHBOARD_TOKEN=e2e-token-0123456789"}}} {
		t.Run(mode.name, func(t *testing.T) {
			attacks, state := csrfTargets(t, s)
			base, _ := s.startDashboard(t, mode.env)
			b := newBrowser(t)
			if mode.env != nil {
				b.run(t, chromedp.Navigate(base+"/login"), chromedp.WaitVisible(chromedp.CSS(`input[name=token]`)),
					chromedp.SendKeys(chromedp.CSS(`input[name=token]`), "e2e-token-0123456789"),
					chromedp.Submit(chromedp.CSS(`input[name=token]`)), chromedp.WaitVisible(chromedp.CSS("#queues")))
				b.screenshot(t, "dashboard-signed-in")
			} else {
				b.visit(t, base, "/", "", s.appKey(t))
			}
			attacker := httptest.NewServer(attackPage(base))
			defer attacker.Close()
			prev := state()
			for _, a := range attacks {
				text := b.submitAttack(t, attacker.URL, base, a.path, a.fields)
				if !strings.Contains(text, "Origin: null") {
					t.Errorf("%s from another port: the dashboard answered %q, want a refusal of Origin: null", a.path, text)
				}
				if after := state(); after != prev {
					t.Errorf("%s from another port changed the database:\nbefore %s\nafter  %s", a.path, prev, after)
					prev = after
				}
			}
			if t.Failed() {
				return
			}
			// The victim's own button, on the dashboard's page, still works.
			eventually(t, 15*time.Second, func() string {
				if html := b.visit(t, base, "/control", "", s.appKey(t)); !strings.Contains(html, "pause-queue") {
					return "the control page offers no queue to pause"
				}
				return ""
			})
			b.run(t, chromedp.Click(chromedp.CSS(`#control-queues .pause-queue`)), chromedp.WaitVisible(chromedp.CSS("#notice")))
			var pauses int64
			if err := s.q.DB().QueryRowContext(s.ctx(t), "select count(*) from laraworker_pauses").Scan(&pauses); err != nil || pauses != 1 {
				t.Fatalf("the dashboard's own pause button: %v, %d pauses", err, pauses)
			}
			s.exec(t, "delete from laraworker_pauses")
			if mode.env != nil {
				// "Sign out" ends the session: the next page asks for the token.
				b.run(t, chromedp.Click(chromedp.CSS("#logout button")), chromedp.WaitVisible(chromedp.CSS(`input[name=token]`)),
					chromedp.Navigate(base+"/control"), chromedp.WaitVisible(chromedp.CSS(`input[name=token]`)))
			}
		})
	}
}

type csrfAttack struct {
	path   string
	fields url.Values
}

// csrfTargets makes something for each attack to change: three batches
// whose member 2 PHP fails (three failed jobs, one for each of retry,
// forget and the batch's retry) and a pending batch to cancel; state
// reads what the attacks would change.
func csrfTargets(t *testing.T, s *suite) (attacks []csrfAttack, state func() string) {
	t.Helper()
	s.exec(t, "delete from laraworker_pauses")
	var failedBatches []string
	for range 3 {
		failedBatches = append(failedBatches, dispatchedBatch(t, s.artisan(t, "app:dispatch", "batch-fail")))
	}
	s.phpWork(t, "--stop-when-empty")
	pendingBatch := dispatchedBatch(t, s.artisan(t, "app:dispatch", "batch"))
	memberOf := func(batch string) string {
		b, err := s.batch(t, batch)
		if err != nil {
			t.Fatal(err)
		}
		var id int64
		for _, f := range s.failed(t) {
			if strings.Contains(b.FailedJobIDs, f.UUID) {
				if err := s.q.DB().QueryRowContext(s.ctx(t), s.q.Dialect().Rebind("select id from failed_jobs where uuid = ?"), f.UUID).Scan(&id); err != nil {
					t.Fatal(err)
				}
				return fmt.Sprint(id)
			}
		}
		t.Fatalf("batch %s has no failed job (%s)", batch, b.FailedJobIDs)
		return ""
	}
	attacks = []csrfAttack{
		{"/control/pause", url.Values{"scope": {"queue"}, "target": {"default"}}},
		{"/failed/retry", url.Values{"id": {memberOf(failedBatches[0])}, "confirm": {"yes"}}},
		{"/failed/forget", url.Values{"id": {memberOf(failedBatches[1])}, "confirm": {"yes"}}},
		{"/batches/retry", url.Values{"batch": {failedBatches[2]}, "confirm": {"yes"}}},
		{"/batches/cancel", url.Values{"batch": {pendingBatch}, "confirm": {"yes"}}},
	}
	state = func() string {
		var pauses int64
		if err := s.q.DB().QueryRowContext(s.ctx(t), "select count(*) from laraworker_pauses").Scan(&pauses); err != nil {
			t.Fatal(err)
		}
		out := fmt.Sprintf("pauses %d, failed %d, jobs %d", pauses, len(s.failed(t)), len(s.jobs(t)))
		for _, id := range append([]string{pendingBatch}, failedBatches...) {
			b, err := s.batch(t, id)
			if err != nil {
				t.Fatal(err)
			}
			out += fmt.Sprintf("; batch %s pending %d failed %d cancelled %v", id, b.Pending, b.Failed, b.CancelledAt.Valid)
		}
		return out
	}
	return attacks, state
}

// submitAttack opens the attacker's page for one action and waits until
// its form has been answered by the dashboard; it returns the answer's
// text.
func (b *browser) submitAttack(t *testing.T, attacker, base, path string, fields url.Values) string {
	t.Helper()
	q := url.Values{"path": {path}, "fields": {fields.Encode()}}
	b.run(t, chromedp.Navigate(attacker+"/?"+q.Encode()))
	var text string
	eventually(t, 15*time.Second, func() string {
		if href := eval[string](t, b, `location.href`); !strings.HasPrefix(href, base) {
			return "the attack page did not submit its form (at " + href + ")"
		}
		text = eval[string](t, b, `document.readyState === 'complete' && document.body ? document.body.innerText : ''`)
		if text == "" {
			return "the dashboard's answer is not loaded"
		}
		return ""
	})
	return text
}

// attackPage serves the attacker's page: ?path=/control/pause&fields=...
// gives a page that plants the CSRF cookie of old and auto-submits a
// form to base+path carrying the same value, with no referrer. The
// cookie is the host's, whatever the port; its path is the action's
// first segment (/control): the dashboard's own cookie (path /) is not
// replaced, but a cookie of a longer path is sent before it. It is set by
// the page's response header, so it is stored before the form leaves
// (a script's document.cookie may still be on its way).
func attackPage(base string) http.Handler {
	const planted = "abababababababababababababababababababababababababababababababab"
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fields, _ := url.ParseQuery(r.URL.Query().Get("fields"))
		var inputs strings.Builder
		for k, vs := range fields {
			for _, v := range vs {
				fmt.Fprintf(&inputs, `<input type="hidden" name="%s" value="%s">`, html.EscapeString(k), html.EscapeString(v))
			}
		}
		path := r.URL.Query().Get("path")
		cookiePath := "/" + strings.Split(strings.TrimPrefix(path, "/"), "/")[0]
		http.SetCookie(w, &http.Cookie{Name: "laraworker_csrf", Value: planted, Path: cookiePath})
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html><head><meta name="referrer" content="no-referrer"></head><body>
<form method="post" action="%s"><input type="hidden" name="_csrf" value="%s">%s</form>
<script>document.forms[0].submit();</script>
</body></html>`, html.EscapeString(base+path), planted, inputs.String())
	})
}
