package redis

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/worker"
)

// BenchmarkDrain is the worker's whole path per no-op job (claim, parse,
// decode, handler, delete) on Laravel's Redis queue (a private
// redis-server) and, in the same run for the ratio, on the database queue
// (MariaDB, SQLite): b.N jobs pushed in bulk (untimed), then drained by
// one worker that stops when the queue is empty.
//
//	go test ./store/redis -run '^$' -bench Drain -benchtime 20000x
func BenchmarkDrain(b *testing.B) {
	const class = `App\Jobs\BenchNoopJob`
	raw, err := payload.BuildObjectPayload(payload.NewCommand(class, nil, payload.Dispatch{}), payload.BuildOptions{})
	if err != nil {
		b.Fatal(err)
	}
	reg := handlers.NewRegistry()
	reg.Handle(class, handlers.Noop())
	stores := []struct {
		name string
		open func(b *testing.B) (jobqueue.Store, jobqueue.Admin)
	}{
		{"redis", func(b *testing.B) (jobqueue.Store, jobqueue.Admin) {
			e := newEnvOn(b, testdb.Open(b, redisDB(b)), envOptions{})
			return e.s, e.s
		}},
		{"mysql", func(b *testing.B) (jobqueue.Store, jobqueue.Admin) {
			q := testdb.Open(b, testdb.Config(b, appconfig.EngineMySQL))
			return q, q
		}},
		{"sqlite", func(b *testing.B) (jobqueue.Store, jobqueue.Admin) {
			q := testdb.Open(b, testdb.Config(b, appconfig.EngineSQLite))
			return q, q
		}},
	}
	for _, c := range []int{1, 16, 128} {
		for _, st := range stores {
			b.Run(st.name+"/c"+strconv.Itoa(c), func(b *testing.B) {
				store, admin := st.open(b)
				items := make([]jobqueue.PushItem, b.N)
				for i := range items {
					items[i] = jobqueue.PushItem{Payload: raw}
				}
				if err := admin.PushMany(context.Background(), items); err != nil {
					b.Fatal(err)
				}
				w, err := worker.New(store, reg, worker.Config{Sleep: -1, StopWhenEmpty: true, MemoryMB: -1, Concurrency: c})
				if err != nil {
					b.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
				defer cancel()
				b.ResetTimer()
				start := time.Now()
				w.Run(ctx)
				b.StopTimer()
				if st := w.Stats(); st.Done != int64(b.N) {
					b.Fatalf("done %d of %d", st.Done, b.N)
				}
				b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "jobs/s")
			})
		}
	}
}

// redisDB is the database side of the Redis benchmark: failed_jobs and
// job_batches, which no-op jobs never touch.
func redisDB(b *testing.B) appconfig.Config {
	cfg := testdb.Config(b, appconfig.EngineSQLite)
	cfg.ConnectionName = "redis"
	return cfg
}
