package database

import (
	"fmt"
	"testing"
)

func (e *testEnv) insertBatch(t *testing.T, id string, total int) {
	t.Helper()
	e.exec(t, fmt.Sprintf("insert into %s (id, name, total_jobs, pending_jobs, failed_jobs, failed_job_ids, options, cancelled_at, created_at, finished_at) values (?, ?, ?, ?, 0, '[]', ?, null, ?, null)",
		e.quoted(e.cfg.BatchesTable)), id, "b", total, total, `a:1:{s:13:"allowFailures";b:0;}`, e.clock.Unix())
}

func (e *testEnv) rawFailedIDs(t *testing.T, id string) string {
	t.Helper()
	var s string
	if err := e.q.db.QueryRowContext(e.ctx, e.q.d.Rebind("select failed_job_ids from "+e.quoted(e.cfg.BatchesTable)+" where id = ?"), id).Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestBatches(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		now := e.clock.Unix()
		e.insertBatch(t, "b1", 3)
		c, err := e.q.RecordBatchFailure(e.ctx, "b1", "u1", false)
		if err != nil || c.FailedJobs != 1 || c.PendingJobs != 3 {
			t.Fatalf("failure: %+v %v", c, err)
		}
		b, err := e.q.FindBatch(e.ctx, "b1")
		if err != nil || !b.Cancelled() || *b.CancelledAt != now || !b.Finished() || fmt.Sprint(b.FailedJobIDs) != "[u1]" {
			t.Fatalf("after first failure: %+v %v", b, err)
		}
		if cancelled, _ := e.q.BatchCancelled(e.ctx, "b1"); !cancelled {
			t.Fatal("not cancelled")
		}
		if _, err := e.q.RecordBatchFailure(e.ctx, "b1", "u2", false); err != nil {
			t.Fatal(err)
		}
		if _, err := e.q.RecordBatchFailure(e.ctx, "b1", "u1", false); err != nil {
			t.Fatal(err)
		}
		if raw := e.rawFailedIDs(t, "b1"); raw != `["u1","u2"]` {
			t.Fatalf("failed_job_ids %s", raw)
		}
		// A retried job succeeding removes its uuid.
		c, err = e.q.RecordBatchSuccess(e.ctx, "b1", "u1")
		if err != nil || c.PendingJobs != 2 || c.FailedJobs != 3 {
			t.Fatalf("success: %+v %v", c, err)
		}
		if raw := e.rawFailedIDs(t, "b1"); raw != `["u2"]` {
			t.Fatalf("failed_job_ids %s", raw)
		}

		// allowFailures: no cancel; finishing sets finished_at. failed_jobs is
		// never decremented (Laravel), so pending - failed ends at -1.
		e.insertBatch(t, "b2", 2)
		if _, err := e.q.RecordBatchFailure(e.ctx, "b2", "x", true); err != nil {
			t.Fatal(err)
		}
		if b, _ := e.q.FindBatch(e.ctx, "b2"); b.Cancelled() || b.Finished() {
			t.Fatalf("allowFailures batch: %+v", b)
		}
		e.clock.Set(e.clock.Now().Add(9e9))
		if _, err := e.q.RecordBatchSuccess(e.ctx, "b2", "x"); err != nil {
			t.Fatal(err)
		}
		if raw := e.rawFailedIDs(t, "b2"); raw != `[]` {
			t.Fatalf("failed_job_ids %s", raw)
		}
		c, err = e.q.RecordBatchSuccess(e.ctx, "b2", "y")
		if err != nil || c.PendingJobs != 0 || c.FailedJobs != 1 || c.AllJobsHaveRanExactlyOnce() {
			t.Fatalf("last success: %+v %v", c, err)
		}
		b, _ = e.q.FindBatch(e.ctx, "b2")
		if b.FinishedAt == nil || *b.FinishedAt != now+9 || string(b.Options) != `a:1:{s:13:"allowFailures";b:0;}` {
			t.Fatalf("finished batch: %+v", b)
		}
		if _, err := e.q.RecordBatchSuccess(e.ctx, "missing", "x"); err == nil {
			t.Fatal("unknown batch accepted")
		}
	})
}

// TestDecodePHPList: the failed_job_ids column as json_decode(..., true)
// reads it; json_encode's side is internal/phpjson's.
func TestDecodePHPList(t *testing.T) {
	if l, err := decodePHPList([]byte(`["a","b"]`)); err != nil || fmt.Sprint(l) != "[a b]" {
		t.Errorf("list form: %v %v", l, err)
	}
	if l, err := decodePHPList([]byte(`{"0":"a","2":"b"}`)); err != nil || fmt.Sprint(l) != "[a b]" {
		t.Errorf("object form: %v %v", l, err)
	}
	for _, empty := range []string{`[]`, `{}`, ``, `null`} {
		if l, err := decodePHPList([]byte(empty)); err != nil || len(l) != 0 {
			t.Errorf("%q: %v %v", empty, l, err)
		}
	}
	if _, err := decodePHPList([]byte(`[1]`)); err == nil {
		t.Error("a list of numbers: want an error")
	}
}

func TestUTF8LikePHP(t *testing.T) {
	// Right-hand sides are PHP 8.2's mb_convert_encoding($in, 'UTF-8').
	cases := map[string]string{
		"a\xff\xfeb\xe2\x82c\xc3": "a??b?c?",
		"\xe0\x80x":               "??x",
		"\xf0\x9f\x98x":           "?x",
		"\xed\xa0\x80x":           "???x",
		"\xc0\xafx":               "??x",
		"\xf4\x90\x80\x80x":       "????x",
		"\x80\x80x":               "??x",
		"\xf0\x9f\x98\x80x":       "😀x",
		"\xf5x":                   "?x",
	}
	for in, want := range cases {
		if got := utf8OrQuestionMarks(in); got != want {
			t.Errorf("%q -> %q, want %q", in, got, want)
		}
	}
}
