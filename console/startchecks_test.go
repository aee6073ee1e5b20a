package console

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/laraworker/laraworker/console/internal/testapp"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/laravel/phpserialize"
)

// TestWorkRefusesAMissingExecHandler: an exec: handler that does not
// exist, is not executable or is not on PATH stops the worker at start
// (exit 2, naming the route and the command), instead of sending every
// job of the class to failed_jobs with "no such file or directory".
func TestWorkRefusesAMissingExecHandler(t *testing.T) {
	dir, q := testapp.SqliteApp(t)
	testapp.PushJob(t, q, `App\Jobs\A`)
	notExec := filepath.Join(dir, "handler.sh")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\nexit 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ route, want string }{
		{`App\Jobs\A=exec:/no/such/handler --flag`, `--route App\Jobs\A: exec handler /no/such/handler: no such file`},
		{`App\Jobs\A=exec:` + notExec, `--route App\Jobs\A: exec handler ` + notExec + `: not executable (chmod +x it)`},
		{`App\Jobs\A=exec:laraworker-no-such-command`, `--route App\Jobs\A: exec handler laraworker-no-such-command: not found on PATH`},
	} {
		out, code := runWorkCLI(t, "--env", filepath.Join(dir, ".env"), "--stop-when-empty", "--route", c.route)
		if code != 2 || !strings.Contains(out, c.want) || strings.Contains(out, "worker started") {
			t.Errorf("--route %s: exit %d\n%s", c.route, code, out)
		}
	}
	assertUntouched(t, q, 1)
	// Made executable, the same route runs the job.
	if err := os.Chmod(notExec, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, code := runWorkCLI(t, "--env", filepath.Join(dir, ".env"), "--stop-when-empty", "--route", `App\Jobs\A=exec:`+notExec); code != 0 || testapp.CountRows(t, q, "jobs") != 0 {
		t.Errorf("executable handler: exit %d, %d jobs left\n%s", code, testapp.CountRows(t, q, "jobs"), out)
	}
}

// TestStopWhenEmptyFailsOnAConfigProblem: a run that held jobs back for a
// configuration problem (here an APP_KEY that does not decrypt the
// commands) is not a success: --stop-when-empty exits 2, and says why;
// the job is still there for a worker with the right key.
func TestStopWhenEmptyFailsOnAConfigProblem(t *testing.T) {
	dir, q := testapp.SqliteApp(t)
	other, err := payload.ParseKey("base64:" + strings.Repeat("B", 43) + "=")
	if err != nil {
		t.Fatal(err)
	}
	enc, err := payload.NewEncrypter(other, "AES-256-CBC")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := payload.BuildObjectPayload(phpserialize.Object(`App\Jobs\Secret`, phpserialize.Public("n", phpserialize.Int(1))), payload.BuildOptions{Encrypter: enc})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Push(t.Context(), jobqueue.PushItem{Payload: raw}); err != nil {
		t.Fatal(err)
	}
	out, code := runWorkCLI(t, "--env", filepath.Join(dir, ".env"), "--stop-when-empty", "--route", `App\Jobs\Secret=noop`)
	stopped := lineWith(out, `"worker stopped"`)
	// The class may be claimed again before the queue reads empty: one
	// problem or more.
	if code != 2 || !regexp.MustCompile(`"config_problems":[1-9]`).MatchString(stopped) || !strings.Contains(stopped, "a configuration problem held jobs back") {
		t.Errorf("exit %d, want 2\n%s", code, out)
	}
	if n := testapp.CountRows(t, q, "jobs"); n != 1 || testapp.CountRows(t, q, "failed_jobs") != 0 {
		t.Errorf("%d jobs left, %d failed: the job must stay for PHP", n, testapp.CountRows(t, q, "failed_jobs"))
	}
}

// TestInspectFileNeedsNoApp: `inspect FILE` outside any app folder (no
// .env, no database named) decodes a payload; an encrypted command needs
// only the key (APP_KEY or --key-file), and without one the error names
// the key, not the database. The JSON shows "&", "<" and ">" as they are.
func TestInspectFileNeedsNoApp(t *testing.T) {
	here := t.TempDir()
	fixture := func(name string) string {
		p, _ := filepath.Abs(filepath.Join("..", "testdata", "payloads", name))
		return p
	}
	raw, err := payload.BuildObjectPayload(phpserialize.Object(`App\Jobs\Mail`, phpserialize.Public("subject", phpserialize.String("Tom & Jerry <3>"))), payload.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	amp := filepath.Join(here, "amp.json")
	if err := os.WriteFile(amp, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(env []string, args ...string) (string, int) {
		cmd := exec.Command(laraworkerBinary(t), append([]string{"inspect"}, args...)...)
		cmd.Dir = here
		cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}, env...)
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok {
			return string(out), ee.ExitCode()
		}
		return string(out), 0
	}
	if out, code := run(nil, fixture("models.json")); code != 0 || !strings.Contains(out, `"class": "App\\Jobs\\ModelsJob"`) {
		t.Errorf("plain payload: exit %d\n%s", code, out)
	}
	if out, code := run(nil, amp); code != 0 || !strings.Contains(out, `"subject": "Tom & Jerry <3>"`) || strings.Contains(out, `\u00`) {
		t.Errorf("& and < must print as they are: exit %d\n%s", code, out)
	}
	if out, code := run([]string{"APP_KEY=" + testapp.FixtureKey}, fixture("encrypted-aes-256-cbc.json")); code != 0 || !strings.Contains(out, `"encrypted": true`) {
		t.Errorf("encrypted, APP_KEY in the environment: exit %d\n%s", code, out)
	}
	keyFile := filepath.Join(here, "app.key")
	if err := os.WriteFile(keyFile, []byte(testapp.FixtureKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, code := run(nil, "--key-file", keyFile, fixture("encrypted-aes-256-cbc.json")); code != 0 || !strings.Contains(out, `"encrypted": true`) {
		t.Errorf("encrypted, --key-file: exit %d\n%s", code, out)
	}
	if out, code := run(nil, fixture("encrypted-aes-256-cbc.json")); code != 1 || !strings.Contains(out, "no APP_KEY") || strings.Contains(out, "no .env") {
		t.Errorf("encrypted without a key: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(here, "database")); err == nil {
		t.Errorf("inspect created files here")
	}
}

// TestHelpSaysWhatFlagsDo: --connection is the queue connection served
// (not only a name for failed_jobs), --db implies no default database,
// and gen says which package its file is.
func TestHelpSaysWhatFlagsDo(t *testing.T) {
	help := func(args ...string) string {
		out, err := exec.Command(laraworkerBinary(t), append(args, "--help")...).CombinedOutput()
		if err != nil {
			t.Fatalf("%v --help: %v\n%s", args, err, out)
		}
		return string(out)
	}
	work := help("work")
	if !strings.Contains(work, "the queue CONNECTION to serve, as php artisan queue:work CONNECTION does") ||
		strings.Contains(work, "default sqlite at database/database.sqlite") || !strings.Contains(work, "there is no default database") ||
		!strings.Contains(work, "--run-without-php-declarations CLASS") {
		t.Errorf("work --help:\n%s", work)
	}
	if gen := help("gen"); !strings.Contains(gen, `folder's name; without, "jobs". --package names it`) {
		t.Errorf("gen --help:\n%s", gen)
	}
}
