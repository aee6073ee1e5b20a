package database

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/laraworker/laraworker/jobqueue"
)

// Laravel's claim reads the queue in id order from its first row, so
// every delayed row, every row of a class this worker does not run and
// every running reservation older than the first claimable row is read on
// every claim (1,000,000 delayed rows ahead: seconds per claim). Without
// the claim index, this file keeps Laravel's set of claimable rows and its
// order but remembers where they start:
//
//   - After a claim from the start slower than slowClaim, a count of the
//     queue's rows up to the last row it took says how many it read
//     (at most every costCheckEvery per queue). From the first time that
//     is costlyRows, and costlyPerRow per row taken, the queue's claims
//     use a bound (and OnCostlyClaims's function runs, once): a claim
//     from the start that took rows found none it could take below the
//     first one it took, other than rows locked by another claim (SKIP
//     LOCKED), so the next claims read from that id on (`id >= ?`), and
//     move the bound up to the first row each takes.
//   - Rows below the bound become claimable when a delay passes, a
//     reservation expires, a claim that locked them rolls back or a row
//     is given back (Unreserve, another process). So the claim goes back
//     to the start every rescanEvery (on the queue's clock), or ten times
//     as long as the last claim from the start took if that is longer (so
//     that those claims take at most about a tenth of the time), and
//     whenever the bounded claim finds nothing; Unreserve and move forget
//     the bounds at once. A row below the bound waits at most that long
//     while the worker is busy with newer rows, and not at all once it is
//     idle.
//   - On MySQL/MariaDB, when the measurement found a costly queue that
//     holds at least half of the table's rows, its claims from the start
//     read the primary key in id order (`force index (primary)`): the
//     same rows in the same order, without the lookup per row of the
//     queue index MariaDB picks (measureClaim). Decided once per queue
//     and process.
//
// The bound is per queue and class filter; a queue without such a backlog
// ahead gets none, so its claims keep Laravel's statement.
const (
	slowClaim   = 20 * time.Millisecond
	rescanEvery = 5 * time.Second
	// costCheckEvery spaces the cost measurements (a count over the rows
	// ahead) taken after slow claims until the warning is given.
	costCheckEvery = 30 * time.Second
	// A claim reading at least costlyRows rows, and costlyPerRow per row
	// it took, is reported (OnCostlyClaims).
	costlyRows   = 10_000
	costlyPerRow = 50
)

// scanBounds is the lower bound on ids of Laravel's claim, per queue and
// class filter. newQueue sets slow; the rest is ready at its zero value.
type scanBounds struct {
	mu sync.Mutex
	m  map[boundKey]*scanBound
	// slow is how long a claim from the start takes to be measured:
	// slowClaim (tests: 0 makes every claim count as slow). A field, not
	// a constant behind a getter: every claim reads it.
	slow time.Duration
	// report is OnCostlyClaims's function; reported makes it run once.
	report   func(ClaimCost)
	reported bool
}

type scanBound struct {
	from     int64 // 0: claim from the start
	gen      uint64
	rescanAt time.Time
	scanning bool // a claim from the start is under way
	// costly: a claim from the start was measured reading far more rows
	// than it took; only then is there a bound. checkAt spaces the
	// measurements until then.
	costly  bool
	checkAt time.Time
	// primary: claims from the start read the primary key in id order
	// (MySQL/MariaDB), measured cheaper for this queue (measureClaim).
	primary bool
}

// scanStart is where a claim with Laravel's query reads from.
type scanStart struct {
	id      int64 // a lower bound on ids; 0: from the start
	primary bool  // from the start, along the primary key (MySQL/MariaDB)
}

// ClaimCost is what a claim from the start of a queue cost, measured
// after a slow one (see Queue.OnCostlyClaims).
type ClaimCost struct {
	Queue string
	// RowsRead: rows of the queue up to the last row the claim took (all
	// of the queue's rows when it took none), which Laravel's query reads
	// in id order.
	RowsRead int64
	// Claimed: rows the claim took.
	Claimed int
	// Took: how long the claim took.
	Took time.Duration
}

// String is the warning a worker logs.
func (c ClaimCost) String() string {
	per := fmt.Sprintf("%d rows for each of the %d jobs it took", c.RowsRead/int64(max(c.Claimed, 1)), c.Claimed)
	if c.Claimed == 0 {
		per = fmt.Sprintf("%d rows and took no job", c.RowsRead)
	}
	return fmt.Sprintf("claims on queue %q read far more rows than they take: a claim read %s (%s). "+
		"Delayed jobs or jobs of classes this worker does not run sit ahead of the ready ones, and Laravel's query reads past them in id order "+
		"(laraworker now reads from the first ready row and goes back to the start every %s or more). "+
		"Run `laraworker tables --index` (or the bridge's migration: php artisan vendor:publish --tag=laraworker-migrations && php artisan migrate) "+
		"to create the claim index, whose claims read only the rows they can take",
		c.Queue, per, c.Took.Round(time.Millisecond), rescanEvery)
}

// OnCostlyClaims sets what runs, once, when a claim with Laravel's query
// (no claim index) turns out to read far more rows than it takes: at
// least 10,000 rows, and 50 per row taken. The measurement is a count of
// the queue's rows up to the last row claimed, taken after a claim slower
// than 20 ms, at most every 30 seconds per queue, and no more on that
// queue once it found such a claim; fast claims cost nothing more. Call
// it before claiming.
func (q *Queue) OnCostlyClaims(fn func(ClaimCost)) {
	q.scan.mu.Lock()
	q.scan.report = fn
	q.scan.mu.Unlock()
}

// boundKey names a queue and class filter (excluded ids aside: a row
// excluded is not claimable by this worker while it is): the filter is
// renderedFilter.key.
type boundKey struct {
	queue, filter string
}

// forget drops every bound (the next claims read from the start): a row
// below one may be claimable now.
func (b *scanBounds) forget() {
	b.mu.Lock()
	for _, s := range b.m {
		s.from = 0
		s.gen++
	}
	b.mu.Unlock()
}

// begin says where a claim reads from, and the bound's generation.
func (b *scanBounds) begin(key boundKey, now time.Time, fromStart bool) (from scanStart, gen uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.m[key]
	if s == nil {
		return scanStart{}, 0
	}
	start := scanStart{primary: s.primary}
	if s.from == 0 {
		return start, s.gen
	}
	if fromStart || (!s.scanning && !now.Before(s.rescanAt)) {
		// This claim goes back to the start; the others keep the bound
		// until it is done.
		s.scanning = true
		return start, s.gen
	}
	return scanStart{id: s.from}, s.gen
}

// done records what a claim found: from the start, the first row it took
// is the new bound (none when the claim was fast or took nothing); from a
// bound, the bound moves up to the first row taken, unless a claim from
// the start replaced it meanwhile.
// It returns the bound's generation after it.
func (b *scanBounds) done(key boundKey, gen uint64, from scanStart, jobs []jobqueue.JobRow, took time.Duration, now time.Time) uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.m[key]
	if from.id > 0 {
		if s != nil && s.gen == gen && len(jobs) > 0 {
			s.from = max(s.from, minID(jobs))
		}
		return gen
	}
	if b.m == nil {
		b.m = map[boundKey]*scanBound{}
	}
	if s == nil {
		s = &scanBound{}
		b.m[key] = s
	}
	s.gen++
	s.scanning = false
	s.rescanAt = now.Add(max(rescanEvery, 10*took))
	s.from = 0
	if len(jobs) > 0 && s.costly {
		s.from = minID(jobs)
	}
	return s.gen
}

// shouldMeasure: a slow claim from the start (the caller tested its time
// against slowClaim) is to be measured.
func (b *scanBounds) shouldMeasure(key boundKey, now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.m[key]
	if s == nil || s.costly || now.Before(s.checkAt) {
		return false
	}
	s.checkAt = now.Add(costCheckEvery)
	return true
}

// costly marks the queue's claims as reading far more rows than they
// take (from the start along the primary key if primary), sets the bound
// from the claim measured, and says whether the report is still to be
// given (and with what).
func (b *scanBounds) costly(key boundKey, gen uint64, jobs []jobqueue.JobRow, primary bool) func(ClaimCost) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if s := b.m[key]; s != nil {
		s.costly = true
		s.primary = primary
		if s.gen == gen && s.from == 0 && len(jobs) > 0 {
			s.from = minID(jobs)
		}
	}
	if b.reported || b.report == nil {
		return nil
	}
	b.reported = true
	return b.report
}

// failed ends a claim from the start that failed: the next one retries.
func (b *scanBounds) failed(key boundKey, from scanStart) {
	if from.id > 0 {
		return
	}
	b.mu.Lock()
	if s := b.m[key]; s != nil {
		s.scanning = false
	}
	b.mu.Unlock()
}

func minID(jobs []jobqueue.JobRow) int64 {
	m := jobs[0].ID
	for _, j := range jobs[1:] {
		m = min(m, j.ID)
	}
	return m
}

func maxID(jobs []jobqueue.JobRow) int64 {
	m := jobs[0].ID
	for _, j := range jobs[1:] {
		m = max(m, j.ID)
	}
	return m
}

// claimLaravel is the batched claim with Laravel's query, from the
// queue's bound on ids when it has one (see the top of this file).
func (q *Queue) claimLaravel(ctx context.Context, queue string, limit int, opts jobqueue.ClaimOptions) ([]jobqueue.JobRow, error) {
	rf, err := q.renderedFilter(opts)
	if err != nil {
		return nil, err
	}
	key := boundKey{queue: queue, filter: rf.key}
	// One statement where the engine has one, the transaction otherwise.
	claimFrom := q.claimTxFrom
	if q.oneStatementClaims {
		claimFrom = q.claimOneStatement
	}
	from, gen := q.scan.begin(key, q.conn.Now(), false)
	start := time.Now()
	jobs, err := claimFrom(ctx, queue, limit, opts, rf, from)
	took := time.Since(start)
	if err != nil {
		q.scan.failed(key, from)
		return nil, err
	}
	if from.id > 0 && len(jobs) == 0 {
		// Nothing above the bound: what is left, if anything, is below.
		from, gen = q.scan.begin(key, q.conn.Now(), true)
		start = time.Now()
		jobs, err = claimFrom(ctx, queue, limit, opts, rf, from)
		took = time.Since(start)
		if err != nil {
			q.scan.failed(key, from)
			return nil, err
		}
	}
	gen = q.scan.done(key, gen, from, jobs, took, q.conn.Now())
	// Most claims are fast: the threshold is tested before shouldMeasure
	// takes its lock.
	if from.id == 0 && took >= q.scan.slow && q.scan.shouldMeasure(key, time.Now()) {
		q.measureClaim(ctx, key, gen, queue, jobs, took)
	}
	return jobs, nil
}

// measureClaim counts the rows a claim from the start read; when they
// are far more than it took, the queue's claims use a bound from now on
// and the report is given (once). A failed count changes nothing: a slow
// claim measures again after costCheckEvery.
//
// On MySQL/MariaDB it also decides how the claims from the start read:
// MariaDB reads Laravel's query through the queue index, with a lookup
// of the row for each entry, about four times the cost per row of reading
// the primary key in id order (1,000,000 delayed rows: 5.2 s against
// 1.3 s). When the queue holds at least half of the table's rows, the
// primary key reads at most about twice the rows, so it is cheaper; when
// other queues fill the table, the queue index stays.
func (q *Queue) measureClaim(ctx context.Context, key boundKey, gen uint64, queue string, jobs []jobqueue.JobRow, took time.Duration) {
	upTo := int64(1<<63 - 1)
	if len(jobs) > 0 {
		upTo = maxID(jobs)
	}
	var n int64
	if err := q.db.QueryRowContext(ctx, q.st.CountQueueUpTo(), queue, upTo).Scan(&n); err != nil {
		return
	}
	if n < costlyRows || n < costlyPerRow*int64(max(len(jobs), 1)) {
		return
	}
	if report := q.scan.costly(key, gen, jobs, q.queueFillsTable(ctx, n)); report != nil {
		report(ClaimCost{Queue: queue, RowsRead: n, Claimed: len(jobs), Took: took})
	}
}

// queueFillsTable says whether queueRows (a count of one queue's rows) is
// at least half of the table's rows, on MySQL/MariaDB (false elsewhere, or
// when the count fails).
func (q *Queue) queueFillsTable(ctx context.Context, queueRows int64) bool {
	if !q.st.IndexHints() {
		return false
	}
	var total int64
	if err := q.db.QueryRowContext(ctx, q.st.CountTable()).Scan(&total); err != nil {
		return false
	}
	return 2*queueRows >= total
}
