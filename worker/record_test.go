package worker

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/store/database"
)

// withRecord is raw (a payload) with the bridge's "laraworker" key set to
// record (raw JSON).
func withRecord(raw []byte, record string) []byte {
	return append(append(bytes.Clone(raw[:len(raw)-1]), `,"laraworker":`...), append([]byte(record), '}')...)
}

// syncPayload is an App\Jobs\Sync job as PHP queues it, without a record.
func syncPayload(t *testing.T, q *database.Queue, podcastID int64) []byte {
	t.Helper()
	uuid := pushSync(t, q, podcastID, nil)
	for _, r := range jobRows(t, q) {
		if strings.Contains(r.Payload, uuid) {
			exec(t, q, fmt.Sprintf("delete from %s where id = ?", q.Config().JobsTable), r.ID)
			return []byte(r.Payload)
		}
	}
	t.Fatalf("no job %s", uuid)
	return nil
}

// A readable record in the shapes PHP and Redis rewrite it to: "stores"
// after queue:retry, the lists after a Redis release.
const readableRecord = `{"v":1,"laravel":"8.83.26","at":1796137927,"class":"App\\Jobs\\Sync","middleware":{},"not_carried":{},` +
	`"unique":null,"delete_when_missing_models":false,"models":{},"failed":false,"stores":[],"errors":{}}`

// TestUnreadableRecordFailsThatJobOnly: a job whose bridge record Go cannot
// read (a newer bridge's version, not an object) is failed with the cause
// and the way back (queue:retry once fixed): never given back to a queue
// no PHP worker may serve, never held in place. The other jobs of its
// class run in the same run, the class is no configuration problem, and
// a batch member's failure is not counted in its batch (its retry would
// find the batch cancelled); retried with a record Go reads, it runs.
func TestUnreadableRecordFailsThatJobOnly(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, q *database.Queue) {
		insertBatch(t, q, fixtureBatchID, 2, fixture(t, "batch.options.txt"))
		newer := withRecord(syncPayload(t, q, 1), `{"v":2,"class":"App\\Jobs\\Sync","stores":{}}`)
		notObject := withRecord(syncPayload(t, q, 2), `"v1"`)
		member := withRecord(fixture(t, "batch-member.json"), `{"v":2}`)
		good := [][]byte{withRecord(syncPayload(t, q, 3), readableRecord), withRecord(syncPayload(t, q, 4), readableRecord)}
		for _, raw := range append([][]byte{newer, notObject, member}, good...) {
			pushRaw(t, q, "default", raw)
		}
		c := newCounter()
		reg := handlers.NewRegistry()
		count := func(ctx context.Context, job *handlers.Job) error { c.add(job); return nil }
		reg.HandleFunc(mwClass, count)
		reg.HandleFunc(`App\Jobs\BatchMemberJob`, count)
		w, logs := newTestWorker(t, q, reg, mwConfig(1), nil)
		runWorker(t, w, 30*time.Second)

		for _, raw := range good {
			if p, _ := payload.Parse(raw); c.count(p.UUID) != 1 {
				t.Errorf("a job of the class with a readable record ran %d times", c.count(p.UUID))
			}
		}
		if rows := jobRows(t, q); len(rows) != 0 {
			t.Errorf("jobs left on the queue: %+v", rows)
		}
		if err := w.Health(); err != nil {
			t.Errorf("Health: %v (an unreadable record is the job's problem, not the class's)", err)
		}
		failed := failedRows(t, q)
		if len(failed) != 3 {
			t.Fatalf("failed jobs %+v, want the three with unreadable records", failed)
		}
		for i, want := range []string{"version 2; this laraworker reads version 1", "want the bridge's metadata object", "version 2"} {
			mustContain(t, "failed_jobs.exception", failed[i].Exception, `LaraWorker\UnreadableBridgeRecordException`, want, "php artisan queue:retry "+failed[i].UUID)
		}
		mustContain(t, "log", logs.String(), "UnreadableBridgeRecordException")
		if b := batchState(t, q, fixtureBatchID); b.PendingJobs != 2 || b.FailedJobs != 0 || b.CancelledAt != nil {
			t.Errorf("batch after its member's unreadable record: %+v, want it untouched", b)
		}

		// Fixed (here: the record rewritten as this laraworker reads it),
		// the failed jobs are retried and run.
		exec(t, q, fmt.Sprintf("update %s set payload = ? where uuid = ?", q.Config().FailedTable),
			string(withRecord(fixture(t, "batch-member.json"), readableRecord)), failed[2].UUID)
		if _, err := q.Retry(context.Background(), []string{failed[2].UUID}, nil); err != nil {
			t.Fatal(err)
		}
		w, _ = newTestWorker(t, q, reg, mwConfig(1), nil)
		runWorker(t, w, 30*time.Second)
		if c.count(failed[2].UUID) != 1 || len(jobRows(t, q)) != 0 {
			t.Errorf("the retried batch member ran %d times, jobs left %+v", c.count(failed[2].UUID), jobRows(t, q))
		}
		if b := batchState(t, q, fixtureBatchID); b.PendingJobs != 1 || b.FailedJobs != 0 || b.CancelledAt != nil {
			t.Errorf("batch after the retried member ran: %+v", b)
		}
	})
}
