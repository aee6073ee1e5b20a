package database

import (
	"cmp"
	"context"
	"slices"

	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/store/database/internal/sqlstmt"
)

// fitsClassColumn: every class named fits MySQL's generated column (a
// longer displayName is stored cut, so it could not be told apart there).
func fitsClassColumn(o jobqueue.ClaimOptions) bool {
	for _, n := range slices.Concat(o.DisplayNames, o.ExcludeDisplayNames) {
		if len([]rune(n)) > sqlstmt.ClassColumnLength {
			return false
		}
	}
	return true
}

// indexedFilter is the shape of the options on the indexed path, where
// class names are compared as they are (the index holds the decoded
// displayName, not the payload's JSON).
func (q *Queue) indexedFilter(o jobqueue.ClaimOptions) sqlstmt.IndexedFilter {
	return sqlstmt.IndexedFilter{Names: len(o.DisplayNames), NotNames: len(o.ExcludeDisplayNames), IDs: len(o.ExcludeIDs)}
}

// rangeArgs are the indexed range's arguments in the order sqlstmt's
// indexedRange places them: queue, classes, now, now - retry_after,
// excluded classes, excluded ids, and on PostgreSQL the limit. PostgreSQL
// with several classes (indexedRangePerClass): the classes as one array
// first, and the limit twice.
func (q *Queue) rangeArgs(queue string, now int64, limit int, o jobqueue.ClaimOptions) []any {
	times := []any{now, now - q.retryAfter}
	if len(o.DisplayNames) > 1 && q.pgArrays {
		args := append(append([]any{o.DisplayNames, queue}, times...), q.branchFilterArgs(o)...)
		return append(args, limit, limit)
	}
	args := appendList([]any{queue}, o.DisplayNames, false)
	args = append(args, times...)
	args = append(args, q.branchFilterArgs(o)...)
	if q.st.BindsLimit() {
		args = append(args, limit)
	}
	return args
}

// branchFilterArgs are the excluded classes and ids.
func (q *Queue) branchFilterArgs(o jobqueue.ClaimOptions) []any {
	pg := q.pgArrays
	return appendList(appendList(nil, o.ExcludeDisplayNames, pg), o.ExcludeIDs, pg)
}

// appendList appends a list's values, or the list as one array.
func appendList[T any](args []any, list []T, asArray bool) []any {
	if len(list) == 0 {
		return args
	}
	if asArray {
		return append(args, list)
	}
	for _, v := range list {
		args = append(args, v)
	}
	return args
}

// claimIndexed claims through the claim index: the classes' claimable
// rows in (available_at, id) order. MySQL/MariaDB: a transaction (select,
// reserve); PostgreSQL and SQLite: one statement.
func (q *Queue) claimIndexed(ctx context.Context, queue string, limit int, o jobqueue.ClaimOptions) ([]jobqueue.JobRow, error) {
	query, args := q.indexedStatement(queue, limit, o)
	if !q.st.OneStatementClaims() {
		// MySQL/MariaDB: the limit is in the text, not a binding, so the
		// look of one row takes the claim's bindings.
		peek := func() string { return q.st.Unlocked(q.st.ClaimSelectIndexed(1, q.indexedFilter(o))) }
		return q.selectAndReserve(ctx, queue, limit, peek, func(now int64) (string, []any) { return query, args(now) })
	}
	jobs, err := q.reserveInOneStatement(ctx, queue, limit, o, query, args)
	sortByAvailability(jobs)
	return jobs, err
}

// indexedStatement is the indexed claim's statement (the select on MySQL,
// the claiming update elsewhere) and its arguments at a time.
func (q *Queue) indexedStatement(queue string, limit int, o jobqueue.ClaimOptions) (string, func(now int64) []any) {
	f := q.indexedFilter(o)
	if !q.st.OneStatementClaims() {
		return q.st.ClaimSelectIndexed(limit, f), func(now int64) []any { return q.rangeArgs(queue, now, limit, o) }
	}
	// The update's reserved_at: first on SQLite (set before the
	// subquery), after the CTE on PostgreSQL.
	if q.pgArrays {
		return q.st.ClaimUpdateIndexed(limit, f), func(now int64) []any { return append(q.rangeArgs(queue, now, limit, o), now) }
	}
	return q.st.ClaimUpdateIndexed(limit, f), func(now int64) []any { return append([]any{now}, q.rangeArgs(queue, now, limit, o)...) }
}

// claimOneStatement is the batched claim with Laravel's where clause and
// order as one autocommitted UPDATE ... RETURNING (PostgreSQL, SQLite),
// from a lower bound on ids or from the start (the primary key's order is
// MySQL's: from.primary does not apply).
func (q *Queue) claimOneStatement(ctx context.Context, queue string, limit int, o jobqueue.ClaimOptions, rf *renderedFilter, from scanStart) ([]jobqueue.JobRow, error) {
	f := sqlstmt.ClaimFilter{Names: rf.nNames, NotNames: len(rf.patterns) - rf.nNames}
	fromID, pg := from.id, q.pgArrays
	f.IDs, f.IDArray, f.FromID = len(o.ExcludeIDs), pg, fromID > 0
	query := q.st.ClaimUpdateLaravel(f)
	jobs, err := q.reserveInOneStatement(ctx, queue, limit, o, query, func(now int64) []any {
		args := make([]any, 0, 6+len(rf.patterns)+len(o.ExcludeIDs))
		if !pg {
			args = append(args, now) // SQLite: the update's reserved_at comes first
		}
		args = append(append(args, queue, now, now-q.retryAfter), rf.patterns...)
		if len(o.ExcludeIDs) > 0 {
			args = appendList(args, o.ExcludeIDs, pg)
		}
		if f.FromID {
			args = append(args, fromID)
		}
		args = append(args, limit)
		if pg {
			args = append(args, now) // PostgreSQL: after the CTE
		}
		return args
	})
	slices.SortFunc(jobs, func(a, b jobqueue.JobRow) int { return cmp.Compare(a.ID, b.ID) })
	return jobs, err
}

// reserveInOneStatement runs a claiming UPDATE ... RETURNING, re-run on
// retryable errors. A row whose attempts would overflow the column makes
// the statement fail without saying which row: the transactional claim
// with Laravel's query then runs instead, and reports that row as a
// jobqueue.ClaimError when it selects it.
func (q *Queue) reserveInOneStatement(ctx context.Context, queue string, limit int, o jobqueue.ClaimOptions, query string, args func(now int64) []any) ([]jobqueue.JobRow, error) {
	var jobs []jobqueue.JobRow
	err := q.conn.Retrying(ctx, func(int) error {
		var err error
		jobs, err = queryJobs(ctx, q.db, query, args(q.conn.UnixNow())...)
		return err
	})
	if err != nil && q.d.IsOutOfRange(err) {
		return q.claimTx(ctx, queue, limit, o)
	}
	if err != nil {
		return nil, err
	}
	for i := range jobs {
		jobs[i].Queue = queue
	}
	return jobs, nil
}

// sortByAvailability puts jobs in the indexed claim's order.
func sortByAvailability(jobs []jobqueue.JobRow) {
	slices.SortFunc(jobs, func(a, b jobqueue.JobRow) int {
		if c := cmp.Compare(a.AvailableAt, b.AvailableAt); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
}
