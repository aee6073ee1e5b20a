package snapshot

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/store/database"
)

// sizesOf is the summary's counts in the shape of database.Queue.Sizes.
func sizesOf(sum *Summary) []jobqueue.QueueSize {
	var out []jobqueue.QueueSize
	for _, q := range sum.Queues {
		out = append(out, jobqueue.QueueSize{Queue: q.Queue, Ready: q.Ready, Delayed: q.Delayed, Reserved: q.Reserved, Expired: q.Expired})
	}
	return out
}

// assertMatches compares the summary with the full-scan counts of `size`.
func assertMatches(t *testing.T, q *database.Queue, s *Snapshot, when string) {
	t.Helper()
	want, err := q.Sizes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := sizesOf(s.Current())
	if !slices.Equal(got, want) {
		t.Fatalf("%s: summary %+v, tables %+v", when, got, want)
	}
}

// TestJobCacheFollowsTheTable changes the jobs table in every way the
// cache must follow and checks its counts against a full scan after
// each: with budgets small enough that the tail, the front checks and
// the rolling pass each take several refreshes.
func TestJobCacheFollowsTheTable(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, q *database.Queue) {
		ctx := context.Background()
		s := newTestSnapshot(t, q)
		sqlSource(s).budget = jobBudget{tailRows: 7, frontRows: 5, rollingRows: 6}
		s.failedBudget = failedBudget{tailRows: 7, rollingRows: 6}
		now := time.Now().Unix()
		var items []jobqueue.PushItem
		for i := range 40 {
			item := jobqueue.PushItem{Queue: "default", Payload: fixture(t, "noop", fmt.Sprintf(`App\Jobs\Job%d`, i%3))}
			if i%4 == 0 {
				item.Queue = "high"
			}
			if i%5 == 0 {
				item.Delay = time.Hour
			}
			items = append(items, item)
		}
		if err := q.PushMany(ctx, items); err != nil {
			t.Fatal(err)
		}
		refreshUntil := func(when string, n int) {
			t.Helper()
			for range n {
				s.refreshOnce(ctx)
			}
			assertMatches(t, q, s, when)
		}
		refreshUntil("after the first pushes", 12)
		if got := s.Current().Classes; len(got) != 6 {
			t.Errorf("classes by queue: %+v", got)
		}

		// Claims: the lowest ready ids reserved, some deleted (done), one
		// reservation expired.
		execSQL(t, q, "update {jobs} set reserved_at = ?, attempts = attempts + 1 where id in (select id from (select id from {jobs} where queue = 'default' and available_at <= ? order by id limit 4) x)", now, now)
		execSQL(t, q, "delete from {jobs} where id in (select id from (select id from {jobs} where queue = 'high' and available_at <= ? order by id limit 3) x)", now)
		execSQL(t, q, "update {jobs} set reserved_at = ? where id = (select id from (select min(id) as id from {jobs} where reserved_at is not null) x)", now-1000)
		refreshUntil("after claims", 2)

		// A delayed row deleted in the middle: only the rolling pass sees it.
		execSQL(t, q, "delete from {jobs} where id = (select id from (select max(id) as id from {jobs} where available_at > ?) x)", now+60)
		refreshUntil("after a delayed row was deleted", 12)

		// A row committed late, below ids the tail has passed (here: an id
		// deleted and inserted again).
		var id int64
		if err := q.DB().QueryRow("select max(id) from " + q.Dialect().Quote(q.Config().JobsTable) + " where reserved_at is null").Scan(&id); err != nil {
			t.Fatal(err)
		}
		execSQL(t, q, "delete from {jobs} where id = ?", id)
		refreshUntil("after a ready row far from the front was deleted", 12)
		execSQL(t, q, "insert into {jobs} (id, queue, payload, attempts, available_at, created_at) values (?, 'late', ?, 0, ?, ?)", id, string(fixture(t, "noop", "")), now, now)
		refreshUntil("after a late commit", 12)

		// queue:clear on high.
		if _, err := q.Clear(ctx, "high"); err != nil {
			t.Fatal(err)
		}
		refreshUntil("after queue:clear", 1)

		// Many new rows at once, read over several refreshes.
		if err := q.PushMany(ctx, items); err != nil {
			t.Fatal(err)
		}
		refreshUntil("after a second burst", 12)
	})
}

// TestFailedCacheFollowsTheTable: failed rows added, forgotten by
// another process (found by the rolling pass) and pruned (found by the
// lowest id) are counted as failed_jobs holds them; the per-minute
// failure counts keep what was seen.
func TestFailedCacheFollowsTheTable(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, q *database.Queue) {
		ctx := context.Background()
		s := newTestSnapshot(t, q)
		s.failedBudget = failedBudget{tailRows: 4, rollingRows: 3}
		at := time.Now().UTC().Add(-time.Minute).Format(time.DateTime)
		for i := range 10 {
			execSQL(t, q, "insert into {failed} (uuid, connection, queue, payload, exception, failed_at) values (?, 'database', ?, ?, 'E: x', ?)",
				fmt.Sprintf("u-%d", i), []string{"a", "b"}[i%2], string(fixture(t, "noop", fmt.Sprintf(`App\Jobs\F%d`, i%3))), at)
		}
		check := func(when string, want int64) {
			t.Helper()
			if got := s.Current().FailedTotal; got != want {
				t.Fatalf("%s: %d failed jobs counted, want %d", when, got, want)
			}
		}
		for range 3 {
			s.refreshOnce(ctx)
		}
		check("after the first reads", 10)
		if ids, _ := s.FailedIDs(FailedFilter{Class: `App\Jobs\F1`, Queue: "b"}, 0, 100); len(ids) != 2 {
			t.Errorf("class F1 on queue b: %v", ids)
		}
		if _, err := q.Forget(ctx, "u-5"); err != nil {
			t.Fatal(err)
		}
		for range 5 {
			s.refreshOnce(ctx)
		}
		check("after a forget by another process", 9)
		if _, err := q.PruneFailed(ctx, -time.Hour); err != nil { // everything
			t.Fatal(err)
		}
		s.refreshOnce(ctx)
		check("after prune-failed", 0)
		var perMinute int64
		for _, byClass := range s.failed.perMinute {
			for _, n := range byClass {
				perMinute += n
			}
		}
		if perMinute != 10 {
			t.Errorf("failures per minute add up to %d, want the 10 seen", perMinute)
		}
	})
}
