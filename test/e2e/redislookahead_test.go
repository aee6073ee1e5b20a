package e2e

import (
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRedisGoRunsPastJobsItDoesNotServe: on a Go-only Redis queue, one job
// Go does not serve at the head (a class with no Go route, dispatched by
// PHP) no longer stops the queue: the 300 jobs behind it all run in Go,
// once each, within seconds, and the job is still at the head, byte for
// byte, reported by the worker's log (once, with its class, how many and
// the fix), /healthz, /metrics and the dashboard beside it; then a real
// `php artisan queue:work redis --once` takes it. The same for a job with
// no displayName (PHP runs it too); a head that is not JSON (PHP's pop
// would lose it) is failed with its cause and the jobs behind it run.
func TestRedisGoRunsPastJobsItDoesNotServe(t *testing.T) {
	onMariaDB(t, testRedisGoRunsPastJobsItDoesNotServe)
}

func testRedisGoRunsPastJobsItDoesNotServe(t *testing.T, s *suite) {
	a := s.redisQueue(t)
	tables := s.lwCmd("tables", "--connection", "redis")
	tables.Env = append(tables.Env, a.env...)
	s.run(t, tables)

	a.artisan(t, "app:dispatch", "scalars", "--queue=go")
	head := a.list(t, "go")[0]
	a.artisan(t, "app:dispatch", "noop", "--count=300", "--queue=go")
	metrics := "127.0.0.1:" + strconv.Itoa(freePort(t))
	dash := "127.0.0.1:" + strconv.Itoa(freePort(t))
	started := time.Now()
	g := s.start(t, a.goCmd(t, noopJob, nil, "--queue", "go", "--concurrency", "8", "--metrics-addr", metrics, "--dashboard-addr", dash))
	waitFor(t, time.Minute, "Go's 300 jobs behind the head", func() bool { return len(s.runs(t)) >= 300 })
	took := time.Since(started)
	t.Logf("the 300 jobs behind the head ran %s after the worker started", took.Round(time.Millisecond))
	if took > 30*time.Second {
		t.Errorf("the jobs behind the head took %s", took)
	}
	if l := a.list(t, "go"); len(l) != 1 || l[0] != head {
		t.Fatalf("the queue holds %d jobs, want PHP's ScalarsJob alone, untouched", len(l))
	}

	health := httpGet(t, "http://"+metrics+"/healthz")
	if !strings.HasPrefix(health, "ok\n") || !strings.Contains(health, `queue go: 1 job(s) of App\Jobs\ScalarsJob left in place for PHP workers`) {
		t.Errorf("/healthz:\n%s", health)
	}
	prom := httpGet(t, "http://"+metrics+"/metrics")
	for _, want := range []string{`laraworker_redis_jobs_left{class="App\\Jobs\\ScalarsJob",queue="go",reason="class"} 1`, `laraworker_redis_jobs_left_total{queue="go",reason="class"} 1`} {
		if !strings.Contains(prom, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	b := newBrowser(t)
	eventually(t, 15*time.Second, func() string {
		b.visit(t, "http://"+dash, "/", "", s.appKey(t))
		if line := b.text(t, "#left-for-php"); !strings.Contains(line, `go: 1 of App\Jobs\ScalarsJob (class)`) {
			return "the overview says " + strconv.Quote(line)
		}
		return ""
	})
	b.screenshot(t, "redis-left-for-php")

	if err := g.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	g.wait(t, 30*time.Second)
	logs := g.stderr.String()
	if n := strings.Count(logs, "no handler"); n != 1 || !strings.Contains(logs, `"class":"App\\Jobs\\ScalarsJob"`) || !strings.Contains(logs, `"jobs":1`) {
		t.Errorf("logged %d times, want once with the class and the count:\n%s", n, tail(logs))
	}

	a.work(t, "--once", "--queue=go")
	runs := s.runs(t)
	byClass := map[string]int{}
	for uuid, rs := range runsByUUID(runs) {
		if len(rs) != 1 || rs[0].Attempt != 1 {
			t.Errorf("job %s ran %+v, want once", uuid, rs)
		}
		byClass[rs[0].Class+" in "+rs[0].Worker]++
	}
	if byClass[noopJob+" in go"] != 300 || byClass[`App\Jobs\ScalarsJob in php`] != 1 || len(runs) != 301 {
		t.Fatalf("runs %v, want 300 NoopJobs in Go and the ScalarsJob in PHP", byClass)
	}
	if got := s.redisLeft(t, a); got != "" {
		t.Fatalf("left in Redis: %s", got)
	}

	t.Run("no displayName", func(t *testing.T) { redisGoRunsPastAHead(t, a, headWithoutDisplayName(t, a)) })
	t.Run("not JSON", func(t *testing.T) { redisGoRunsPastAHead(t, a, "not json") })
}

// headWithoutDisplayName is a NoopJob payload PHP dispatched, without its
// displayName (PHP's worker runs it by its "job" and command).
func headWithoutDisplayName(t *testing.T, a *redisApp) string {
	t.Helper()
	a.artisan(t, "app:dispatch", "noop", "--queue=scratch")
	p := a.list(t, "scratch")[0]
	if err := a.rc.Del(a.s.ctx(t), a.cfg.Keys("scratch").Ready, a.cfg.Keys("scratch").Notify).Err(); err != nil {
		t.Fatal(err)
	}
	out := strings.Replace(p, `"displayName":"App\\Jobs\\NoopJob",`, "", 1)
	if out == p {
		t.Fatalf("no displayName in %s", p)
	}
	return out
}

// redisGoRunsPastAHead puts head at the head of the Go-only queue "go"
// with 20 NoopJobs behind it; the Go worker (--stop-when-empty) runs the
// 20, and the head is still there for `php artisan queue:work redis
// --once`, which runs it; a head that is not JSON is failed by Go with
// its cause instead.
func redisGoRunsPastAHead(t *testing.T, a *redisApp, head string) {
	s := a.s
	before := lastRunID(s.runs(t))
	k := a.cfg.Keys("go")
	if err := a.rc.RPush(s.ctx(t), k.Ready, head).Err(); err != nil {
		t.Fatal(err)
	}
	a.rc.RPush(s.ctx(t), k.Notify, 1)
	a.artisan(t, "app:dispatch", "noop", "--count=20", "--queue=go")
	a.goWork(t, noopJob, nil, "--queue", "go", "--stop-when-empty")
	runs := s.runsSince(t, before)
	if len(runs) != 20 {
		t.Fatalf("%d runs in Go, want the 20 behind the head", len(runs))
	}
	if head == "not json" {
		f := s.failed(t)
		if len(f) != 1 || f[0].Payload != head || f[0].Connection != "redis" || !strings.Contains(f[0].Exception, "cannot read") {
			t.Fatalf("failed jobs %+v, want the unreadable head with its cause", f)
		}
		if l := a.list(t, "go"); len(l) != 0 {
			t.Fatalf("left on the queue: %q", l)
		}
		return
	}
	if l := a.list(t, "go"); len(l) != 1 || l[0] != head {
		t.Fatalf("the queue holds %q, want the head alone, untouched", l)
	}
	a.work(t, "--once", "--queue=go")
	runs = s.runsSince(t, before)
	if len(runs) != 21 || runs[20].Worker != "php" || runs[20].Class != noopJob {
		t.Fatalf("runs %+v, want PHP's run of the head last", runs)
	}
	if got := s.redisLeft(t, a); got != "" {
		t.Fatalf("left in Redis: %s", got)
	}
}

// TestRedisClusterGoRunsPastJobsItDoesNotServe: the same on a
// hash-tagged queue of a three-master Redis Cluster, with the Laravel
// app configured for it.
func TestRedisClusterGoRunsPastJobsItDoesNotServe(t *testing.T) {
	onEachDB(t, func(t *testing.T, s *suite) {
		if s.driver != "mysql" {
			t.Skip("the database plays no part: one run, on MariaDB")
		}
		a := s.redisClusterQueue(t)
		a.artisan(t, "app:dispatch", "scalars", "--queue={go}")
		head := a.list(t, "{go}")[0]
		a.artisan(t, "app:dispatch", "noop", "--count=300", "--queue={go}")
		a.goWork(t, noopJob, nil, "--queue", "{go}", "--concurrency", "8", "--stop-when-empty")
		if runs := s.runs(t); len(runs) != 300 {
			t.Fatalf("%d runs in Go, want the 300 behind the head", len(runs))
		}
		if l := a.list(t, "{go}"); len(l) != 1 || l[0] != head {
			t.Fatalf("the queue holds %d jobs, want PHP's alone, untouched", len(l))
		}
		a.work(t, "--once", "--queue={go}")
		if runs := s.runs(t); len(runs) != 301 || runs[300].Worker != "php" || runs[300].Class != `App\Jobs\ScalarsJob` {
			t.Fatalf("PHP's run of the head: %+v", runs[len(runs)-1])
		}
		if got := s.redisLeft(t, a); got != "" {
			t.Fatalf("left in Redis: %s", got)
		}
	})
}
