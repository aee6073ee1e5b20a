package reliability

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/testutil/faultproxy"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/worker"
	"github.com/rs/zerolog"
)

// TestPostgresSerializationFailures: on a PostgreSQL server of the test's
// own where every transaction is SERIALIZABLE, 4 workers (8 jobs at once
// each, batch claims) drain 3,000 jobs while 1,000 of them are pushed
// during the run. Concurrent claims and pushes fail with real
// serialization failures (SQLSTATE 40001, counted in the server's log);
// each is retried: every job runs exactly once, none fails.
func TestPostgresSerializationFailures(t *testing.T) {
	srv := privatePostgres(t, "default_transaction_isolation=serializable")
	cfg := srv.config(t)
	admin := testdb.Open(t, cfg)
	const (
		before, during = 2000, 1000
		workers        = 4
	)
	pushNoops(t, admin, before)
	runs := &runCounter{}
	reg := handlers.NewRegistry()
	reg.Handle(noopClass, runs.handler(2*time.Millisecond))
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	logs := &syncBuffer{}
	var wg sync.WaitGroup
	started := time.Now()
	for range workers {
		opts := faultOptions(8)
		opts.Logger = zerolog.New(logs)
		w, err := worker.New(openQueue(t, cfg), reg, opts)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() { defer wg.Done(); w.Run(ctx) }()
	}
	for i := 0; i < during; i += 10 {
		pushNoops(t, admin, 10)
		time.Sleep(5 * time.Millisecond)
	}
	waitFor(t, 3*time.Minute, "the queue to drain", func() bool {
		// The test's own reads are serializable too, and may fail as well.
		var left int
		err := admin.DB().QueryRow("select count(*) from " + cfg.JobsTable).Scan(&left)
		return err == nil && left == 0
	})
	stop()
	wg.Wait()
	took := time.Since(started)

	if f := failedRows(t, admin.DB(), cfg.FailedTable); len(f) != 0 {
		t.Errorf("%d jobs failed; first: %.300s", len(f), f[0].Exception)
	}
	distinct, twice := runs.summary()
	if distinct != before+during || twice != 0 {
		t.Errorf("%d distinct jobs ran (%d more than once), want %d once each", distinct, twice, before+during)
	}
	failures := strings.Count(srv.log.String(), "could not serialize access")
	if failures == 0 {
		t.Fatal("the server logged no serialization failure: the test tested nothing")
	}
	t.Logf("serializable PostgreSQL: %d workers x 8, %d jobs (%d pushed during the run) in %s; %d serialization failures (40001) retried; every job once, 0 failed; worker log lines about failed calls: %d",
		workers, before+during, during, took.Round(time.Millisecond), failures, strings.Count(logs.String(), "failed"))
}

// TestPostgresIdleInTransactionTimeout: the test's own PostgreSQL ends any
// session idle inside a transaction for 150 ms; a proxy stalls the
// worker's network for 400 ms at random moments, so transactions caught
// mid-way are ended by the server (SQLSTATE 25P03, counted in its log).
// The worker reconnects and retries: every job runs, none fails.
func TestPostgresIdleInTransactionTimeout(t *testing.T) {
	srv := privatePostgres(t, "idle_in_transaction_session_timeout=150")
	cfg := srv.config(t)
	admin := testdb.Open(t, cfg)
	proxy := faultproxy.New(t, fmt.Sprintf("127.0.0.1:%d", srv.port))
	cfg.Port = proxy.Port()
	cfg.RetryAfter = 5
	q := openQueue(t, cfg)
	const n = 1000
	pushNoops(t, admin, n)
	runs := &runCounter{}
	reg := handlers.NewRegistry()
	// Claims and grouped deletes are single autocommitted statements on
	// PostgreSQL; a release is a transaction (delete, insert), so every
	// job is released once to give the stalls transactions to cut into.
	work := runs.handler(3 * time.Millisecond)
	reg.HandleFunc(noopClass, func(ctx context.Context, job *handlers.Job) error {
		err := work(ctx, job)
		if job.Attempts == 1 {
			job.Release(0)
		}
		return err
	})

	stop := make(chan struct{})
	stallsDone := make(chan int)
	go func() {
		stalls := 0
		for {
			select {
			case <-stop:
				proxy.Resume()
				stallsDone <- stalls
				return
			case <-time.After(time.Duration(100+rand.IntN(200)) * time.Millisecond):
			}
			proxy.Stall()
			stalls++
			time.Sleep(400 * time.Millisecond)
			proxy.Resume()
		}
	}()
	logs := &syncBuffer{}
	started := time.Now()
	drainDaemon(t, q, reg, faultOptions(8), 3*time.Minute, logs)
	close(stop)
	stalls := <-stallsDone

	if left := count(t, admin.DB(), "select count(*) from "+cfg.JobsTable); left != 0 {
		t.Errorf("%d jobs left", left)
	}
	if f := failedRows(t, admin.DB(), cfg.FailedTable); len(f) != 0 {
		t.Errorf("%d jobs failed; first: %.300s", len(f), f[0].Exception)
	}
	distinct, twice := runs.summary()
	if distinct != n {
		t.Errorf("%d distinct jobs ran, want %d", distinct, n)
	}
	ended := strings.Count(srv.log.String(), "idle-in-transaction timeout")
	if ended == 0 {
		t.Fatal("the server ended no session for idling in a transaction: the test tested nothing")
	}
	t.Logf("PostgreSQL idle_in_transaction_session_timeout 150 ms, %d network stalls of 400 ms: %d sessions ended by the server (25P03); %d jobs in %s, %d ran twice (each is released once on purpose), 0 failed",
		stalls, ended, n, time.Since(started).Round(time.Millisecond), twice)
}
