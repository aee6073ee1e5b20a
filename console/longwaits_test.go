package console

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/laraworker/laraworker/console/internal/testapp"
	"github.com/laraworker/laraworker/internal/testutil/testwait"
)

// TestWorkAlertsOnLongWaits: `work --long-wait database:default=60` posts
// one alert to the webhook LARAWORKER_LONG_WAIT_WEBHOOK names when the
// queue's oldest ready job has waited two minutes (a class no worker
// serves), none more while it keeps waiting, and a clearance once the
// queue drains; the webhook's URL, a credential, is in no log line.
func TestWorkAlertsOnLongWaits(t *testing.T) {
	dir, q := testapp.SqliteApp(t)
	os.WriteFile(filepath.Join(dir, "artisan"), []byte("<?php\n"), 0o644)
	testapp.PushJob(t, q, `App\Jobs\NobodyRunsMe`)
	if _, err := q.DB().Exec("update jobs set available_at = ?", time.Now().Add(-2*time.Minute).Unix()); err != nil {
		t.Fatal(err)
	}
	texts := make(chan string, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var msg struct{ Text string }
		body, _ := io.ReadAll(r.Body)
		json.Unmarshal(body, &msg)
		texts <- msg.Text
	}))
	defer srv.Close()
	var out bytes.Buffer
	cmd := exec.Command(laraworkerBinary(t), "work", "--app", dir, "--php", "off", "--route", `App\Jobs\A=noop`, "--sleep", "0.05",
		"--long-wait", "database:default=60", "--long-wait-every", "0.2")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "LARAWORKER_LONG_WAIT_WEBHOOK=" + srv.URL + "/services/T0/B0/SeCrEtToKeN"}
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	text := testwait.Recv(t, texts, 30*time.Second, "the alert")
	if !strings.Contains(text, "Long wait on queue `default` (connection `database`)") || !strings.Contains(text, "over the 1m0s threshold") {
		t.Errorf("alert %q", text)
	}
	if _, err := q.DB().Exec("delete from jobs"); err != nil {
		t.Fatal(err)
	}
	if text := testwait.Recv(t, texts, 30*time.Second, "the clearance"); !strings.Contains(text, "Wait back to normal on queue `default`") {
		t.Errorf("clearance %q: want it to follow the alert at once (no repeat of the alert in between)", text)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Errorf("work: %v\n%s", err, out.String())
	}
	log := out.String()
	if !strings.Contains(log, "watching long waits") || !strings.Contains(log, `"default":"1m0s"`) || strings.Contains(log, "SeCrEtToKeN") {
		t.Errorf("log: want the start line with the threshold, and never the webhook's URL:\n%s", log)
	}
}

// TestWorkLongWaitFlags: without a threshold or a webhook the alerts stay
// off; a bad threshold is a usage error; an unreadable webhook file stops
// work at start.
func TestWorkLongWaitFlags(t *testing.T) {
	dir, _ := testapp.SqliteApp(t)
	os.WriteFile(filepath.Join(dir, "artisan"), []byte("<?php\n"), 0o644)
	out, code := runWorkCLI(t, "--app", dir, "--php", "off", "--route", `App\Jobs\A=noop`, "--stop-when-empty")
	if code != 0 || strings.Contains(out, "watching long waits") {
		t.Errorf("no long-wait setting: exit %d, want the alerts off:\n%s", code, out)
	}
	out, code = runWorkCLI(t, "--app", dir, "--php", "off", "--route", `App\Jobs\A=noop`, "--stop-when-empty", "--long-waits", "on")
	if code != 0 || !strings.Contains(out, `"thresholds":{"default":"1m0s"},"from":"default"`) {
		t.Errorf("--long-waits on: exit %d, want the served queue watched at Horizon's 60 s:\n%s", code, out)
	}
	out, code = runWorkCLI(t, "--app", dir, "--php", "off", "--route", `App\Jobs\A=noop`, "--long-wait", "default=60")
	if code != 2 || !strings.Contains(out, `--long-wait "default=60": want CONNECTION:QUEUE=SECONDS`) {
		t.Errorf("a threshold without its connection: exit %d:\n%s", code, out)
	}
	file := filepath.Join(t.TempDir(), "hook")
	os.WriteFile(file, []byte("https://hooks.example/secret\n"), 0o644)
	cmd := exec.Command(laraworkerBinary(t), "work", "--app", dir, "--php", "off", "--route", `App\Jobs\A=noop`, "--stop-when-empty")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "LARAWORKER_LONG_WAIT_WEBHOOK_FILE=" + file}
	b, _ := cmd.CombinedOutput()
	if cmd.ProcessState.ExitCode() != 1 || !strings.Contains(string(b), "is readable by others") || strings.Contains(string(b), "secret") {
		t.Errorf("a webhook file readable by others: exit %d:\n%s", cmd.ProcessState.ExitCode(), b)
	}
}
