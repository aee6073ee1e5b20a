package console

import (
	"os/exec"
	"strings"
	"testing"
)

// runBinary runs the built binary and returns stdout, stderr and the status.
func runBinary(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(laraworkerBinary(t), args...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return stdout.String(), stderr.String(), code
}

// The CLI follows Go tools' and artisan's conventions: help works as a
// command, a usage error is one line on stderr with a suggestion and exit
// status 2 (never the help text, never twice).
func TestCLIConventions(t *testing.T) {
	for _, c := range []struct {
		args       []string
		code       int
		stdout     string // a part of stdout
		stderrLine string // stderr, exactly one line
	}{
		{[]string{"help"}, 0, "COMMANDS:", ""},
		{[]string{"help", "work"}, 0, "--concurrency", ""},
		{[]string{"work", "--help"}, 0, "--concurrency", ""},
		{[]string{}, 0, "COMMANDS:", ""},
		{[]string{"wrk"}, 2, "", `laraworker: unknown command "wrk" (did you mean "work"?); see 'laraworker help'`},
		{[]string{"help", "wrk"}, 2, "", `laraworker: unknown command "wrk" (did you mean "work"?); see 'laraworker help'`},
		{[]string{"work", "--quue", "x"}, 2, "", `laraworker: work: unknown flag --quue (did you mean --queue?); see 'laraworker work --help'`},
		{[]string{"work", "--timeout", "1h30"}, 2, "", `laraworker: work: --timeout "1h30": want seconds (30, 0.5) or a duration (30s, 1m30s, 500ms), not negative; see 'laraworker work --help'`},
		{[]string{"work", "--concurrency", "lots"}, 2, "", `laraworker: work: --concurrency "lots": want a number; see 'laraworker work --help'`},
		{[]string{"work", "--unrouted", "fial", "--route", `A=noop`}, 2, "", `laraworker: work: --unrouted "fial": want "skip" or "fail"`},
		{[]string{"work", "stray"}, 2, "", `laraworker: work: unexpected argument "stray"`},
		{[]string{"inspect", "--key", "base64:c2VjcmV0"}, 2, "", "laraworker: inspect: unknown flag --key (removed: a key on the command line shows in `ps`; put it in a file and pass --key-file FILE, or set APP_KEY or LARAWORKER_APP_KEY); see 'laraworker inspect --help'"},
		// Counts are never negative (artisan's --tries=-1 fails every job at once).
		{[]string{"work", "--tries=-1", "--route", `A=noop`}, 2, "", `laraworker: work: --tries "-1": want a whole number, 0 or more; see 'laraworker work --help'`},
		{[]string{"work", "--memory", "-5", "--route", `A=noop`}, 2, "", `laraworker: work: --memory "-5": want a whole number, 0 or more; see 'laraworker work --help'`},
		{[]string{"work", "--max-jobs", "1.5", "--route", `A=noop`}, 2, "", `laraworker: work: --max-jobs "1.5": want a whole number, 0 or more; see 'laraworker work --help'`},
		{[]string{"push", `App\Jobs\A`, "--tries", "-1"}, 2, "", `laraworker: push: --tries "-1": want a whole number, 0 or more; see 'laraworker push --help'`},
		{[]string{"flush", "--hours", "-1"}, 2, "", `laraworker: flush: --hours "-1": want a whole number, 0 or more; see 'laraworker flush --help'`},
		{[]string{"retry", "5", "--quue=x"}, 2, "", `laraworker: retry: unknown flag --quue (did you mean --queue?); see 'laraworker retry --help'`},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			stdout, stderr, code := runBinary(t, c.args...)
			if code != c.code {
				t.Fatalf("exit %d, want %d\nstdout %s\nstderr %s", code, c.code, stdout, stderr)
			}
			if !strings.Contains(stdout, c.stdout) {
				t.Errorf("stdout lacks %q:\n%s", c.stdout, stdout)
			}
			if c.stderrLine != "" && stderr != c.stderrLine+"\n" {
				t.Errorf("stderr\n%q\nwant\n%q", stderr, c.stderrLine+"\n")
			}
			if c.code == 2 && (strings.Contains(stdout, "USAGE") || strings.Contains(stderr, "USAGE")) {
				t.Error("a usage error printed the help text")
			}
			if strings.Contains(stderr, "c2VjcmV0") {
				t.Error("a key given on the command line was echoed")
			}
		})
	}
}
