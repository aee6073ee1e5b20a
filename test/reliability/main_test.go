package reliability

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/testutil/gobuild"
)

// bins are built once for every test.
var bins struct {
	dir        string
	laraworker string
	relworker  string
	argvdump   string
	once       sync.Once
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
	code := m.Run()
	if app.dir != "" {
		os.RemoveAll(app.dir)
	}
	return code
}

func goBuild(out, pkg string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	return gobuild.Program(ctx, "../..", pkg, out, "")
}

// buildBins builds the programs the tests run. Once, and only when a test
// needs them: where no server is reachable every test skips first, and
// the package costs no build (the fast loop, docs/DEVELOPMENT.md).
func buildBins() {
	for out, pkg := range map[string]string{bins.laraworker: ".", bins.relworker: "./test/reliability/cmd/relworker", bins.argvdump: "./test/reliability/cmd/argvdump"} {
		if err := goBuild(out, pkg); err != nil {
			bins.err = err
			return
		}
	}
}

func needBins(t *testing.T) {
	t.Helper()
	bins.once.Do(buildBins)
	if bins.err != nil {
		t.Fatal(bins.err)
	}
}
