package database

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/jobqueue"
)

func claimOne(t *testing.T, e *testEnv, queue string) *jobqueue.JobRow {
	t.Helper()
	j, err := e.q.claimOne(e.ctx, []string{queue}, jobqueue.ClaimOptions{})
	if err != nil || j == nil {
		t.Fatalf("claim: %v %v", j, err)
	}
	return j
}

func TestReleaseCopiesRow(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		now := e.clock.Unix()
		payload := testPayload(newUUID(t), `App\Jobs\Ünïcode/Slash`)
		payload = append(payload[:len(payload)-1], []byte(`,"x":"\u0000 raw é"}`)...)
		id := e.insertRow(t, row{queue: "mail", payload: payload, attempts: 2, availableAt: now - 100, createdAt: now - 100})
		j := claimOne(t, e, "mail")
		e.clock.Set(e.clock.Now().Add(7 * time.Second))
		newID, err := e.q.release(e.ctx, *j, 30*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		all := e.allJobs(t)
		if len(all) != 1 || all[0].ID != newID || newID <= id {
			t.Fatalf("rows after release: %+v (new id %d)", all, newID)
		}
		r := all[0]
		if r.Queue != "mail" || r.Attempts != 3 || r.ReservedAt != nil || r.AvailableAt != now+7+30 || r.CreatedAt != now+7 || !bytes.Equal(r.Payload, payload) {
			t.Fatalf("released row: %+v payload %q", r, r.Payload)
		}
		// Unlike Laravel's, the release writes nothing when the row is gone
		// (another worker reclaimed and finished it): a copy would run a
		// finished job again.
		e.clock.Set(e.clock.Now().Add(30 * time.Second))
		j2 := claimOne(t, e, "mail")
		e.exec(t, "delete from "+e.quoted(e.cfg.JobsTable))
		if _, err := e.q.release(e.ctx, *j2, 0); !errors.Is(err, jobqueue.ErrReservationLost) {
			t.Fatalf("release of a vanished row: %v, want ErrReservationLost", err)
		}
		if all := e.allJobs(t); len(all) != 0 {
			t.Fatalf("release of a vanished row inserted a copy: %+v", all)
		}
	})
}

func TestFail(t *testing.T) {
	for _, engine := range allEngines {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			cfg := engineConfig(t, engine, t.TempDir())
			cfg.AppTimezone = "Europe/Paris"
			e := openEnv(t, engine, cfg, Options{})
			now := e.clock.Unix() // 2023-11-14 22:13:20 UTC = 23:13:20 in Paris
			uuid := newUUID(t)
			payload := testPayload(uuid, `App\Jobs\Boom`)
			e.insertRow(t, row{queue: "high", payload: payload, availableAt: now, createdAt: now})
			j := claimOne(t, e, "high")
			exc := "RuntimeException: bad \xff\xfe byte \xe2\x82 in /app/x.php:3\nStack trace:\n#0 {main}"
			stored, err := e.q.failPayloadUUID(e.ctx, *j, exc)
			if err != nil || stored != uuid {
				t.Fatalf("fail: %q %v", stored, err)
			}
			if all := e.allJobs(t); len(all) != 0 {
				t.Fatalf("job row still there: %+v", all)
			}
			f, err := e.q.FindFailed(e.ctx, uuid)
			if err != nil {
				t.Fatal(err)
			}
			wantExc := "RuntimeException: bad ?? byte ? in /app/x.php:3\nStack trace:\n#0 {main}"
			if f.Connection != "database" || f.Queue != "high" || !bytes.Equal(f.Payload, payload) || f.Exception != wantExc || f.FailedAt != "2023-11-14 23:13:20" || f.Class != `App\Jobs\Boom` {
				t.Fatalf("failed row: %+v", f)
			}
			// Same uuid again (e.g. retried and failed before forget).
			e.insertRow(t, row{queue: "high", payload: payload, availableAt: now, createdAt: now})
			j = claimOne(t, e, "high")
			if stored, err := e.q.failPayloadUUID(e.ctx, *j, "again"); err != nil || stored != uuid+"-2" {
				t.Fatalf("second fail: %q %v", stored, err)
			}
			// No uuid: refused, job untouched.
			e.insertRow(t, row{queue: "high", payload: []byte(`{"displayName":"X","job":"X"}`), availableAt: now, createdAt: now})
			j = claimOne(t, e, "high")
			if _, err := e.q.failPayloadUUID(e.ctx, *j, "x"); !errors.Is(err, jobqueue.ErrNoUUID) {
				t.Fatalf("fail without uuid: %v", err)
			}
			// An insert that errors rolls the delete back.
			e.exec(t, "drop table "+e.quoted(cfg.FailedTable))
			e.insertRow(t, row{queue: "low", availableAt: now, createdAt: now})
			j = claimOne(t, e, "low")
			if _, err := e.q.failPayloadUUID(e.ctx, *j, "x"); err == nil {
				t.Fatal("fail into a missing table succeeded")
			}
			if r := e.jobByID(t, j.ID); r == nil || r.Attempts != 1 || r.ReservedAt == nil {
				t.Fatalf("job row after failed Fail: %+v", r)
			}
		})
	}
}

func TestPushExtendSizeClear(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		now := e.clock.Unix()
		p := testPayload(newUUID(t), `App\Jobs\P`)
		id, err := e.q.Push(e.ctx, jobqueue.PushItem{Payload: p, Delay: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		r := e.jobByID(t, id.Num)
		if r == nil || r.Queue != "default" || r.Attempts != 0 || r.ReservedAt != nil || r.AvailableAt != now+10 || r.CreatedAt != now || !bytes.Equal(r.Payload, p) {
			t.Fatalf("pushed row: %+v", r)
		}
		items := []jobqueue.PushItem{{Queue: "a", Payload: p}, {Queue: "a", Payload: p}, {Queue: "b", Payload: p, Delay: time.Minute}}
		if err := e.q.PushMany(e.ctx, items); err != nil {
			t.Fatal(err)
		}
		if n := len(e.allJobs(t)); n != 4 {
			t.Fatalf("%d rows after bulk push", n)
		}
		j := claimOne(t, e, "a")
		e.clock.Set(e.clock.Now().Add(50 * time.Second))
		unreserved := jobqueue.JobRow{ID: id.Num, ReservedAt: i64(now)}
		refreshed, err := e.q.Extend(e.ctx, []jobqueue.JobRow{*j, unreserved})
		if err != nil || len(refreshed) != 1 || refreshed[0].ID != j.ID || !ptrEq(refreshed[0].ReservedAt, i64(now+50)) {
			t.Fatalf("extend: %+v %v", refreshed, err)
		}
		if r := e.jobByID(t, j.ID); !ptrEq(r.ReservedAt, i64(now+50)) {
			t.Fatalf("extended row: %+v", r)
		}
		if r := e.jobByID(t, id.Num); r.ReservedAt != nil {
			t.Fatal("extend touched an unreserved row")
		}
		e.insertRow(t, row{queue: "a", attempts: 1, reservedAt: i64(now - 500), availableAt: now, createdAt: now})
		sizes, err := e.q.Sizes(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		got := fmt.Sprint(sizes)
		want := "[{a 1 0 1 1} {b 0 1 0 0} {default 1 0 0 0}]"
		if got != want {
			t.Fatalf("sizes %s, want %s", got, want)
		}
		if n, err := e.q.Clear(e.ctx, "a"); n != 3 || err != nil {
			t.Fatalf("clear: %d %v", n, err)
		}
	})
}

func TestFailedJobAdmin(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		now := e.clock.Unix()
		var uuids []string
		for i, q := range []string{"q1", "q2", "q1"} {
			u := newUUID(t)
			uuids = append(uuids, u)
			e.insertRow(t, row{queue: q, payload: testPayload(u, fmt.Sprintf(`App\Jobs\J%d`, i)), availableAt: now, createdAt: now})
			if _, err := e.q.failPayloadUUID(e.ctx, *claimOne(t, e, q), "E"); err != nil {
				t.Fatal(err)
			}
		}
		list, err := e.q.ListFailed(e.ctx, "")
		if err != nil || len(list) != 3 || list[0].UUID != uuids[2] || list[2].Class != `App\Jobs\J0` {
			t.Fatalf("list: %+v %v", list, err)
		}
		if l, _ := e.q.ListFailed(e.ctx, "q1"); len(l) != 2 {
			t.Fatalf("list q1: %d", len(l))
		}
		byID, err := e.q.FindFailed(e.ctx, fmt.Sprint(list[1].ID))
		if err != nil || byID.UUID != uuids[1] {
			t.Fatalf("find by id: %+v %v", byID, err)
		}
		if _, err := e.q.FindFailed(e.ctx, "nope"); !errors.Is(err, jobqueue.ErrFailedJobNotFound) {
			t.Fatalf("find missing: %v", err)
		}
		// Retry one with a hook; the new row has attempts 0, available now.
		e.clock.Set(e.clock.Now().Add(5 * time.Second))
		res, err := e.q.Retry(e.ctx, []string{uuids[0]}, func(p []byte) ([]byte, error) {
			return bytes.Replace(p, []byte(`"retryUntil":null`), []byte(`"retryUntil":123`), 1), nil
		})
		if err != nil || len(res) != 1 || res[0].Err != nil {
			t.Fatalf("retry: %+v %v", res, err)
		}
		r := e.jobByID(t, res[0].NewID)
		if r == nil || r.Queue != "q1" || r.Attempts != 0 || r.AvailableAt != now+5 || !strings.Contains(string(r.Payload), `"retryUntil":123`) || !strings.Contains(string(r.Payload), uuids[0]) {
			t.Fatalf("retried row: %+v", r)
		}
		if _, err := e.q.FindFailed(e.ctx, uuids[0]); !errors.Is(err, jobqueue.ErrFailedJobNotFound) {
			t.Fatal("retried job not forgotten")
		}
		// Retry all of q1 (the remaining one), bytes unchanged.
		res, err = e.q.RetryAll(e.ctx, "q1", nil)
		if err != nil || len(res) != 1 || res[0].Err != nil || res[0].Failed.UUID != uuids[2] {
			t.Fatalf("retry all q1: %+v %v", res, err)
		}
		if r := e.jobByID(t, res[0].NewID); !bytes.Equal(r.Payload, res[0].Failed.Payload) {
			t.Fatal("payload changed without a hook")
		}
		// Forget.
		if ok, err := e.q.Forget(e.ctx, uuids[1]); !ok || err != nil {
			t.Fatalf("forget: %v %v", ok, err)
		}
		if ok, _ := e.q.Forget(e.ctx, uuids[1]); ok {
			t.Fatal("forgot twice")
		}
	})
}

func TestFlushAndPrune(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		insert := func(n int, failedAt string) {
			tx, err := e.q.db.BeginTx(e.ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < n; i++ {
				if _, err := tx.ExecContext(e.ctx, e.q.st.InsertFailed(), newUUID(t), "database", "default", "{}", "E", failedAt); err != nil {
					t.Fatal(err)
				}
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
		}
		// clock: 2023-11-14 22:13:20 UTC
		insert(2345, "2023-11-13 22:13:19") // older than 24h
		insert(3, "2023-11-13 22:13:20")    // exactly 24h: prune keeps (<), flush deletes (<=)
		insert(4, "2023-11-14 22:00:00")
		n, err := e.q.PruneFailed(e.ctx, 24*time.Hour)
		if err != nil || n != 2345 {
			t.Fatalf("prune: %d %v", n, err)
		}
		if n, err := e.q.Flush(e.ctx, 24*time.Hour); n != 3 || err != nil {
			t.Fatalf("flush --hours: %d %v", n, err)
		}
		if n, err := e.q.Flush(e.ctx, 0); n != 4 || err != nil {
			t.Fatalf("flush: %d %v", n, err)
		}
	})
}
