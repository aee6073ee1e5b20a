package console

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/laraworker/laraworker/console/internal/testapp"
)

// TestWorkRunsOnOneThreadWhileIdle: `work` at its defaults, idle, runs
// its Go code on one thread, as /metrics' go_sched_gomaxprocs_threads
// shows; a job runs with the threads the process started with ($GOMAXPROCS
// 3 here), and the process narrows again once idle. With
// --narrow-when-idle=false it keeps its threads however long it idles.
func TestWorkRunsOnOneThreadWhileIdle(t *testing.T) {
	t.Parallel() // waits on the worker's idle time, in processes of its own
	dir, q := testapp.SqliteApp(t)
	handler := filepath.Join(dir, "handler.sh")
	script := "#!/bin/sh\ntouch " + filepath.Join(dir, "started") + "\nwhile [ ! -e " + filepath.Join(dir, "go") + " ]; do sleep 0.02; done\n"
	if err := os.WriteFile(handler, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	addr, first := startIdleWork(t, dir, "--route", `App\Jobs\A=exec:`+handler)
	waitFor(t, 20*time.Second, "the idle worker to run on one thread", func() bool { return gomaxprocs(t, addr) == 1 })

	testapp.PushJob(t, q, `App\Jobs\A`)
	waitFor(t, 20*time.Second, "the job to start", func() bool { _, err := os.Stat(filepath.Join(dir, "started")); return err == nil })
	if n := gomaxprocs(t, addr); n != 3 {
		t.Errorf("go_sched_gomaxprocs_threads %d while a job runs, want the 3 of $GOMAXPROCS", n)
	}
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "the worker to narrow again after the job", func() bool { return gomaxprocs(t, addr) == 1 })
	_ = first.cmd.Process.Signal(syscall.SIGTERM)
	<-first.done

	addr, _ = startIdleWork(t, dir, "--route", `App\Jobs\A=noop`, "--narrow-when-idle=false")
	// Ten empty claims take over 3 s (20 ms doubling to 1 s, less a quarter).
	waitFor(t, 20*time.Second, "ten idle claims", func() bool { return metric(t, addr, "laraworker_claim_seconds_count") >= 10 })
	if n := gomaxprocs(t, addr); n != 3 {
		t.Errorf("go_sched_gomaxprocs_threads %d with --narrow-when-idle=false, want 3", n)
	}
}

// startIdleWork starts `work` on the app in dir with $GOMAXPROCS 3 and
// /metrics on a free port, stopped at the test's end; it returns the
// address and the process.
func startIdleWork(t *testing.T, dir string, args ...string) (string, *process) {
	t.Helper()
	addr := freeAddr(t)
	p := startLW(t, []string{"GOMAXPROCS=3"}, append([]string{"work", "--env", filepath.Join(dir, ".env"), "--metrics-addr", addr}, args...)...)
	return addr, p
}

// gomaxprocs is go_sched_gomaxprocs_threads on addr's /metrics; -1 when
// it cannot be read (yet).
func gomaxprocs(t *testing.T, addr string) int {
	return int(metric(t, addr, "go_sched_gomaxprocs_threads"))
}

// metric is the value of the unlabelled series name on addr's /metrics;
// -1 when it cannot be read (yet).
func metric(t *testing.T, addr, name string) float64 {
	t.Helper()
	_, body := httpGet("http://" + addr + "/metrics")
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` (\S+)$`).FindStringSubmatch(body)
	if m == nil {
		return -1
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return v
}
