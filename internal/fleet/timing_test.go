package fleet

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/store/database"
)

func TestHistogramBuckets(t *testing.T) {
	var h Histogram
	for _, d := range []time.Duration{0, 900 * time.Microsecond, time.Millisecond, 1001 * time.Microsecond, 3 * time.Second, 2 * time.Hour} {
		h.Observe(d)
	}
	if h.Counts[0] != 3 || h.Counts[1] != 1 || h.Counts[bucketOf(3*time.Second)] != 1 || h.Counts[NumBuckets-1] != 1 {
		t.Errorf("counts %v", h.Counts)
	}
	if got, over, ok := h.Quantile(0.5); !ok || over || got != time.Millisecond {
		t.Errorf("p50 = %s %v %v, want at most 1ms", got, over, ok)
	}
	if got, over, _ := h.Quantile(0.99); !over || got != time.Hour {
		t.Errorf("p99 = %s over %v, want above 1h", got, over)
	}
	if got, _, _ := h.Quantile(4.0 / 6); got != 2500*time.Microsecond {
		t.Errorf("the 4th of 6 = %s, want 2.5ms", got)
	}
	if _, _, ok := (Histogram{}).Quantile(0.5); ok {
		t.Error("an empty histogram has a median")
	}
	names := BucketNames()
	if len(names) != NumBuckets || names[0] != "le_1ms" || names[1] != "le_2_5ms" || names[NumBuckets-1] != "gt_1h" {
		t.Errorf("bucket names %v", names)
	}
	if len(timingColumns) != 2*(NumBuckets+1) || timingColumns[NumBuckets+1] != "wait_le_1ms" || timingColumns[len(timingColumns)-1] != "wait_ms" {
		t.Errorf("timing columns %v", timingColumns)
	}
}

// TestCountsTimesAndRecent: a run noted by Ran and written by Written
// adds its runtime and wait (from available_at) to the minute's row and
// lists the job in the ring; a run whose outcome never comes is
// forgotten after pendingKeep.
func TestCountsTimesAndRecent(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	c := NewCounts(func() time.Time { return now })
	job := jobqueue.JobRow{ID: 7, Queue: "high", Attempts: 2, AvailableAt: now.Unix() - 3,
		Payload: []byte(`{"uuid":"u-7","displayName":"App\\Jobs\\A"}`)}
	c.Ran(job, now.Add(-time.Second), 40*time.Millisecond)
	c.Written(job, jobqueue.OutcomeFailed)
	c.Ran(jobqueue.JobRow{ID: 8}, now.Add(-2*time.Hour), time.Second) // never written
	rows := c.take()
	if len(rows) != 1 || rows[0].Failed != 1 || rows[0].Run.Count() != 1 || rows[0].Run.Counts[bucketOf(40*time.Millisecond)] != 1 ||
		rows[0].Wait.Counts[bucketOf(2*time.Second)] != 1 || rows[0].Wait.TotalMS != 2000 {
		t.Fatalf("history rows %+v", rows)
	}
	recent := c.takeRecent()
	if len(recent) != 1 || recent[0] != (RecentJob{Slot: 0, JobID: 7, UUID: "u-7", Queue: "high", Class: `App\Jobs\A`, Outcome: OutcomeFailed,
		Attempt: 2, FinishedAt: now.Unix() - 1, RunMS: 40, WaitMS: 2000}) {
		t.Fatalf("recent %+v", recent)
	}
	if len(c.pending) != 0 {
		t.Errorf("runs pending after takeRecent: %v", c.pending)
	}
	if again := c.takeRecent(); len(again) != 0 {
		t.Errorf("written twice: %+v", again)
	}
	c.putBackRecent(recent)
	if again := c.takeRecent(); len(again) != 1 {
		t.Errorf("a failed write's jobs are not written again: %+v", again)
	}
	for i := range RecentPerWorker + 5 {
		j := jobqueue.JobRow{ID: int64(100 + i), Queue: "q"}
		c.Ran(j, now, 0)
		c.Written(j, jobqueue.OutcomeDone)
	}
	ring := c.takeRecent()
	if len(ring) != RecentPerWorker || ring[0].JobID != 105 || ring[len(ring)-1].JobID != 100+RecentPerWorker+4 {
		t.Errorf("the ring keeps %d jobs from %d to %d", len(ring), ring[0].JobID, ring[len(ring)-1].JobID)
	}
}

// TestTimingsAndRecentRoundTrip: histograms several workers add to one
// minute sum up in ClassStats; the recent ring's rows replace each other
// by slot, list newest first and are pruned.
func TestTimingsAndRecentRoundTrip(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, q *database.Queue) {
		s, ctx := newStore(t, q), context.Background()
		var run, wait Histogram
		run.Observe(3 * time.Millisecond)
		run.Observe(200 * time.Millisecond)
		wait.Observe(4 * time.Second)
		row := HistoryRow{Minute: 600, Queue: "default", Class: `App\Jobs\A`, Done: 2, Run: run, Wait: wait}
		for range 2 {
			if err := s.AddHistory(ctx, []HistoryRow{row, {Minute: 660, Queue: "default", Class: `App\Jobs\A`, Failed: 1, Run: run}}); err != nil {
				t.Fatal(err)
			}
		}
		stats, err := s.ClassStats(ctx, 0)
		if err != nil || len(stats) != 1 {
			t.Fatalf("ClassStats: %+v %v", stats, err)
		}
		st := stats[0]
		if !st.Timed || st.Done != 4 || st.Failed != 2 || st.Run.Count() != 8 || st.Wait.Count() != 2 || st.Run.TotalMS != 4*203 ||
			st.Run.Counts[bucketOf(3*time.Millisecond)] != 4 {
			t.Fatalf("stats %+v", st)
		}
		if p50, _, _ := st.Run.Quantile(0.5); p50 != 5*time.Millisecond {
			t.Errorf("p50 %s", p50)
		}
		if stats, _ = s.ClassStats(ctx, 660); len(stats) != 1 || stats[0].Done != 0 || stats[0].Failed != 2 {
			t.Errorf("ClassStats since 660: %+v", stats)
		}

		jobs := []RecentJob{{Slot: 0, JobID: 1, UUID: "a", Queue: "q", Class: "C", Outcome: OutcomeDone, Attempt: 1, FinishedAt: 100, RunMS: 5, WaitMS: 1},
			{Slot: 1, JobID: 2, UUID: "b", Queue: "q", Class: "D", Outcome: OutcomeFailed, Attempt: 3, FinishedAt: 101, RunMS: 6}}
		if err := s.PutRecent(ctx, "go:h:1:2", jobs); err != nil {
			t.Fatal(err)
		}
		if err := s.PutRecent(ctx, "go:h:1:2", []RecentJob{{Slot: 0, JobID: 3, Queue: "q", Class: "C", Outcome: OutcomeReleased, FinishedAt: 102}}); err != nil {
			t.Fatal(err)
		}
		got, err := s.Recent(ctx, 10, "")
		if err != nil || len(got) != 2 || got[0].JobID != 3 || got[1].JobID != 2 || got[1].Worker != "go:h:1:2" || got[1].Attempt != 3 || got[1].Outcome != OutcomeFailed {
			t.Fatalf("recent %+v %v", got, err)
		}
		if got, _ = s.Recent(ctx, 10, "D"); len(got) != 1 || got[0].JobID != 2 {
			t.Errorf("recent of class D: %+v", got)
		}
		if err := s.Prune(ctx, time.Unix(102, 0).Add(RecentKeep)); err != nil {
			t.Fatal(err)
		}
		if got, _ = s.Recent(ctx, 10, ""); len(got) != 1 || got[0].JobID != 3 {
			t.Errorf("after pruning: %+v", got)
		}
	})
}

// TestAddsTimingColumnsToOldHistory: on the history table of an earlier
// version (no timing columns) counts are still written; CreateTables adds
// the columns, and a run twice is harmless.
func TestAddsTimingColumnsToOldHistory(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, q *database.Queue) {
		s, ctx := newStore(t, q), context.Background()
		d := q.Dialect()
		if _, err := q.DB().Exec("drop table " + d.Quote(s.Tables().History)); err != nil {
			t.Fatal(err)
		}
		// The history as the first version created it.
		old := createStatements(d, s.Tables())[2]
		for _, c := range timingColumns {
			old = strings.Replace(old, d.Quote(c)+" "+typesFor(d.Name()).bigint+" not null default 0, ", "", 1)
		}
		if strings.Contains(old, "run_") {
			t.Fatalf("old DDL still has timing columns: %s", old)
		}
		if _, err := q.DB().Exec(old); err != nil {
			t.Fatal(err)
		}
		s.schema.forget()
		if ok, err := s.TimingColumns(ctx); err != nil || ok {
			t.Fatalf("TimingColumns on the old table: %v %v", ok, err)
		}
		var run Histogram
		run.Observe(time.Second)
		if err := s.AddHistory(ctx, []HistoryRow{{Minute: 60, Queue: "q", Class: "C", Done: 1, Run: run}}); err != nil {
			t.Fatalf("writing counts to the old table: %v", err)
		}
		if stats, err := s.ClassStats(ctx, 0); err != nil || len(stats) != 1 || stats[0].Done != 1 || stats[0].Timed {
			t.Fatalf("stats of the old table: %+v %v", stats, err)
		}
		for range 2 {
			if err := s.CreateTables(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if ok, err := s.TimingColumns(ctx); err != nil || !ok {
			t.Fatalf("TimingColumns after CreateTables: %v %v", ok, err)
		}
		if err := s.AddHistory(ctx, []HistoryRow{{Minute: 60, Queue: "q", Class: "C", Done: 1, Run: run}}); err != nil {
			t.Fatal(err)
		}
		stats, err := s.ClassStats(ctx, 0)
		if err != nil || len(stats) != 1 || stats[0].Done != 2 || !stats[0].Timed || stats[0].Run.Count() != 1 {
			t.Fatalf("stats after the migration: %+v %v", stats, err)
		}
	})
}
