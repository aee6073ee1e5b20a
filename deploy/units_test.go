package deploy_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/laraworker/laraworker/internal/testutil/gobuild"
)

// requireTool finds a tool the check needs; without it the test skips,
// unless LARAWORKER_E2E is set (CI), where a missing tool fails it.
func requireTool(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("LARAWORKER_E2E") != "" {
			t.Fatalf("%s is not installed (scripts/deploy-tools.sh installs it)", name)
		}
		t.Skipf("%s is not installed", name)
	}
	return path
}

// TestSystemdUnitVerifies runs `systemd-analyze verify` on the unit with
// the binary path pointing at a real executable: any warning (an unknown
// escape in ExecStart, say) fails the test.
func TestSystemdUnitVerifies(t *testing.T) {
	analyze := requireTool(t, "systemd-analyze")
	unit, err := os.ReadFile("laraworker.service")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "laraworker")
	if err := gobuild.Program(context.Background(), "..", ".", bin, ""); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "laraworker.service")
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(string(unit), "/usr/local/bin/laraworker", bin)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(analyze, "verify", path).CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
}

// TestSupervisorProgramLoads loads the program with supervisor's own
// config parser, as supervisord would, after raising numprocs as a user
// who wants more processes does: it must accept that and hand each worker
// the class name with single backslashes.
func TestSupervisorProgramLoads(t *testing.T) {
	python := requireTool(t, "python3")
	pythonPath := supervisorPythonPath(t)
	program, err := os.ReadFile("supervisor.conf")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(program), "\nnumprocs=1\n") {
		t.Fatal("supervisor.conf no longer says numprocs=1: update this test")
	}
	dir := t.TempDir()
	raised := filepath.Join(dir, "laraworker.conf")
	if err := os.WriteFile(raised, []byte(strings.Replace(string(program), "\nnumprocs=1\n", "\nnumprocs=3\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	main := filepath.Join(dir, "supervisord.conf")
	conf := "[supervisord]\nlogfile=" + filepath.Join(dir, "supervisord.log") + "\n[include]\nfiles=" + raised + "\n"
	if err := os.WriteFile(main, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	script := `
import shlex, sys
from supervisor.options import ServerOptions
o = ServerOptions()
o.realize(['-c', sys.argv[1]])
for g in o.process_group_configs:
    for p in g.process_configs:
        print(p.name + "\t" + "\x1f".join(shlex.split(p.command)))
`
	cmd := exec.Command(python, "-c", script, main)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+pythonPath)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("supervisor rejects the program: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 3 {
		t.Fatalf("want 3 processes, got:\n%s", out)
	}
	names := map[string]bool{}
	for _, line := range lines {
		name, argv, _ := strings.Cut(line, "\t")
		names[name] = true
		if !strings.Contains(argv, "\x1fApp\\Jobs\\ResizeImage=exec:") {
			t.Errorf("%s: argv %q lacks the route with single backslashes", name, strings.ReplaceAll(argv, "\x1f", " "))
		}
	}
	if len(names) != len(lines) {
		t.Fatalf("process names are not distinct: %v", names)
	}
}

// supervisorPythonPath is where supervisor's modules are: as
// LARAWORKER_SUPERVISOR_PY says, else unpacked by scripts/deploy-tools.sh
// into .cache. The full suite (LARAWORKER_E2E or LARAWORKER_TEST_REQUIRE_DB)
// runs that script, which downloads Debian's package; the fast loop
// (`go test ./...`) installs nothing and skips, saying what to run.
func supervisorPythonPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("LARAWORKER_SUPERVISOR_PY"); p != "" {
		return p
	}
	cached, err := filepath.Abs("../.cache/supervisor/usr/lib/python3/dist-packages")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(cached, "supervisor")); err == nil {
		return cached
	}
	full := os.Getenv("LARAWORKER_E2E") != "" || os.Getenv("LARAWORKER_TEST_REQUIRE_DB") != ""
	if !full {
		t.Skip("supervisor's modules are not in .cache/supervisor: run scripts/deploy-tools.sh (it downloads Debian's package)")
	}
	out, err := exec.Command("../scripts/deploy-tools.sh").Output()
	if err != nil {
		t.Fatalf("scripts/deploy-tools.sh: %v", err)
	}
	return strings.TrimSpace(string(out))
}
