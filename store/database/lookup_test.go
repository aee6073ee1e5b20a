package database

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/laraworker/laraworker/jobqueue"
)

// TestFindJob: a job is found by id and by its payload's uuid, reserved or
// not; a payload that only quotes the uuid in its data is not the job;
// unknown ids and uuids are ErrJobNotFound.
func TestFindJob(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		now := e.clock.Unix()
		uuid := newUUID(t)
		quoting := strings.Replace(string(testPayload(newUUID(t), `App\Jobs\Other`)), `"command":`, `"note":{"uuid":"`+uuid+`"},"command":`, 1)
		other := e.insertRow(t, row{queue: "default", payload: []byte(quoting), availableAt: now, createdAt: now})
		id := e.insertRow(t, row{queue: "high", payload: testPayload(uuid, `App\Jobs\Wanted`), attempts: 2, reservedAt: i64(now), availableAt: now - 5, createdAt: now - 9})
		j, err := e.q.FindJob(e.ctx, id)
		if err != nil || j.ID != id || j.Queue != "high" || j.Attempts != 2 || j.ReservedAt == nil || *j.ReservedAt != now ||
			j.AvailableAt != now-5 || j.CreatedAt != now-9 || !strings.Contains(string(j.Payload), `App\\Jobs\\Wanted`) {
			t.Fatalf("FindJob(%d) = %+v, %v", id, j, err)
		}
		if j, err = e.q.FindJobByUUID(e.ctx, uuid); err != nil || j.ID != id {
			t.Fatalf("FindJobByUUID = %d, %v; want %d (not %d, which only quotes it)", j.ID, err, id, other)
		}
		for _, bad := range []string{newUUID(t), "x%", ""} {
			if _, err := e.q.FindJobByUUID(e.ctx, bad); !errors.Is(err, jobqueue.ErrJobNotFound) {
				t.Errorf("FindJobByUUID(%q): %v, want ErrJobNotFound", bad, err)
			}
		}
		if _, err := e.q.FindJob(e.ctx, id+100); !errors.Is(err, jobqueue.ErrJobNotFound) {
			t.Errorf("FindJob of a missing id: %v", err)
		}
	})
}

// TestListAndCancelBatches: batches list highest id first, page below an
// id, and cancel sets cancelled_at and finished_at as Batch::cancel().
func TestListAndCancelBatches(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		for i := 1; i <= 5; i++ {
			e.insertBatch(t, fmt.Sprintf("9a%02d", i), i)
		}
		got, err := e.q.ListBatches(e.ctx, "", 3)
		if err != nil || len(got) != 3 || got[0].ID != "9a05" || got[2].ID != "9a03" || got[0].TotalJobs != 5 {
			t.Fatalf("first page: %+v %v", got, err)
		}
		got, err = e.q.ListBatches(e.ctx, "9a03", 3)
		if err != nil || len(got) != 2 || got[0].ID != "9a02" || got[1].ID != "9a01" {
			t.Fatalf("second page: %+v %v", got, err)
		}
		e.clock.Set(e.clock.Now().Add(7e9))
		if err := e.q.CancelBatch(e.ctx, "9a02"); err != nil {
			t.Fatal(err)
		}
		b, _ := e.q.FindBatch(e.ctx, "9a02")
		if b.CancelledAt == nil || b.FinishedAt == nil || *b.CancelledAt != e.clock.Unix() || *b.FinishedAt != e.clock.Unix() {
			t.Fatalf("cancelled batch %+v", b)
		}
		if err := e.q.CancelBatch(e.ctx, "nope"); !errors.Is(err, jobqueue.ErrBatchNotFound) {
			t.Fatalf("cancel of an unknown batch: %v", err)
		}
	})
}
