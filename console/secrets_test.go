package console

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// Every command's help and the errors a user can provoke must never show
// the DB password or the APP_KEY.
func TestSecretsNeverPrinted(t *testing.T) {
	const password = "Pw-very-secret-4711"
	const appKey = "base64:c2VjcmV0IGtleSBub3QgdG8gYmUgc2hvd24hIQ==" // 30 bytes: no cipher takes it
	t.Setenv("LARAWORKER_DB_PASSWORD", password)
	t.Setenv("LARAWORKER_APP_KEY", appKey)
	env := filepath.Join(t.TempDir(), "no.env")
	check := func(what, out string) {
		t.Helper()
		for _, secret := range []string{password, appKey, strings.TrimPrefix(appKey, "base64:")} {
			if strings.Contains(out, secret) {
				t.Errorf("%s printed a secret:\n%s", what, out)
			}
		}
	}
	runs := [][]string{{"--help"}}
	for _, cmd := range testApp().Commands {
		runs = append(runs, []string{cmd.Name, "--help"}, []string{cmd.Name, "-h"})
	}
	unreachable := []string{"--env", env, "--db", "mysql", "--db-host", "127.0.0.1", "--db-port", "1", "--db-database", "test"}
	runs = append(runs,
		append([]string{"failed"}, unreachable...),
		append([]string{"retry", "all"}, unreachable...),
		append([]string{"push", `App\Jobs\X`}, unreachable...),
		append([]string{"size", "--db", "pgsql", "--db-port", "1"}, unreachable[:2]...),
		// A wrong password on a reachable server: the driver's refusal.
		[]string{"failed", "--env", env, "--db", "mysql", "--db-host", "127.0.0.1", "--db-username", "root", "--db-database", "test"},
		// A key of the wrong size, on a database that works.
		[]string{"push", `App\Jobs\X`, "--encrypt", "--env", env, "--db", "sqlite", "--db-database", filepath.Join(t.TempDir(), "db.sqlite")},
		[]string{"retry", "--env", env, "--db", "sqlite", "--db-database", filepath.Join(t.TempDir(), "db.sqlite"), "all"},
	)
	errorsSeen := 0
	for _, args := range runs {
		out, stderr, code := runCLI(t, args...)
		check(strings.Join(args, " "), out+stderr)
		if code != 0 {
			errorsSeen++
			if strings.Count(strings.TrimSuffix(stderr, "\n"), "\n") != 0 {
				t.Errorf("%v: error is not one line: %q", args, stderr)
			}
		}
	}
	if errorsSeen < 5 {
		t.Errorf("only %d runs failed: the error paths were not exercised", errorsSeen)
	}
}

// runCLI runs laraworker in-process as main does, stdin empty, and
// returns its output and exit status.
func runCLI(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	app := testApp()
	var out bytes.Buffer
	var errb lockedBuffer
	app.Writer, app.ErrWriter, app.Reader = &out, &errb, strings.NewReader("")
	code = Run(app, append([]string{"laraworker"}, args...))
	return out.String(), errb.String(), code
}
