package database

import (
	"context"
	"testing"
	"time"

	"github.com/laraworker/laraworker/jobqueue"
)

// The claim and completion paths on each engine, per job, with the
// displayName filter the worker uses. b.N rows are inserted untimed first.
//
//	go test ./laravel -run '^$' -bench . -benchtime 5000x

const benchClass = `App\Jobs\BenchNoopJob`

func benchQueue(b *testing.B, engine string) *Queue {
	b.Helper()
	ctx := context.Background()
	q, err := Open(ctx, engineConfig(b, engine, b.TempDir()), Options{})
	if err != nil {
		b.Skipf("%s not reachable: %v", engine, err)
	}
	if err := q.CreateTables(ctx); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = q.DropTables(context.Background()); q.Close() })
	return q
}

func benchFill(b *testing.B, q *Queue, n int) {
	b.Helper()
	items := make([]jobqueue.PushItem, n)
	for i := range items {
		items[i] = jobqueue.PushItem{Payload: testPayload(newUUID(b), benchClass)}
	}
	for start := 0; start < n; start += 5000 {
		if err := q.PushMany(context.Background(), items[start:min(start+5000, n)]); err != nil {
			b.Fatal(err)
		}
	}
}

func reportRate(b *testing.B, start time.Time) {
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "jobs/s")
}

func BenchmarkClaim(b *testing.B) {
	for _, engine := range allEngines {
		b.Run(engine, func(b *testing.B) {
			q := benchQueue(b, engine)
			opts := jobqueue.ClaimOptions{DisplayNames: []string{benchClass}}
			for _, n := range []int{1, 16, 128} {
				b.Run(map[int]string{1: "one", 16: "batch16", 128: "batch128"}[n], func(b *testing.B) {
					benchFill(b, q, b.N)
					b.ReportAllocs()
					b.ResetTimer()
					start := time.Now()
					for claimed := 0; claimed < b.N; {
						jobs, err := q.Claim(context.Background(), nil, min(n, b.N-claimed), opts)
						if err != nil || len(jobs) == 0 {
							b.Fatalf("claimed %d of %d: %v", claimed, b.N, err)
						}
						claimed += len(jobs)
					}
					reportRate(b, start)
					b.StopTimer()
					if _, err := q.Clear(context.Background(), "default"); err != nil {
						b.Fatal(err)
					}
				})
			}
		})
	}
}

func BenchmarkDelete(b *testing.B) {
	for _, engine := range allEngines {
		b.Run(engine, func(b *testing.B) {
			q := benchQueue(b, engine)
			for _, mode := range []string{"reserved", "many16", "many128"} {
				b.Run(mode, func(b *testing.B) {
					benchFill(b, q, b.N)
					jobs, err := q.Claim(context.Background(), nil, b.N, jobqueue.ClaimOptions{})
					if err != nil || len(jobs) != b.N {
						b.Fatalf("claimed %d of %d: %v", len(jobs), b.N, err)
					}
					size := map[string]int{"reserved": 1, "many16": 16, "many128": 128}[mode]
					// "reserved" is --laravel-exact's deleteReserved transaction.
					q.exact = mode == "reserved"
					defer func() { q.exact = false }()
					b.ReportAllocs()
					b.ResetTimer()
					start := time.Now()
					for i := 0; i < len(jobs); i += size {
						lost, err := q.Delete(context.Background(), jobs[i:min(i+size, len(jobs))])
						if err != nil || len(lost) != 0 {
							b.Fatalf("delete: %d lost, %v", len(lost), err)
						}
					}
					reportRate(b, start)
				})
			}
		})
	}
}
