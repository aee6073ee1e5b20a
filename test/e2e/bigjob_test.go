package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/store/database"
)

// bigJobBytes is the size of the big job's command property: 50 MB, as
// in the report of the restart loop.
const bigJobBytes = 50 << 20

// TestABigJobNeverLoopsTheWorker: a real 50 MB job among 200 small ones
// on the database queue. With the default --memory 128 the worker, run as
// a supervisor runs it (started again after each exit 12), reads no whole
// payload at start, runs every small job once and the big one too, in at
// most three starts (checkBigJobFate). With --memory 48, less than the
// job, the big job is failed undecoded with its size, the limit and the
// fix, and the others run, in at most three starts.
// Before, every start read the first 5,000 jobs whole and stopped after a
// claim or two: a restart loop.
func TestABigJobNeverLoopsTheWorker(t *testing.T) { onEachDB(t, testABigJobNeverLoopsTheWorker) }

func testABigJobNeverLoopsTheWorker(t *testing.T, s *suite) {
	if s.driver == "mysql" {
		allowPackets(t, s, 64<<20)
	}
	for _, c := range []struct {
		memory string
		fails  bool
	}{{"128", false}, {"48", true}} {
		t.Run("memory "+c.memory, func(t *testing.T) {
			s.reset(t)
			big := s.pushBigJob(t)
			starts := superviseWorker(t, func() *exec.Cmd {
				return s.lwCmd("work", "--sleep", "0.2", "--stop-when-empty", "--concurrency", "4", "--memory", c.memory, s.route(noopJob))
			})
			checkBigJobFate(t, s, big, c.fails, starts)
		})
	}
}

// TestABigRedisJobNeverLoopsTheWorker: the same on a Redis queue.
func TestABigRedisJobNeverLoopsTheWorker(t *testing.T) {
	onEachDB(t, func(t *testing.T, s *suite) {
		if s.driver != "sqlite" {
			t.Skip("the database only holds failed_jobs and the runs: one run, on SQLite")
		}
		for _, c := range []struct {
			memory string
			fails  bool
		}{{"128", false}, {"48", true}} {
			t.Run("memory "+c.memory, func(t *testing.T) {
				s.reset(t)
				a := s.redisQueue(t)
				big := a.pushBigJob(t)
				starts := superviseWorker(t, func() *exec.Cmd {
					return a.goCmd(t, noopJob, nil, "--stop-when-empty", "--concurrency", "4", "--memory", c.memory)
				})
				checkBigJobFate(t, s, big, c.fails, starts)
				if got := s.redisLeft(t, a); got != "" {
					t.Fatalf("left in Redis: %.300s", got)
				}
			})
		}
	})
}

// allowPackets raises MariaDB's max_allowed_packet to at least n for the
// test (a 50 MB row needs it; the server's default is 16 MB), and puts the
// old value back at its end. It only raises a limit, for new connections.
func allowPackets(t *testing.T, s *suite, n int64) {
	t.Helper()
	var old int64
	if err := s.q.DB().QueryRowContext(s.ctx(t), "select @@global.max_allowed_packet").Scan(&old); err != nil {
		t.Fatal(err)
	}
	if old >= n {
		return
	}
	s.exec(t, fmt.Sprintf("set global max_allowed_packet = %d", n))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := s.q.DB().ExecContext(ctx, fmt.Sprintf("set global max_allowed_packet = %d", old)); err != nil {
			t.Errorf("putting max_allowed_packet back to %d: %v", old, err)
		}
	})
}

// bigOf is a payload PHP dispatched for a NoopJob, made big: its command
// gets a protected property of bigJobBytes bytes (the recorder records
// public properties only), and the job a uuid and id of its own; the
// bytes stay PHP's, keys in PHP's order.
func bigOf(t *testing.T, raw string) (payload, uuid string) {
	t.Helper()
	var p struct {
		UUID string `json:"uuid"`
		ID   string `json:"id"`
		Data struct {
			Command string `json:"command"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		t.Fatal(err)
	}
	old, _ := json.Marshal(p.Data.Command)
	m := regexp.MustCompile(`^(O:16:"App\\Jobs\\NoopJob":)(\d+)(:\{)`).FindStringSubmatch(p.Data.Command)
	if m == nil || !strings.Contains(raw, string(old)) {
		t.Fatalf("unexpected NoopJob payload %s", raw)
	}
	var n int
	fmt.Sscan(m[2], &n)
	cmd := fmt.Sprintf("%s%d%ss:7:\"\x00*\x00blob\";s:%d:\"%s\";%s", m[1], n+1, m[3], bigJobBytes, strings.Repeat("x", bigJobBytes), p.Data.Command[len(m[0]):])
	enc, _ := json.Marshal(cmd)
	uuid = newE2EUUID(t)
	out := strings.Replace(raw, string(old), string(enc), 1)
	out = strings.Replace(out, `"uuid":"`+p.UUID+`"`, `"uuid":"`+uuid+`"`, 1)
	if p.ID != "" {
		out = strings.Replace(out, `"id":"`+p.ID+`"`, `"id":"`+strings.ReplaceAll(uuid, "-", "")+`"`, 1)
	}
	return out, uuid
}

func newE2EUUID(t *testing.T) string {
	t.Helper()
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	h := hex.EncodeToString(b)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// pushBigJob dispatches 10 NoopJobs, a 50 MB one, then 190 more, on the
// database queue, and returns the big one's uuid.
func (s *suite) pushBigJob(t *testing.T) string {
	t.Helper()
	s.artisan(t, "app:dispatch", "noop", "--count=10")
	big, uuid := bigOf(t, s.jobs(t)[0].Payload)
	// A connection of its own: pooled ones keep the packet limit they
	// started with.
	cfg, _, err := appconfig.Load(s.ctx(t), appconfig.Options{EnvOnly: true, EnvFile: s.envFile, Environ: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	q, err := database.Open(s.ctx(t), cfg, database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	if _, err := q.Push(s.ctx(t), jobqueue.PushItem{Queue: "default", Payload: []byte(big)}); err != nil {
		t.Fatal(err)
	}
	s.artisan(t, "app:dispatch", "noop", "--count=190")
	return uuid
}

// pushBigJob is the same on the Redis queue.
func (a *redisApp) pushBigJob(t *testing.T) string {
	t.Helper()
	a.artisan(t, "app:dispatch", "noop", "--count=10")
	big, uuid := bigOf(t, a.list(t, "default")[0])
	k := a.cfg.Keys("default")
	if err := a.rc.RPush(a.s.ctx(t), k.Ready, big).Err(); err != nil {
		t.Fatal(err)
	}
	a.rc.RPush(a.s.ctx(t), k.Notify, 1)
	a.artisan(t, "app:dispatch", "noop", "--count=190")
	return uuid
}

// superviseWorker starts the worker again after each exit 12 (memory), as
// a supervisor would, at most six times, and returns how many starts it
// took to end with exit 0 (--stop-when-empty).
func superviseWorker(t *testing.T, cmd func() *exec.Cmd) int {
	t.Helper()
	for start := 1; start <= 6; start++ {
		c := cmd()
		var stderr strings.Builder
		c.Stderr = &stderr
		done := make(chan error, 1)
		if err := startGroup(c); err != nil {
			t.Fatal(err)
		}
		go func() { done <- c.Wait() }()
		var err error
		select {
		case err = <-done:
		case <-time.After(2 * time.Minute):
			killGroup(c)
			t.Fatalf("start %d still runs after 2 minutes:\n%s", start, tail(stderr.String()))
		}
		var exit *exec.ExitError
		switch {
		case err == nil:
			t.Logf("the worker ended after %d start(s)", start)
			return start
		case errors.As(err, &exit) && exit.ExitCode() == 12:
			t.Logf("start %d stopped past --memory (exit 12): %s", start, lastLine(stderr.String()))
		default:
			t.Fatalf("start %d: %v\n%s", start, err, tail(stderr.String()))
		}
	}
	t.Fatal("the worker was still stopping past --memory after 6 starts: a restart loop")
	return 0
}

// checkBigJobFate: every small job ran once in Go; the big job ran once
// (fails false) or is in failed_jobs, undecoded, with its cause (fails
// true); at most three starts. The row pushes the RSS past the limit
// wherever it is read, so a start may stop before running it: when a
// claim took it ahead of a free place (claimahead.go: held, then given
// back at the stop, attempt not counted; CI at 1038830, PostgreSQL,
// --memory 128: start 1 stopped after 9 small jobs, start 2 ran the big
// one and stopped, start 3 ended), or when the claim's class filter read
// past it (SQLite's LIKE on the payload, under --memory 48). It is then
// back at the head, in the next start's first claim, which takes no more
// than the free places: that start runs or fails it, and the one after
// ends. A loop was six starts and more.
func checkBigJobFate(t *testing.T, s *suite, big string, fails bool, starts int) {
	t.Helper()
	if starts > 3 {
		t.Errorf("%d starts, want at most 3", starts)
	}
	byUUID := runsByUUID(s.runs(t))
	small := 0
	for uuid, rs := range byUUID {
		if len(rs) != 1 || rs[0].Worker != "go" {
			t.Errorf("job %s ran %+v, want once in Go", uuid, rs)
		}
		if uuid != big {
			small++
		}
	}
	if small != 200 {
		t.Errorf("%d of the 200 small jobs ran", small)
	}
	failed := s.failed(t)
	if !fails {
		if len(byUUID[big]) != 1 || len(failed) != 0 {
			t.Fatalf("the big job ran %d times; failed jobs %d", len(byUUID[big]), len(failed))
		}
		return
	}
	if len(byUUID[big]) != 0 || len(failed) != 1 || failed[0].UUID != big {
		t.Fatalf("the big job ran %d times; %d failed jobs, want it alone", len(byUUID[big]), len(failed))
	}
	for _, want := range []string{`LaraWorker\PayloadTooLargeException`, "50.0 MB", "--memory 48 MB", "queue:retry " + big} {
		if !strings.Contains(failed[0].Exception, want) {
			t.Fatalf("the failure does not say %q:\n%.500s", want, failed[0].Exception)
		}
	}
	if len(failed[0].Payload) < bigJobBytes {
		t.Fatalf("failed_jobs holds %d bytes of the payload", len(failed[0].Payload))
	}
}

// lastLine is the last line of a process's output.
func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	return s[strings.LastIndexByte(s, '\n')+1:]
}
