package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/redis/go-redis/v9"
)

// The bridge routes NoopJob to Go's queue "go"; its record there has no
// cache store. The bridge now leaves "stores" out when empty; bridges
// before record-all wrote "stores":{}, which PHP's re-encode turns into
// [], and such records wait on queues still: the tests give the record
// that shape (asOlderBridge) to read it back after queue:retry.
const noopToGo = "        App\\Jobs\\NoopJob::class,\n"

// asOlderBridge is a payload whose laraworker record carries "stores":{},
// as bridges before record-all wrote an empty one.
func asOlderBridge(t *testing.T, raw string) string {
	t.Helper()
	if strings.Contains(raw, `"stores":`) {
		return raw
	}
	out := strings.Replace(raw, `"laraworker":{`, `"laraworker":{"stores":{},`, 1)
	if out == raw {
		t.Fatalf("no laraworker record in %s", raw)
	}
	return out
}

// TestBridgedJobRetriedAfterGoFailed: a job the bridge routed to Go, which
// Go failed, is pushed back by `php artisan queue:retry` (json_decode,
// json_encode: its record's "stores":{} comes back as []) and by
// `laraworker retry` (the same bytes), and Go then runs it: read as PHP
// wrote it, not given back onto "go", where no PHP worker runs it.
func TestBridgedJobRetriedAfterGoFailed(t *testing.T) {
	onEachDB(t, testBridgedJobRetriedAfterGoFailed)
}

func testBridgedJobRetriedAfterGoFailed(t *testing.T, s *suite) {
	s.installBridgeConfig(t, noopToGo)
	s.artisan(t, "app:dispatch", "noop", "--count=2")
	for _, j := range s.queuedJobs(t) {
		s.exec(t, "update jobs set payload = ? where id = ?", asOlderBridge(t, j.Payload), j.ID)
	}
	jobs := s.queuedJobs(t)
	if len(jobs) != 2 || jobs[0].Queue != "go" || !strings.Contains(jobs[0].Payload, `"stores":{}`) {
		t.Fatalf("dispatched %+v: want two NoopJobs on go with the bridge's record", jobs)
	}
	s.work(t, "--queue", "go", "--stop-when-empty", "--tries", "1", s.route(noopJob, "-fail", "the first run fails"))
	if f := s.failed(t); len(f) != 2 {
		t.Fatalf("%d failed jobs after Go's first run, want 2", len(f))
	}
	s.artisan(t, "queue:retry", jobs[0].UUID)
	s.laraworker(t, "retry", jobs[1].UUID)
	retried := s.queuedJobs(t)
	if len(retried) != 2 || len(s.failed(t)) != 0 {
		t.Fatalf("after the retries: jobs %+v, failed %d", retried, len(s.failed(t)))
	}
	for _, j := range retried {
		if j.Queue != "go" || !strings.Contains(j.Payload, `"stores":[]`) {
			t.Fatalf("retried %s: queue %s, payload %s: want it on go with \"stores\":[]", j.UUID, j.Queue, j.Payload)
		}
	}

	s.work(t, "--queue", "go", "--stop-when-empty", s.route(noopJob))
	byUUID := runsByUUID(s.runs(t))
	for _, j := range jobs {
		rs := byUUID[j.UUID]
		if len(rs) != 2 || rs[0].Worker != "go" || rs[1].Worker != "go" || rs[1].Attempt != 1 {
			t.Errorf("%s runs %+v: want Go's failed run, then Go's run of the retried job", j.UUID, rs)
		}
	}
	if left := s.queuedJobs(t); len(left) != 0 {
		t.Errorf("jobs left after Go ran the retried jobs: %+v", left)
	}
	if f := s.failed(t); len(f) != 0 {
		t.Errorf("failed jobs: %+v", f)
	}
}

// TestRedisBridgedJobRetriedAfterGoFailed is
// TestBridgedJobRetriedAfterGoFailed on Laravel's Redis queue (failed_jobs
// in the database): `php artisan queue:retry` and `laraworker retry` push
// the job back onto queues:go, and Go runs it.
func TestRedisBridgedJobRetriedAfterGoFailed(t *testing.T) {
	onEachDB(t, testRedisBridgedJobRetriedAfterGoFailed)
}

func testRedisBridgedJobRetriedAfterGoFailed(t *testing.T, s *suite) {
	a := s.redisQueue(t)
	s.installBridgeConfig(t, noopToGo)
	a.artisan(t, "app:dispatch", "noop", "--count=2")
	for i, raw := range a.list(t, "go") {
		if err := a.rc.LSet(a.s.ctx(t), a.cfg.Keys("go").Ready, int64(i), asOlderBridge(t, raw)).Err(); err != nil {
			t.Fatal(err)
		}
	}
	list := a.list(t, "go")
	if len(list) != 2 || !strings.Contains(list[0], `"stores":{}`) {
		t.Fatalf("queues:go after the dispatch: %q", list)
	}
	var uuids []string
	for _, raw := range list {
		p, _ := payload.Parse([]byte(raw))
		uuids = append(uuids, p.UUID)
	}
	a.lw(t, "work", "--connection", "redis", "--queue", "go", "--sleep", "0.2", "--stop-when-empty", "--tries", "1", s.route(noopJob, "-fail", "the first run fails"))
	if f := s.failed(t); len(f) != 2 || f[0].Connection != "redis" {
		t.Fatalf("failed jobs after Go's first run: %+v", f)
	}
	a.artisan(t, "queue:retry", uuids[0])
	a.lw(t, "retry", uuids[1])
	retried := a.list(t, "go")
	if len(retried) != 2 || len(s.failed(t)) != 0 || !strings.Contains(retried[0], `"stores":[]`) || !strings.Contains(retried[1], `"stores":[]`) {
		t.Fatalf("after the retries: queues:go %q, failed %d", retried, len(s.failed(t)))
	}

	a.lw(t, "work", "--connection", "redis", "--queue", "go", "--sleep", "0.2", "--stop-when-empty", s.route(noopJob))
	byUUID := runsByUUID(s.runs(t))
	for _, u := range uuids {
		if rs := byUUID[u]; len(rs) != 2 || rs[1].Worker != "go" || rs[1].Attempt != 1 {
			t.Errorf("%s runs %+v: want Go's failed run, then Go's run of the retried job", u, rs)
		}
	}
	if got := s.redisLeft(t, a); got != "" {
		t.Errorf("left in Redis: %s", got)
	}
}

// TestRedisBridgedJobReleasedByGo: a bridged job Go releases goes back as
// Laravel's release script leaves it, re-encoded by Redis's cjson (every
// empty list of its record, "errors":[] and the rest, is now {}), and Go
// runs it on its next attempt.
func TestRedisBridgedJobReleasedByGo(t *testing.T) { onEachDB(t, testRedisBridgedJobReleasedByGo) }

func testRedisBridgedJobReleasedByGo(t *testing.T, s *suite) {
	a := s.redisQueue(t)
	s.installBridgeConfig(t, noopToGo)
	a.artisan(t, "app:dispatch", "noop")
	a.lw(t, "work", "--connection", "redis", "--queue", "go", "--sleep", "0.2", "--once", "--tries", "3", "--backoff", "3600", s.route(noopJob, "-release"))
	ctx := s.ctx(t)
	delayed := a.cfg.Keys("go").Delayed
	members, err := a.rc.ZRange(ctx, delayed, 0, -1).Result()
	if err != nil || len(members) != 1 || !strings.Contains(members[0], `"errors":{}`) {
		t.Fatalf("queues:go:delayed after Go's release: %q, %v (want the cjson copy, \"errors\":{})", members, err)
	}
	p, _ := payload.Parse([]byte(members[0]))
	a.rc.ZAddXX(ctx, delayed, redis.Z{Score: float64(time.Now().Unix()), Member: members[0]}) // due now

	a.lw(t, "work", "--connection", "redis", "--queue", "go", "--sleep", "0.2", "--stop-when-empty", "--tries", "3", s.route(noopJob))
	if rs := runsByUUID(s.runs(t))[p.UUID]; len(rs) != 2 || rs[1].Worker != "go" || rs[1].Attempt != 2 {
		t.Errorf("runs %+v: want Go's released run, then Go's second attempt", rs)
	}
	if got := s.redisLeft(t, a); got != "" {
		t.Errorf("left in Redis: %s", got)
	}
	if f := s.failed(t); len(f) != 0 {
		t.Errorf("failed jobs: %+v", f)
	}
}

// TestUnreadableBridgeRecordFailsTheJob: a job on Go's queue whose bridge
// record Go cannot read (here: a newer bridge's version) is failed with
// the cause, listed by `php artisan queue:failed`, never left on "go"
// where no PHP worker runs it; the other jobs of its class run in the
// same run. Once the cause is fixed (here: the record as this laraworker
// reads it), `php artisan queue:retry` puts it back and Go runs it.
func TestUnreadableBridgeRecordFailsTheJob(t *testing.T) {
	onEachDB(t, testUnreadableBridgeRecordFailsTheJob)
}

func testUnreadableBridgeRecordFailsTheJob(t *testing.T, s *suite) {
	s.installBridgeConfig(t, noopToGo)
	s.artisan(t, "app:dispatch", "noop", "--count=3")
	jobs := s.queuedJobs(t)
	if len(jobs) != 3 || !strings.Contains(jobs[0].Payload, `"laraworker":{"v":1,`) {
		t.Fatalf("dispatched %+v", jobs)
	}
	bad := jobs[0]
	s.exec(t, "update jobs set payload = ? where id = ?", strings.Replace(bad.Payload, `"laraworker":{"v":1,`, `"laraworker":{"v":2,`, 1), bad.ID)

	s.work(t, "--queue", "go", "--stop-when-empty", s.route(noopJob))
	if left := s.queuedJobs(t); len(left) != 0 {
		t.Fatalf("jobs left on the queues: %+v", left)
	}
	byUUID := runsByUUID(s.runs(t))
	for _, j := range jobs[1:] {
		if len(byUUID[j.UUID]) != 1 {
			t.Errorf("%s, with a readable record, ran %d times, want once", j.UUID, len(byUUID[j.UUID]))
		}
	}
	failed := s.failed(t)
	if len(failed) != 1 || failed[0].UUID != bad.UUID || failed[0].Queue != "go" || len(byUUID[bad.UUID]) != 0 {
		t.Fatalf("failed jobs %+v, runs of the bad one %d", failed, len(byUUID[bad.UUID]))
	}
	for _, want := range []string{`LaraWorker\UnreadableBridgeRecordException`, "version 2; this laraworker reads version 1", "php artisan queue:retry " + bad.UUID} {
		if !strings.Contains(failed[0].Exception, want) {
			t.Errorf("failed_jobs.exception does not say %q:\n%s", want, failed[0].Exception)
		}
	}
	if listing := s.artisan(t, "queue:failed"); !strings.Contains(listing, bad.UUID) {
		t.Errorf("queue:failed does not list %s:\n%s", bad.UUID, listing)
	}

	s.exec(t, "update failed_jobs set payload = ? where uuid = ?", bad.Payload, bad.UUID)
	s.artisan(t, "queue:retry", bad.UUID)
	s.work(t, "--queue", "go", "--stop-when-empty", s.route(noopJob))
	if rs := runsByUUID(s.runs(t))[bad.UUID]; len(rs) != 1 || rs[0].Worker != "go" || rs[0].Attempt != 1 {
		t.Errorf("the retried job's runs %+v, want one by Go", rs)
	}
	if left, f := s.queuedJobs(t), s.failed(t); len(left) != 0 || len(f) != 0 {
		t.Errorf("after the retry: jobs %+v, failed %+v", left, f)
	}
}

// TestRedisUnreadableBridgeRecordFailsTheJob is
// TestUnreadableBridgeRecordFailsTheJob on Laravel's Redis queue, the
// fixed job put back by `laraworker retry`.
func TestRedisUnreadableBridgeRecordFailsTheJob(t *testing.T) {
	onEachDB(t, testRedisUnreadableBridgeRecordFailsTheJob)
}

func testRedisUnreadableBridgeRecordFailsTheJob(t *testing.T, s *suite) {
	a := s.redisQueue(t)
	s.installBridgeConfig(t, noopToGo)
	a.artisan(t, "app:dispatch", "noop", "--count=2")
	list := a.list(t, "go")
	if len(list) != 2 || !strings.Contains(list[0], `"laraworker":{"v":1,`) {
		t.Fatalf("queues:go after the dispatch: %q", list)
	}
	bad, _ := payload.Parse([]byte(list[0]))
	good, _ := payload.Parse([]byte(list[1]))
	if err := a.rc.LSet(s.ctx(t), a.cfg.Keys("go").Ready, 0, strings.Replace(list[0], `"laraworker":{"v":1,`, `"laraworker":"v1",`+`"x":{"v":1,`, 1)).Err(); err != nil {
		t.Fatal(err)
	}

	a.lw(t, "work", "--connection", "redis", "--queue", "go", "--sleep", "0.2", "--stop-when-empty", s.route(noopJob))
	byUUID := runsByUUID(s.runs(t))
	if len(byUUID[good.UUID]) != 1 || len(byUUID[bad.UUID]) != 0 {
		t.Fatalf("runs %+v: want the good job run, the bad one not", byUUID)
	}
	failed := s.failed(t)
	if len(failed) != 1 || failed[0].UUID != bad.UUID || failed[0].Connection != "redis" ||
		!strings.Contains(failed[0].Exception, `LaraWorker\UnreadableBridgeRecordException`) || !strings.Contains(failed[0].Exception, "want the bridge's metadata object") {
		t.Fatalf("failed jobs %+v", failed)
	}
	if got := s.redisLeft(t, a); got != "" {
		t.Fatalf("left in Redis: %s", got)
	}

	s.exec(t, "update failed_jobs set payload = ? where uuid = ?", list[0], bad.UUID)
	a.lw(t, "retry", bad.UUID)
	a.lw(t, "work", "--connection", "redis", "--queue", "go", "--sleep", "0.2", "--stop-when-empty", s.route(noopJob))
	if rs := runsByUUID(s.runs(t))[bad.UUID]; len(rs) != 1 || rs[0].Worker != "go" {
		t.Errorf("the retried job's runs %+v, want one by Go", rs)
	}
	if got, f := s.redisLeft(t, a), s.failed(t); got != "" || len(f) != 0 {
		t.Errorf("after the retry: left in Redis %q, failed %+v", got, f)
	}
}
