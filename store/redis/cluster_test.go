package redis

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/internal/redisproto"
	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/internal/testutil/testredis"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/worker"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
)

// TestOnACluster: the store on a three-master cluster with hash-tagged
// queues: the worker drains queues in different slots, a chain's next
// link to a queue of another slot is pushed in Laravel's order (push,
// then delete) and taken back when the delete finds the reservation
// lost, sizes cover every master, and a move across slots is refused.
func TestOnACluster(t *testing.T) {
	cl := testredis.StartCluster(t)
	db := testdb.Open(t, func() appconfig.Config {
		c := testdb.Config(t, appconfig.EngineSQLite)
		c.ConnectionName = "redis"
		return c
	}())
	cfg := redisproto.Config{
		Connection: "redis", Queue: "{default}", RetryAfter: 90 * time.Second,
		Redis: redisproto.RedisConfig{Name: "clustered", Client: "phpredis", Addrs: cl.Addrs, Cluster: true, Prefix: prefix},
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	q, err := redisproto.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	logs := &logBuffer{}
	s, err := New(q, db, Options{Logger: zerolog.New(logs)})
	if err != nil {
		t.Fatal(err)
	}
	rc := cl.Client(t)
	e := &env{q: q, db: db, s: s, logs: logs, ctx: ctx}

	queues := []string{"{default}", "{mail}", "{reports}"}
	for _, name := range queues {
		for range 5 {
			e.push(t, name, classA)
		}
	}
	sizes, err := s.Sizes(ctx)
	if err != nil || len(sizes) != 3 {
		t.Fatalf("sizes %+v %v", sizes, err)
	}
	reg := handlers.NewRegistry()
	var r runs
	reg.HandleFunc(classA, func(_ context.Context, job *handlers.Job) error { r.add(job); return nil })
	wcfg := workerConfig()
	wcfg.Queues = queues
	wcfg.Logger = zerolog.New(logs)
	w, err := worker.New(s, reg, wcfg)
	if err != nil {
		t.Fatal(err)
	}
	run(t, w, 30*time.Second)
	if st := w.Stats(); st.Done != 15 {
		t.Fatalf("stats %+v", st)
	}
	if sizes, _ := s.Sizes(ctx); len(sizes) != 0 {
		t.Fatalf("sizes after the drain %+v", sizes)
	}

	// A link to another slot: pushed, then the job deleted.
	e.push(t, "{default}", classA)
	row := e.claim(t, "{default}", 1)[0]
	next := &jobqueue.PushItem{Queue: "{mail}", Payload: built(t, classA)}
	if err := s.Finish(ctx, row, jobqueue.Followup{Next: next}); err != nil {
		t.Fatal(err)
	}
	if l, _ := rc.LRange(ctx, cfg.Keys("{mail}").Ready, 0, -1).Result(); len(l) != 1 {
		t.Fatalf("the link: %q", l)
	}
	if n, _ := rc.ZCard(ctx, cfg.Keys("{default}").Reserved).Result(); n != 0 {
		t.Fatal("the finished job is still reserved")
	}
	rc.Del(ctx, cfg.Keys("{mail}").Ready, cfg.Keys("{mail}").Notify)

	// The reservation turns out lost at the delete (queue:clear after the
	// push): the link is taken back, the finish reported lost.
	e.push(t, "{default}", classA)
	row = e.claim(t, "{default}", 1)[0]
	wrapped := &clearingClient{UniversalClient: q.Client(), before: "zrem", run: func() {
		rc.Del(ctx, cfg.Keys("{default}").Reserved)
	}}
	q2, err := redisproto.New(wrapped, cfg)
	if err != nil {
		t.Fatal(err)
	}
	s2, _ := New(q2, db, Options{Logger: zerolog.New(logs)})
	err = s2.Finish(ctx, row, jobqueue.Followup{Next: next})
	if !errors.Is(err, jobqueue.ErrReservationLost) {
		t.Fatalf("finish: %v", err)
	}
	if l, _ := rc.LRange(ctx, cfg.Keys("{mail}").Ready, 0, -1).Result(); len(l) != 0 {
		t.Fatalf("the link of a lost job stayed: %q", l)
	}

	if _, err := s.Move(ctx, "{default}", "{mail}", []string{classA}); !errors.Is(err, redisproto.ErrCrossSlot) {
		t.Fatalf("a move across slots: %v", err)
	}
	if _, err := s.Move(ctx, "{jobs}high", "{jobs}low", []string{classA}); err != nil {
		t.Fatalf("a move within one slot: %v", err)
	}
	if strings.Contains(logs.String(), `"level":"error"`) {
		t.Fatalf("errors logged:\n%s", logs)
	}
}

// clearingClient runs run before the first command whose name is before
// (a ZREM here: the delete of Laravel's order), once.
type clearingClient struct {
	redis.UniversalClient
	before string
	run    func()
	done   bool
}

func (c *clearingClient) ZRem(ctx context.Context, key string, members ...any) *redis.IntCmd {
	if !c.done && c.before == "zrem" {
		c.done = true
		c.run()
	}
	return c.UniversalClient.ZRem(ctx, key, members...)
}
