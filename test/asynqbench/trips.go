package main

import (
	"context"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// tripCounter counts the requests a go-redis client sends: a command, a
// pipeline or a MULTI each one round trip.
type tripCounter struct{ n atomic.Int64 }

func (t *tripCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (t *tripCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		t.n.Add(1)
		return next(ctx, cmd)
	}
}

func (t *tripCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		t.n.Add(1)
		return next(ctx, cmds)
	}
}

// roundTrips is the requests ct's client has sent so far, 0 for a
// contender whose client this program cannot see (asynq makes its own).
func roundTrips(ct contender) int64 {
	if l, ok := ct.(*laraworkerContender); ok && l.trips != nil {
		return l.trips.n.Load()
	}
	return 0
}
