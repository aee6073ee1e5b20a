package reliability

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/redisproto"
	"github.com/laraworker/laraworker/internal/testutil/testredis"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/redis/go-redis/v9"
)

// This file is the Redis side of the suite: the copied app's "redis"
// queue connection pointed at a private redis-server, and what the tests
// read in Redis.

// redisRel is the app's redis queue connection on a private redis-server.
type redisRel struct {
	srv *testredis.Server
	// rc is a plain client for the test's own reads; it retries, unlike
	// the queue's client.
	rc  *redis.Client
	q   *redisproto.Queue
	cfg redisproto.Config
	// env points php and relworker at it: QUEUE_CONNECTION=redis, the
	// REDIS_* variables and retry_after.
	env []string
}

// needRedisApp is needApp with a private redis-server that the app's
// "redis" queue connection (retry_after as given) and its default cache
// store (database) use; extra are redis-server arguments. The app's
// config is read through its PHP, as laraworker reads it: without PHP
// the test is skipped.
func needRedisApp(t *testing.T, retryAfter int, extra ...string) *redisRel {
	t.Helper()
	needApp(t)
	needPHP(t)
	if _, err := app.q.DB().Exec("delete from job_batches"); err != nil {
		t.Fatal(err)
	}
	srv := testredis.Start(t, extra...)
	r := &redisRel{srv: srv, rc: srv.Client(t)}
	r.env = []string{"QUEUE_CONNECTION=redis", "REDIS_HOST=127.0.0.1", "REDIS_PORT=" + strconv.Itoa(srv.Port),
		"REDIS_QUEUE_RETRY_AFTER=" + strconv.Itoa(retryAfter), "CACHE_DRIVER=database"}
	var conf struct {
		Version string
		Queue   map[string]any
		Redis   map[string]any
	}
	out := r.php(t, `echo json_encode(['version' => app()->version(), 'queue' => config('queue.connections.redis'), 'redis' => config('database.redis')]);`)
	if err := json.Unmarshal([]byte(out), &conf); err != nil {
		t.Fatalf("app config %q: %v", out, err)
	}
	cfg, err := redisproto.FromLaravel("redis", conf.Queue, conf.Redis, redisproto.LaravelOptions{Version: conf.Version})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Redis.Addrs[0] != srv.Addr || cfg.RetryAfter != time.Duration(retryAfter)*time.Second {
		t.Fatalf("the app's redis connection read as %s, retry_after %s", cfg.Redis, cfg.RetryAfter)
	}
	r.cfg = cfg
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if r.q, err = redisproto.Open(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.q.Close() })
	return r
}

// php runs PHP code inside the booted app on the redis connection and
// returns what it printed.
func (r *redisRel) php(t *testing.T, code string) string {
	t.Helper()
	boot := `require 'bootstrap/autoload.php'; $app = require 'bootstrap/app.php'; ` +
		`$app->make(Illuminate\Contracts\Console\Kernel::class)->bootstrap(); `
	cmd := exec.Command("php", "-r", boot+code)
	cmd.Dir = app.path
	cmd.Env = append(append(cleanEnv(), "WORKER_NAME=php"), r.env...)
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if exit, ok := err.(*exec.ExitError); ok {
			stderr = string(exit.Stderr)
		}
		t.Fatalf("php -r: %v\n%s\n%s", err, out, stderr)
	}
	return string(out)
}

// artisan is `php artisan args...` on the redis connection.
func (r *redisRel) artisan(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command("php", append([]string{"artisan"}, args...)...)
	cmd.Dir = app.path
	cmd.Env = append(append(cleanEnv(), "WORKER_NAME=php"), r.env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("php artisan %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// goWorker starts relworker's `work` on the redis connection.
func (r *redisRel) goWorker(t *testing.T, extraEnv []string, args ...string) *proc {
	t.Helper()
	return goWorker(t, append(append([]string{}, r.env...), extraEnv...), args...)
}

// phpWorker starts `php artisan queue:work redis args...`.
func (r *redisRel) phpWorker(t *testing.T, args ...string) *proc {
	t.Helper()
	env := append(append(cleanEnv(), "WORKER_NAME=php"), r.env...)
	return startProc(t, "php", env, "php", append([]string{"artisan", "queue:work", "redis"}, args...)...)
}

// noopTemplate is a NoopJob payload as PHP's dispatch() pushed it onto
// queue (taken off the list again).
func (r *redisRel) noopTemplate(t *testing.T, queue string) []byte {
	t.Helper()
	r.artisan(t, "app:dispatch", "noop", "--count=1", "--queue="+queue)
	raw, err := r.rc.LPop(context.Background(), r.cfg.Keys(queue).Ready).Result()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.rc.Del(context.Background(), r.cfg.Keys(queue).Notify).Result(); err != nil {
		t.Fatal(err)
	}
	return []byte(raw)
}

// pushCopies pushes n copies of a PHP payload onto queue, each with a
// fresh uuid and id, and returns the uuids.
func (r *redisRel) pushCopies(t *testing.T, template []byte, queue string, n int) map[string]bool {
	t.Helper()
	p, err := payload.Parse(template)
	if err != nil {
		t.Fatal(err)
	}
	var keys struct{ ID string }
	if err := json.Unmarshal(template, &keys); err != nil || keys.ID == "" {
		t.Fatalf("the template has no Redis id: %v %s", err, template)
	}
	uuids := make(map[string]bool, n)
	items := make([]jobqueue.PushItem, 0, n)
	for range n {
		uuid, _ := payload.NewUUID()
		id, err := redisproto.RandomID()
		if err != nil {
			t.Fatal(err)
		}
		uuids[uuid] = true
		raw := strings.Replace(strings.Replace(string(template), p.UUID, uuid, 1), `"id":"`+keys.ID+`"`, `"id":"`+id+`"`, 1)
		items = append(items, jobqueue.PushItem{Queue: queue, Payload: []byte(raw)})
	}
	if err := r.q.PushMany(context.Background(), items); err != nil {
		t.Fatal(err)
	}
	return uuids
}

// left counts queue's jobs in Redis: ready, delayed and reserved.
func (r *redisRel) left(t *testing.T, queue string) int64 {
	t.Helper()
	ctx := context.Background()
	k := r.cfg.Keys(queue)
	var n int64
	for _, c := range []*redis.IntCmd{r.rc.LLen(ctx, k.Ready), r.rc.ZCard(ctx, k.Delayed), r.rc.ZCard(ctx, k.Reserved)} {
		v, err := c.Result()
		if err != nil {
			t.Fatal(err)
		}
		n += v
	}
	return n
}

// ready is the length of queue's list.
func (r *redisRel) ready(t *testing.T, queue string) int64 {
	t.Helper()
	n, err := r.rc.LLen(context.Background(), r.cfg.Keys(queue).Ready).Result()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// reservation is a member of a reserved set: the job's uuid and the
// attempt its pop counted.
type reservation struct {
	UUID     string
	Attempts int64
}

// reserved lists queue's reserved members.
func (r *redisRel) reserved(t *testing.T, queue string) []reservation {
	t.Helper()
	members, err := r.rc.ZRange(context.Background(), r.cfg.Keys(queue).Reserved, 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	out := make([]reservation, 0, len(members))
	for _, m := range members {
		var res reservation
		if err := json.Unmarshal([]byte(m), &struct {
			UUID     *string `json:"uuid"`
			Attempts *int64  `json:"attempts"`
		}{&res.UUID, &res.Attempts}); err != nil {
			t.Fatalf("reserved member %.200s: %v", m, err)
		}
		out = append(out, res)
	}
	return out
}

// tcpClientAddrs returns the local addresses ("127.0.0.1:port") of pid's
// TCP connections to serverPort, as CLIENT LIST names them: the sockets
// among the process's file descriptors, looked up in its /proc/net/tcp.
func tcpClientAddrs(pid, serverPort int) ([]string, error) {
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return nil, err
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		link, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if err == nil && strings.HasPrefix(link, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] = true
		}
	}
	f, err := os.Open(fmt.Sprintf("/proc/%d/net/tcp", pid))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
		fields := strings.Fields(sc.Text())
		if len(fields) < 10 || !inodes[fields[9]] || fields[3] != "01" { // 01: ESTABLISHED
			continue
		}
		local, remote := hexAddrPort(fields[1]), hexAddrPort(fields[2])
		if local == "" || !strings.HasSuffix(remote, ":"+strconv.Itoa(serverPort)) {
			continue
		}
		out = append(out, local)
	}
	return out, sc.Err()
}

// hexAddrPort turns /proc/net/tcp's "0100007F:1F90" into "127.0.0.1:8080".
func hexAddrPort(s string) string {
	host, port, ok := strings.Cut(s, ":")
	if !ok || len(host) != 8 {
		return ""
	}
	ip, err1 := strconv.ParseUint(host, 16, 32)
	p, err2 := strconv.ParseUint(port, 16, 16)
	if err1 != nil || err2 != nil {
		return ""
	}
	return fmt.Sprintf("%d.%d.%d.%d:%d", ip&0xff, ip>>8&0xff, ip>>16&0xff, ip>>24, p)
}

// killClients kills a process's connections to the redis-server with
// CLIENT KILL ADDR and returns how many it killed.
func (r *redisRel) killClients(t *testing.T, pid int) int {
	t.Helper()
	addrs, err := tcpClientAddrs(pid, r.srv.Port)
	if err != nil {
		t.Fatal(err)
	}
	killed := 0
	for _, addr := range addrs {
		if err := r.rc.ClientKill(context.Background(), addr).Err(); err == nil {
			killed++
		}
	}
	return killed
}

// rawReserved lists queue's reserved members as they are.
func (r *redisRel) rawReserved(t *testing.T, queue string) []string {
	t.Helper()
	members, err := r.rc.ZRange(context.Background(), r.cfg.Keys(queue).Reserved, 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	return members
}
