package console

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/internal/testutil/gobuild"
	"github.com/urfave/cli/v2"
)

// testApp is the laraworker binary's app without bench (package bench
// imports this one): what the in-process CLI tests run.
func testApp() *cli.App {
	app := New(handlers.NewRegistry(), Options{Name: "laraworker"})
	app.Commands = append(app.Commands, DemoCommand())
	return app
}

func commandNames(app *cli.App) []string {
	var names []string
	for _, c := range app.Commands {
		names = append(names, c.Name)
	}
	return names
}

// An embedding program's app carries the name and version it gives, runs
// the worker commands and has neither demo nor bench.
func TestEmbeddingProgramNamesItself(t *testing.T) {
	app := New(handlers.NewRegistry(), Options{Name: "myworker", Version: "1.4.0", Usage: "podcast jobs"})
	var out, errOut bytes.Buffer
	app.Writer, app.ErrWriter = &out, &errOut
	if code := Run(app, []string{"myworker", "--version"}); code != 0 || out.String() != "myworker version 1.4.0\n" {
		t.Fatalf("--version: status %d, %q %q", code, out.String(), errOut.String())
	}
	names := commandNames(app)
	for _, want := range []string{"work", "push", "inspect", "failed", "retry", "tables"} {
		if !slices.Contains(names, want) {
			t.Errorf("command %q missing from %v", want, names)
		}
	}
	for _, unwanted := range []string{"demo", "bench"} {
		if slices.Contains(names, unwanted) {
			t.Errorf("an embedding program must not get %q: %v", unwanted, names)
		}
	}
	out.Reset()
	if code := Run(app, []string{"myworker", "--help"}); code != 0 || !strings.HasPrefix(out.String(), "NAME:\n   myworker - podcast jobs") {
		t.Errorf("--help: status %d, %q", code, out.String())
	}
	errOut.Reset()
	if code := Run(app, []string{"myworker", "retry"}); code == 0 || !strings.HasPrefix(errOut.String(), "myworker: ") {
		t.Errorf("errors must carry the program's name: status %d, %q", code, errOut.String())
	}
}

// Zero Options: the executable's name, the version the toolchain recorded
// (a test binary has none: "dev"), the default usage.
func TestZeroOptionsDefaults(t *testing.T) {
	app := New(handlers.NewRegistry(), Options{})
	if want := filepath.Base(mustExecutable(t)); app.Name != want {
		t.Errorf("name %q, want the executable's base name %q", app.Name, want)
	}
	if want := toolchainVersion(t); app.Version != want {
		t.Errorf("version %q, want %q", app.Version, want)
	}
	if app.Usage == "" {
		t.Error("no default usage")
	}
	old := Version
	Version = "9.9.9-ldflags"
	defer func() { Version = old }()
	if v := New(handlers.NewRegistry(), Options{}).Version; v != "9.9.9-ldflags" {
		t.Errorf("with console.Version set the version is %q", v)
	}
	if v := New(handlers.NewRegistry(), Options{Version: "2.0.0"}).Version; v != "2.0.0" {
		t.Errorf("Options.Version must win over console.Version, got %q", v)
	}
}

func mustExecutable(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

func toolchainVersion(t *testing.T) string {
	t.Helper()
	info, ok := debug.ReadBuildInfo()
	if !ok || info.Main.Version == "" || info.Main.Version == "(devel)" {
		return "dev"
	}
	return info.Main.Version
}

// The laraworker binary prints the version its build recorded (what `go
// version -m` reads from it), or the one given with -ldflags -X.
func TestBinaryVersion(t *testing.T) {
	t.Parallel() // waits on real time and child processes: beside the other waiting tests
	bin := laraworkerBinary(t)
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("--version: %v %s", err, out)
	}
	if want := "laraworker version " + recordedVersion(t, bin) + "\n"; string(out) != want {
		t.Errorf("--version printed %q, want %q", out, want)
	}

	stamped := filepath.Join(t.TempDir(), "laraworker")
	if err := gobuild.Program(context.Background(), "..", ".", stamped, "-X github.com/laraworker/laraworker/console.Version=1.2.3-test"); err != nil {
		t.Fatal(err)
	}
	out, err = exec.Command(stamped, "--version").CombinedOutput()
	if err != nil || string(out) != "laraworker version 1.2.3-test\n" {
		t.Errorf("-ldflags -X: %v %q", err, out)
	}
	out, _ = exec.Command(stamped, "--help").CombinedOutput()
	for _, cmd := range []string{"demo", "bench"} {
		if !strings.Contains(string(out), "\n   "+cmd+" ") {
			t.Errorf("the laraworker binary has no %s command:\n%s", cmd, out)
		}
	}
}

// recordedVersion is the main module's version in bin's build information,
// as `go version -m` prints it ("dev" for "(devel)").
func recordedVersion(t *testing.T, bin string) string {
	t.Helper()
	out, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) >= 3 && f[0] == "mod" && f[1] == "github.com/laraworker/laraworker" {
			if f[2] == "(devel)" {
				return "dev"
			}
			return f[2]
		}
	}
	t.Fatalf("no mod line in go version -m:\n%s", out)
	return ""
}
