package e2e

import (
	"context"
	"errors"
	"fmt"
	"github.com/laraworker/laraworker/internal/testutil/testsqs"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/testutil/gobuild"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/store/database"
)

// suite is one copy of the Laravel app on one database, with the
// binaries the tests run.
type suite struct {
	dir      string // this suite's temp dir
	app      string // the copy of testdata/laravel the tests run
	envFile  string // its .env, written by setup-php.sh
	laraw    string // the laraworker binary
	recorder string // the exec handler that records runs (cmd/recorder)
	driver   string
	q        *database.Queue
}

var (
	suites     []*suite
	skipReason string
	setupErr   error
)

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	// The suite runs real php artisan for 20 to 35 minutes: not part of
	// the fast loop (go test ./...), only when asked (scripts/test).
	if os.Getenv("LARAWORKER_E2E") == "" {
		skipReason = "the interop suite runs real php artisan for 20 to 35 minutes: set LARAWORKER_E2E=1 (scripts/test does) to run it"
		return m.Run()
	}
	started := time.Now()
	dir, err := os.MkdirTemp("", "laraworker-e2e-")
	if err != nil {
		setupErr = err
		return m.Run()
	}
	defer os.RemoveAll(dir)
	defer testsqs.Stop()
	suites, setupErr = setUpAll(dir)
	for _, s := range suites {
		defer s.q.Close()
	}
	fmt.Fprintf(os.Stderr, "e2e: setup took %s\n", time.Since(started).Round(time.Millisecond))
	code := m.Run()
	fmt.Fprintf(os.Stderr, "e2e: setup and tests took %s\n", time.Since(started).Round(time.Millisecond))
	return code
}

// onEachDB runs test once per database (as subtests named by driver),
// each time with every table emptied first; it skips or fails when there
// is no suite.
func onEachDB(t *testing.T, test func(t *testing.T, s *suite)) {
	t.Helper()
	if skipReason != "" {
		t.Skip(skipReason)
	}
	if setupErr != nil {
		t.Fatalf("e2e setup failed: %v", setupErr)
	}
	for _, s := range suites {
		t.Run(s.driver, func(t *testing.T) {
			s.reset(t)
			test(t, s)
		})
	}
}

// drivers are the databases to run on: LARAWORKER_E2E_DB, a comma
// separated list, default MariaDB/MySQL and SQLite.
func drivers() []string {
	v := os.Getenv("LARAWORKER_E2E_DB")
	if v == "" {
		v = "mysql,sqlite"
	}
	return strings.Split(v, ",")
}

// setUpAll builds the binaries once and prepares one app copy per driver.
func setUpAll(dir string) ([]*suite, error) {
	root, err := repoRoot()
	if err != nil {
		return nil, err
	}
	bin := filepath.Join(dir, "bin")
	laraw, recorder := os.Getenv("LARAWORKER_E2E_BIN"), filepath.Join(bin, "recorder")
	if laraw == "" {
		laraw = filepath.Join(bin, "laraworker")
		if err := goBuild(root, laraw, "."); err != nil {
			return nil, err
		}
	}
	if err := goBuild(root, recorder, "./test/e2e/cmd/recorder"); err != nil {
		return nil, err
	}
	var out []*suite
	for _, driver := range drivers() {
		s := &suite{dir: filepath.Join(dir, driver), laraw: laraw, recorder: recorder, driver: driver}
		if err := s.setUp(root); err != nil {
			for _, o := range out {
				o.q.Close()
			}
			return nil, fmt.Errorf("%s: %w", driver, err)
		}
		out = append(out, s)
	}
	return out, nil
}

// setUp copies the Laravel app (so its .env and database are the suite's
// own), runs setup-php.sh on the copy and connects.
func (s *suite) setUp(root string) error {
	s.app = filepath.Join(s.dir, "testdata", "laravel")
	s.envFile = filepath.Join(s.app, ".env")
	if err := copyApp(filepath.Join(root, "testdata"), filepath.Join(s.dir, "testdata")); err != nil {
		return err
	}
	// The bridge sits where the app's autoloader looks for it: beside
	// testdata/, as in the repository.
	if err := copyTree(filepath.Join(root, "bridge"), filepath.Join(s.dir, "bridge")); err != nil {
		return err
	}
	if err := s.runSetup(); err != nil {
		return err
	}
	cfg, _, err := appconfig.Load(context.Background(), appconfig.Options{EnvOnly: true, EnvFile: s.envFile, Environ: []string{}})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s.q, err = database.Open(ctx, cfg, database.Options{})
	return err
}

func repoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	root := filepath.Dir(filepath.Dir(wd)) // the tests run in test/e2e/
	if _, err := os.Stat(filepath.Join(root, "testdata", "setup-php.sh")); err != nil {
		return "", fmt.Errorf("cannot find testdata/setup-php.sh from %s: %w", wd, err)
	}
	return root, nil
}

// copyApp copies setup-php.sh and the Laravel app, leaving out the
// developer's .env, SQLite files and logs.
func copyApp(from, to string) error {
	if err := copyFile(filepath.Join(from, "setup-php.sh"), filepath.Join(to, "setup-php.sh"), 0o755); err != nil {
		return err
	}
	src := filepath.Join(from, "laravel")
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		dst := filepath.Join(to, "laravel", rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(dst, 0o755)
		case rel == ".env", strings.HasSuffix(rel, ".sqlite"), strings.HasPrefix(rel, filepath.Join("storage", "logs")+string(filepath.Separator)):
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		return copyFile(path, dst, info.Mode().Perm())
	})
}

func copyTree(from, to string) error {
	return filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		return copyFile(path, filepath.Join(to, rel), 0o644)
	})
}

func copyFile(from, to string, perm fs.FileMode) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	return os.WriteFile(to, b, perm)
}

// runSetup runs setup-php.sh with every DB_* variable given, so the .env it
// writes names exactly the e2e database.
func (s *suite) runSetup() error {
	driver := s.driver
	db := "laraworker_e2e" + os.Getenv("LARAWORKER_TEST_DB_SUFFIX")
	vars := map[string][]string{
		"mysql":  {"DB_HOST=127.0.0.1", "DB_PORT=3306", "DB_DATABASE=" + db, "DB_USERNAME=root", "DB_PASSWORD="},
		"pgsql":  {"DB_HOST=127.0.0.1", "DB_PORT=5432", "DB_DATABASE=" + db, "DB_USERNAME=postgres", "DB_PASSWORD="},
		"sqlite": {"DB_DATABASE=" + filepath.Join(s.dir, "e2e.sqlite")},
	}[driver]
	if vars == nil {
		return fmt.Errorf("LARAWORKER_E2E_DB names %q: want mysql, pgsql or sqlite", driver)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(s.dir, "testdata", "setup-php.sh"))
	cmd.Env = append(cleanEnviron(), append(vars, "DB_CONNECTION="+driver)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("setup-php.sh: %w\n%s", err, out)
	}
	if _, err := exec.LookPath("php"); err != nil {
		return fmt.Errorf("setup-php.sh ran but php is still missing: %w", err)
	}
	return nil
}

func goBuild(root, out, pkg string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	return gobuild.Program(ctx, root, pkg, out, "")
}

// cleanEnviron is the test's environment without the variables Laravel
// and laraworker read, so a developer's DB_HOST or APP_KEY cannot point a
// test at another database.
func cleanEnviron() []string {
	var out []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "DB_") || strings.HasPrefix(name, "APP_") || strings.HasPrefix(name, "QUEUE_") ||
			strings.HasPrefix(name, "CACHE_") || strings.HasPrefix(name, "LARAWORKER_") || name == "WORKER_NAME" {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// errNoRows is returned by one-row helpers.
var errNoRows = errors.New("no such row")
