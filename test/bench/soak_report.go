package bench

import (
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/laraworker/laraworker/console"
)

// soakReport is a soak's settings, samples, outcome and verdict.
type soakReport struct {
	Driver           string       `json:"driver"`
	ServerVersion    string       `json:"server_version"`
	Jobs             int          `json:"jobs"`
	Rate             int          `json:"rate"`
	Every            int          `json:"every"`
	WarmUp           int          `json:"warm_up"`
	Concurrency      int          `json:"concurrency"`
	SleepSec         float64      `json:"sleep_sec"`
	MaxHeapGrowth    int64        `json:"max_heap_growth_bytes"`
	Started          time.Time    `json:"started"`
	Samples          []soakSample `json:"samples"`
	Pushed           int64        `json:"pushed"`
	PushSec          float64      `json:"push_sec"`
	PushRate         float64      `json:"push_rate"`        // jobs/s the producer reached
	MaxPushLagSec    float64      `json:"max_push_lag_sec"` // how far it fell behind its schedule
	MaxBacklog       int          `json:"max_backlog"`      // the largest backlog sampled while pushing
	DrainSec         float64      `json:"drain_sec"`        // from the last push to the queue drained
	RateHeld         bool         `json:"rate_held"`
	Claimed          int64        `json:"claimed"` // claims by the worker (a job claimed twice counts twice)
	Handled          int64        `json:"handled"` // noop handler calls that succeeded
	Left             int          `json:"left"`    // rows in the jobs table at the end
	Failed           int          `json:"failed"`  // rows in failed_jobs at the end
	StopReason       string       `json:"stop_reason"`
	Interrupted      bool         `json:"interrupted,omitempty"`
	HeapGrowth       int64        `json:"heap_growth_bytes"` // end sample's live heap − start sample's
	GoroutinesBefore int          `json:"goroutines_before"` // before any connection was opened
	GoroutinesAfter  int          `json:"goroutines_after"`  // after the worker stopped and the connections closed
	Problems         []string     `json:"problems"`
}

// soakSample is one sample of the process while the worker runs.
type soakSample struct {
	At            string  `json:"at"` // "start", the jobs handled, or "end"
	ElapsedSec    float64 `json:"elapsed_sec"`
	Pushed        int64   `json:"pushed"`
	Claimed       int64   `json:"claimed"`
	Handled       int64   `json:"handled"`
	Backlog       int     `json:"backlog"`
	HeapLiveBytes uint64  `json:"heap_live_bytes"`
	RSSBytes      uint64  `json:"rss_bytes"`
	Goroutines    int     `json:"goroutines"`
	Load1         float64 `json:"load1"`
}

// The rate counts as held when the producer reached 95% of it over the
// whole run and the worker caught up within heldDrain of the last push: a
// backlog that grew without bound would take longer to drain. A backlog
// that came and went (the machine was busy for a while) does not count.
const (
	heldPushShare = 0.95
	heldDrain     = 5 * time.Second
)

func newSoakReport(s *soakRun) *soakReport {
	o := s.opts
	return &soakReport{Driver: s.cfg.Driver, ServerVersion: s.q.ServerVersion(), Jobs: o.jobs, Rate: o.rate,
		Every: o.every, WarmUp: o.warmUp, Concurrency: o.concurrency, SleepSec: o.sleep.Seconds(),
		MaxHeapGrowth: o.maxHeapGrowth, Started: time.Now().UTC(), Problems: []string{}}
}

func (r *soakReport) setProducer(p produceResult) {
	r.Pushed, r.PushSec, r.MaxPushLagSec = p.pushed, p.seconds, p.maxLag.Seconds()
	if p.seconds > 0 {
		r.PushRate = float64(p.pushed) / p.seconds
	}
}

// check fills the verdict: the problems that make the soak fail, and
// whether the rate was held.
func (r *soakReport) check() {
	for _, sm := range r.Samples {
		if sm.Pushed < int64(r.Jobs) {
			r.MaxBacklog = max(r.MaxBacklog, sm.Backlog)
		}
	}
	if len(r.Samples) > 0 && r.Samples[len(r.Samples)-1].At == "end" {
		r.DrainSec = max(0, r.Samples[len(r.Samples)-1].ElapsedSec-r.PushSec)
	}
	r.RateHeld = r.PushRate >= heldPushShare*float64(r.Rate) && r.DrainSec <= heldDrain.Seconds()
	add := func(format string, args ...any) { r.Problems = append(r.Problems, fmt.Sprintf(format, args...)) }
	if r.Interrupted {
		add("interrupted after %d of %d jobs were pushed", r.Pushed, r.Jobs)
	}
	if r.Pushed != int64(r.Jobs) && !r.Interrupted {
		add("pushed %d of %d jobs", r.Pushed, r.Jobs)
	}
	if r.Handled != r.Pushed {
		add("%d jobs pushed, %d handled", r.Pushed, r.Handled)
	}
	if r.Claimed != r.Pushed {
		add("%d jobs pushed, %d claims (a job claimed twice, or never)", r.Pushed, r.Claimed)
	}
	if r.Left > 0 {
		add("%d jobs left in the jobs table", r.Left)
	}
	if r.Failed > 0 {
		add("%d jobs in failed_jobs", r.Failed)
	}
	start, end, ok := r.startEnd()
	if ok {
		r.HeapGrowth = int64(end.HeapLiveBytes) - int64(start.HeapLiveBytes)
		if r.HeapGrowth > r.MaxHeapGrowth {
			add("live heap grew by %.2f MiB from start to end (bound %.2f MiB)", mibSigned(r.HeapGrowth), mibSigned(r.MaxHeapGrowth))
		}
	} else if !r.Interrupted {
		add("no start and end samples")
	}
	if r.GoroutinesAfter > r.GoroutinesBefore {
		add("goroutines: %d before the soak, %d after the worker and its connections were closed", r.GoroutinesBefore, r.GoroutinesAfter)
	}
}

func (r *soakReport) startEnd() (start, end soakSample, ok bool) {
	if len(r.Samples) < 2 || r.Samples[0].At != "start" || r.Samples[len(r.Samples)-1].At != "end" {
		return start, end, false
	}
	return r.Samples[0], r.Samples[len(r.Samples)-1], true
}

func (r *soakReport) print(w io.Writer) {
	fmt.Fprintf(w, "%s %s: %d jobs pushed at %d/s, one worker at concurrency %d (--sleep %g), started %s\n\n",
		r.Driver, r.ServerVersion, r.Jobs, r.Rate, r.Concurrency, r.SleepSec, r.Started.Format(time.RFC3339))
	var rows [][]string
	for _, sm := range r.Samples {
		rows = append(rows, []string{sm.At, fmt.Sprintf("%.1f", sm.ElapsedSec), strconv.FormatInt(sm.Pushed, 10),
			strconv.FormatInt(sm.Handled, 10), strconv.Itoa(sm.Backlog), fmt.Sprintf("%.2f", mib(sm.HeapLiveBytes)),
			fmt.Sprintf("%.1f", mib(sm.RSSBytes)), strconv.Itoa(sm.Goroutines), fmt.Sprintf("%.2f", sm.Load1)})
	}
	_ = console.WriteTable(w, []string{"sample", "elapsed s", "pushed", "handled", "backlog", "live heap MiB", "RSS MiB", "goroutines", "load1"}, rows)
	fmt.Fprintf(w, "\npushed %d jobs in %.1f s: %.0f jobs/s (asked %d/s; at most %.2f s behind schedule; largest backlog sampled while pushing %d; drained %.1f s after the last push)\n",
		r.Pushed, r.PushSec, r.PushRate, r.Rate, r.MaxPushLagSec, r.MaxBacklog, r.DrainSec)
	if !r.RateHeld {
		fmt.Fprintf(w, "the rate was NOT held (pushed below %.0f%% of it, or drained more than %s after the last push): lower --rate\n", 100*heldPushShare, heldDrain)
	}
	fmt.Fprintf(w, "claimed %d, handled %d, left in the table %d, failed %d; worker stop reason: %s (the soak stops it once the queue is drained)\n",
		r.Claimed, r.Handled, r.Left, r.Failed, r.StopReason)
	if start, end, ok := r.startEnd(); ok {
		fmt.Fprintf(w, "live heap start -> end: %.2f -> %.2f MiB (%+.2f MiB; bound %+.2f MiB); RSS %.1f -> %.1f MiB\n",
			mib(start.HeapLiveBytes), mib(end.HeapLiveBytes), mibSigned(r.HeapGrowth), mibSigned(r.MaxHeapGrowth),
			mib(start.RSSBytes), mib(end.RSSBytes))
	}
	fmt.Fprintf(w, "goroutines: %d before the soak, %d after the worker and its connections were closed\n", r.GoroutinesBefore, r.GoroutinesAfter)
	if len(r.Problems) == 0 {
		fmt.Fprintln(w, "result: ok")
	} else {
		fmt.Fprintf(w, "result: FAILED: %s\n", strings.Join(r.Problems, "; "))
	}
}

// liveHeap is the heap in use after a forced collection; the second GC
// frees what the first one's finalizers released.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// settledGoroutines waits up to limit for the goroutine count to fall to
// want (exiting goroutines take a moment) and returns it.
func settledGoroutines(want int, limit time.Duration) int {
	deadline := time.Now().Add(limit)
	for {
		n := runtime.NumGoroutine()
		if n <= want || time.Now().After(deadline) {
			return n
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func mib(b uint64) float64      { return float64(b) / (1 << 20) }
func mibSigned(b int64) float64 { return float64(b) / (1 << 20) }
