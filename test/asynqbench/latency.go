package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/hibiken/asynq"
	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/internal/redisproto"
	"github.com/laraworker/laraworker/worker"
)

// latencyResult is the pick-up latency of one setup: jobs pushed one by
// one at a steady rate onto an empty queue that a running worker
// watches; each job's latency is from the start of its push to the start
// of its handler.
type latencyResult struct {
	Name   string  `json:"name"`
	Jobs   int     `json:"jobs"`
	Rate   float64 `json:"rate_per_sec"`
	P50Ms  float64 `json:"p50_ms"`
	P99Ms  float64 `json:"p99_ms"`
	MaxMs  float64 `json:"max_ms"`
	Pushed float64 `json:"pushed_per_sec"`
	// CPUPer1k and RedisCPUPer1k are this process's (the worker and the
	// pusher) and redis-server's CPU over the whole window per 1,000 jobs:
	// what waiting costs (a worker that polls burns it while idle).
	CPUPer1k      float64 `json:"cpu_ms_per_1k"`
	RedisCPUPer1k float64 `json:"redis_cpu_ms_per_1k"`
	Load1         float64 `json:"load1"`
}

// latencySetup is one way of running a worker for the latency phase:
// start runs it until ctx ends, calling picked(key) at the start of each
// job's handler; prepare builds job i and returns its key and the call
// that pushes it.
type latencySetup struct {
	name    string
	start   func(ctx context.Context, picked func(key string)) (wait func(), err error)
	prepare func(i int) (key string, push func(ctx context.Context) error, err error)
}

func laraworkerLatency(l *laraworkerContender, c int, sleep time.Duration, blockFor *time.Duration) latencySetup {
	name := "laraworker, block_for null, --sleep " + sleep.String()
	if blockFor != nil {
		name = fmt.Sprintf("laraworker, block_for %d, --sleep %s", int(blockFor.Seconds()), sleep)
	}
	return latencySetup{
		name: name,
		start: func(ctx context.Context, picked func(string)) (func(), error) {
			q, s, err := l.open(ctx, blockFor)
			if err != nil {
				return nil, err
			}
			reg := handlers.NewRegistry()
			reg.HandleFunc(benchClass, func(_ context.Context, j *handlers.Job) error {
				picked(j.UUID)
				return nil
			})
			if sleep == 0 {
				sleep = -1 // none: the worker's 0 is its default
			}
			w, err := worker.New(s, reg, worker.Config{Concurrency: c, Sleep: sleep, MemoryMB: -1})
			if err != nil {
				q.Close()
				return nil, err
			}
			done := make(chan struct{})
			go func() {
				defer close(done)
				defer q.Close()
				w.Run(ctx)
			}()
			return func() { <-done }, nil
		},
		prepare: func(int) (string, func(context.Context) error, error) {
			raw, uuid, err := l.payload()
			if err != nil {
				return "", nil, err
			}
			prepared, _, err := redisproto.PreparePayload(raw)
			if err != nil {
				return "", nil, err
			}
			return uuid, func(ctx context.Context) error {
				_, err := l.q.Push(ctx, "default", prepared)
				return err
			}, nil
		},
	}
}

func asynqLatency(a *asynqContender, c int) latencySetup {
	return latencySetup{
		name: "asynq, TaskCheckInterval 1s (its default)",
		start: func(ctx context.Context, picked func(string)) (func(), error) {
			srv := a.server(c)
			err := srv.Start(asynq.HandlerFunc(func(_ context.Context, t *asynq.Task) error {
				picked(string(t.Payload()))
				return nil
			}))
			if err != nil {
				return nil, err
			}
			done := make(chan struct{})
			go func() {
				defer close(done)
				<-ctx.Done()
				srv.Shutdown()
			}()
			return func() { <-done }, nil
		},
		prepare: func(i int) (string, func(context.Context) error, error) {
			key := make([]byte, 8)
			binary.BigEndian.PutUint64(key, uint64(i))
			task := asynq.NewTask(asynqTask, key)
			return string(key), func(ctx context.Context) error {
				_, err := a.client.EnqueueContext(ctx, task, asynq.Queue("default"))
				return err
			}, nil
		},
	}
}

// measureLatency runs setup's worker on the empty queue, lets it settle
// for warm (so it waits as it would between jobs), then pushes n jobs at
// rate per second, one after the other, and waits until all were picked.
func measureLatency(ctx context.Context, srv *redisServer, setup latencySetup, n int, rate float64, warm time.Duration) (latencyResult, error) {
	res := latencyResult{Name: setup.name, Jobs: n, Rate: rate}
	if err := srv.flush(ctx); err != nil {
		return res, err
	}
	var mu sync.Mutex
	pushedAt := make(map[string]time.Time, n)
	lat := make([]time.Duration, 0, n)
	all := make(chan struct{})
	picked := func(key string) {
		now := time.Now()
		mu.Lock()
		defer mu.Unlock()
		if t, ok := pushedAt[key]; ok {
			lat = append(lat, now.Sub(t))
			delete(pushedAt, key)
			if len(lat) == n {
				close(all)
			}
		}
	}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	wait, err := setup.start(wctx, picked)
	if err != nil {
		return res, err
	}
	defer wait()
	defer stop()
	select {
	case <-time.After(warm):
	case <-ctx.Done():
		return res, ctx.Err()
	}
	res.Load1 = load1()
	cpu0 := selfCPU()
	srv0, _ := srv.cpu()
	start := time.Now()
	interval := time.Duration(float64(time.Second) / rate)
	for i := range n {
		if d := time.Until(start.Add(time.Duration(i) * interval)); d > 0 {
			time.Sleep(d)
		}
		key, push, err := setup.prepare(i)
		if err != nil {
			return res, err
		}
		// The push time is recorded before the push: a job can be picked
		// before the push call returns.
		mu.Lock()
		pushedAt[key] = time.Now()
		mu.Unlock()
		if err := push(ctx); err != nil {
			return res, err
		}
	}
	res.Pushed = float64(n) / time.Since(start).Seconds()
	select {
	case <-all:
	case <-time.After(time.Minute):
		mu.Lock()
		defer mu.Unlock()
		return res, fmt.Errorf("%s: %d of %d jobs picked up within a minute of the last push", setup.name, len(lat), n)
	case <-ctx.Done():
		return res, ctx.Err()
	}
	cpu := selfCPU() - cpu0
	srv1, _ := srv.cpu()
	res.CPUPer1k, res.RedisCPUPer1k = per1k(cpu, n), per1k(srv1-srv0, n)
	slices.Sort(lat)
	res.P50Ms, res.P99Ms, res.MaxMs = ms(nearestRank(lat, 0.50)), ms(nearestRank(lat, 0.99)), ms(lat[len(lat)-1])
	return res, nil
}

func nearestRank(sorted []time.Duration, p float64) time.Duration {
	i := int(float64(len(sorted))*p+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
