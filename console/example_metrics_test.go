package console

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/laraworker/laraworker/console/internal/testapp"
	"github.com/laraworker/laraworker/internal/testutil/gobuild"
	"github.com/laraworker/laraworker/laravel/phpserialize"
)

// A program's own collectors on Prometheus's default registry (docs/LIBRARY.md's
// handlers.Metrics(prometheus.DefaultRegisterer)) show on
// --metrics-addr beside the worker's.
func TestEmbeddingProgramMetricsAreServed(t *testing.T) {
	t.Parallel() // waits on real time and child processes: beside the other waiting tests
	dir, q := testapp.SqliteApp(t)
	testapp.PushJob(t, q, `App\Jobs\PingWebhook`, phpserialize.Public("url", phpserialize.String("https://example.com/hook")))
	bin := filepath.Join(t.TempDir(), "podcast")
	if err := gobuild.Program(context.Background(), "..", "./examples/podcast", bin, ""); err != nil {
		t.Fatal(err)
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, "work", "--env", filepath.Join(dir, ".env"), "--sleep", "0.05", "--metrics-addr", addr)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() }()
	go io.Copy(io.Discard, bufio.NewReader(stderr))
	want := []string{`laraworker_handler_duration_seconds_count{class="App\\Jobs\\PingWebhook",result="ok"} 1`,
		`laraworker_jobs_total{class="App\\Jobs\\PingWebhook",outcome="done",queue="default"} 1`}
	var body string
	waitFor(t, 10*time.Second, fmt.Sprintf("/metrics to show %q", want), func() bool {
		_, body = httpGet("http://" + addr + "/metrics")
		return strings.Contains(body, want[0]) && strings.Contains(body, want[1])
	})
}
