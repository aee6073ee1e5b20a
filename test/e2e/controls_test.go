package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/redisproto"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/payload"
)

// Laravel 12-13's queue controls, honoured by the Go worker: queue:pause
// (12.40+) and queue:pause --all (13.25+), #[DebounceFor] (13.6+) and
// Queue::forward (13.26+). The test app's Laravel 8.83 has none of them,
// so PHP writes the same cache entries those commands write, with the
// same Cache calls (QueueManager::pause is Cache::store()->forever(key,
// true)), and the jobs are the rows a real Laravel 13.26 app wrote
// (testdata/laravel-13.26/features).

// phpEval runs PHP code inside the booted app with env added.
func (s *suite) phpEval(t *testing.T, env []string, code string) string {
	t.Helper()
	boot := `require 'bootstrap/autoload.php'; $app = require 'bootstrap/app.php'; ` +
		`$app->make(Illuminate\Contracts\Console\Kernel::class)->bootstrap(); `
	cmd := s.phpCmd()
	cmd.Args = []string{"php", "-r", boot + code}
	cmd.Env = s.env(env...)
	return s.run(t, cmd)
}

// pauseKeys are the cache keys of queue:pause connection:queue and
// queue:pause --all (QueueManager::pause, ::pauseAll).
func pauseKey(connection, queue string) string {
	return "illuminate:queue:paused:" + connection + ":" + queue
}

const pauseAllKey = "illuminate:queues:paused"

// controlApp is one app setup the controls are tested on: the database
// queue with the database cache store, or the redis queue with the redis
// cache store.
type controlApp struct {
	s          *suite
	connection string
	env        []string
	// goCmd is the Go worker serving queues, routing classes to the recorder.
	goCmd func(t *testing.T, classes string, args ...string) *exec.Cmd
	// dispatch queues n noop jobs on queue through PHP and returns their uuids.
	dispatch func(t *testing.T, queue string, n int) []string
	// push queues a payload as it is (a row another app wrote).
	push func(t *testing.T, queue string, raw []byte)
	// waiting counts the jobs of queue not reserved.
	waiting func(t *testing.T, queue string) int
	// lw runs the laraworker binary on the connection.
	lw func(t *testing.T, args ...string) string
}

// sizePaused is `laraworker size --json`'s paused column by queue.
func (c *controlApp) sizePaused(t *testing.T, queues string) map[string][]string {
	t.Helper()
	var rows []struct {
		Queue  string   `json:"queue"`
		Paused []string `json:"paused"`
	}
	out := c.lw(t, "size", "--json", "--queue", queues)
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("size --json: %v\n%s", err, out)
	}
	got := map[string][]string{}
	for _, r := range rows {
		got[r.Queue] = r.Paused
	}
	return got
}

// cache runs one Cache call of the app's default store, as the queue
// commands do.
func (c *controlApp) cache(t *testing.T, call string) {
	t.Helper()
	c.s.phpEval(t, c.env, "app('cache')->store()->"+call+";")
}

func databaseControlApp(s *suite) *controlApp {
	return &controlApp{
		s: s, connection: "database",
		goCmd: func(t *testing.T, classes string, args ...string) *exec.Cmd {
			flags := []string{"work", "--sleep", "0.1", "--log-format", "json"}
			for _, class := range strings.Split(classes, ",") {
				flags = append(flags, s.route(class))
			}
			return s.lwCmd(append(flags, args...)...)
		},
		dispatch: func(t *testing.T, queue string, n int) []string {
			before := map[string]bool{}
			for _, j := range s.jobsOn(t, queue) {
				before[j.UUID] = true
			}
			s.artisan(t, "app:dispatch", "noop", fmt.Sprintf("--count=%d", n), "--queue="+queue)
			var out []string
			for _, j := range s.jobsOn(t, queue) {
				if !before[j.UUID] {
					out = append(out, j.UUID)
				}
			}
			return out
		},
		push: func(t *testing.T, queue string, raw []byte) {
			if _, err := s.q.Push(s.ctx(t), jobqueue.PushItem{Queue: queue, Payload: raw}); err != nil {
				t.Fatal(err)
			}
		},
		lw: func(t *testing.T, args ...string) string { return s.laraworker(t, args...) },
		waiting: func(t *testing.T, queue string) int {
			n := 0
			for _, j := range s.jobsOn(t, queue) {
				if !j.ReservedAt.Valid {
					n++
				}
			}
			return n
		},
	}
}

func redisControlApp(t *testing.T, s *suite, env ...string) *controlApp {
	a := s.redisQueue(t, append([]string{"CACHE_DRIVER=redis"}, env...)...)
	return &controlApp{
		s: s, connection: "redis", env: a.env,
		goCmd: func(t *testing.T, classes string, args ...string) *exec.Cmd {
			return a.goCmd(t, classes, nil, append([]string{"--sleep", "0.1"}, args...)...)
		},
		dispatch: func(t *testing.T, queue string, n int) []string {
			before := len(a.list(t, queue))
			a.artisan(t, "app:dispatch", "noop", fmt.Sprintf("--count=%d", n), "--queue="+queue)
			var out []string
			for _, raw := range a.list(t, queue)[before:] {
				p, err := payload.Parse([]byte(raw))
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, p.UUID)
			}
			return out
		},
		push: func(t *testing.T, queue string, raw []byte) {
			// RedisQueue::createPayloadArray adds id and attempts.
			prepared, _, err := redisproto.PreparePayload(raw)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := a.q.Push(s.ctx(t), queue, prepared); err != nil {
				t.Fatal(err)
			}
		},
		waiting: func(t *testing.T, queue string) int { return len(a.list(t, queue)) },
		lw:      a.lw,
	}
}

// onControlApps runs test on the database queue (database cache store)
// and on the redis queue (redis cache store).
func onControlApps(t *testing.T, test func(t *testing.T, c *controlApp)) {
	onEachDB(t, func(t *testing.T, s *suite) {
		t.Run("database", func(t *testing.T) { test(t, databaseControlApp(s)) })
		t.Run("redis", func(t *testing.T) {
			s.reset(t)
			test(t, redisControlApp(t, s))
		})
	})
}

// ranUUIDs are the uuids the recorder ran.
func (s *suite) ranUUIDs(t *testing.T) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, r := range s.runs(t) {
		out[r.UUID]++
	}
	return out
}

// holdsFor checks, for d, that none of uuids runs and that queue keeps
// them waiting.
func (c *controlApp) holdsFor(t *testing.T, d time.Duration, queue string, uuids []string) {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		ran := c.s.ranUUIDs(t)
		for _, u := range uuids {
			if ran[u] > 0 {
				t.Fatalf("job %s of the paused queue %s ran", u, queue)
			}
		}
	}
	if n := c.waiting(t, queue); n != len(uuids) {
		t.Fatalf("%d jobs wait on the paused queue %s; want %d untouched", n, queue, len(uuids))
	}
}

// allRanWithin waits until every one of uuids ran once, and fails when
// that took longer than limit.
func (c *controlApp) allRanWithin(t *testing.T, limit time.Duration, what string, uuids []string) {
	t.Helper()
	start := time.Now()
	waitFor(t, 30*time.Second, what, func() bool {
		ran := c.s.ranUUIDs(t)
		for _, u := range uuids {
			if ran[u] != 1 {
				return false
			}
		}
		return true
	})
	took := time.Since(start)
	if took > limit {
		t.Errorf("%s took %s; want within %s", what, took.Round(time.Millisecond), limit)
	}
	t.Logf("%s: %s", what, took.Round(time.Millisecond))
}

// TestLaravelQueuePauseHoldsGo: `php artisan queue:pause database:default`
// (what it stores, through the app's own cache store) stops the Go worker
// claiming from that queue within a second, while it goes on with the
// other; the paused queue's jobs wait untouched for 2 s; `queue:continue`
// (the key forgotten) has them run within two seconds. `queue:pause
// --all` holds every queue the same way, and `queue:resume --all` lets
// them go. On the database queue with the database cache store and on the
// redis queue with the redis cache store.
func TestLaravelQueuePauseHoldsGo(t *testing.T) { onControlApps(t, testLaravelQueuePauseHoldsGo) }

func testLaravelQueuePauseHoldsGo(t *testing.T, c *controlApp) {
	s := c.s
	// The app is Laravel 8.83, which has no queue:pause (12.40+): its
	// workers read no pause key and neither does Go on it. The worker is
	// told the app is 13.26, whose commands write these keys with these
	// Cache calls (laravel-13.26 fixtures).
	goRun := s.start(t, c.goCmd(t, noopJob, "--queue", "default,other", "--laravel-version", "13.26"))
	c.cache(t, fmt.Sprintf("forever('%s', true)", pauseKey(c.connection, "default")))
	paused := time.Now()
	waitFor(t, 15*time.Second, "the Go worker to see the pause", func() bool {
		return strings.Contains(goRun.stderr.String(), `"queues":["default"]`) && strings.Contains(goRun.stderr.String(), "paused by Laravel")
	})
	t.Logf("the pause seen %s after PHP wrote it", time.Since(paused).Round(time.Millisecond))
	held := c.dispatch(t, "default", 3)
	other := c.dispatch(t, "other", 1)
	c.allRanWithin(t, 10*time.Second, "the other queue's job", other)
	c.holdsFor(t, 2*time.Second, "default", held)
	if got := c.sizePaused(t, "default,other"); fmt.Sprint(got) != "map[default:[queue:pause] other:[]]" {
		t.Errorf("size says paused %v; want default by queue:pause", got)
	}
	if table := c.lw(t, "size", "--queue", "default"); !strings.Contains(table, "| paused") || !strings.Contains(table, "queue:pause |") {
		t.Errorf("size's table does not say the queue is paused:\n%s", table)
	}

	c.cache(t, fmt.Sprintf("forget('%s')", pauseKey(c.connection, "default")))
	c.allRanWithin(t, 3*time.Second, "the paused queue's jobs after queue:continue", held)

	// queue:pause --all, then queue:resume --all.
	c.cache(t, fmt.Sprintf("forever('%s', true)", pauseAllKey))
	waitFor(t, 15*time.Second, "the Go worker to see queue:pause --all", func() bool {
		return strings.Contains(goRun.stderr.String(), `"all":true`)
	})
	held = append(c.dispatch(t, "default", 2), c.dispatch(t, "other", 2)...)
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		ran := s.ranUUIDs(t)
		for _, u := range held {
			if ran[u] > 0 {
				t.Fatalf("job %s ran under queue:pause --all", u)
			}
		}
	}
	if got := c.sizePaused(t, "default,other"); fmt.Sprint(got) != "map[default:[queue:pause --all] other:[queue:pause --all]]" {
		t.Errorf("size says paused %v; want both by queue:pause --all", got)
	}
	c.cache(t, fmt.Sprintf("forget('%s')", pauseAllKey))
	c.allRanWithin(t, 3*time.Second, "every queue's jobs after queue:resume --all", held)
	if got := c.sizePaused(t, "default,other"); fmt.Sprint(got) != "map[default:[] other:[]]" {
		t.Errorf("size says paused %v after queue:resume --all", got)
	}
	if !goRun.running() {
		t.Fatalf("the Go worker stopped:\n%s", tail(goRun.stderr.String()))
	}
	if c.connection == "database" {
		// laraworker's own pause is named apart: Go workers only obey it.
		c.lw(t, "tables")
		c.lw(t, "pause", "--queue", "other")
		t.Cleanup(func() { c.s.exec(t, "delete from laraworker_pauses") })
		if got := c.sizePaused(t, "default,other"); fmt.Sprint(got) != "map[default:[] other:[laraworker pause]]" {
			t.Errorf("size says paused %v; want other by laraworker pause", got)
		}
	}
}

// debounced13 are the jobs rows of three dispatches of a
// #[DebounceFor(3)] class by a real Laravel 13.26 app (n = 1, 2, 3), and
// the owner token of the last one, which its cache key holds.
func debounced13(t *testing.T) (payloads [][]byte, lastOwner string) {
	t.Helper()
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(root, "testdata", "laravel-13.26", "features", "debounced.json"))
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		var row struct {
			Payload json.RawMessage `json:"payload"`
		}
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatal(err)
		}
		payloads = append(payloads, row.Payload)
	}
	if len(payloads) != 3 {
		t.Fatalf("%d debounced rows", len(payloads))
	}
	p, err := payload.Parse(payloads[2])
	if err != nil {
		t.Fatal(err)
	}
	cmd, err := payload.DecodeCommand(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	v, err := cmd.Object.PropKey("debounceOwner")
	if err != nil || len(v.Str) != 40 {
		t.Fatalf("the last row's debounceOwner: %v %v", v, err)
	}
	return payloads, string(v.Str)
}

// TestDebounceRunsTheLastDispatch: three dispatches of a #[DebounceFor]
// class (Laravel 13.26's rows), the debounce key in the app's cache store
// holding the last dispatch's owner, as PHP's Cache::put left it: the Go
// worker runs only the last one and deletes the two superseded ones
// without running or failing them; the key stays until its TTL.
func TestDebounceRunsTheLastDispatch(t *testing.T) { onControlApps(t, testDebounceRunsTheLastDispatch) }

func testDebounceRunsTheLastDispatch(t *testing.T, c *controlApp) {
	s := c.s
	payloads, owner := debounced13(t)
	const class, key = `App\Jobs\X13\Debounced`, `laravel_debounced_job:App\Jobs\X13\Debounced:`
	c.cache(t, fmt.Sprintf("put('%s', '%s', 300)", strings.ReplaceAll(key, `\`, `\\`), owner))
	var uuids []string
	for _, raw := range payloads {
		c.push(t, "default", raw)
		p, _ := payload.Parse(raw)
		uuids = append(uuids, p.UUID)
	}
	goRun := s.start(t, c.goCmd(t, class, "--stop-when-empty"))
	goRun.wait(t, time.Minute)
	ran := s.ranUUIDs(t)
	if ran[uuids[0]] != 0 || ran[uuids[1]] != 0 || ran[uuids[2]] != 1 {
		t.Fatalf("runs %v; want only the last dispatch (%s)\n%s", ran, uuids[2], tail(goRun.stderr.String()))
	}
	if n := strings.Count(goRun.stderr.String(), `"outcome":"debounced"`); n != 2 {
		t.Errorf("%d jobs logged as debounced; want 2\n%s", n, tail(goRun.stderr.String()))
	}
	if n := c.waiting(t, "default"); n != 0 || len(s.failed(t)) != 0 {
		t.Fatalf("%d jobs left, %d failed; want the superseded ones deleted", n, len(s.failed(t)))
	}
	if got := s.phpEval(t, c.env, fmt.Sprintf("echo app('cache')->store()->get('%s');", strings.ReplaceAll(key, `\`, `\\`))); got != owner {
		t.Fatalf("the debounce key holds %q after the run; want the last owner %q until its TTL", got, owner)
	}
}

// TestQueueForwardFollowed: with the app forwarding fwdsrc to fwddst
// (Queue::forward, registered at boot, read through its PHP), `work
// --queue fwdsrc` runs the jobs on fwddst, as `queue:work
// --queue=fwdsrc` pops them, and says so at start.
func TestQueueForwardFollowed(t *testing.T) {
	onEachDB(t, func(t *testing.T, s *suite) {
		c := databaseControlApp(s)
		c.env = []string{"TEST_QUEUE_FORWARDS=fwdsrc=fwddst"}
		uuids := c.dispatch(t, "fwddst", 2)
		cmd := c.goCmd(t, noopJob, "--queue", "fwdsrc", "--stop-when-empty")
		cmd.Env = append(cmd.Env, c.env...)
		goRun := s.start(t, cmd)
		goRun.wait(t, time.Minute)
		ran := s.ranUUIDs(t)
		for _, u := range uuids {
			if ran[u] != 1 {
				t.Fatalf("runs %v; want both jobs of fwddst\n%s", ran, tail(goRun.stderr.String()))
			}
		}
		if !strings.Contains(goRun.stderr.String(), `"forwarded":["fwdsrc -> fwddst"]`) {
			t.Errorf("the start line does not name the forward:\n%s", tail(goRun.stderr.String()))
		}
	})
}

// TestDashboardShowsLaravelPause: the overview and the control page show
// a queue Laravel's queue:pause holds (read from the app's cache store,
// as the workers read it), apart from laraworker's own pause, and stop
// showing it once queue:continue lifted it.
func TestDashboardShowsLaravelPause(t *testing.T) { onMariaDB(t, testDashboardShowsLaravelPause) }

func testDashboardShowsLaravelPause(t *testing.T, s *suite) {
	c := databaseControlApp(s)
	c.dispatch(t, "held", 1)
	c.cache(t, fmt.Sprintf("forever('%s', true)", pauseKey("database", "held")))
	base, _ := s.startDashboard(t, nil)
	b := newBrowser(t)
	tagged := func(path, table string) string {
		html := b.visit(t, base, path, "", s.appKey(t))
		row := fmt.Sprintf(`%s tr[data-queue="held"] .laravel-paused`, table)
		if !strings.Contains(html, "paused by queue:pause") {
			return path + " does not say the queue is paused by queue:pause"
		}
		if n := eval[int64](t, b, fmt.Sprintf(`document.querySelectorAll(%q).length`, row)); n != 1 {
			return fmt.Sprintf("%s: %d tags in the held queue's row", path, n)
		}
		return ""
	}
	eventually(t, 15*time.Second, func() string { return tagged("/", "#queues") })
	eventually(t, 15*time.Second, func() string { return tagged("/control", "#control-queues") })
	if n := eval[int64](t, b, `document.querySelectorAll('#control-queues tr[data-queue="held"] .resume-queue').length`); n != 0 {
		t.Errorf("the control page offers laraworker's resume for a queue only queue:continue lifts")
	}
	b.screenshot(t, "control-laravel-paused")
	c.cache(t, fmt.Sprintf("forget('%s')", pauseKey("database", "held")))
	eventually(t, 15*time.Second, func() string {
		if html := b.visit(t, base, "/", "", s.appKey(t)); strings.Contains(html, "paused by queue:pause") {
			return "the overview still shows the pause after queue:continue"
		}
		return ""
	})
}
