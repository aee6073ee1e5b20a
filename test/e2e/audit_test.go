package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// lwStatus runs a laraworker command in the app and returns its exit
// status, stdout and stderr (a non-zero status is not a test failure).
func (s *suite) lwStatus(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.laraw, args...)
	cmd.Dir, cmd.Env = s.app, s.env()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return exit.ExitCode(), out.String(), errOut.String()
	case err != nil:
		t.Fatalf("%s: %v", strings.Join(args, " "), err)
	}
	return 0, out.String(), errOut.String()
}

// TestAuditAndGen: in the app's folder, with the bridge routing classes to
// Go, `laraworker audit --routed` reads the routed classes through the
// app's PHP and exits 1 naming what would not carry over (the app's own
// middleware and a closure); `audit` alone reads every job class, the
// routed ones marked; a class with nothing to lose exits 0; `gen` prints
// the struct and registration of a routed class.
func TestAuditAndGen(t *testing.T) { onEachDB(t, testAuditAndGen) }

func testAuditAndGen(t *testing.T, s *suite) {
	s.installBridgeConfig(t, "        App\\Jobs\\Audit\\MiddlewareJob::class,\n        App\\Jobs\\Audit\\FailedHookJob::class,\n        App\\Jobs\\OptionsJob::class,\n")
	code, out, errOut := s.lwStatus(t, "audit", "--routed", "--json")
	if code != 1 || !strings.Contains(errOut, "audit: 2 item(s) would not carry over to Go") {
		t.Fatalf("audit: status %d, stderr %q", code, errOut)
	}
	var r struct {
		Classes []struct {
			Class    string   `json:"class"`
			RoutedBy []string `json:"routed_by"`
			Lost     int      `json:"lost"`
			Items    []struct {
				Name, Verdict string
			} `json:"items"`
		} `json:"classes"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	lost := map[string][]string{}
	for _, c := range r.Classes {
		if len(c.RoutedBy) != 1 || c.RoutedBy[0] != c.Class {
			t.Errorf("%s routed by %v", c.Class, c.RoutedBy)
		}
		for _, it := range c.Items {
			if it.Verdict == "lost" {
				lost[c.Class] = append(lost[c.Class], it.Name)
			}
		}
	}
	// failed() and chain catch run in PHP through the bridge, Laravel's
	// middleware in Go; the app's own middleware and a closure do not
	// carry over.
	want := map[string]string{
		`App\Jobs\Audit\MiddlewareJob`: `App\Jobs\Middleware\EnsureTokenIsValid,closure`,
		`App\Jobs\Audit\FailedHookJob`: ``,
		`App\Jobs\OptionsJob`:          ``,
	}
	if len(r.Classes) != len(want) {
		t.Errorf("%d classes audited, want %d", len(r.Classes), len(want))
	}
	for class, names := range want {
		if got := strings.Join(lost[class], ","); got != names {
			t.Errorf("%s: not carried over %q, want %q", class, got, names)
		}
	}

	code, out, _ = s.lwStatus(t, "audit", "--json")
	var all struct {
		Classes []struct {
			Class    string   `json:"class"`
			RoutedBy []string `json:"routed_by"`
		} `json:"classes"`
	}
	if err := json.Unmarshal([]byte(out), &all); err != nil || code != 1 || len(all.Classes) < 30 {
		t.Errorf("audit of every job class: status %d, %d classes, %v", code, len(all.Classes), err)
	}
	for _, c := range all.Classes {
		if _, routed := want[c.Class]; routed != (len(c.RoutedBy) == 1) {
			t.Errorf("audit of every job class: %s routed by %v", c.Class, c.RoutedBy)
		}
	}

	if code, out, errOut := s.lwStatus(t, "audit", `App\Jobs\OptionsJob`); code != 0 || !strings.Contains(out, "| retryUntil ") {
		t.Errorf("audit OptionsJob: status %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = s.lwStatus(t, "gen", `App\Jobs\Audit\FailedHookJob`)
	if code != 0 || !strings.Contains(out, "NotBefore *time.Time `php:\"notBefore,default=null\"`") || !strings.Contains(out, "func RegisterFailedHookJob(reg *handlers.Registry) {") {
		t.Errorf("gen: status %d\n%s\n%s", code, out, errOut)
	}
}
