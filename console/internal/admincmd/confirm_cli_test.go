package admincmd_test

import (
	"io"
	"os"
	"strings"
	"testing"

	"github.com/laraworker/laraworker/console/internal/clitest"
	"github.com/laraworker/laraworker/laravel/appconfig"
)

// terminal is stdin as a person at a terminal answers it.
type terminal struct{ io.Reader }

func (terminal) IsTerminal() bool { return true }

func typed(answer string) io.Reader { return terminal{strings.NewReader(answer)} }

// withAppEnv writes the target's .env with APP_ENV (none when env is
// empty); the test's own environment must not say otherwise.
func withAppEnv(t *testing.T, tg *clitest.Target, env string) {
	t.Helper()
	for _, key := range []string{"APP_ENV", "LARAWORKER_APP_ENV"} {
		if v, ok := os.LookupEnv(key); ok {
			os.Unsetenv(key)
			t.Cleanup(func() { os.Setenv(key, v) })
		}
	}
	content := ""
	if env != "" {
		content = "APP_ENV=" + env + "\n"
	}
	if err := os.WriteFile(tg.Flags[1], []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestClearAsksInProduction: in production, as `php artisan queue:clear`
// does, clear asks first; without a terminal it refuses (exit 1, nothing
// deleted) instead of waiting, and --force runs it without asking.
func TestClearAsksInProduction(t *testing.T) {
	tg := clitest.NewTarget(t, appconfig.EngineSQLite)
	withAppEnv(t, tg, "production")
	tg.Pushed(t, `App\Jobs\A`)
	tg.Pushed(t, `App\Jobs\A`)

	out, stderr, code := tg.Run(t, "clear")
	want := "laraworker: clear: the app is in production (APP_ENV=production in " + tg.Flags[1] +
		") and stdin is not a terminal to confirm on: nothing was deleted; pass --force to run it without asking (it deletes every job of the [default] queue, reserved (running) ones included)\n"
	if code != 1 || out != "" || stderr != want || len(tg.Jobs(t)) != 2 {
		t.Fatalf("without a terminal: exit %d, stdout %q, stderr %q, %d jobs left; want exit 1, %q, 2 jobs", code, out, stderr, len(tg.Jobs(t)), want)
	}

	out, stderr, code = clitest.RunCLIWith(t, typed("no\n"), append([]string{"clear"}, tg.Flags...)...)
	for _, part := range []string{"Application In Production!", "This deletes every job of the [default] queue, reserved (running) ones included.",
		"Do you really wish to run this command? (yes/no) [no]:", "Command Canceled!"} {
		if !strings.Contains(stderr, part) {
			t.Errorf("answered no: stderr lacks %q:\n%s", part, stderr)
		}
	}
	if code != 1 || out != "" || len(tg.Jobs(t)) != 2 {
		t.Fatalf("answered no: exit %d, stdout %q, %d jobs left", code, out, len(tg.Jobs(t)))
	}

	out, _, code = clitest.RunCLIWith(t, typed("yes\n"), append([]string{"clear"}, tg.Flags...)...)
	if code != 0 || out != "Cleared 2 jobs from the [default] queue\n" || len(tg.Jobs(t)) != 0 {
		t.Fatalf("answered yes: exit %d, stdout %q, %d jobs left", code, out, len(tg.Jobs(t)))
	}

	tg.Pushed(t, `App\Jobs\A`)
	out, stderr, code = tg.Run(t, "clear", "--force")
	if code != 0 || out != "Cleared 1 jobs from the [default] queue\n" || stderr != "" {
		t.Fatalf("--force: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
}

// TestClearAsksOnATerminal: outside production clear still asks when a
// person is at a terminal (it deletes running jobs too); no answer is no.
// Without a terminal it runs as before.
func TestClearAsksOnATerminal(t *testing.T) {
	tg := clitest.NewTarget(t, appconfig.EngineSQLite)
	withAppEnv(t, tg, "local")
	tg.Pushed(t, `App\Jobs\A`)
	out, stderr, code := clitest.RunCLIWith(t, typed(""), append([]string{"clear"}, tg.Flags...)...)
	if code != 1 || out != "" || strings.Contains(stderr, "Production") || !strings.Contains(stderr, "reserved (running) ones included") ||
		!strings.Contains(stderr, "Command Canceled!") || len(tg.Jobs(t)) != 1 {
		t.Fatalf("no answer: exit %d, stdout %q, stderr %q, %d jobs left", code, out, stderr, len(tg.Jobs(t)))
	}
	if out, _, code = clitest.RunCLIWith(t, typed("y\n"), append([]string{"clear"}, tg.Flags...)...); code != 0 || len(tg.Jobs(t)) != 0 {
		t.Fatalf("answered y: exit %d, stdout %q", code, out)
	}
	tg.Pushed(t, `App\Jobs\A`)
	if out, stderr, code = tg.Run(t, "clear"); code != 0 || stderr != "" || len(tg.Jobs(t)) != 0 {
		t.Fatalf("no terminal, local: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
}

// TestFlushAsks: flush deletes every failed job; it confirms as clear does.
// An app without APP_ENV is in production, as Laravel reads it.
func TestFlushAsks(t *testing.T) {
	tg := clitest.NewTarget(t, appconfig.EngineSQLite)
	withAppEnv(t, tg, "")
	failedHoursAgo(t, tg, `App\Jobs\Old`, 72)
	_, stderr, code := tg.Run(t, "flush", "--hours", "48")
	if code != 1 || !strings.Contains(stderr, "the app is in production (APP_ENV is not set, and Laravel's config/app.php then says production)") ||
		!strings.Contains(stderr, "pass --force to run it without asking (it deletes the failed jobs that failed more than 48 hours ago)") || len(tg.FailedUUIDs(t)) != 1 {
		t.Fatalf("without a terminal: exit %d, stderr %q, %d failed left", code, stderr, len(tg.FailedUUIDs(t)))
	}
	out, stderr, code := clitest.RunCLIWith(t, typed("yes\n"), append([]string{"flush"}, tg.Flags...)...)
	if code != 0 || out != "All failed jobs deleted successfully!\n" || !strings.Contains(stderr, "This deletes every failed job.") || len(tg.FailedUUIDs(t)) != 0 {
		t.Fatalf("answered yes: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	failedHoursAgo(t, tg, `App\Jobs\Old`, 72)
	if out, _, code = tg.Run(t, "flush", "--force", "--json"); code != 0 || out != "{\n  \"deleted\": 1\n}\n" {
		t.Fatalf("--force --json: exit %d, stdout %q", code, out)
	}
}
