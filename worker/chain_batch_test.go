package worker

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/store/database"
)

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "payloads", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestChainRunsInOrderAndPushesPHPsNextLink runs a 3-link chain dispatched
// by real Laravel: every link runs in order on the chain's queue, and the
// row Go pushes for link 2 carries the command PHP's
// dispatchNextJobInChain would have written.
func TestChainRunsInOrderAndPushesPHPsNextLink(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, q *database.Queue) {
		var steps []string
		var secondCommand string
		reg := handlers.NewRegistry()
		reg.HandleFunc(`App\Jobs\ChainLinkJob`, func(_ context.Context, job *handlers.Job) error {
			var cmd struct {
				Step  int64  `php:"step"`
				Label string `php:"label"`
			}
			if err := job.Decode(&cmd); err != nil {
				return err
			}
			steps = append(steps, fmt.Sprintf("%d:%s@%s", cmd.Step, cmd.Label, job.Queue))
			if cmd.Step == 2 {
				secondCommand = job.Payload.Data.Command
			}
			return nil
		})
		pushRaw(t, q, "chains", fixture(t, "chain.json"))
		opts := testConfig()
		opts.Queues = []string{"chains"}
		opts.Concurrency = 1
		w, _ := newTestWorker(t, q, reg, opts, nil)
		runWorker(t, w, 30*time.Second)
		if got := strings.Join(steps, " "); got != "1:first@chains 2:second@chains 3:third@chains" {
			t.Fatalf("chain ran as %q", got)
		}
		if want := string(fixture(t, "chain-next.reencoded.command.txt")); secondCommand != want {
			t.Fatalf("link 2 command differs from PHP's\n got: %s\nwant: %s", secondCommand, want)
		}
		if rows := jobRows(t, q); len(rows) != 0 {
			t.Fatalf("left: %+v", rows)
		}
	})
}

func TestAFailedLinkStopsTheChain(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, q *database.Queue) {
		ran := 0
		reg := handlers.NewRegistry()
		reg.HandleFunc(`App\Jobs\ChainLinkJob`, func(context.Context, *handlers.Job) error {
			ran++
			return errors.New("link broke")
		})
		pushRaw(t, q, "chains", fixture(t, "chain-catch.json"))
		opts := testConfig()
		opts.Queues = []string{"chains"}
		w, _ := newTestWorker(t, q, reg, opts, nil)
		runWorker(t, w, 30*time.Second)
		if ran != 1 || len(jobRows(t, q)) != 0 {
			t.Fatalf("ran %d, rows %d: a failed link must stop the chain", ran, len(jobRows(t, q)))
		}
		failed := failedRows(t, q)
		if len(failed) != 1 {
			t.Fatalf("failed %d", len(failed))
		}
		mustContain(t, "exception", failed[0].Exception, "link broke", "\n\nNext LaraWorker\\ChainStoppedException: ", "catch callback(s) are PHP closures that did not run")
	})
}

// insertBatch writes a job_batches row as Laravel's DatabaseBatchRepository
// does (options base64-encoded on PostgreSQL).
func insertBatch(t *testing.T, q *database.Queue, id string, total int, options []byte) {
	t.Helper()
	opts := string(options)
	if q.Dialect().Name() == appconfig.EnginePgSQL {
		opts = base64.StdEncoding.EncodeToString(options)
	}
	exec(t, q, fmt.Sprintf("insert into %s (id, name, total_jobs, pending_jobs, failed_jobs, failed_job_ids, options, cancelled_at, created_at, finished_at) values (?, '', ?, ?, 0, '[]', ?, null, ?, null)", q.Config().BatchesTable),
		id, total, total, opts, time.Now().Unix())
}

func batchState(t *testing.T, q *database.Queue, id string) jobqueue.Batch {
	t.Helper()
	b, err := q.FindBatch(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestBatchCountersMatchLaravels(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, q *database.Queue) {
		const batchID = "a35820df-95af-46d7-b2c8-42622312a3de" // in the fixtures' commands
		insertBatch(t, q, batchID, 2, fixture(t, "batch.options.txt"))
		reg := handlers.NewRegistry()
		reg.HandleFunc(`App\Jobs\BatchMemberJob`, func(context.Context, *handlers.Job) error { return nil })
		pushRaw(t, q, "", fixture(t, "batch-member.json"))
		pushRaw(t, q, "", fixture(t, "batch-member-2.json"))
		w, _ := newTestWorker(t, q, reg, testConfig(), nil)
		runWorker(t, w, 30*time.Second)
		b := batchState(t, q, batchID)
		if b.PendingJobs != 0 || b.FailedJobs != 0 || b.FinishedAt == nil || b.CancelledAt != nil {
			t.Fatalf("batch after two successes: %+v", b)
		}
	})
}

func TestAFailedBatchMemberCancelsTheBatch(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, q *database.Queue) {
		const batchID = "a35820df-95af-46d7-b2c8-42622312a3de"
		insertBatch(t, q, batchID, 2, fixture(t, "batch.options.txt"))
		reg := handlers.NewRegistry()
		reg.HandleFunc(`App\Jobs\BatchMemberJob`, func(context.Context, *handlers.Job) error { return errors.New("member failed") })
		p, _ := payload.Parse(fixture(t, "batch-member.json"))
		pushRaw(t, q, "", fixture(t, "batch-member.json"))
		w, _ := newTestWorker(t, q, reg, testConfig(), nil)
		runWorker(t, w, 30*time.Second)
		b := batchState(t, q, batchID)
		if b.PendingJobs != 2 || b.FailedJobs != 1 || len(b.FailedJobIDs) != 1 || b.FailedJobIDs[0] != p.UUID || b.CancelledAt == nil {
			t.Fatalf("batch after a failure: %+v", b)
		}
		// The other member then finds the batch cancelled: it is deleted
		// without running, and counted as PHP's early return would be.
		ran := false
		reg2 := handlers.NewRegistry()
		reg2.HandleFunc(`App\Jobs\BatchMemberJob`, func(context.Context, *handlers.Job) error { ran = true; return nil })
		pushRaw(t, q, "", fixture(t, "batch-member-2.json"))
		w, _ = newTestWorker(t, q, reg2, testConfig(), nil)
		runWorker(t, w, 30*time.Second)
		if ran || len(jobRows(t, q)) != 0 {
			t.Fatalf("a cancelled batch's job must be deleted without running (ran %v)", ran)
		}
		if b := batchState(t, q, batchID); b.PendingJobs != 1 || b.FailedJobs != 1 {
			t.Fatalf("batch after the cancelled member: %+v", b)
		}
	})
}

// TestFailuresBeforeOrAroundTheRunCountInTheBatch: a batch member that
// fails without its handler deciding (attempts already exhausted, a
// timeout on its last try) is counted in its batch, as Laravel's
// failed() counts it: the batch is cancelled, not left pending forever.
func TestFailuresBeforeOrAroundTheRunCountInTheBatch(t *testing.T) {
	t.Parallel() // waits on real time: beside the other waiting tests
	testdb.ForEach(t, func(t *testing.T, q *database.Queue) {
		for _, c := range []struct {
			name    string
			raw     func() []byte
			prepare func(id int64)
		}{
			{"max attempts", func() []byte { return fixture(t, "batch-member.json") }, func(id int64) {
				exec(t, q, fmt.Sprintf("update %s set attempts = 1 where id = ?", q.Config().JobsTable), id)
			}},
			{"timed out", func() []byte {
				return bytes.Replace(fixture(t, "batch-member.json"), []byte(`"timeout":null`), []byte(`"timeout":1`), 1)
			}, func(int64) {}},
		} {
			t.Run(c.name, func(t *testing.T) {
				for _, table := range []string{q.Config().JobsTable, q.Config().FailedTable, q.Config().BatchesTable} {
					exec(t, q, "delete from "+table)
				}
				insertBatch(t, q, fixtureBatchID, 2, fixture(t, "batch.options.txt"))
				reg := handlers.NewRegistry()
				reg.HandleFunc(`App\Jobs\BatchMemberJob`, func(ctx context.Context, _ *handlers.Job) error {
					<-ctx.Done() // until its timeout
					return ctx.Err()
				})
				raw := c.raw()
				p, _ := payload.Parse(raw)
				c.prepare(pushRaw(t, q, "", raw))
				w, _ := newTestWorker(t, q, reg, testConfig(), nil)
				runWorker(t, w, 30*time.Second)
				if f := failedRows(t, q); len(f) != 1 || f[0].UUID != p.UUID {
					t.Fatalf("failed jobs %+v", f)
				}
				b := batchState(t, q, fixtureBatchID)
				if b.PendingJobs != 2 || b.FailedJobs != 1 || !slices.Equal(b.FailedJobIDs, []string{p.UUID}) || b.CancelledAt == nil {
					t.Fatalf("batch after a member's failure: %+v", b)
				}
			})
		}
	})
}

func TestBatchesWithPHPCallbacksAreLeftToPHP(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, q *database.Queue) {
		member := fixture(t, "batch-callbacks-member.json")
		p, _ := payload.Parse(member)
		cmd, err := payload.DecodeCommand(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		batchID := *cmd.Queueable().BatchID
		insertBatch(t, q, batchID, 3, fixture(t, "batch-callbacks.options.txt"))
		ran := false
		reg := handlers.NewRegistry()
		reg.HandleFunc(p.DisplayName, func(context.Context, *handlers.Job) error { ran = true; return nil })
		pushRaw(t, q, "batches", member)
		opts := testConfig()
		opts.Queues = []string{"batches"}
		w, _ := newTestWorker(t, q, reg, opts, nil)
		runWorker(t, w, 30*time.Second)
		rows := jobRows(t, q)
		if ran || len(rows) != 1 || rows[0].Attempts != 0 || rows[0].ReservedAt.Valid {
			t.Fatalf("a job of a batch with then/catch/finally closures must be left untouched for PHP: ran %v rows %+v", ran, rows)
		}
		if b := batchState(t, q, batchID); b.PendingJobs != 3 {
			t.Fatalf("batch counters changed: %+v", b)
		}
	})
}
