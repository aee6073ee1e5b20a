package console

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/laraworker/laraworker/internal/phpjson"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/laravel/phpserialize"
	"github.com/laraworker/laraworker/store/database"
)

// logLeaks are the ways a log line shows secret: as written, as JSON
// (Go's and PHP's) and Go's quoting (the text format) escape it.
func logLeaks(secret string) []string {
	goj, _ := json.Marshal(secret)
	php, _ := phpjson.String(secret, 0)
	q := strconv.Quote(secret)
	return []string{secret, string(goj[1 : len(goj)-1]), php[1 : len(php)-1], q[1 : len(q)-1]}
}

// TestWorkLogsAndExecInputHoldNoSecret: a worker whose app holds a DB
// password with + / & < > ', an APP_KEY with + and / and an AWS secret
// runs a job carrying them through an exec handler that prints them on
// stdout (logged) and stderr (the failure, logged): in JSON and in text
// logs every one is [redacted], and the handler's stdin holds none.
func TestWorkLogsAndExecInputHoldNoSecret(t *testing.T) {
	const (
		password = `Zq+8/&<>'pw "x"`
		key      = "base64:q+/7VkB8d2hQmF3xY1sTz9oWc4eLrN0uK6gJ5iAaPpE="
		aws      = "wJalrXUtnFEMI/K7MDENG/bPxRfiCY+EXAMPLEKEY"
	)
	dir := t.TempDir()
	env := filepath.Join(dir, ".env")
	db := filepath.Join(dir, "db.sqlite")
	dotenv := "APP_ENV=testing\nDB_CONNECTION=sqlite\nDB_DATABASE=" + db + "\nDB_PASSWORD=\"" + strings.ReplaceAll(password, `"`, `\"`) + "\"\nAPP_KEY=" + key +
		"\nAWS_SECRET_ACCESS_KEY=" + aws + "\n"
	if err := os.WriteFile(env, []byte(dotenv), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := runCLI(t, "tables", "--env", env); code != 0 {
		t.Fatal(stderr)
	}
	cfg, _, err := appconfig.Load(context.Background(), appconfig.Options{EnvOnly: true, EnvFile: env, Environ: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	q, err := database.Open(context.Background(), cfg, database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	secrets := []string{password, key, strings.TrimPrefix(key, "base64:"), aws}
	leakFile := filepath.Join(dir, "leak.txt")
	if err := os.WriteFile(leakFile, []byte(strings.Join(secrets, " | ")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	stdin := filepath.Join(dir, "stdin.json")
	script := filepath.Join(dir, "handler.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\ncat > "+stdin+"\ncat "+leakFile+"\ncat "+leakFile+" >&2\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"json", "text"} {
		cmd := phpserialize.Object(`App\Jobs\Leak`, phpserialize.Public("password", phpserialize.String(password)),
			phpserialize.Public("aws", phpserialize.String(aws)), phpserialize.Public("key", phpserialize.String(key)))
		p, err := payload.BuildObjectPayload(cmd, payload.BuildOptions{Shape: payload.ShapeOf(8, 0)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := q.Push(context.Background(), jobqueue.PushItem{Queue: "default", Payload: p}); err != nil {
			t.Fatal(err)
		}
		// --memory 0: the worker runs in this test process, whose RSS (the
		// race detector, the other tests) is not the worker's.
		_, stderr, code := runCLI(t, "work", "--env", env, "--stop-when-empty", "--sleep", "0.1", "--memory", "0", "--log-format", format, "--log-level", "debug",
			`--route=App\Jobs\Leak=exec:`+script)
		if code != 0 {
			t.Fatalf("work: %d\n%s", code, stderr)
		}
		for _, s := range secrets {
			for _, f := range logLeaks(s) {
				if strings.Contains(stderr, f) {
					t.Errorf("%s logs show a secret (%q):\n%s", format, f, stderr)
				}
			}
		}
		if strings.Count(stderr, "[redacted]") < 2*len(secrets) {
			t.Errorf("%s logs do not show [redacted] for the handler's stdout and stderr:\n%s", format, stderr)
		}
		in, _ := os.ReadFile(stdin)
		for _, s := range append(secrets, base64.StdEncoding.EncodeToString([]byte(password))) {
			for _, f := range logLeaks(s) {
				if strings.Contains(string(in), f) {
					t.Errorf("the exec handler's stdin holds a secret (%q): %s", f, in)
				}
			}
		}
	}
}

// TestPassEnvWantsAName: --pass-env takes variable names; a NAME=VALUE
// (a value would show in ps) is a usage error naming it, and a name the
// environment lacks is said at start.
func TestPassEnvWantsAName(t *testing.T) {
	env := filepath.Join(t.TempDir(), "no.env")
	_, stderr, code := runCLI(t, "work", "--env", env, "--pass-env", "SENTRY_DSN=https://x", "--route", `App\Jobs\X=noop`)
	if code != ExitUsage || !strings.Contains(stderr, `--pass-env "SENTRY_DSN=https://x"`) {
		t.Errorf("--pass-env NAME=VALUE: exit %d, %s", code, stderr)
	}
	t.Setenv("LARAWORKER_DB_CONNECTION", "sqlite")
	t.Setenv("LARAWORKER_DB_DATABASE", filepath.Join(t.TempDir(), "db.sqlite"))
	_, stderr, _ = runCLI(t, "work", "--env", env, "--pass-env", "NO_SUCH_VARIABLE_38", "--route", `App\Jobs\X=noop`, "--stop-when-empty", "--create-tables", "--memory", "0")
	if !strings.Contains(stderr, "NO_SUCH_VARIABLE_38") || !strings.Contains(stderr, "does not have") {
		t.Errorf("a --pass-env the environment lacks is not said: %s", stderr)
	}
}
