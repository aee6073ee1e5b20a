package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/laraworker/laraworker/test/bench"
)

// procContender is a worker that runs as a process of its own on the
// copy of the Laravel app: `php artisan queue:work redis` (one process)
// or the `laraworker work` command, each with --sleep 0
// --stop-when-empty.
type procContender struct {
	label string
	// base: the -laraworker-base build of the command.
	base bool
	args func() (bin string, args []string)
	dir  string // the app copy: the PHP worker's working directory
	logs string
}

// procRun is what the kernel accounted to one run.
type procRun struct {
	wall time.Duration
	// cpu is user + system of the process and of the children it waited
	// for (the laraworker command's config read through PHP).
	cpu time.Duration
}

// appCopy is the Laravel app copied with a .env on the private Redis.
type appCopy struct {
	dir string
}

// newAppCopy copies app (testdata/laravel) as laraworker bench does, with
// a .env that points its redis connection at the private server and its
// database (failed_jobs, which no no-op job reaches) at a SQLite file.
func newAppCopy(app, dir string, srv *redisServer) (*appCopy, error) {
	key := make([]byte, 32) // a fresh key: no benchmark job is encrypted
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	host, port, _ := strings.Cut(srv.addr, ":")
	env := strings.Join([]string{
		"APP_KEY=base64:" + base64.StdEncoding.EncodeToString(key),
		"APP_ENV=production", "APP_DEBUG=false", "LOG_CHANNEL=null", "CACHE_DRIVER=array",
		"DB_CONNECTION=sqlite", "DB_DATABASE=" + filepath.Join(dir, "app.sqlite"),
		"QUEUE_CONNECTION=redis", "REDIS_CLIENT=phpredis", "REDIS_HOST=" + host, "REDIS_PORT=" + port,
		"REDIS_QUEUE=default", "REDIS_PREFIX=" + redisPrefix,
	}, "\n") + "\n"
	envFile := filepath.Join(dir, "app.env")
	if err := os.WriteFile(envFile, []byte(env), 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "app.sqlite"), nil, 0o600); err != nil {
		return nil, err
	}
	c := &appCopy{dir: filepath.Join(dir, "app")}
	if err := bench.CopyLaravelApp(app, c.dir, envFile); err != nil {
		return nil, fmt.Errorf("copying the Laravel app %s: %w", app, err)
	}
	return c, nil
}

func newPHP(a *appCopy, php, logs string) *procContender {
	return &procContender{label: "php-1", dir: a.dir, logs: logs, args: func() (string, []string) {
		return php, []string{"artisan", "queue:work", "redis", "--queue=default", "--sleep=0", "--stop-when-empty"}
	}}
}

func newCLI(a *appCopy, bin, php string, c int, logs string) *procContender {
	return &procContender{label: fmt.Sprintf("cli-c%d", c), dir: a.dir, logs: logs, args: func() (string, []string) {
		return bin, []string{"work", "--app", a.dir, "--php", php, "--connection", "redis", "--queue", "default",
			"--route", benchClass + "=noop", "--concurrency", strconv.Itoa(c), "--sleep", "0", "--stop-when-empty"}
	}}
}

// createTables creates failed_jobs and job_batches in the copy's
// database (`laraworker tables`), which `laraworker work` requires.
func (a *appCopy) createTables(ctx context.Context, bin, php string) error {
	cmd := exec.CommandContext(ctx, bin, "tables", "--app", a.dir, "--php", php, "--connection", "redis")
	cmd.Dir, cmd.Env = a.dir, childEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("laraworker tables: %w: %s", err, out)
	}
	return nil
}

// run runs the worker once until it exits.
func (p *procContender) run(ctx context.Context, limit time.Duration) (procRun, error) {
	var r procRun
	bin, args := p.args()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = p.dir
	cmd.Env = childEnv()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return r, err
	}
	timer := time.AfterFunc(limit, func() { _ = cmd.Process.Kill() })
	defer timer.Stop()
	err := cmd.Wait()
	r.wall = time.Since(start)
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	_ = os.WriteFile(filepath.Join(p.logs, p.label+".log"), out.Bytes(), 0o600)
	if err != nil {
		tail := bytes.TrimSpace(out.Bytes())
		if len(tail) > 600 {
			tail = tail[len(tail)-600:]
		}
		return r, fmt.Errorf("%s: %w: %s", p.label, err, tail)
	}
	return r, nil
}

// childEnv is this process's environment without what would override
// the copy's .env (Laravel and laraworker let the environment win).
func childEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(name, "DB_"), strings.HasPrefix(name, "APP_"), strings.HasPrefix(name, "QUEUE_"),
			strings.HasPrefix(name, "CACHE_"), strings.HasPrefix(name, "REDIS_"), strings.HasPrefix(name, "LARAWORKER_"),
			name == "DATABASE_URL":
			continue
		}
		out = append(out, kv)
	}
	return out
}

// buildLaraworker builds the laraworker command of the checkout this
// module replaces into dir.
func buildLaraworker(ctx context.Context, dir string) (string, error) {
	root, err := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", "github.com/laraworker/laraworker").Output()
	if err != nil {
		return "", fmt.Errorf("finding the laraworker checkout: %w", err)
	}
	bin := filepath.Join(dir, "laraworker")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, ".")
	cmd.Dir = strings.TrimSpace(string(root))
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building laraworker: %w: %s", err, out)
	}
	return bin, nil
}
