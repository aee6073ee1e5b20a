package main

import (
	"bytes"
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/store/database"
	"github.com/laraworker/laraworker/worker"
)

// noopClass is the class of laraworker's jobs: the payload is what
// `dispatch(new NoopJob)` writes in a Laravel app.
const noopClass = `App\Jobs\NoopJob`

type laraworkerContender struct {
	analyze  bool
	q        *database.Queue
	template []byte
	uuid     []byte
}

func newLaraworker(ctx context.Context, o options) (*laraworkerContender, error) {
	pc, err := pgx.ParseConfig(o.dsn)
	if err != nil {
		return nil, fmt.Errorf("-dsn: %w", err)
	}
	cfg := appconfig.Config{Driver: appconfig.EnginePgSQL, Host: pc.Host, Port: int(pc.Port), Database: pc.Database,
		Username: pc.User, Password: appconfig.Secret(pc.Password), AppTimezone: "UTC", ConnectionName: "database",
		JobsTable: o.table, FailedTable: o.table + "_failed", BatchesTable: o.table + "_batches",
		DefaultQueue: "default", RetryAfter: 90}
	q, err := database.Open(ctx, cfg, database.Options{})
	if err != nil {
		return nil, err
	}
	_ = q.DropTables(ctx)
	if err := q.CreateTables(ctx); err != nil {
		q.Close()
		return nil, err
	}
	if o.claimIndex {
		if err := q.CreateClaimIndex(ctx); err != nil {
			q.Close()
			return nil, err
		}
	}
	raw, err := payload.BuildObjectPayload(payload.NewCommand(noopClass, nil, payload.Dispatch{}), payload.BuildOptions{})
	if err != nil {
		q.Close()
		return nil, err
	}
	p, err := payload.Parse(raw)
	if err != nil {
		q.Close()
		return nil, err
	}
	return &laraworkerContender{q: q, template: raw, uuid: []byte(p.UUID), analyze: o.analyze}, nil
}

func (l *laraworkerContender) name() string { return "laraworker" }

func (l *laraworkerContender) serverVersion() string { return l.q.ServerVersion() }

func (l *laraworkerContender) close(keep bool) {
	if !keep {
		_ = l.q.DropTables(context.Background())
	}
	l.q.Close()
}

// load empties the table and pushes n jobs in bulk, each with its own
// uuid, as Queue::bulk would. It truncates, as River's load does: with
// autovacuum off (as on the bench machines) a delete would leave the dead
// rows of every earlier drain in the table and its primary key for each
// claim to step over, so later rounds would measure the previous ones.
// A truncated table that was never analysed stays never analysed.
func (l *laraworkerContender) load(ctx context.Context, n int) error {
	if _, err := l.q.DB().ExecContext(ctx, "truncate "+l.q.Dialect().Quote(l.q.Config().JobsTable)); err != nil {
		return err
	}
	const perCall = 5000
	items := make([]jobqueue.PushItem, 0, perCall)
	for i := range n {
		id, err := payload.NewUUID()
		if err != nil {
			return err
		}
		items = append(items, jobqueue.PushItem{Queue: "default", Payload: bytes.Replace(l.template, l.uuid, []byte(id), 1)})
		if len(items) == perCall || i == n-1 {
			if err := l.q.PushMany(ctx, items); err != nil {
				return err
			}
			items = items[:0]
		}
	}
	if l.analyze {
		_, err := l.q.DB().ExecContext(ctx, "analyze "+l.q.Dialect().Quote(l.q.Config().JobsTable))
		return err
	}
	return nil
}

// work runs a worker with a no-op handler until the queue is empty, as
// `laraworker work --stop-when-empty` would, and checks every job was done.
func (l *laraworkerContender) work(ctx context.Context, n, c int) error {
	reg := handlers.NewRegistry()
	reg.HandleFunc(noopClass, func(context.Context, *handlers.Job) error { return nil })
	w, err := worker.New(l.q, reg, worker.Config{Concurrency: c, StopWhenEmpty: true, Sleep: -1, MemoryMB: -1})
	if err != nil {
		return err
	}
	w.Run(ctx)
	if s := w.Stats(); s.Done != int64(n) {
		return fmt.Errorf("%d jobs done, want %d (stats %+v)", s.Done, n, s)
	}
	return ctx.Err()
}
