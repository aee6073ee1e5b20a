package bridgeproto

import (
	"slices"
	"strings"
	"testing"
)

// TestBatchCallbacksDecided: which callbacks and events Laravel's Batch
// runs after an update, per version (spec §3.2, §3.3).
func TestBatchCallbacksDecided(t *testing.T) {
	all := BatchOptions{Then: true, Catch: true, Finally: true, Progress: true, Failure: true}
	allowing := all
	allowing.AllowFailures = true
	for _, c := range []struct {
		name    string
		version string
		success bool
		state   BatchState
		want    string
	}{
		{"success, still pending (8.x: nothing)", "8.83", true, BatchState{TotalJobs: 3, PendingJobs: 2, Options: all}, ""},
		{"success, still pending (10.37.2: progress)", "10.37.2", true, BatchState{TotalJobs: 3, PendingJobs: 2, Options: all}, "progress"},
		{"success, 10.37.1 has no progress", "10.37.1", true, BatchState{TotalJobs: 3, PendingJobs: 2, Options: all}, ""},
		{"last success", "8.83", true, BatchState{TotalJobs: 3, PendingJobs: 0, Options: all}, "then,finally"},
		{"last success, 12.48 finished event", "12.48", true, BatchState{TotalJobs: 3, PendingJobs: 0, Options: all}, "progress,finished,then,finally"},
		{"last success of one-job batch, 13.3 started", "13.3", true, BatchState{TotalJobs: 1, PendingJobs: 0, Options: all}, "started,progress,finished,then,finally"},
		{"13.2 has no started", "13.2", true, BatchState{TotalJobs: 1, PendingJobs: 0, Options: all}, "progress,finished,then,finally"},
		{"success after a failure: pending equals failed", "8.83", true, BatchState{TotalJobs: 3, PendingJobs: 1, FailedJobs: 1, Options: all}, "finally"},
		{"no callbacks declared", "8.83", true, BatchState{TotalJobs: 3, PendingJobs: 0}, ""},
		{"first failure", "8.83", false, BatchState{TotalJobs: 3, PendingJobs: 3, FailedJobs: 1, Options: all}, "catch"},
		{"first failure 12.51 cancels", "12.51", false, BatchState{TotalJobs: 3, PendingJobs: 3, FailedJobs: 1, Options: all}, "canceled,catch"},
		{"first failure allowed 12.51: no cancel", "12.51", false, BatchState{TotalJobs: 3, PendingJobs: 3, FailedJobs: 1, Options: allowing}, "progress,failure,catch"},
		{"failure allowed 12.31: no failure callbacks", "12.31", false, BatchState{TotalJobs: 3, PendingJobs: 3, FailedJobs: 1, Options: allowing}, "progress,catch"},
		{"second failure: no catch", "8.83", false, BatchState{TotalJobs: 3, PendingJobs: 3, FailedJobs: 2, Options: all}, ""},
		{"failure of the last pending job", "8.83", false, BatchState{TotalJobs: 2, PendingJobs: 1, FailedJobs: 1, Options: all}, "catch,finally"},
		{"first processed is a failure, 13.3", "13.3", false, BatchState{TotalJobs: 2, PendingJobs: 2, FailedJobs: 1, Options: all}, "started,canceled,catch"},
	} {
		decide := AfterFailure
		order := AfterFailureOrder
		if c.success {
			decide, order = AfterSuccess, AfterSuccessOrder
		}
		got, err := decide(c.version, c.state)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if strings.Join(got, ",") != c.want {
			t.Errorf("%s: got %v, want %s", c.name, got, c.want)
		}
		if !slices.IsSortedFunc(got, func(a, b string) int { return slices.Index(order, a) - slices.Index(order, b) }) {
			t.Errorf("%s: %v not in Laravel's order", c.name, got)
		}
	}
	if _, err := AfterSuccess("", BatchState{}); err == nil {
		t.Error("no version: want an error")
	}
}

// TestReadBatchOptions reads what PendingBatch stores (8.83, with signed
// closures cut short: only the keys and list sizes matter).
func TestReadBatchOptions(t *testing.T) {
	serialized := `a:5:{s:4:"name";s:5:"batch";s:13:"allowFailures";b:1;s:4:"then";a:1:{i:0;O:47:"Laravel\SerializableClosure\SerializableClosure":0:{}}s:5:"catch";a:0:{}s:7:"finally";a:1:{i:0;s:3:"fn1";}}`
	o, err := ReadBatchOptions([]byte(serialized))
	if err != nil {
		t.Fatal(err)
	}
	want := BatchOptions{AllowFailures: true, Then: true, Finally: true}
	if o != want {
		t.Errorf("got %+v, want %+v", o, want)
	}
	if _, err := ReadBatchOptions([]byte(`s:1:"x";`)); err == nil {
		t.Error("a string: want an error")
	}
}
