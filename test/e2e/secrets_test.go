package e2e

import (
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The attack (38): an app whose DB password holds + / & < > ' and
// whose APP_KEY holds + and /, and a job (php artisan, the real Laravel)
// that carries both in its properties and throws them in its exception.
const (
	hostileDBPassword = `Zq+8/&<>'pw`
	hostileAppKey     = "base64:q+/7VkB8d2hQmF3xY1sTz9oWc4eLrN0uK6gJ5iAaPpE="
)

// hostileDBUser creates a MariaDB user with hostileDBPassword that may use
// the suite's database, and drops it after the test.
func (s *suite) hostileDBUser(t *testing.T) string {
	t.Helper()
	user := "lw_hostile" + strconv.FormatInt(time.Now().UnixNano()%1e6, 10)
	db := s.q.Config().Database
	quoted := strings.ReplaceAll(hostileDBPassword, "'", "''")
	for _, stmt := range []string{
		"create user '" + user + "'@'%' identified by '" + quoted + "'",
		"grant all on `" + db + "`.* to '" + user + "'@'%'",
	} {
		if _, err := s.q.DB().ExecContext(s.ctx(t), stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	t.Cleanup(func() {
		rows, _ := s.q.DB().QueryContext(s.ctx(t), "select id from information_schema.processlist where user = ?", user)
		if rows != nil {
			var ids []int64
			for rows.Next() {
				var id int64
				_ = rows.Scan(&id)
				ids = append(ids, id)
			}
			rows.Close()
			for _, id := range ids {
				_, _ = s.q.DB().ExecContext(s.ctx(t), "kill "+strconv.FormatInt(id, 10))
			}
		}
		if _, err := s.q.DB().ExecContext(s.ctx(t), "drop user '"+user+"'@'%'"); err != nil && err != sql.ErrNoRows {
			t.Errorf("drop user: %v", err)
		}
	})
	return user
}

// visibleForms are the ways a page can show secret to a person: as it
// is, as PHP's JSON writes it (the payload), and URL-encoded (a DSN).
func visibleForms(secret string) []string {
	php, _ := json.Marshal(secret)
	return []string{secret, strings.ReplaceAll(string(php[1:len(php)-1]), "/", `\/`), url.QueryEscape(secret), strings.TrimPrefix(secret, "base64:")}
}

// TestDashboardHidesHostileSecrets: the dashboard of an app whose DB
// password holds + / & < > ' and whose APP_KEY holds + and / shows
// neither on the failed list, the failed job or the pending job page, as
// headless Chromium renders them (the HTML it holds and the text it
// shows), where the exception and the decoded payload hold both.
func TestDashboardHidesHostileSecrets(t *testing.T) { onMariaDB(t, testDashboardHidesHostileSecrets) }

func testDashboardHidesHostileSecrets(t *testing.T, s *suite) {
	if raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(hostileAppKey, "base64:")); err != nil || len(raw) != 32 {
		t.Fatalf("the key must be 32 bytes: %v", err)
	}
	user := s.hostileDBUser(t)
	env := []string{"DB_USERNAME=" + user, "DB_PASSWORD=" + hostileDBPassword, "APP_KEY=" + hostileAppKey}
	php := func(args ...string) {
		t.Helper()
		cmd := s.phpCmd(args...)
		cmd.Env = append(cmd.Env, env...)
		s.run(t, cmd)
	}
	php("app:dispatch", "leaky", "--queue=leaky")
	php("queue:work", "--sleep=0", "--queue=leaky", "--stop-when-empty", "--tries=1")
	php("app:dispatch", "leaky", "--queue=leaky-pending")
	failed := s.failed(t)
	if len(failed) != 1 || !strings.Contains(failed[0].Exception, hostileDBPassword) || !strings.Contains(failed[0].Exception, hostileAppKey) {
		t.Fatalf("the failed job's exception does not hold the secrets (%d failed jobs)", len(failed))
	}
	if !strings.Contains(failed[0].Payload, `Zq+8\/&<>'pw`) {
		t.Fatalf("the payload does not hold the password as PHP's JSON writes it: %.500s", failed[0].Payload)
	}
	var pending int64
	for _, j := range s.jobs(t) {
		if j.Queue == "leaky-pending" {
			pending = j.ID
		}
	}
	base, _ := s.startDashboard(t, env)
	b := newBrowser(t)
	var failedID string
	eventually(t, 15*time.Second, func() string {
		b.visit(t, base, "/failed", "", hostileAppKey)
		failedID = eval[string](t, b, `(document.querySelector('#failedlist tr[data-uuid] a') || {getAttribute: () => ''}).getAttribute('href').replace('/failed/', '')`)
		if failedID == "" {
			return "the failed list does not show the failed job"
		}
		return ""
	})
	shows := map[string]bool{"/failed": true, "/failed/" + failedID: true, "/jobs/" + strconv.FormatInt(pending, 10): true}
	for _, path := range []string{"/failed", "/failed/" + failedID, "/jobs/" + strconv.FormatInt(pending, 10), "/jobs?queue=leaky-pending", "/"} {
		b.run(t, chromedp.Navigate(base+path), chromedp.WaitReady(chromedp.CSS("body")))
		html := value(t, b, chromedp.OuterHTML(chromedp.CSS("html")))
		text := eval[string](t, b, `document.body.innerText`)
		for _, secret := range []string{hostileDBPassword, hostileAppKey} {
			for _, f := range visibleForms(secret) {
				if strings.Contains(html, f) || strings.Contains(text, f) {
					t.Errorf("%s shows a secret (%q) in Chromium", path, f)
				}
			}
		}
		if shows[path] && !strings.Contains(text, "[redac") {
			t.Errorf("%s does not show [redacted] where the secrets were:\n%.2000s", path, text)
		}
	}
	b.run(t, chromedp.Navigate(base+"/failed/"+failedID), chromedp.WaitVisible(chromedp.CSS("#exception")))
	if exc := b.text(t, "#exception"); !strings.Contains(exc, "could not connect to mysql://app:[redacted]@db.internal/app with password [redacted] and key [redacted]") {
		t.Errorf("the exception as Chromium shows it: %.500s", exc)
	}
	b.screenshot(t, "failed-job-redacted")
}
