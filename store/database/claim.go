package database

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/laraworker/laraworker/internal/sqldb"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/store/database/internal/sqlstmt"
)

// claimFilterOf is the statement's shape and the arguments that follow
// queue, now and now - retry_after, for the rendered class filter f and
// the ids o excludes.
func claimFilterOf(f *renderedFilter, o jobqueue.ClaimOptions) (sqlstmt.ClaimFilter, []any) {
	args := make([]any, 0, len(f.patterns)+len(o.ExcludeIDs)+1) // +1: a claim's lower bound
	args = append(args, f.patterns...)
	for _, id := range o.ExcludeIDs {
		args = append(args, id)
	}
	return sqlstmt.ClaimFilter{Names: f.nNames, NotNames: len(f.patterns) - f.nNames, IDs: len(o.ExcludeIDs)}, args
}

// likePatterns are the LIKE patterns matching any of the display names.
func likePatterns(displayNames []string) ([]any, error) {
	var out []any
	for _, n := range displayNames {
		pats, err := cachedDisplayNamePatterns(n)
		if err != nil {
			return nil, err
		}
		for _, p := range pats {
			out = append(out, p)
		}
	}
	return out, nil
}

// Claim reserves up to n jobs of the first queue (in priority order) that
// has any, in one transaction, like `queue:work --queue=high,default`
// (the first queue that yields a job wins). With n == 1 it runs Laravel's
// exact statements: the select with its lock, then `update ... set
// reserved_at = ?, attempts = ?` with attempts computed from the fetched
// row. With n > 1, one locked select with `limit n` and one `update ...
// attempts = attempts + 1 where id in (...)`. Returned jobs carry their
// new attempts and reserved_at, in id order; none (and no error) when
// every queue is empty.
//
// jobqueue.JobRow.Queue of the result is the queue name claimed with (Laravel's
// DatabaseJob uses that name for release and failed_jobs).
func (q *Queue) Claim(ctx context.Context, queues []string, n int, opts jobqueue.ClaimOptions) ([]jobqueue.JobRow, error) {
	if n < 1 {
		return nil, fmt.Errorf("dbqueue: claim size must be >= 1")
	}
	for _, name := range q.queueNames(queues) {
		jobs, err := q.claim(ctx, name, n, opts)
		if err != nil || len(jobs) > 0 {
			return jobs, err
		}
	}
	return nil, nil
}

// CountClaimable counts the jobs a claim on these queues with these
// options could reserve now, without locking or skipping any row.
func (q *Queue) CountClaimable(ctx context.Context, queues []string, opts jobqueue.ClaimOptions) (int64, error) {
	rf, err := q.renderedFilter(opts)
	if err != nil {
		return 0, err
	}
	f, filterArgs := claimFilterOf(rf, opts)
	query := q.st.CountClaimable(f)
	var total int64
	for _, name := range q.queueNames(queues) {
		now := q.conn.UnixNow()
		args := append([]any{name, now, now - q.retryAfter}, filterArgs...)
		var n int64
		if err := q.db.QueryRowContext(ctx, query, args...).Scan(&n); err != nil {
			return 0, q.conn.ExplainSetup(err)
		}
		total += n
	}
	return total, nil
}

// queueNames applies Laravel's getQueue(): an empty name means the
// connection's default queue. Names are not trimmed, as in Laravel. The
// result may be queues itself or shared: callers only read it.
func (q *Queue) queueNames(queues []string) []string {
	switch {
	case len(queues) == 0 || len(queues) == 1 && queues[0] == "":
		return q.defaultQueues
	case !slices.Contains(queues, ""):
		return queues // as given: no copy per claim
	}
	out := make([]string, len(queues))
	for i, n := range queues {
		if n == "" {
			n = q.cfg.DefaultQueue
		}
		out[i] = n
	}
	return out
}

func (q *Queue) claim(ctx context.Context, queue string, limit int, opts jobqueue.ClaimOptions) ([]jobqueue.JobRow, error) {
	switch {
	case q.exact:
		return q.claimTx(ctx, queue, limit, opts)
	case q.indexed.Load() && fitsClassColumn(opts):
		jobs, err := q.claimIndexed(ctx, queue, limit, opts)
		if err == nil || q.stillIndexed(ctx, err) {
			return jobs, err
		}
		// The index went away under the worker: Laravel's query.
		return q.claim(ctx, queue, limit, opts)
	}
	return q.claimLaravel(ctx, queue, limit, opts)
}

// stillIndexed re-reads the catalogue after a failed indexed claim: an
// error other than a retryable or overflow one may mean the claim index
// was dropped while the worker ran.
func (q *Queue) stillIndexed(ctx context.Context, err error) bool {
	var ce *jobqueue.ClaimError
	if errors.As(err, &ce) || ctx.Err() != nil || q.d.Classify(err) != sqldb.ErrOther {
		return true
	}
	if isMySQLError(err, 1064, 1221, 1235) {
		// A server that cannot parse or run the indexed claim (syntax,
		// an unsupported locking clause): Laravel's query from now on.
		q.indexed.Store(false)
		return false
	}
	info, derr := q.DetectClaimPath(ctx)
	return derr != nil || info.Path == ClaimPathIndexed
}

// claimTx is the transactional claim with Laravel's query: the select
// with its lock, then the reserve (Laravel's exact statements when limit
// is 1).
func (q *Queue) claimTx(ctx context.Context, queue string, limit int, opts jobqueue.ClaimOptions) ([]jobqueue.JobRow, error) {
	rf, err := q.renderedFilter(opts)
	if err != nil {
		return nil, err
	}
	return q.claimTxFrom(ctx, queue, limit, opts, rf, scanStart{})
}

// claimTxFrom is claimTx reading from a lower bound on ids or from the
// start (along the primary key if from.primary).
func (q *Queue) claimTxFrom(ctx context.Context, queue string, limit int, opts jobqueue.ClaimOptions, rf *renderedFilter, from scanStart) ([]jobqueue.JobRow, error) {
	f, filterArgs := claimFilterOf(rf, opts)
	switch {
	case from.id > 0:
		f.FromID = true
		filterArgs = append(filterArgs, from.id)
	case from.primary:
		f.Primary = true
	}
	query := q.st.ClaimSelectFiltered(limit, f)
	peek := func() string { return q.st.Unlocked(q.st.ClaimSelectFiltered(1, f)) }
	return q.selectAndReserve(ctx, queue, limit, peek, func(now int64) (string, []any) {
		return query, append([]any{queue, now, now - q.retryAfter}, filterArgs...)
	})
}

// selectAndReserve runs a locking select and reserves what it returned in
// one transaction, re-run on retryable errors. On a pool that packs
// transactions (MySQL/MariaDB opened by Open) the transaction is two
// round trips instead of four; --laravel-exact keeps Laravel's four.
// peek gives the same select of one row without its lock, which takes
// sel's bindings (the look after an empty claim, peek.go; "" for none):
// rendered only when a look runs, not on every claim.
func (q *Queue) selectAndReserve(ctx context.Context, queue string, limit int, peek func() string, sel func(now int64) (string, []any)) ([]jobqueue.JobRow, error) {
	if !q.exact && q.idle.wasEmpty(queue) {
		if look := peek(); look != "" {
			_, args := sel(q.conn.UnixNow())
			if q.nothingClaimable(ctx, look, args) {
				return nil, nil
			}
		}
	}
	claimed, err := q.selectAndReserveTx(ctx, queue, limit, sel)
	if err == nil {
		q.idle.record(queue, len(claimed) == 0)
	}
	return claimed, err
}

// selectAndReserveTx is selectAndReserve's transaction.
func (q *Queue) selectAndReserveTx(ctx context.Context, queue string, limit int, sel func(now int64) (string, []any)) ([]jobqueue.JobRow, error) {
	var claimed []jobqueue.JobRow
	try := func(tx sqldb.TxConn, attempt int, last lastStatement) error {
		jobs, err := q.reserveSelected(ctx, tx, attempt, limit, sel, last)
		claimed = jobs
		return err
	}
	var err error
	if q.conn.CanPack() && !q.exact {
		err = q.conn.InPackedTx(ctx, func(tx *sqldb.PackedTx, attempt int) error {
			return try(tx, attempt, tx.ExecCommitContext)
		})
	} else {
		err = q.inTx(ctx, func(tx *sql.Tx, attempt int) error {
			return try(tx, attempt, func(ctx context.Context, query string, args ...any) error {
				_, err := tx.ExecContext(ctx, query, args...)
				return err
			})
		})
	}
	if err != nil {
		return nil, err
	}
	for i := range claimed {
		claimed[i].Queue = queue
	}
	return claimed, nil
}

// lastStatement runs a transaction's last statement: with the commit
// packed after it, or alone before database/sql's commit.
type lastStatement func(ctx context.Context, query string, args ...any) error

// reserveSelected is one try of the claim transaction: the locking
// select, then the reserve of what it returned (Laravel's exact statement
// when limit is 1), the last reserve statement run by last. Nothing
// selected: no reserve, and the caller's transaction ends unchanged.
func (q *Queue) reserveSelected(ctx context.Context, tx sqldb.TxConn, attempt, limit int, sel func(now int64) (string, []any), last lastStatement) ([]jobqueue.JobRow, error) {
	now := q.conn.UnixNow()
	query, args := sel(now)
	jobs, err := queryJobs(ctx, tx, query, args...)
	if err != nil || len(jobs) == 0 {
		return nil, err
	}
	if q.testHookAfterSelect != nil {
		if err := q.testHookAfterSelect(ctx, tx, attempt); err != nil {
			return nil, err
		}
	}
	stmts := q.reserveStatements(jobs, limit, now)
	for _, st := range stmts[:len(stmts)-1] {
		query := st.query // from the catalogue (reserveStatements)
		if _, err = tx.ExecContext(ctx, query, st.args...); err != nil {
			break
		}
	}
	if err == nil {
		final := stmts[len(stmts)-1]
		err = last(ctx, final.query, final.args...)
	}
	if err != nil && q.d.IsOutOfRange(err) {
		return nil, &jobqueue.ClaimError{Job: culprit(jobs), Err: err}
	}
	if err != nil {
		return nil, err
	}
	for i := range jobs {
		at := now
		jobs[i].Attempts++
		jobs[i].ReservedAt = &at
	}
	return jobs, nil
}

// statement is a statement text with its bindings.
type statement struct {
	query string
	args  []any
}

// reserveStatements reserve the selected rows: for one row
// markJobAsReserved (touch() and increment() on the fetched record,
// written back as values), for more `attempts = attempts + 1` over the ids
// in chunks.
func (q *Queue) reserveStatements(jobs []jobqueue.JobRow, limit int, now int64) []statement {
	if limit == 1 {
		j := jobs[0]
		return []statement{{q.st.MarkReserved(), []any{now, j.Attempts + 1, j.ID}}}
	}
	ids := make([]int64, len(jobs))
	for i, j := range jobs {
		ids[i] = j.ID
	}
	var out []statement
	for _, chunk := range chunkIDs(ids) {
		out = append(out, statement{q.st.MarkReservedMany(len(chunk)), append([]any{now}, int64sToArgs(chunk)...)})
	}
	return out
}

// culprit is the row whose attempts overflowed: the one with the most.
func culprit(jobs []jobqueue.JobRow) jobqueue.JobRow {
	worst := jobs[0]
	for _, j := range jobs[1:] {
		if j.Attempts > worst.Attempts {
			worst = j
		}
	}
	return worst
}
