package reliability

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// bins are built once for every test.
var bins struct {
	dir        string
	laraworker string
	relworker  string
	argvdump   string
	err        error
}

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "laraworker-rel-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	bins.dir = dir
	bins.laraworker = filepath.Join(dir, "laraworker")
	bins.relworker = filepath.Join(dir, "relworker")
	bins.argvdump = filepath.Join(dir, "argvdump")
	for out, pkg := range map[string]string{bins.laraworker: ".", bins.relworker: "./reliability/cmd/relworker", bins.argvdump: "./reliability/cmd/argvdump"} {
		if err := goBuild(out, pkg); err != nil {
			bins.err = err
			break
		}
	}
	code := m.Run()
	if app.dir != "" {
		os.RemoveAll(app.dir)
	}
	return code
}

func goBuild(out, pkg string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, pkg)
	cmd.Dir = ".."
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %w\n%s", pkg, err, b)
	}
	return nil
}

func needBins(t *testing.T) {
	t.Helper()
	if bins.err != nil {
		t.Fatal(bins.err)
	}
}
