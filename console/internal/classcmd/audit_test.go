package classcmd_test

import (
	"encoding/json"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/laraworker/laraworker/console"
	"github.com/laraworker/laraworker/console/internal/clitest"
	"github.com/laraworker/laraworker/internal/testutil/phptest"
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
		"Laravel 8.83.26; laraworker bridge installed, capabilities: failed, batch-callbacks, chain-catch, unique, models, middleware, record-all.",
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
	out, _, code = clitest.RunCLI(t, "audit", "--app", app, "--routed")
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
	if _, errOut, code := clitest.RunCLI(t, "audit", "--app", app, "--routed"); code != console.ExitUsage || !strings.Contains(errOut, "no classes: config/laraworker.php (the bridge) routes none to Go") {
		t.Errorf("--routed without routes: %d %q", code, errOut)
	}
	if _, errOut, code := clitest.RunCLI(t, "audit", "--app", app, "--routed", `App\Jobs\NoopJob`); code != console.ExitUsage || !strings.Contains(errOut, "name classes or give --routed, not both") {
		t.Errorf("--routed with classes: %d %q", code, errOut)
	}
	if _, errOut, code := clitest.RunCLI(t, "gen", "--app", app, `App\Jobs\NoopJob`, `App\Jobs\UniqueJob`); code != console.ExitUsage || !strings.Contains(errOut, "give --out DIR") {
		t.Errorf("gen of two classes to standard output: %d %q", code, errOut)
	}
	if _, errOut, code := clitest.RunCLI(t, "gen", "--app", app, "--out", filepath.Join(t.TempDir(), "x.go")); code != console.ExitUsage || !strings.Contains(errOut, "is one file: name one class") {
		t.Errorf("gen of every class to one file: %d %q", code, errOut)
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

// TestAuditEveryJobClass: without class names audit reads every job class
// of the app through its PHP, bridge or not: the Laravel 8.83 test app
// without the bridge (where audit exited 2 before), each class with its
// items, the properties whose values only gen's type decodes named (a
// Collection holding User::all() arrives as a ModelIdentifier); the
// queued mailable is named and left out.
func TestAuditEveryJobClass(t *testing.T) {
	phptest.NeedPHP(t)
	app := phptest.CopyAppWithoutBridge(t)
	phptest.WriteFile(t, filepath.Join(app, "app", "Mail", "Welcome.php"), "<?php\n\nnamespace App\\Mail;\n\nclass Welcome extends \\Illuminate\\Mail\\Mailable implements \\Illuminate\\Contracts\\Queue\\ShouldQueue\n{\n}\n")
	t.Setenv("LARAWORKER_ENV", "")
	out, errOut, code := clitest.RunCLI(t, "audit", "--app", app)
	if code != console.ExitLost || !strings.Contains(errOut, "item(s) would not carry over to Go") {
		t.Errorf("status %d, stderr %q", code, errOut)
	}
	for _, want := range []string{
		"Laravel 8.83.26; laraworker bridge not installed.",
		`Not audited: App\Mail\Welcome: a mailable: Laravel queues it inside Illuminate\Mail\SendQueuedMailable.`,
		`App\Jobs\Shapes\ExchangeRatesJob (app/Jobs/Shapes/ExchangeRatesJob.php)`,
		`App\Jobs\Hooks\OverlapJob (app/Jobs/Hooks/OverlapJob.php)`,
		"  $users: decoded as payload.Collection. Go might not decode it in another type: a collection of Eloquent models (User::all(), a query's get()) arrives as a ModelIdentifier of their class and keys",
		"  $since: decoded as *time.Time. Go might not decode it in another type: a job may leave it out",
		`5 property(ies) of App\Jobs\Shapes\ExchangeRatesJob decode only into the Go type gen writes (see above): $users, $totals, $tags, $maybe, $since.`,
		"  $podcast: decoded as *phpserialize.Value. Go might not decode it in another type: the model arrives whole",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if strings.Contains(out, `App\Mail\Welcome (`) || strings.Contains(out, `App\Jobs\Routed\BaseReport (`) {
		t.Error("a mailable or an abstract class audited as a job class")
	}

	out, _, _ = clitest.RunCLI(t, "audit", "--app", app, "--json")
	var r struct {
		Classes []struct {
			Class string `json:"class"`
		} `json:"classes"`
		Skipped []struct{ Class, Why string } `json:"skipped"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("--json: %v", err)
	}
	if len(r.Classes) < 36 || len(r.Skipped) != 1 || r.Skipped[0].Class != `App\Mail\Welcome` {
		t.Errorf("--json: %d classes, skipped %+v", len(r.Classes), r.Skipped)
	}
}

// TestGenEveryJobClass: gen --out DIR writes one file per job class of
// the app into DIR, in the package of DIR's Go files (else named after
// DIR), which compiles and passes go vet; it never overwrites a file
// without --force; gen CLASS --out FILE writes that one file.
func TestGenEveryJobClass(t *testing.T) {
	phptest.NeedPHP(t)
	if testing.Short() {
		t.Skip("builds a module (-short)")
	}
	app := phptest.CopyAppWithoutBridge(t)
	t.Setenv("LARAWORKER_ENV", "")
	mod := t.TempDir()
	root := phptest.RepoRoot()
	phptest.WriteFile(t, filepath.Join(mod, "go.mod"), "module example.com/w\n\ngo 1.24\n\nrequire github.com/laraworker/laraworker v0.0.0\n\nreplace github.com/laraworker/laraworker => "+root+"\n")
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	phptest.WriteFile(t, filepath.Join(mod, "go.sum"), string(sum))
	dir := filepath.Join(mod, "queue-workers")
	out, errOut, code := clitest.RunCLI(t, "gen", "--app", app, "--out", dir)
	if code != 0 {
		t.Fatalf("gen --out: %d %s", code, errOut)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	if len(files) < 36 || !strings.Contains(out, `App\Jobs\Shapes\ExchangeRatesJob: `+filepath.Join(dir, "exchange_rates_job.go")+" (package queueworkers)") {
		t.Errorf("%d files:\n%s", len(files), out)
	}
	cmd := exec.Command("go", "vet", "./...")
	cmd.Dir, cmd.Env = mod, append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off", "GOTOOLCHAIN=local")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go vet of gen's files: %v\n%s", err, b)
	}

	mine := filepath.Join(dir, "noop_job.go")
	phptest.WriteFile(t, mine, "package queueworkers\n\n// my handler\n")
	if _, errOut, code := clitest.RunCLI(t, "gen", "--app", app, "--out", dir, `App\Jobs\NoopJob`); code != 1 || !strings.Contains(errOut, mine+" exist(s): give --force") {
		t.Errorf("overwrite without --force: %d %q", code, errOut)
	}
	if b, _ := os.ReadFile(mine); string(b) != "package queueworkers\n\n// my handler\n" {
		t.Errorf("the file was overwritten: %s", b)
	}
	if _, errOut, code := clitest.RunCLI(t, "gen", "--app", app, "--out", dir, `App\Jobs\NoopJob`, "--force"); code != 0 {
		t.Errorf("--force: %d %q", code, errOut)
	}
	if b, _ := os.ReadFile(mine); !strings.Contains(string(b), "type NoopJob struct") {
		t.Errorf("--force did not write: %s", b)
	}

	// One file, into a folder whose Go files say their package.
	other := filepath.Join(mod, "rates")
	phptest.WriteFile(t, filepath.Join(other, "doc.go"), "// Package exchange runs the rates jobs.\npackage exchange\n")
	if _, errOut, code := clitest.RunCLI(t, "gen", `App\Jobs\Shapes\ExchangeRatesJob`, "--app", app, "--out", filepath.Join(other, "job.go")); code != 0 {
		t.Fatalf("gen CLASS --out FILE: %d %s", code, errOut)
	}
	if b, _ := os.ReadFile(filepath.Join(other, "job.go")); !strings.Contains(string(b), "\npackage exchange\n") || !strings.Contains(string(b), "Users payload.Collection `php:\"users\"`") {
		t.Errorf("gen CLASS --out FILE wrote:\n%s", b)
	}
}
