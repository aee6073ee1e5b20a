package main

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hibiken/asynq"
	"golang.org/x/sync/errgroup"
)

// asynqTask is asynq's no-op task type.
const asynqTask = "noop"

// asynqContender is hibiken/asynq as its README sets it up: a Client to
// enqueue, a Server with Concurrency workers on queue "default" and a
// handler that returns nil, on the same private redis-server.
type asynqContender struct {
	srv     *redisServer
	payload []byte
	client  *asynq.Client
}

func newAsynq(srv *redisServer, payloadBytes int) *asynqContender {
	return &asynqContender{srv: srv, payload: []byte(strings.Repeat("x", payloadBytes)),
		client: asynq.NewClient(asynq.RedisClientOpt{Addr: srv.addr})}
}

func (a *asynqContender) name() string { return "asynq" }

func (a *asynqContender) close() { _ = a.client.Close() }

// load enqueues n tasks (asynq has no bulk enqueue: one script each, from
// 8 goroutines).
func (a *asynqContender) load(ctx context.Context, n int) error {
	g, ctx := errgroup.WithContext(ctx)
	var next atomic.Int64
	for range 8 {
		g.Go(func() error {
			for next.Add(1) <= int64(n) {
				if _, err := a.client.EnqueueContext(ctx, asynq.NewTask(asynqTask, a.payload), asynq.Queue("default")); err != nil {
					return err
				}
			}
			return nil
		})
	}
	return g.Wait()
}

// server is an asynq server running handle, with asynq's defaults but
// for Concurrency and a quiet logger.
func (a *asynqContender) server(c int) *asynq.Server {
	return asynq.NewServer(asynq.RedisClientOpt{Addr: a.srv.addr}, asynq.Config{
		Concurrency: c, Queues: map[string]int{"default": 1}, LogLevel: asynq.FatalLevel, Logger: quietLogger{},
	})
}

// work starts a server and returns once n tasks were processed: the
// handler has run n times and asynq has written n completions (its
// "processed" counter, incremented by the script that removes a done
// task). The server is shut down by the function it returns, outside the
// timing (Shutdown waits for asynq's background loops).
func (a *asynqContender) work(ctx context.Context, n, c int) (func(), error) {
	var handled atomic.Int64
	all := make(chan struct{})
	srv := a.server(c)
	err := srv.Start(asynq.HandlerFunc(func(context.Context, *asynq.Task) error {
		if handled.Add(1) == int64(n) {
			close(all)
		}
		return nil
	}))
	if err != nil {
		return nil, err
	}
	return srv.Shutdown, a.wait(ctx, n, &handled, all)
}

// wait waits for n handled tasks, then for n completions.
func (a *asynqContender) wait(ctx context.Context, n int, handled *atomic.Int64, all <-chan struct{}) error {
	timeout := time.After(time.Duration(n)*10*time.Millisecond + 2*time.Minute)
	select {
	case <-all:
	case <-timeout:
		return fmt.Errorf("%d of %d tasks handled before the time limit", handled.Load(), n)
	case <-ctx.Done():
		return ctx.Err()
	}
	// The last completions are written after their handlers returned.
	key := "asynq:{default}:processed"
	for {
		done, err := a.srv.rc.Get(ctx, key).Int64()
		if err == nil && done >= int64(n) {
			return nil
		}
		select {
		case <-timeout:
			return fmt.Errorf("%d of %d tasks completed before the time limit (%v)", done, n, err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Microsecond):
		}
	}
}

// quietLogger drops asynq's logs.
type quietLogger struct{}

func (quietLogger) Debug(...any) {}
func (quietLogger) Info(...any)  {}
func (quietLogger) Warn(...any)  {}
func (quietLogger) Error(...any) {}
func (quietLogger) Fatal(...any) {}
