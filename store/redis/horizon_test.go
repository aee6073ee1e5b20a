package redis

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/internal/horizon"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/worker"
	"github.com/redis/go-redis/v9"
)

const horizonPrefix = "laravel_horizon:"

// horizonPush pushes a job as Horizon's RedisQueue::pushRaw does (the
// payload with Horizon's type, tags, silenced and pushedAt; its id the
// uuid) and writes what StoreJob's RedisJobRepository::pushed writes
// (laravel/horizon v5.29.1): the job's hash, pending and in recent_jobs.
func (e *env) horizonPush(t *testing.T, class string, tags ...string) string {
	t.Helper()
	raw := built(t, class)
	p, err := payload.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	quoted := make([]string, len(tags))
	for i, tag := range tags {
		quoted[i] = `"` + strings.ReplaceAll(tag, `\`, `\\`) + `"`
	}
	pushedAt := "1733068700.5"
	raw = append(raw[:len(raw)-1], []byte(`,"id":"`+p.UUID+`","attempts":0,"type":"job","tags":[`+strings.Join(quoted, ",")+
		`],"silenced":false,"pushedAt":"`+pushedAt+`"}`)...)
	if _, err := e.q.Push(e.ctx, "default", raw); err != nil {
		t.Fatal(err)
	}
	_, err = e.rc.Pipelined(e.ctx, func(pipe redis.Pipeliner) error {
		pipe.Do(e.ctx, "zadd", horizonPrefix+"recent_jobs", "-"+pushedAt, p.UUID)
		pipe.Do(e.ctx, "zadd", horizonPrefix+"pending_jobs", "-"+pushedAt, p.UUID)
		pipe.HMSet(e.ctx, horizonPrefix+p.UUID, "id", p.UUID, "connection", "redis", "queue", "default", "name", class,
			"status", "pending", "payload", string(raw), "created_at", pushedAt, "updated_at", pushedAt)
		pipe.ExpireAt(e.ctx, horizonPrefix+p.UUID, time.Now().Add(time.Hour))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return p.UUID
}

func horizonEnv(t *testing.T) *env {
	return newEnv(t, appconfig.EngineSQLite, envOptions{storeOpts: func(e *env) Options {
		cfg := horizon.Defaults()
		cfg.Prefix = horizonPrefix
		return Options{Horizon: horizon.New(e.rc, "redis", cfg)}
	}})
}

// A Go worker on a Horizon app's queue leaves Horizon's records as a PHP
// worker under Horizon would: a finished job completed (out of the
// pending list, in completed_jobs, counted in its queue's and class's
// throughput and runtime), a released one pending again and then
// completed, a failed one in Horizon's failed list with its exception
// and its tags' failed:<tag> sets.
func TestWorkerWritesHorizonsRecords(t *testing.T) {
	e := horizonEnv(t)
	const classC = `App\Jobs\Flaky`
	done := e.horizonPush(t, classA, `App\Models\User:7`)
	failed := e.horizonPush(t, classB)
	released := e.horizonPush(t, classC)
	reg := handlers.NewRegistry()
	reg.HandleFunc(classA, func(context.Context, *handlers.Job) error { time.Sleep(20 * time.Millisecond); return nil })
	reg.HandleFunc(classB, func(_ context.Context, j *handlers.Job) error { j.Fail(errors.New("smtp is down")); return nil })
	reg.HandleFunc(classC, func(_ context.Context, j *handlers.Job) error {
		if j.Attempts == 1 {
			j.Release(time.Minute)
		}
		return nil
	})
	cfg := workerConfig()
	cfg.Tries = 3
	run(t, e.worker(t, reg, cfg), 30*time.Second) // runs A, fails B, releases C
	h := func(id string) map[string]string {
		m, err := e.rc.HGetAll(e.ctx, horizonPrefix+id).Result()
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	if got := h(released); got["status"] != "pending" || field(t, got["payload"], "attempts") != 1.0 {
		t.Fatalf("released job's record %v: want pending with the reserved payload (attempts 1)", got)
	}
	e.makeDue(t, "default")
	run(t, e.worker(t, reg, cfg), 30*time.Second) // C's second attempt

	for id, status := range map[string]string{done: "completed", released: "completed", failed: "failed"} {
		got := h(id)
		if got["status"] != status || got["completed_at"] == "" {
			t.Errorf("job %s: record %v, want status %s with completed_at", id, got, status)
		}
		if pending, _ := e.rc.ZScore(e.ctx, horizonPrefix+"pending_jobs", id).Result(); pending != 0 {
			t.Errorf("job %s is still in Horizon's pending_jobs", id)
		}
	}
	if got := h(released); field(t, got["payload"], "attempts") != 2.0 || got["reserved_at"] == "" {
		t.Errorf("the released job's record holds %v: want its second reservation (attempts 2)", got)
	}
	f := h(failed)
	if !strings.Contains(f["exception"], "smtp is down") || f["queue"] != "default" || f["connection"] != "redis" || f["name"] != classB {
		t.Errorf("failed job's record %v", f)
	}
	for set, id := range map[string]string{"completed_jobs": done, "failed_jobs": failed, "recent_failed_jobs": failed} {
		if _, err := e.rc.ZScore(e.ctx, horizonPrefix+set, id).Result(); err != nil {
			t.Errorf("%s lacks job %s: %v", set, id, err)
		}
	}
	if _, err := e.rc.ZScore(e.ctx, horizonPrefix+"completed_jobs", failed).Result(); err != redis.Nil {
		t.Error("the failed job is in completed_jobs")
	}
	// A and C count in the metrics, B (failed) does not; A slept 20 ms.
	q, _ := e.rc.HGetAll(e.ctx, horizonPrefix+"queue:default").Result()
	a, _ := e.rc.HGetAll(e.ctx, horizonPrefix+"job:"+classA).Result()
	if q["throughput"] != "2" || a["throughput"] != "1" {
		t.Errorf("metrics: queue %v, class %v; want throughput 2 and 1", q, a)
	}
	if ms := field(t, `{"v":`+a["runtime"]+`}`, "v").(float64); ms < 20 || ms > 5000 {
		t.Errorf("class runtime %v ms, want the 20 ms the handler slept, at least", ms)
	}
	if n, _ := e.rc.Exists(e.ctx, horizonPrefix+"job:"+classB).Result(); n != 0 {
		t.Error("the failed class counted in the metrics")
	}
	if e.s.HorizonWriteFailures() != 0 {
		t.Errorf("%d Horizon writes failed: %s", e.s.HorizonWriteFailures(), e.logs)
	}
}

// Without Horizon's records (the default for an app without Horizon, or
// --horizon off), the store writes no horizon key.
func TestNoHorizonRecordsWhenOff(t *testing.T) {
	e := newEnv(t, appconfig.EngineSQLite, envOptions{})
	e.push(t, "", classA)
	reg := handlers.NewRegistry()
	reg.HandleFunc(classA, func(context.Context, *handlers.Job) error { return nil })
	if reason := run(t, e.worker(t, reg, workerConfig()), 30*time.Second); reason != worker.StopEmpty {
		t.Fatalf("stopped for %s", reason)
	}
	keys, err := e.rc.Keys(e.ctx, "*horizon*").Result()
	if err != nil || len(keys) != 0 {
		t.Fatalf("horizon keys %v (%v)", keys, err)
	}
}

// A job whose reservation was lost (another worker popped it after
// retry_after) gets no record from the worker that lost it.
func TestLostReservationWritesNoHorizonRecord(t *testing.T) {
	e := horizonEnv(t)
	id := e.horizonPush(t, classA)
	rows := e.claim(t, "default", 1)
	j := e.takeOver(t, rows[0]) // another worker's pop: status reserved by it
	before, _ := e.rc.HGetAll(e.ctx, horizonPrefix+id).Result()
	lost, err := e.s.Delete(e.ctx, rows)
	if err != nil || len(lost) != 1 {
		t.Fatalf("delete: lost %d, %v", len(lost), err)
	}
	after, _ := e.rc.HGetAll(e.ctx, horizonPrefix+id).Result()
	if after["status"] != before["status"] || after["completed_at"] != "" {
		t.Fatalf("record after the lost delete %v, before %v: want it untouched", after, before)
	}
	if j.Reserved == "" {
		t.Fatal("the other worker's pop took nothing")
	}
}

// A chain's next link Go pushes is recorded as Horizon's push records
// it (the payload with Horizon's id, type, tags, silenced and pushedAt;
// the pending record), then completes when Go runs it; `laraworker push`
// and queue:retry push through Horizon's preparation too.
func TestHorizonRecordsGoesPushes(t *testing.T) {
	e := horizonEnv(t)
	reg := handlers.NewRegistry()
	reg.HandleFunc(`App\Jobs\ChainLinkJob`, func(context.Context, *handlers.Job) error { return nil })
	e.pushRaw(t, "chains", fixture(t, "chain.json"))
	var pushed []string
	cfg := workerConfig()
	cfg.Queues = []string{"chains"}
	cfg.Concurrency = 1
	run(t, e.worker(t, reg, cfg), 30*time.Second)
	ids, err := e.rc.ZRange(e.ctx, horizonPrefix+"completed_jobs", 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		h, _ := e.rc.HGetAll(e.ctx, horizonPrefix+id).Result()
		if h["id"] == id && h["created_at"] != "" {
			pushed = append(pushed, id) // a record from the push: Go pushed it
			if h["status"] != "completed" || h["queue"] != "chains" || h["name"] != `App\Jobs\ChainLinkJob` {
				t.Errorf("link %s: record %v", id, h)
			}
			if field(t, h["payload"], "id") != id || field(t, h["payload"], "type") != "job" || field(t, h["payload"], "pushedAt") == nil {
				t.Errorf("link %s: payload %s lacks Horizon's id, type or pushedAt", id, h["payload"])
			}
		}
	}
	// The first job (pushed through the store, as `laraworker push` does)
	// and its two links, each pushed by Go with its record.
	if len(ids) != 3 || len(pushed) != 3 {
		t.Fatalf("completed %v, of which with a push record %v: want 3 and 3", ids, pushed)
	}

	id, err := pushID(e.ctx, e.s, jobqueue.PushItem{Queue: "mail", Payload: built(t, classA)})
	if err != nil {
		t.Fatal(err)
	}
	h, _ := e.rc.HGetAll(e.ctx, horizonPrefix+id).Result()
	if h["status"] != "pending" || h["queue"] != "mail" || field(t, e.list(t, "mail")[0], "id") != id {
		t.Errorf("pushed job: id %s, record %v, list %v", id, h, e.list(t, "mail"))
	}
	if s, err := e.rc.ZScore(e.ctx, horizonPrefix+"pending_jobs", id).Result(); err != nil || s >= 0 {
		t.Errorf("pending_jobs score %v, %v", s, err)
	}
}
