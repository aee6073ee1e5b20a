package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/sqsproto"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/laravel/phpserialize"
)

// TestSQSThroughput measures, on the local SQS server, one `php artisan
// queue:work sqs` and the Go worker at concurrency 1, 16 and 128 draining
// the same no-op jobs: jobs per second, CPU per job (the worker process's
// user + system time), and the SQS requests per 1,000 jobs, counted on
// the wire by a proxy in front of the server (both workers send every
// request through it). It runs only with LARAWORKER_SQS_BENCH=1 and
// prints a table (docs/SQS.md, "Performance"): a measurement, not a
// check.
func TestSQSThroughput(t *testing.T) {
	if os.Getenv("LARAWORKER_SQS_BENCH") == "" {
		t.Skip("set LARAWORKER_SQS_BENCH=1 to measure the SQS worker")
	}
	onMariaDB(t, func(t *testing.T, s *suite) {
		a := s.sqsQueue(t)
		counter := &actionCounter{by: map[string]int{}}
		target, _ := url.Parse(a.srv.Endpoint)
		proxy := httputil.NewSingleHostReverseProxy(target)
		front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			counter.add(strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "AmazonSQS."))
			proxy.ServeHTTP(w, r)
		}))
		defer front.Close()
		// PHP's requests go through the counting proxy; Go's go straight
		// to the server (the worker logs its own counts): the proxy loses a
		// response now and then under many connections.
		phpEnv := append([]string{}, a.env...)
		for i, e := range phpEnv {
			if strings.HasPrefix(e, "SQS_ENDPOINT=") {
				phpEnv[i] = "SQS_ENDPOINT=" + front.URL
			}
		}
		class := `App\Jobs\SqsBenchNoopJob`
		writeBenchJob(t, s.app, class)
		n := 2000
		if v := os.Getenv("LARAWORKER_SQS_BENCH_JOBS"); v != "" {
			fmt.Sscan(v, &n)
		}
		type contender struct {
			name string
			cmd  func() *exec.Cmd
		}
		contenders := []contender{{"php artisan queue:work sqs", func() *exec.Cmd {
			cmd := a.phpCmd("--stop-when-empty")
			cmd.Env = s.env(phpEnv...)
			return cmd
		}}}
		for _, c := range []int{1, 16, 128} {
			contenders = append(contenders, contender{fmt.Sprintf("laraworker work --concurrency %d", c), func() *exec.Cmd {
				cmd := s.lwCmd("work", "--connection", "sqs", "--route", class+"=noop", "--concurrency", fmt.Sprint(c), "--stop-when-empty", "--sleep", "0.1", "--log-format", "json")
				cmd.Env = s.env(a.env...)
				return cmd
			}})
		}
		load, _ := os.ReadFile("/proc/loadavg")
		t.Logf("load before: %s", strings.TrimSpace(string(load)))
		var report []string
		for _, c := range contenders {
			pushBench(t, a, class, n)
			counter.reset()
			cmd := c.cmd()
			started := time.Now()
			run := s.start(t, cmd)
			run.wait(t, 5*time.Minute)
			took := time.Since(started)
			cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			if r, d, f := a.counts(t); r+d+f != 0 {
				var odd []string
				for _, l := range strings.Split(run.stderr.String(), "\n") {
					if !strings.Contains(l, `"message":"job"`) {
						odd = append(odd, l)
					}
				}
				t.Fatalf("%s left %d ready, %d delayed, %d in flight\n%s", c.name, r, d, f, strings.Join(odd, "\n"))
			}
			reqs := counter.snapshot()
			if strings.HasPrefix(c.name, "laraworker") {
				// The Go worker's own count (its log's "sqs requests").
				reqs = loggedRequests(t, run.stderr.String())
			}
			total := 0
			var parts []string
			for _, k := range []string{"ReceiveMessage", "DeleteMessage", "DeleteMessageBatch", "ChangeMessageVisibility", "ChangeMessageVisibilityBatch", "GetQueueAttributes", "SendMessage"} {
				if reqs[k] > 0 {
					parts = append(parts, fmt.Sprintf("%s %.0f", k, float64(reqs[k])*1000/float64(n)))
				}
				total += reqs[k]
			}
			report = append(report, fmt.Sprintf("| %s | %.0f | %.2f ms | %.0f | %s |", c.name, float64(n)/took.Seconds(),
				float64(cpu.Microseconds())/1000/float64(n), float64(total)*1000/float64(n), strings.Join(parts, ", ")))
		}
		load, _ = os.ReadFile("/proc/loadavg")
		t.Logf("load after: %s", strings.TrimSpace(string(load)))
		t.Logf("%d no-op jobs per contender\n| worker | jobs/s | CPU per job | requests per 1,000 jobs | by action |\n|---|---|---|---|---|\n%s", n, strings.Join(report, "\n"))
	})
}

// loggedRequests reads the "sqs requests" line a Go worker logs at stop.
func loggedRequests(t *testing.T, log string) map[string]int {
	t.Helper()
	for _, l := range strings.Split(log, "\n") {
		if !strings.Contains(l, `"message":"sqs requests"`) {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		out := map[string]int{}
		for k, v := range m {
			if f, ok := v.(float64); ok && k != "total" {
				out[k] = int(f)
			}
		}
		return out
	}
	t.Fatalf("no sqs requests line in the worker's log")
	return nil
}

// writeBenchJob writes a job class whose handle() does nothing into the
// app.
func writeBenchJob(t *testing.T, app, class string) {
	t.Helper()
	short := class[strings.LastIndexByte(class, '\\')+1:]
	src := "<?php\n\nnamespace App\\Jobs;\n\nuse Illuminate\\Bus\\Queueable;\nuse Illuminate\\Contracts\\Queue\\ShouldQueue;\nuse Illuminate\\Queue\\InteractsWithQueue;\n\n" +
		"class " + short + " implements ShouldQueue\n{\n    use InteractsWithQueue, Queueable;\n\n    public function handle()\n    {\n    }\n}\n"
	if err := os.WriteFile(filepath.Join(app, "app", "Jobs", short+".php"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}

// pushBench sends n jobs of class straight to the server (not counted).
func pushBench(t *testing.T, a *sqsApp, class string, n int) {
	t.Helper()
	cfg, err := sqsproto.FromLaravel("sqs", map[string]any{"driver": "sqs", "key": "k", "secret": "s", "queue": a.name, "prefix": a.srv.Prefix,
		"region": "us-east-1", "endpoint": a.srv.Endpoint}, sqsproto.LaravelOptions{})
	if err != nil {
		t.Fatal(err)
	}
	q, err := sqsproto.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var entries []sqsproto.SendEntry
	for range n {
		raw, err := payload.BuildObjectPayload(phpserialize.Object(class), payload.BuildOptions{})
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, sqsproto.SendEntry{Body: raw})
	}
	if _, err := q.SendBatch(context.Background(), q.URL(""), entries); err != nil {
		t.Fatal(err)
	}
}

// actionCounter counts requests by SQS action.
type actionCounter struct {
	mu sync.Mutex
	by map[string]int
}

func (c *actionCounter) add(action string) {
	c.mu.Lock()
	c.by[action]++
	c.mu.Unlock()
}

func (c *actionCounter) reset() {
	c.mu.Lock()
	c.by = map[string]int{}
	c.mu.Unlock()
}

func (c *actionCounter) snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.by))
	for k, v := range c.by {
		out[k] = v
	}
	return out
}
