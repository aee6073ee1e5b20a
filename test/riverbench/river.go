package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

// noopArgs is River's job: no arguments, a worker that does nothing.
type noopArgs struct{}

func (noopArgs) Kind() string { return "noop" }

type noopWorker struct {
	river.WorkerDefaults[noopArgs]
}

func (noopWorker) Work(context.Context, *river.Job[noopArgs]) error { return nil }

type riverContender struct {
	analyze bool
	pool    *pgxpool.Pool
	schema  string
	quiet   *slog.Logger
}

// newRiver migrates River's tables into their own schema.
func newRiver(ctx context.Context, o options) (*riverContender, error) {
	pool, err := pgxpool.New(ctx, o.dsn)
	if err != nil {
		return nil, err
	}
	r := &riverContender{analyze: o.analyze, pool: pool, schema: o.schema, quiet: slog.New(slog.NewTextHandler(io.Discard, nil))}
	schema := pgx.Identifier{o.schema}.Sanitize()
	for _, stmt := range []string{"drop schema if exists " + schema + " cascade", "create schema " + schema} {
		if _, err := pool.Exec(ctx, stmt); err != nil {
			pool.Close()
			return nil, err
		}
	}
	migrator, err := rivermigrate.New(riverpgxv5.New(pool), &rivermigrate.Config{Schema: o.schema, Logger: r.quiet})
	if err == nil {
		_, err = migrator.Migrate(ctx, rivermigrate.DirectionUp, nil)
	}
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("migrating into schema %s: %w", o.schema, err)
	}
	return r, nil
}

func (r *riverContender) name() string { return "river" }

func (r *riverContender) close(keep bool) {
	if !keep {
		_, _ = r.pool.Exec(context.Background(), "drop schema if exists "+pgx.Identifier{r.schema}.Sanitize()+" cascade")
	}
	r.pool.Close()
}

// client is a River client with MaxWorkers c on the default queue and a
// 2 ms FetchCooldown (its default is 100 ms, which caps a busy queue).
func (r *riverContender) client(c int) (*river.Client[pgx.Tx], error) {
	workers := river.NewWorkers()
	river.AddWorker(workers, &noopWorker{})
	return river.NewClient(riverpgxv5.New(r.pool), &river.Config{
		Queues:        map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: c}},
		Workers:       workers,
		FetchCooldown: 2 * time.Millisecond,
		Schema:        r.schema,
		Logger:        r.quiet,
	})
}

// load empties River's job table and inserts n jobs with River's bulk
// insert (COPY), with no client running.
func (r *riverContender) load(ctx context.Context, n int) error {
	if _, err := r.pool.Exec(ctx, "truncate "+pgx.Identifier{r.schema, "river_job"}.Sanitize()); err != nil {
		return err
	}
	c, err := r.client(1)
	if err != nil {
		return err
	}
	params := make([]river.InsertManyParams, n)
	for i := range params {
		params[i] = river.InsertManyParams{Args: noopArgs{}}
	}
	inserted, err := c.InsertManyFast(ctx, params)
	if err == nil && inserted != n {
		err = fmt.Errorf("inserted %d jobs, want %d", inserted, n)
	}
	if err == nil && r.analyze {
		_, err = r.pool.Exec(ctx, "analyze "+pgx.Identifier{r.schema, "river_job"}.Sanitize())
	}
	return err
}

// work starts a client and returns when it has reported n completions
// (River sends the event once the completion is written).
func (r *riverContender) work(ctx context.Context, n, c int) error {
	client, err := r.client(c)
	if err != nil {
		return err
	}
	done, cancel := client.SubscribeConfig(&river.SubscribeConfig{ChanSize: n + 1000, Kinds: []river.EventKind{river.EventKindJobCompleted}})
	defer cancel()
	if err := client.Start(ctx); err != nil {
		return err
	}
	defer func() {
		stopCtx, stop := context.WithTimeout(context.Background(), 30*time.Second)
		defer stop()
		_ = client.Stop(stopCtx)
	}()
	timeout := time.After(time.Duration(n)*10*time.Millisecond + 2*time.Minute)
	for seen := 0; seen < n; {
		select {
		case _, ok := <-done:
			if !ok {
				return fmt.Errorf("subscription closed after %d of %d completions", seen, n)
			}
			seen++
		case <-timeout:
			return fmt.Errorf("%d of %d jobs completed before the time limit", seen, n)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}
