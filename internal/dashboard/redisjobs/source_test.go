package redisjobs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/dashboard/internal/testdash"
	"github.com/laraworker/laraworker/internal/dashboard/snapshot"
	"github.com/laraworker/laraworker/internal/redisproto"
	"github.com/laraworker/laraworker/internal/testutil/testredis"
	"github.com/redis/go-redis/v9"
)

// clock is the test's time, which the queue scores with.
type clock struct{ unix atomic.Int64 }

func (c *clock) now() time.Time          { return time.Unix(c.unix.Load(), 0) }
func (c *clock) advance(d time.Duration) { c.unix.Add(int64(d / time.Second)) }

type rig struct {
	q   *redisproto.Queue
	rc  *redis.Client
	c   *clock
	srv *testredis.Server
}

// newRig opens the "redis" connection on a private redis-server with the
// prefix app_, on a test clock.
func newRig(t *testing.T) *rig {
	t.Helper()
	srv := testredis.Start(t)
	r := &rig{srv: srv, rc: srv.Client(t), c: &clock{}}
	r.c.unix.Store(1_800_000_000)
	r.q = openOn(t, srv.Addr, "app_", r.c)
	return r
}

func openOn(t *testing.T, addr, prefix string, c *clock) *redisproto.Queue {
	t.Helper()
	q, err := redisproto.Open(context.Background(), redisproto.Config{Connection: "redis", Queue: "default", RetryAfter: 90 * time.Second,
		Redis: redisproto.RedisConfig{Name: "default", Client: "phpredis", Addrs: []string{addr}, Prefix: prefix}})
	if err != nil {
		t.Fatal(err)
	}
	q.SetClock(c.now)
	t.Cleanup(func() { q.Close() })
	return q
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// job is a fixture payload as RedisQueue pushes it (id and attempts
// added), with class as its displayName when given, and extra keys
// before "id" (createdAt, 12.11+).
func job(t *testing.T, fixture, class, extra string) []byte {
	t.Helper()
	raw := testdash.Fixture(t, fixture, class)
	if extra != "" {
		raw = []byte(strings.TrimSuffix(strings.TrimSpace(string(raw)), "}") + extra + "}")
	}
	p, _, err := redisproto.PreparePayload(raw)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func (r *rig) push(t *testing.T, queue string, payloads ...[]byte) {
	t.Helper()
	for _, p := range payloads {
		if _, err := r.q.Push(ctxT(t), queue, p); err != nil {
			t.Fatal(err)
		}
	}
}

func (r *rig) later(t *testing.T, queue string, delay time.Duration, p []byte) {
	t.Helper()
	if _, err := r.q.Later(ctxT(t), queue, p, delay); err != nil {
		t.Fatal(err)
	}
}

func (r *rig) summary(t *testing.T, s *Source, known ...string) *snapshot.Summary {
	t.Helper()
	now := r.c.now()
	if err := s.Refresh(ctxT(t), now, known); err != nil {
		t.Fatal(err)
	}
	sum := &snapshot.Summary{}
	s.Summarize(sum, now)
	return sum
}

func queueOf(sum *snapshot.Summary, name string) snapshot.QueueCounts {
	for _, q := range sum.Queues {
		if q.Queue == name {
			return q
		}
	}
	return snapshot.QueueCounts{}
}

// TestSourceCountsEveryState: ready (a due delayed job among them),
// delayed by when they are due, reserved and expired reservations are
// counted as a pop would find them, queues are found by the scan (not
// another prefix's), the soonest due and the reserved jobs are listed
// with their payload ids, and the classes are counted among the first
// jobs.
func TestSourceCountsEveryState(t *testing.T) {
	r := newRig(t)
	ctx := ctxT(t)
	for range 250 {
		r.push(t, "default", job(t, "noop", "", ""))
	}
	r.push(t, "mail", job(t, "scalars", "", ""))
	r.later(t, "default", 0, job(t, "noop", `App\Jobs\Due`, ""))
	for _, d := range []time.Duration{30 * time.Second, 5 * time.Minute, 2 * time.Hour} {
		r.later(t, "default", d, job(t, "noop", `App\Jobs\Later`, ""))
	}
	// Two reserved; the first one's reservation expired a second ago
	// (set after the pops: a pop moves expired reservations back).
	r.push(t, "mail", job(t, "scalars", "", ""))
	pops, err := r.q.Pop(ctx, "mail", redisproto.PopOptions{Max: 2})
	if err != nil || len(pops.Jobs) != 2 {
		t.Fatalf("pop: %+v %v", pops, err)
	}
	expired, held := pops.Jobs[0], pops.Jobs[1]
	if err := r.rc.ZAddXX(ctx, r.q.Config().Keys("mail").Reserved, redis.Z{Score: float64(r.c.now().Unix() - 1), Member: expired.Reserved}).Err(); err != nil {
		t.Fatal(err)
	}
	// Another connection's queue on the same server.
	other := openOn(t, r.srv.Addr, "other_", r.c)
	if _, err := other.Push(ctx, "foreign", job(t, "noop", "", "")); err != nil {
		t.Fatal(err)
	}

	s := New(r.q, Options{Head: 100, ScanCount: 3})
	var sum *snapshot.Summary
	for range 20 { // three keys a step: several refreshes to find them all
		if sum = r.summary(t, s); sum.JobsCaughtUp {
			break
		}
	}
	if !sum.JobsCaughtUp || sum.Driver != "redis" || sum.Sampled != 100 {
		t.Fatalf("summary: caught up %v, driver %q, sampled %d", sum.JobsCaughtUp, sum.Driver, sum.Sampled)
	}
	if got := fmt.Sprint(sum.Queues); got != fmt.Sprint([]snapshot.QueueCounts{
		{Queue: "default", Ready: 251, Delayed: 3},
		{Queue: "mail", Ready: 0, Reserved: 1, Expired: 1},
	}) {
		t.Errorf("queues %s", got)
	}
	if sum.JobsRows != 256 || sum.ReservedTotal != 2 {
		t.Errorf("%d jobs, %d reserved", sum.JobsRows, sum.ReservedTotal)
	}
	var schedule []int64
	for _, b := range sum.Schedule {
		schedule = append(schedule, b.Count)
	}
	if !slices.Equal(schedule, []int64{1, 1, 0, 1, 0}) {
		t.Errorf("schedule %v (%+v)", schedule, sum.Schedule)
	}
	if len(sum.NextDue) != 3 || sum.NextDue[0].JobID == "" || sum.NextDue[0].Class != `App\Jobs\Later` ||
		sum.NextDue[0].AvailableAt != r.c.now().Add(30*time.Second) {
		t.Errorf("next due %+v", sum.NextDue)
	}
	if len(sum.Reserved) != 2 || !sum.Reserved[0].Expired || sum.Reserved[1].Expired || sum.Reserved[0].UUID != expired.UUID ||
		sum.Reserved[1].JobID != held.ID || sum.Reserved[1].Attempts != 1 ||
		!sum.Reserved[1].ReservedAt.Equal(r.c.now()) || sum.Reserved[0].Key() != "u:"+expired.UUID {
		t.Errorf("reserved %+v", sum.Reserved)
	}
	classes := map[string]snapshot.ClassCounts{}
	for _, c := range sum.Classes {
		classes[c.Queue+" "+c.Class] = c
	}
	if c := classes[`default App\Jobs\NoopJob`]; c.Ready != 100 {
		t.Errorf("NoopJob among the first 100: %+v", c)
	}
	if c := classes[`default App\Jobs\Due`]; c.Ready != 1 {
		t.Errorf("the due job: %+v", c)
	}
	if c := classes[`mail App\Jobs\ScalarsJob`]; c.Reserved != 1 || c.Expired != 1 {
		t.Errorf("mail: %+v", c)
	}
	// The queue empties: it leaves the summary.
	if _, err := r.q.Clear(ctx, "mail"); err != nil {
		t.Fatal(err)
	}
	if sum := r.summary(t, s); queueOf(sum, "mail") != (snapshot.QueueCounts{}) || len(sum.Reserved) != 0 {
		t.Errorf("a cleared queue is still shown: %+v", sum.Queues)
	}
}

// TestSourceOldestReadyWait: a due delayed job has waited since its
// score; the list's head since its createdAt (Laravel 12.11+) plus its
// delay, else since the refreshes first saw it.
func TestSourceOldestReadyWait(t *testing.T) {
	r := newRig(t)
	created := r.c.now().Unix() - 300
	r.push(t, "new", job(t, "noop", "", `,"createdAt":`+strconv.FormatInt(created, 10)+`,"delay":null`))
	r.push(t, "old", job(t, "noop", "", ""))
	r.later(t, "due", 0, job(t, "noop", "", ""))
	s := New(r.q, Options{})
	r.summary(t, s)
	r.c.advance(40 * time.Second)
	sum := r.summary(t, s)
	for queue, want := range map[string]time.Duration{"new": 340 * time.Second, "old": 40 * time.Second, "due": 40 * time.Second} {
		if got := queueOf(sum, queue).OldestReady; got != want {
			t.Errorf("%s: oldest ready waits %s, want %s", queue, got, want)
		}
	}
}

// TestSourceListsAndOpensJobs: the jobs list pages through the first
// jobs by state and tag, in pop order; one job opens whole by its
// payload id and queue, and one not among the first jobs, or named by a
// number, says why it cannot.
func TestSourceListsAndOpensJobs(t *testing.T) {
	r := newRig(t)
	ctx := ctxT(t)
	var ids []string
	for i := range 120 {
		p := job(t, "noop", "", "")
		if i == 3 {
			p = job(t, "models", "", "")
		}
		id, err := r.q.Push(ctx, "default", p)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	r.later(t, "default", time.Hour, job(t, "noop", "", ""))
	s := New(r.q, Options{Head: 100})
	s.ReadTags()
	r.summary(t, s)
	page1, next, err := s.List(ctx, snapshot.JobFilter{Queue: "default", State: "ready"}, "", 50)
	if err != nil || len(page1) != 50 || next != "50" || page1[0].JobID != ids[0] || page1[49].JobID != ids[49] {
		t.Fatalf("first page: %d rows, next %q, %v", len(page1), next, err)
	}
	page2, next, err := s.List(ctx, snapshot.JobFilter{Queue: "default", State: "ready"}, next, 50)
	if err != nil || len(page2) != 50 || next != "" || page2[49].JobID != ids[99] {
		t.Fatalf("second page: %d rows, next %q, %v (the list's first 100 jobs)", len(page2), next, err)
	}
	delayed, _, _ := s.List(ctx, snapshot.JobFilter{State: "delayed"}, "", 50)
	if len(delayed) != 1 || delayed[0].AvailableAt != r.c.now().Add(time.Hour) {
		t.Errorf("delayed: %+v", delayed)
	}
	tagged, _, _ := s.List(ctx, snapshot.JobFilter{Tag: `App\Models\User:1`}, "", 50)
	if len(tagged) != 1 || tagged[0].JobID != ids[3] {
		t.Errorf("tagged: %+v", tagged)
	}
	one, err := s.Job(ctx, snapshot.JobRef{ID: ids[10], Queue: "default"})
	if err != nil || one.JobID != ids[10] || !strings.Contains(string(one.Payload), `"id":"`+ids[10]+`"`) || one.Class != `App\Jobs\NoopJob` {
		t.Fatalf("job %s: %+v %v", ids[10], one, err)
	}
	for _, ref := range []snapshot.JobRef{{ID: ids[110], Queue: "default"}, {ID: "42"}, {ID: ids[0], Queue: "other"}} {
		if _, err := s.Job(ctx, ref); !errors.Is(err, snapshot.ErrNotFound) {
			t.Errorf("job %+v: %v, want not found", ref, err)
		}
	}
}

// TestRefreshCostIsBoundedByTheQueueLength: a refresh reads as much from
// Redis with 100,000 jobs waiting as with 200 (its bytes out, as Redis
// counts them).
func TestRefreshCostIsBoundedByTheQueueLength(t *testing.T) {
	r := newRig(t)
	ctx := ctxT(t)
	k := r.q.Config().Keys("default")
	raw := job(t, "noop", "", "")
	added := 0
	fill := func(n int) {
		pipe := r.rc.Pipeline()
		for range n {
			added++
			// Delayed members differ, as their ids would.
			pipe.RPush(ctx, k.Ready, raw)
			pipe.ZAdd(ctx, k.Delayed, redis.Z{Score: float64(r.c.now().Unix() + 3600), Member: strconv.Itoa(added) + string(raw)})
		}
		if _, err := pipe.Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	s := New(r.q, Options{})
	read := func() int64 {
		before := netOut(t, r.rc)
		r.summary(t, s)
		return netOut(t, r.rc) - before
	}
	fill(100)
	small := read()
	fill(50_000)
	large := read()
	if sum := r.summary(t, s); queueOf(sum, "default") != (snapshot.QueueCounts{Queue: "default", Ready: 50_100, Delayed: 50_100}) {
		t.Fatalf("counts %+v", sum.Queues)
	}
	t.Logf("a refresh sent %d bytes with 200 jobs, %d with 100,200 (ready and delayed)", small, large)
	if large > small*3/2 {
		t.Errorf("a refresh sent %d bytes with 100,200 jobs, %d with 200: it grows with the queue", large, small)
	}
}

// netOut is the bytes Redis has sent to clients.
func netOut(t *testing.T, rc *redis.Client) int64 {
	t.Helper()
	info, err := rc.Info(context.Background(), "stats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "total_net_output_bytes:"); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	t.Fatal("no total_net_output_bytes in INFO")
	return 0
}
