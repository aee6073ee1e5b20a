// Package reliability checks what laraworker promises under crashes,
// database faults, load, long jobs, hostile input and attempts to leak
// secrets, against real MariaDB/PostgreSQL and, where PHP is installed, a
// real `php artisan queue:work` on the same tables.
//
// The Laravel app (testdata/laravel) is copied to a temp dir and set up on
// the MariaDB database laraworker_rel, never in place. Without PHP the
// mixed-fleet parts are skipped and the Go-only variants run.
//
// Environment:
//
//	LARAWORKER_REL_LOAD_PROCS, LARAWORKER_REL_LOAD_JOBS, LARAWORKER_REL_LOAD_PHP
//	                              size of TestLoad (default 4 procs, 10000 jobs, 2 PHP)
//	LARAWORKER_TEST_DB_SUFFIX     appended to the app's database name
//
// The tests that stop a database server (TestDatabaseRestart) or change a
// server's settings (TestPostgresSerializationFailures,
// TestPostgresIdleInTransactionTimeout) start a server of their own with
// mariadb-install-db/mariadbd or initdb/postgres (as the postgres user
// when run as root) in a temp directory, on a free port; they never touch
// the shared servers.
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
