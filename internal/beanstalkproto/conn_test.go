package beanstalkproto

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/testutil/testbeanstalkd"
)

func dial(t *testing.T, srv *testbeanstalkd.Server) *Conn {
	t.Helper()
	c, err := Dial(context.Background(), srv.Addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// must(call())(t) is call's value, the test failed on its error.
func must[T any](v T, err error) func(*testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func noErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// waitState waits until stats-job says the job is in state.
func waitState(t *testing.T, c *Conn, id uint64, state string, within time.Duration) JobStats {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		st, err := c.StatsJob(id)
		if err == nil && st.State == state {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %d: %+v %v, want state %s within %s", id, st, err, state, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestJobLifecycle: put, peek, reserve-job, stats-job (reserves counts
// every reserve), release with a priority and a delay, touch, bury, kick,
// delete, each with the reply beanstalkd gives, and the errors for a job
// that is not there or not this connection's.
func TestJobLifecycle(t *testing.T) {
	srv := testbeanstalkd.Start(t)
	c, other := dial(t, srv), dial(t, srv)
	noErr(t, c.Use("jobs"))
	body := []byte("{\"uuid\":\"a\"}\r\nwith a CRLF inside")
	id := must(c.Put(1024, 0, 90, body))(t)
	peeked := must(c.PeekReady())(t)
	if peeked.ID != id || !bytes.Equal(peeked.Body, body) {
		t.Fatalf("peek-ready %d %q", peeked.ID, peeked.Body)
	}
	if _, err := other.PeekReady(); !errors.Is(err, ErrNotFound) {
		t.Fatalf("peek-ready on the default tube: %v", err)
	}
	got := must(c.ReserveJob(id))(t)
	if !bytes.Equal(got.Body, body) {
		t.Fatalf("reserve-job body %q", got.Body)
	}
	st := must(c.StatsJob(id))(t)
	if st.Tube != "jobs" || st.State != "reserved" || st.Pri != 1024 || st.TTR != 90 || st.Reserves != 1 || st.TimeLeft < 88 {
		t.Fatalf("stats-job %+v", st)
	}
	// Only the reserving connection may settle the job.
	for name, err := range map[string]error{"release": other.Release(id, 1024, 0), "touch": other.Touch(id), "delete": other.Delete(id), "bury": other.Bury(id, 1)} {
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("%s from another connection: %v", name, err)
		}
	}
	noErr(t, c.Touch(id))
	noErr(t, c.Release(id, 7, 30))
	st = must(c.StatsJob(id))(t)
	if st.State != "delayed" || st.Pri != 7 || st.Delay != 30 || st.Releases != 1 {
		t.Fatalf("after release: %+v", st)
	}
	if _, err := c.PeekReady(); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a delayed job is not ready: %v", err)
	}
	if d := must(c.PeekDelayed())(t); d.ID != id {
		t.Fatalf("peek-delayed %d", d.ID)
	}
	noErr(t, c.KickJob(id))
	must(c.ReserveJob(id))(t)
	if st := must(c.StatsJob(id))(t); st.Reserves != 2 || st.Kicks != 1 {
		t.Fatalf("second reserve: %+v", st)
	}
	noErr(t, c.Bury(id, 1024))
	if b := must(c.PeekBuried())(t); b.ID != id {
		t.Fatalf("peek-buried %d", b.ID)
	}
	must(0, other.Delete(id))(t) // a buried job is anyone's to delete
	if _, err := c.StatsJob(id); !errors.Is(err, ErrNotFound) {
		t.Fatalf("stats-job after delete: %v", err)
	}
	if err := c.Delete(id); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
}

// TestPipelinedCommands: Do sends several commands in one write and reads
// their replies in order, each with its own outcome.
func TestPipelinedCommands(t *testing.T) {
	srv := testbeanstalkd.Start(t)
	c := dial(t, srv)
	noErr(t, c.Use("p"))
	var cmds []Cmd
	for i := range 50 {
		cmds = append(cmds, PutCmd(1024, 0, 60, []byte(strings.Repeat("x", i))))
	}
	replies := must(c.Do(cmds...))(t)
	var ids []uint64
	for _, r := range replies {
		if err := r.Err("put", "INSERTED"); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, must(r.ID())(t))
	}
	replies = must(c.Do(StatsJobCmd(ids[3]), ReserveJobCmd(ids[3]), StatsJobCmd(ids[3]), DeleteCmd(ids[3]), DeleteCmd(ids[3])))(t)
	before, after := must(ParseJobStats(replies[0].Data))(t), must(ParseJobStats(replies[2].Data))(t)
	if before.State != "ready" || after.State != "reserved" || after.Reserves != before.Reserves+1 {
		t.Fatalf("stats around reserve-job: %+v %+v", before, after)
	}
	if string(replies[1].Data) != "xxx" || replies[3].Err("delete", "DELETED") != nil || !errors.Is(replies[4].Err("delete", "DELETED"), ErrNotFound) {
		t.Fatalf("replies %+v", replies)
	}
	if ts := must(c.StatsTube("p"))(t); ts.Ready != 49 || ts.Total != 50 {
		t.Fatalf("stats-tube %+v", ts)
	}
}

// TestClosedConnectionReleasesItsJobs: the server puts a closed
// connection's reserved jobs back to ready at once, reserves counted; a
// job whose time-to-run ran out goes back, timeouts counted, and a touch
// of it then finds it not reserved. beanstalkd 1.12 does not always
// enforce a time-to-run while the holding connection is idle (the job can
// stay reserved with a negative time-left, and a touch then still renews
// it); it does at that connection's next command.
func TestClosedConnectionReleasesItsJobs(t *testing.T) {
	srv := testbeanstalkd.Start(t)
	c, holder, watcher := dial(t, srv), dial(t, srv), dial(t, srv)
	noErr(t, c.Use("t"))
	id := must(c.Put(1024, 0, 60, []byte("a")))(t)
	short := must(c.Put(1024, 0, 1, []byte("b")))(t)
	must(c.ReserveJob(id))(t)
	must(holder.ReserveJob(short))(t)
	deadline := time.Now().Add(5 * time.Second)
	for st := must(watcher.StatsJob(short))(t); st.State == "reserved" && st.TimeLeft > -1; st = must(watcher.StatsJob(short))(t) {
		if time.Now().After(deadline) {
			t.Fatal("the job's time-to-run never ran out")
		}
		time.Sleep(20 * time.Millisecond)
	}
	must(holder.ListTubes())(t)
	st := waitState(t, watcher, short, "ready", 5*time.Second)
	if err := holder.Touch(short); !errors.Is(err, ErrNotFound) {
		t.Fatalf("touch after the time-to-run: %v", err)
	}
	if st.Timeouts != 1 || st.Reserves != 1 {
		t.Fatalf("after its ttr: %+v", st)
	}
	c.Close()
	st = waitState(t, watcher, id, "ready", 5*time.Second)
	if st.Reserves != 1 {
		t.Fatalf("after the close: %+v", st)
	}
	if _, err := c.StatsJob(id); !errors.Is(err, ErrBroken) {
		t.Fatalf("a closed connection: %v", err)
	}
}

// TestReserveWithTimeout: reserve takes from the watched tubes only, and
// answers TIMED_OUT when none has a job in time.
func TestReserveWithTimeout(t *testing.T) {
	srv := testbeanstalkd.Start(t)
	c := dial(t, srv)
	noErr(t, c.Use("a"))
	id := must(c.Put(1024, 0, 60, []byte("a")))(t)
	if _, err := c.ReserveWithTimeout(0); !errors.Is(err, ErrTimedOut) {
		t.Fatalf("the default tube is empty: %v", err)
	}
	noErr(t, c.Watch("a"))
	noErr(t, c.Ignore("default"))
	if w := must(c.ListTubesWatched())(t); !slices.Equal(w, []string{"a"}) {
		t.Fatalf("watched %v", w)
	}
	if j := must(c.ReserveWithTimeout(1))(t); j.ID != id {
		t.Fatalf("reserved %d", j.ID)
	}
	if err := c.Ignore("a"); err == nil {
		t.Fatal("ignoring the last watched tube")
	}
}

// TestTubeNamesAndLimits: every character beanstalkd allows in a name
// round-trips through list-tubes and stats-tube; a name it refuses, a
// body over max-job-size and a line break in a command are errors that
// say so.
func TestTubeNamesAndLimits(t *testing.T) {
	srv := testbeanstalkd.Start(t, "-z", "100")
	c := dial(t, srv)
	odd := "App.jobs-1+2/x;y$z_(w)"
	noErr(t, c.Use(odd))
	must(c.Put(1024, 0, 60, []byte("a")))(t)
	if tubes := must(c.ListTubes())(t); !slices.Contains(tubes, odd) {
		t.Fatalf("list-tubes %q", tubes)
	}
	if ts := must(c.StatsTube(odd))(t); ts.Name != odd || ts.Ready != 1 {
		t.Fatalf("stats-tube %+v", ts)
	}
	if _, err := c.StatsTube("nosuch"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("stats-tube of no tube: %v", err)
	}
	for _, bad := range []string{"", "-x", "a b", "é", strings.Repeat("a", 201)} {
		if err := c.Use(bad); err == nil || !strings.Contains(err.Error(), "tube name") {
			t.Errorf("use %q: %v", bad, err)
		}
	}
	if _, err := c.Put(1024, 0, 60, bytes.Repeat([]byte("x"), 101)); !errors.Is(err, ErrJobTooBig) {
		t.Fatalf("a body over -z: %v", err)
	}
	if _, err := c.Do(Cmd{Line: "stats-job 1\r\ndelete 1"}); err == nil {
		t.Fatal("a command with a line break was sent")
	}
	if c.Broken() {
		t.Fatal("refused commands broke the connection")
	}
}

// TestServerGone: a server that dies breaks the connection; every later
// command says so instead of reading a stale reply.
func TestServerGone(t *testing.T) {
	srv := testbeanstalkd.Start(t)
	c := dial(t, srv)
	noErr(t, c.Use("t"))
	srv.Kill()
	_, err := c.Put(1024, 0, 60, []byte("a"))
	if !errors.Is(err, ErrBroken) || !c.Broken() {
		t.Fatalf("put to a dead server: %v", err)
	}
	if _, err := c.StatsTube("t"); !errors.Is(err, ErrBroken) {
		t.Fatalf("after: %v", err)
	}
}
