package fleet

import (
	"math"
	"strings"
	"time"
)

// Runtimes and waits are counted in fixed buckets, so what several workers
// count in the same minute adds up in SQL (history rows are upserted with
// "column + new value"), and minutes add up into an hour or a day. A
// bucket counts the jobs whose duration is at most its bound and above
// the previous one; the last counts those above one hour. The PHP bridge
// (bridge/src/FleetRecorder.php) counts in the same buckets, under the
// same column names: run_le_1ms ... run_le_1h, run_gt_1h, and wait_...;
// run_ms and wait_ms hold the totals in milliseconds.
//
// The bounds grow by 2 to 2.5 times (1, 2.5, 5, 10 ...): a percentile is
// reported as the bound of its bucket ("at most").

// bucketBound is one bucket's upper bound and its column suffix.
type bucketBound struct {
	max  time.Duration
	name string
}

var bucketBounds = []bucketBound{
	{time.Millisecond, "1ms"}, {2500 * time.Microsecond, "2_5ms"}, {5 * time.Millisecond, "5ms"},
	{10 * time.Millisecond, "10ms"}, {25 * time.Millisecond, "25ms"}, {50 * time.Millisecond, "50ms"},
	{100 * time.Millisecond, "100ms"}, {250 * time.Millisecond, "250ms"}, {500 * time.Millisecond, "500ms"},
	{time.Second, "1s"}, {2500 * time.Millisecond, "2_5s"}, {5 * time.Second, "5s"}, {10 * time.Second, "10s"},
	{30 * time.Second, "30s"}, {time.Minute, "1m"}, {2 * time.Minute, "2m"}, {5 * time.Minute, "5m"},
	{10 * time.Minute, "10m"}, {30 * time.Minute, "30m"}, {time.Hour, "1h"},
}

// NumBuckets is the number of buckets of a Histogram: one per bound and
// one for durations above the last.
const NumBuckets = 21

// Histogram counts durations in the fixed buckets, with their total.
type Histogram struct {
	Counts  [NumBuckets]int64
	TotalMS int64
}

// bucketOf is the index of the bucket that counts d.
func bucketOf(d time.Duration) int {
	for i, b := range bucketBounds {
		if d <= b.max {
			return i
		}
	}
	return NumBuckets - 1
}

// Observe counts one duration (a negative one as 0).
func (h *Histogram) Observe(d time.Duration) {
	d = max(d, 0)
	h.Counts[bucketOf(d)]++
	h.TotalMS += d.Milliseconds()
}

// Add adds o's counts to h's.
func (h *Histogram) Add(o Histogram) {
	for i, n := range o.Counts {
		h.Counts[i] += n
	}
	h.TotalMS += o.TotalMS
}

// Count is how many durations h counted.
func (h Histogram) Count() int64 {
	var n int64
	for _, c := range h.Counts {
		n += c
	}
	return n
}

// Mean is the average duration (0 when h is empty).
func (h Histogram) Mean() time.Duration {
	n := h.Count()
	if n == 0 {
		return 0
	}
	return time.Duration(h.TotalMS) * time.Millisecond / time.Duration(n)
}

// Quantile is the bound of the bucket holding the q-th quantile (0 < q
// <= 1): at most that long. over is true when it lies above the last
// bound (more than one hour); ok is false when h is empty.
func (h Histogram) Quantile(q float64) (atMost time.Duration, over, ok bool) {
	n := h.Count()
	if n == 0 {
		return 0, false, false
	}
	rank := min(max(int64(math.Ceil(q*float64(n)-1e-9)), 1), n)
	var seen int64
	for i, c := range h.Counts {
		seen += c
		if seen >= rank {
			if i == NumBuckets-1 {
				return bucketBounds[len(bucketBounds)-1].max, true, true
			}
			return bucketBounds[i].max, false, true
		}
	}
	return bucketBounds[len(bucketBounds)-1].max, true, true
}

// histogramColumns are the bucket columns of metric ("run" or "wait") in
// bucket order, then its total column.
func histogramColumns(metric string) []string {
	cols := make([]string, 0, NumBuckets+1)
	for _, b := range bucketBounds {
		cols = append(cols, metric+"_le_"+b.name)
	}
	last := bucketBounds[len(bucketBounds)-1].name
	return append(cols, metric+"_gt_"+last, metric+"_ms")
}

// timingColumns are the history's runtime and wait columns.
var timingColumns = append(histogramColumns("run"), histogramColumns("wait")...)

// timingArgs are h's values in histogramColumns order.
func timingArgs(run, wait Histogram) []any {
	out := make([]any, 0, len(timingColumns))
	for _, h := range []Histogram{run, wait} {
		for _, c := range h.Counts {
			out = append(out, c)
		}
		out = append(out, h.TotalMS)
	}
	return out
}

// scanTiming fills run and wait from values scanned in timingColumns
// order.
func scanTiming(vals []int64, run, wait *Histogram) {
	for i, h := range []*Histogram{run, wait} {
		part := vals[i*(NumBuckets+1) : (i+1)*(NumBuckets+1)]
		copy(h.Counts[:], part[:NumBuckets])
		h.TotalMS = part[NumBuckets]
	}
}

// BucketNames lists the buckets' column suffixes in order, the last being
// "gt_1h" (for the bridge's tests and the docs).
func BucketNames() []string {
	out := make([]string, 0, NumBuckets)
	for _, c := range histogramColumns("x")[:NumBuckets] {
		out = append(out, strings.TrimPrefix(c, "x_"))
	}
	return out
}
