package redisproto

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/testutil/testdsn"
	"github.com/laraworker/laraworker/internal/testutil/testredis"
)

// phpQueue is the installed Laravel's own RedisQueue (phpredis) run by
// testdata/laravel-queue.php, one command at a time.
type phpQueue struct {
	in      io.WriteCloser
	out     *bufio.Reader
	version string
}

// startPHPQueue runs the driver on srv with the prefix; no PHP, phpredis
// or Laravel skips the test (fails it under LARAWORKER_TEST_REQUIRE_DB).
func startPHPQueue(t *testing.T, srv *testredis.Server, prefix string, retryAfter, batch int) *phpQueue {
	t.Helper()
	skip := func(format string, args ...any) {
		t.Helper()
		if testdsn.Required() {
			t.Fatalf(format, args...)
		}
		t.Skipf(format, args...)
	}
	if _, err := exec.LookPath("php"); err != nil {
		skip("php is not installed")
	}
	if out, err := exec.Command("php", "-r", "echo extension_loaded('redis') ? 'yes' : 'no';").Output(); err != nil || string(out) != "yes" {
		skip("php has no redis extension (Debian: php-redis)")
	}
	script, err := filepath.Abs(filepath.Join("testdata", "laravel-queue.php"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("php", script)
	cmd.Env = append(os.Environ(), "REDIS_PORT="+strconv.Itoa(srv.Port), "REDIS_PREFIX="+prefix,
		"RETRY_AFTER="+strconv.Itoa(retryAfter), "MIGRATION_BATCH_SIZE="+strconv.Itoa(batch))
	stderr := &strings.Builder{}
	cmd.Stderr = stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		in.Close()
		_ = cmd.Wait()
	})
	p := &phpQueue{in: in, out: bufio.NewReader(outPipe)}
	line, err := p.out.ReadBytes('\n')
	var ready struct{ Ready string }
	if err != nil || json.Unmarshal(line, &ready) != nil || ready.Ready == "" {
		_ = cmd.Process.Kill()
		skip("Laravel's RedisQueue cannot run here (Debian: php-laravel-framework): %v %s %s", err, line, stderr)
	}
	p.version = ready.Ready
	return p
}

// call sends one command and returns its "ok" value.
func (p *phpQueue) call(t *testing.T, cmd map[string]any) json.RawMessage {
	t.Helper()
	b, _ := json.Marshal(cmd)
	if _, err := p.in.Write(append(b, '\n')); err != nil {
		t.Fatal(err)
	}
	line, err := p.out.ReadBytes('\n')
	if err != nil {
		t.Fatalf("php: %v", err)
	}
	var reply struct {
		OK    json.RawMessage
		Error string
	}
	if err := json.Unmarshal(line, &reply); err != nil {
		t.Fatalf("php replied %s: %v", line, err)
	}
	if reply.Error != "" {
		t.Fatalf("php %s: %s", cmd["op"], reply.Error)
	}
	return reply.OK
}

type phpPopped struct {
	Raw      string
	Reserved string
	Attempts int
	ID       *string
}

// heldJob is one job both sides popped.
type heldJob struct {
	goJob *Job
	php   phpPopped
}

// TestMatchesLaravelRedisQueue runs a random sequence of pushes, delayed
// pushes, pops (one at a time and several at once), deletes, releases,
// clock steps, sizes and clears through the installed Laravel's
// RedisQueue and through this package, on two prefixes of one server,
// and requires the same replies and, after every step, the same keys
// with the same bytes and scores.
func TestMatchesLaravelRedisQueue(t *testing.T) {
	srv := server(t)
	const retryAfter = 30
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("REDISQUEUE_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (REDISQUEUE_SEED to replay)", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	// Laravel 8 has no migration_batch_size: unlimited on both sides.
	batch := -1
	php := startPHPQueue(t, srv, "php_", retryAfter, 3)
	if versionAtLeast(php.version, 9, 23) {
		batch = 3
	}
	t.Logf("Laravel %s, migration batch %d", php.version, batch)
	c := newClock()
	cfg := testConfig(srv.Addr, "go_")
	cfg.RetryAfter = retryAfter * time.Second
	cfg.MigrationBatchSize = batch
	goQ := openQueue(t, cfg, c)
	rc := srv.Client(t)
	ctx := ctxT(t)

	queues := []string{"default", "mail"}
	var held []heldJob
	seq := 0
	compare := func(step string) {
		t.Helper()
		g, p := dump(t, rc, "go_"), dump(t, rc, "php_")
		if g != p {
			t.Fatalf("after %s the states differ:\n go:\n%s\nphp:\n%s", step, g, p)
		}
	}
	phpCmd := func(op, queue string, kv ...any) json.RawMessage {
		cmd := map[string]any{"op": op, "queue": queue, "now": c.unix.Load()}
		for i := 0; i+1 < len(kv); i += 2 {
			cmd[kv[i].(string)] = kv[i+1]
		}
		return php.call(t, cmd)
	}
	popBoth := func(queue string, n int, exact bool) {
		opts := PopOptions{Max: n, Exact: exact}
		if rng.IntN(3) == 0 {
			// A filter every job passes: the head is decoded before the
			// pop, which must not change the reserved copy.
			opts.Only = []string{`App\Jobs\Job0`, `App\Jobs\Job1`, `App\Jobs\Job2`}
		}
		res, err := goQ.Pop(ctx, queue, opts)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i++ {
			var p *phpPopped
			if err := json.Unmarshal(phpCmd("pop", queue), &p); err != nil {
				t.Fatal(err)
			}
			if p == nil {
				if i != len(res.Jobs) {
					t.Fatalf("PHP popped %d jobs, Go %d", i, len(res.Jobs))
				}
				return
			}
			if i >= len(res.Jobs) {
				t.Fatalf("PHP popped job %d, Go only %d", i+1, len(res.Jobs))
			}
			j := res.Jobs[i]
			id := ""
			if p.ID != nil {
				id = *p.ID
			}
			if string(j.Payload) != p.Raw || j.Reserved != p.Reserved || j.Attempts != p.Attempts || j.ID != id {
				t.Fatalf("popped differently:\n go: %s | %s | %d | %s\nphp: %s | %s | %d | %s", j.Payload, j.Reserved, j.Attempts, j.ID, p.Raw, p.Reserved, p.Attempts, id)
			}
			held = append(held, heldJob{goJob: j, php: *p})
		}
		if len(res.Jobs) != n {
			t.Fatalf("Go popped %d, PHP %d", len(res.Jobs), n)
		}
	}
	take := func() heldJob {
		i := rng.IntN(len(held))
		h := held[i]
		held = append(held[:i], held[i+1:]...)
		return h
	}
	for step := range 400 {
		queue := queues[rng.IntN(len(queues))]
		var what string
		switch r := rng.IntN(100); {
		case r < 28:
			seq++
			p := randomPayload(rng, seq)
			what = "push " + queue
			id, err := goQ.Push(ctx, queue, p)
			if err != nil {
				t.Fatal(err)
			}
			if got := phpCmd("push", queue, "payload", string(p)); string(got) != fmt.Sprintf(`{"id":%q}`, id) {
				t.Fatalf("push ids: go %q php %s", id, got)
			}
		case r < 36:
			seq++
			p := randomPayload(rng, seq)
			delay := rng.IntN(40)
			what = fmt.Sprintf("later %s %ds", queue, delay)
			if _, err := goQ.Later(ctx, queue, p, time.Duration(delay)*time.Second); err != nil {
				t.Fatal(err)
			}
			phpCmd("later", queue, "payload", string(p), "delay", delay)
		case r < 58:
			exact := rng.IntN(2) == 0
			what = fmt.Sprintf("pop %s (exact %t)", queue, exact)
			popBoth(queue, 1, exact)
		case r < 63:
			n := 2 + rng.IntN(5)
			what = fmt.Sprintf("pop %d from %s", n, queue)
			popBoth(queue, n, false)
		case r < 73 && len(held) > 0:
			h := take()
			what = "delete " + h.goJob.Queue
			if _, err := goQ.Delete(ctx, h.goJob); err != nil {
				t.Fatal(err)
			}
			phpCmd("delete", h.goJob.Queue, "raw", h.php.Raw, "reserved", h.php.Reserved)
		case r < 83 && len(held) > 0:
			h := take()
			delay := rng.IntN(20)
			what = fmt.Sprintf("release %s %ds", h.goJob.Queue, delay)
			err := goQ.Release(ctx, h.goJob, time.Duration(delay)*time.Second)
			if errors.Is(err, ErrReservationLost) {
				// Laravel would add a second copy; nothing to compare.
				if _, zerr := rc.ZScore(ctx, cfg.Keys(h.goJob.Queue).Reserved, h.goJob.Reserved).Result(); !isNil(zerr) {
					t.Fatalf("release said lost but the member is there: %v", zerr)
				}
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			phpCmd("release", h.goJob.Queue, "raw", h.php.Raw, "reserved", h.php.Reserved, "delay", delay)
		case r < 93:
			d := rng.IntN(25)
			what = fmt.Sprintf("clock +%ds", d)
			c.advance(time.Duration(d) * time.Second)
		case r < 98:
			what = "size " + queue
			n, err := goQ.Size(ctx, queue)
			if err != nil {
				t.Fatal(err)
			}
			if got := phpCmd("size", queue); string(got) != strconv.FormatInt(n, 10) {
				t.Fatalf("size: go %d php %s", n, got)
			}
		default:
			what = "clear " + queue
			n, err := goQ.Clear(ctx, queue)
			if err != nil {
				t.Fatal(err)
			}
			if got := phpCmd("clear", queue); string(got) != strconv.FormatInt(n, 10) {
				t.Fatalf("clear: go %d php %s", n, got)
			}
		}
		compare(fmt.Sprintf("step %d (%s)", step, what))
	}
}

// randomPayload is a job payload with the shapes cjson rewrites: key
// order, escaped and raw slashes, unicode (raw and \u-escaped), 0x7f,
// control characters, empty arrays and objects, long integers, floats
// and deep nesting; "id" and "attempts" as RedisQueue adds them.
func randomPayload(rng *rand.Rand, seq int) []byte {
	values := []string{
		`null`, `true`, `false`, `0`, `-7`, `42`, `12345678901234567`, `0.1`, `1.0e25`, `2.5`, `-0.0`,
		`"plain"`, `"Héllo \/ wörld ✓"`, `"a\/b/c"`, `"\u00e9\u2713"`, "\"\x7f\"", `"tab\tnl\ncr\r"`, `"\u0000nul"`,
		`[]`, `{}`, `[1,"two",[3]]`, `{"nested":{"x":1,"y":[1.25,"z"]},"empty":[]}`, `{"7":"int-key","a":[]}`,
		`"O:8:\"stdClass\":1:{s:1:\"a\";s:1:\"\u0000\";}"`,
	}
	var b strings.Builder
	fmt.Fprintf(&b, `{"uuid":"%08x-0000-4000-8000-%012d","displayName":"App\\Jobs\\Job%d"`, rng.Uint32(), seq, rng.IntN(3))
	b.WriteString(`,"job":"Illuminate\\Queue\\CallQueuedHandler@call"`)
	for i := range 1 + rng.IntN(6) {
		fmt.Fprintf(&b, `,"k%d":%s`, i, values[rng.IntN(len(values))])
	}
	fmt.Fprintf(&b, `,"data":{"commandName":"App\\Jobs\\Job","command":%s}`, values[rng.IntN(len(values))])
	fmt.Fprintf(&b, `,"id":"id%d","attempts":%d}`, seq, rng.IntN(3))
	return []byte(b.String())
}
