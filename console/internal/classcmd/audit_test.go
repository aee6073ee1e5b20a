package classcmd_test

import (
	"encoding/json"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"

	"github.com/laraworker/laraworker/console"
	"github.com/laraworker/laraworker/console/internal/clitest"
	"github.com/laraworker/laraworker/internal/phptest"
)

// TestAuditCommand: audit prints a table per class and exits 1 when
// something would not carry over, 0 when everything does; --json is the
// report; a class with nothing to lose passes.
func TestAuditCommand(t *testing.T) {
	phptest.NeedPHP(t)
	app := phptest.CopyApp(t)
	t.Setenv("LARAWORKER_ENV", "")
	out, errOut, code := clitest.RunCLI(t, "audit", "--app", app, `App\Jobs\Audit\MiddlewareJob`, `App\Jobs\Audit\FailedHookJob`)
	if code != console.ExitLost || !strings.Contains(errOut, "audit: 2 item(s) would not carry over to Go") {
		t.Errorf("status %d, stderr %q", code, errOut)
	}
	for _, want := range []string{
		"Laravel 8.83.26; laraworker bridge installed, capabilities: failed, batch-callbacks, chain-catch, unique, models, middleware.",
		`App\Jobs\Audit\MiddlewareJob (app/Jobs/Audit/MiddlewareJob.php)`,
		"| Item ", "| WithoutOverlapping ", "| will not carry over ",
		"  closure: PHP code Go cannot run",
		`2 item(s) of App\Jobs\Audit\MiddlewareJob would not carry over.`,
		"  failed(): runs in PHP once per Go failure, with Go's exception; JobFailed fires there",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	out, errOut, code = clitest.RunCLI(t, "audit", `App\Jobs\OptionsJob`, "--json", "--app", app)
	if code != 0 {
		t.Fatalf("OptionsJob: status %d, %s", code, errOut)
	}
	var r struct {
		LaravelVersion string `json:"laravel_version"`
		Lost           int    `json:"lost"`
		Classes        []struct {
			Class string `json:"class"`
			Items []struct {
				Name    string `json:"name"`
				Verdict string `json:"verdict"`
			} `json:"items"`
		} `json:"classes"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	if r.LaravelVersion != "8.83.26" || r.Lost != 0 || len(r.Classes) != 1 || r.Classes[0].Items[1].Name != "tries" || r.Classes[0].Items[1].Verdict != "go" {
		t.Errorf("--json %+v", r)
	}

	// Routed classes: those config/laraworker.php lists.
	phptest.BridgeConfig(t, app, `App\Jobs\Routed\BaseReport::class`)
	out, _, code = clitest.RunCLI(t, "audit", "--app", app)
	if code != 0 || !strings.Contains(out, `App\Jobs\Routed\MonthlyReport (app/Jobs/Routed/MonthlyReport.php; routed to Go by App\Jobs\Routed\BaseReport)`) ||
		!strings.Contains(out, "  ShouldBeUnique: Go releases the lock as CallQueuedHandler does; the bridge records its key, store and kind in the payload at dispatch") {
		t.Errorf("routed classes: status %d\n%s", code, out)
	}
}

// TestAuditUsage: without classes and without bridge routes, or gen
// without exactly one class, is a usage error; an app that is not one is
// an error naming it.
func TestAuditUsage(t *testing.T) {
	phptest.NeedPHP(t)
	app := phptest.CopyApp(t)
	t.Setenv("LARAWORKER_ENV", "")
	if _, errOut, code := clitest.RunCLI(t, "audit", "--app", app); code != console.ExitUsage || !strings.Contains(errOut, "no classes") {
		t.Errorf("no classes: %d %q", code, errOut)
	}
	if _, errOut, code := clitest.RunCLI(t, "gen", "--app", app); code != console.ExitUsage || !strings.Contains(errOut, "name one class") {
		t.Errorf("gen without a class: %d %q", code, errOut)
	}
	if _, errOut, code := clitest.RunCLI(t, "audit", "--app", t.TempDir(), "X"); code != 1 || !strings.Contains(errOut, "holds no artisan") {
		t.Errorf("no app: %d %q", code, errOut)
	}
	if _, errOut, code := clitest.RunCLI(t, "gen", "--app", app, `App\Jobs\Nope`); code != 1 || !strings.Contains(errOut, "no such class") {
		t.Errorf("gen of a missing class: %d %q", code, errOut)
	}
}

// TestGenCommand: gen prints a Go file of the package asked for, with the
// struct and the registration.
func TestGenCommand(t *testing.T) {
	phptest.NeedPHP(t)
	app := phptest.CopyApp(t)
	t.Setenv("LARAWORKER_ENV", "")
	out, errOut, code := clitest.RunCLI(t, "gen", `App\Jobs\DeletableModelJob`, "--app", app, "--package", "podcasts")
	if code != 0 {
		t.Fatalf("status %d: %s", code, errOut)
	}
	f, err := parser.ParseFile(token.NewFileSet(), "x.go", out, parser.ParseComments)
	if err != nil {
		t.Fatalf("not Go: %v\n%s", err, out)
	}
	if f.Name.Name != "podcasts" {
		t.Errorf("package %s", f.Name.Name)
	}
	for _, want := range []string{
		"type DeletableModelJob struct {",
		"Podcast payload.ModelIdentifier `php:\"podcast\"`",
		"handlers.Register(reg, `App\\Jobs\\DeletableModelJob`, func(ctx context.Context, job *handlers.Job, cmd *DeletableModelJob) error {",
		"handlers.DeleteWhenMissingModels(),",
		"handlers.Model{Class: `App\\Models\\Podcast`, Table: \"podcasts\"},",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("gen output lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(app); err != nil {
		t.Fatal(err)
	}
}
