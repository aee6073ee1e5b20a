package database

import (
	"context"
	"database/sql"
	"errors"
	"strconv"

	"github.com/laraworker/laraworker/internal/sqldb"
	"github.com/laraworker/laraworker/jobqueue"
)

// Delete removes finished jobs whose rows still carry their reservations
// (each row's ReservedAt) and returns the jobs whose reservation was lost,
// which it leaves alone. With Options.ExactStatements each job is deleted in
// Laravel's own deleteReserved transaction (the token compared in Go on
// the locked row); otherwise rows are grouped by token into one
// `delete ... where reserved_at = ? and id in (...) returning id` (same
// end state, a fraction of the round trips; on PostgreSQL the ids are one
// array parameter, so every batch size is the same statement). On an
// error nothing was deleted, except in exact mode, where the jobs before
// the failing one were.
func (q *Queue) Delete(ctx context.Context, jobs []jobqueue.JobRow) (lost []jobqueue.JobRow, err error) {
	for _, j := range jobs {
		if j.ReservedAt == nil { // no token to fence the delete by (token)
			return nil, errNotClaimed
		}
	}
	if q.exact {
		for _, j := range jobs {
			err := q.inTx(ctx, func(tx *sql.Tx, _ int) error { return q.takeReserved(ctx, tx, j) })
			if errors.Is(err, jobqueue.ErrReservationLost) {
				lost = append(lost, j)
				continue
			}
			if err != nil {
				return nil, err
			}
		}
		return lost, nil
	}
	if len(jobs) == 1 && q.singleStatementSafe {
		return q.deleteOne(ctx, jobs[0])
	}
	deleted, err := q.deleteReservedMany(ctx, jobs)
	if err != nil {
		return nil, err
	}
	for _, j := range jobs {
		if !deleted[j.ID] {
			lost = append(lost, j)
		}
	}
	return lost, nil
}

// deleteOne is Delete of one job (a worker's completer often has one
// outcome to write): the fenced delete by id and token, one autocommitted
// statement on every engine, where the grouped delete would take the
// grouping and, on MySQL (no DELETE ... RETURNING), a transaction of a
// locking select and the delete. No row deleted: the reservation was lost.
func (q *Queue) deleteOne(ctx context.Context, job jobqueue.JobRow) (lost []jobqueue.JobRow, err error) {
	n, err := q.execCounting(ctx, q.deleteOneText, job.ID, *job.ReservedAt)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return []jobqueue.JobRow{job}, nil
	}
	return nil, nil
}

// execCounting runs one autocommitted statement, re-run on retryable
// errors, and returns the rows it changed.
func (q *Queue) execCounting(ctx context.Context, query string, args ...any) (int64, error) {
	var n int64
	err := q.conn.Retrying(ctx, func(int) error {
		res, err := q.db.ExecContext(ctx, query, args...)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, err
}

// tokenGroup is the ids of jobs reserved with one token, in chunks.
type tokenGroup struct {
	token  int64
	chunks [][]int64
}

// groupByToken groups the jobs' ids by token, in chunks of at most limit.
func groupByToken(jobs []jobqueue.JobRow, limit int) []tokenGroup {
	var order []int64
	ids := map[int64][]int64{}
	for _, j := range jobs {
		t := *j.ReservedAt
		if _, seen := ids[t]; !seen {
			order = append(order, t)
		}
		ids[t] = append(ids[t], j.ID)
	}
	groups := make([]tokenGroup, len(order))
	for i, t := range order {
		groups[i] = tokenGroup{token: t, chunks: chunkIDsBy(ids[t], limit)}
	}
	return groups
}

// maxIDArray bounds an id array parameter. No engine limit is near: it
// only keeps one statement's work (and its locks) bounded.
const maxIDArray = 5000

// deleteChunk is how many ids one grouped delete takes.
func (q *Queue) deleteChunk() int {
	if q.st.IDArrays() {
		return maxIDArray
	}
	return maxInList
}

// deleteReservedMany deletes the jobs that still carry their tokens and
// returns the ids it deleted. One statement needs no transaction; several
// run in one, so an error leaves every row as it was.
func (q *Queue) deleteReservedMany(ctx context.Context, jobs []jobqueue.JobRow) (map[int64]bool, error) {
	groups := groupByToken(jobs, q.deleteChunk())
	deleted := make(map[int64]bool, len(jobs))
	if q.deleteReturning && len(groups) == 1 && len(groups[0].chunks) == 1 && q.singleStatementSafe {
		err := q.conn.Retrying(ctx, func(int) (err error) {
			clear(deleted)
			return q.deleteReturningIDs(ctx, q.db, groups[0].token, groups[0].chunks[0], deleted)
		})
		return deleted, err
	}
	err := q.inTx(ctx, func(tx *sql.Tx, _ int) error {
		clear(deleted)
		for _, g := range groups {
			for _, chunk := range g.chunks {
				var err error
				if q.deleteReturning {
					err = q.deleteReturningIDs(ctx, tx, g.token, chunk, deleted)
				} else {
					err = q.lockThenDelete(ctx, tx, g.token, chunk, deleted)
				}
				if err != nil {
					return err
				}
			}
		}
		return nil
	})
	return deleted, err
}

// deleteReturningIDs runs the fenced grouped delete with RETURNING and
// adds the ids it deleted to deleted.
func (q *Queue) deleteReturningIDs(ctx context.Context, db queryer, token int64, ids []int64, deleted map[int64]bool) error {
	return scanIDs(ctx, db, q.st.DeleteReservedJobs(len(ids)), q.idArgs(token, ids), deleted)
}

// idArgs are the bindings of a statement taking a token and a list of
// ids: on PostgreSQL the ids go as one array parameter (see
// sqlstmt.Statements.IDArrays), elsewhere one placeholder each.
func (q *Queue) idArgs(token int64, ids []int64) []any {
	if q.st.IDArrays() {
		return []any{token, pgIntArray(ids)}
	}
	args := make([]any, 0, 1+len(ids))
	args = append(args, token)
	for _, id := range ids {
		args = append(args, id)
	}
	return args
}

// pgIntArray is ids as a PostgreSQL array literal, '{1,2,3}'. A text
// literal cast in SQL works with any PostgreSQL driver a pool given with
// Options.DB may use (pgx would take an []int64 as it is; lib/pq would not).
func pgIntArray(ids []int64) string {
	b := make([]byte, 0, 2+len(ids)*8)
	b = append(b, '{')
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, id, 10)
	}
	return string(append(b, '}'))
}

// lockThenDelete is the fenced grouped delete for servers without DELETE
// ... RETURNING: lock the rows that still carry the token, delete those.
func (q *Queue) lockThenDelete(ctx context.Context, tx *sql.Tx, token int64, ids []int64, deleted map[int64]bool) error {
	held := map[int64]bool{}
	args := append([]any{token}, int64sToArgs(ids)...)
	if err := scanIDs(ctx, tx, q.st.LockReservedJobs(len(ids)), args, held); err != nil {
		return err
	}
	if len(held) == 0 {
		return nil
	}
	keep := make([]int64, 0, len(held))
	for _, id := range ids {
		if held[id] {
			keep = append(keep, id)
		}
	}
	if _, err := tx.ExecContext(ctx, q.st.DeleteJobs(len(keep)), int64sToArgs(keep)...); err != nil {
		return err
	}
	for _, id := range keep {
		deleted[id] = true
	}
	return nil
}

// scanIDs runs a query returning one id column and adds the ids to into.
func scanIDs(ctx context.Context, db queryer, query string, args []any, into map[int64]bool) error {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var v any
		if err := rows.Scan(&v); err != nil {
			return err
		}
		id, err := sqldb.ToInt64(v)
		if err != nil {
			return err
		}
		into[id] = true
	}
	return rows.Err()
}
