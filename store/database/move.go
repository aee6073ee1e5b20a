package database

import (
	"context"
	"errors"
	"fmt"
	"github.com/laraworker/laraworker/laravel/payload"
	"sort"
	"strings"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/laraworker/laraworker/internal/sqldb"
	"github.com/laraworker/laraworker/jobqueue"
)

// CountClasses counts the jobs of each class on queue. The match is the
// claim filter's (LIKE on the payload's displayName), case-insensitive on
// MySQL, as PHP class names are.
func (q *Queue) CountClasses(ctx context.Context, queue string, classes []string) ([]jobqueue.ClassCount, error) {
	out := make([]jobqueue.ClassCount, 0, len(classes))
	for _, class := range classes {
		pats, err := likePatterns([]string{class})
		if err != nil {
			return nil, err
		}
		query := q.st.CountClassByState(len(pats))
		var unreserved, reserved any
		args := append([]any{queue}, pats...)
		if err := q.db.QueryRowContext(ctx, query, args...).Scan(&unreserved, &reserved); err != nil {
			return nil, err
		}
		c := jobqueue.ClassCount{Class: class}

		if c.Unreserved, err = toNumber(orZero(unreserved)); err != nil {
			return nil, err
		}
		if c.Reserved, err = toNumber(orZero(reserved)); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

func orZero(v any) any {
	if v == nil {
		return int64(0)
	}
	return v
}

// ClassSample is how many jobs the startup checks read to tell which
// classes wait on the watched queues.
const ClassSample = 5000

// moveBatch is how many rows one move statement updates.
const moveBatch = 500

// Move puts the unreserved jobs of classes on queue from onto queue to,
// at most moveBatch rows per statement, and returns how many moved per
// class. Each statement is `update ... set queue = to where id in (...)
// and queue = from and reserved_at is null`: a row a worker reserves
// meanwhile is left where it is, never touched. Rows keep their id,
// attempts, available_at and payload, so delayed jobs stay delayed.
func (q *Queue) Move(ctx context.Context, from, to string, classes []string) (map[string]int64, error) {
	moved := map[string]int64{}
	if from == to {
		return moved, fmt.Errorf("dbqueue: moving jobs from queue %q to itself", from)
	}
	want := map[string]bool{}
	for _, c := range classes {
		want[c] = true
	}
	pats, err := likePatterns(classes)
	if err != nil {
		return moved, err
	}
	var after int64
	for {
		byClass, last, err := q.moveCandidates(ctx, from, pats, want, after)
		if err != nil || last == 0 {
			return moved, err
		}
		after = last
		for class, ids := range byClass {
			n, err := q.moveIDs(ctx, from, to, ids)
			if err != nil {
				return moved, err
			}
			moved[class] += n
		}
	}
}

// moveIDs runs one guarded move statement.
func (q *Queue) moveIDs(ctx context.Context, from, to string, ids []int64) (int64, error) {
	var n int64
	err := q.conn.Retrying(ctx, func(int) error {
		res, err := q.db.ExecContext(ctx, q.st.MoveJobs(len(ids)), append([]any{to, from}, int64sToArgs(ids)...)...)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	// The rows moved keep their ids, maybe below a claim's bound on ids
	// in their new queue.
	q.scan.forget()
	return n, err
}

// moveCandidates reads the next rows after id `after` that the LIKE filter
// matches and keeps, by class, those whose displayName is exactly one of
// want; last is the highest id read (0 when none was left).
func (q *Queue) moveCandidates(ctx context.Context, from string, pats []any, want map[string]bool, after int64) (byClass map[string][]int64, last int64, err error) {
	args := append(append([]any{from}, pats...), after)
	rows, err := q.db.QueryContext(ctx, q.st.MoveSelect(len(pats), moveBatch), args...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	byClass = map[string][]int64{}
	for rows.Next() {
		var id, payload any
		if err := rows.Scan(&id, &payload); err != nil {
			return nil, 0, err
		}
		n, err := sqldb.ToInt64(id)
		if err != nil {
			return nil, 0, err
		}
		last = n
		if _, name, err := payloadMeta(sqldb.ToBytes(payload)); err == nil && want[name] {
			byClass[name] = append(byClass[name], n)
		}
	}
	return byClass, last, rows.Err()
}

// ClassesOnQueues returns the displayNames of the first limit jobs of the
// queues (by id) with their counts, and how many rows were read: enough to
// tell a user which classes are there without scanning a huge backlog.
// Only the first payload.PrefixLen characters of each payload are read,
// so a job of many megabytes costs what a small one does.
func (q *Queue) ClassesOnQueues(ctx context.Context, queues []string, limit int) (map[string]int64, int64, error) {
	names := q.queueNames(queues)
	args := make([]any, len(names))
	for i, n := range names {
		args[i] = n
	}
	rows, err := q.db.QueryContext(ctx, q.st.SamplePayloads(len(names), limit, payload.PrefixLen), args...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	out := map[string]int64{}
	var read int64
	for rows.Next() {
		var prefix any
		if err := rows.Scan(&prefix); err != nil {
			return nil, 0, err
		}
		read++
		if name := payload.TopStrings(sqldb.ToBytes(prefix), "displayName")["displayName"]; name != "" {
			out[name]++
		}
	}
	return out, read, rows.Err()
}

// SortedClasses lists a ClassesOnQueues result, most jobs first.
func SortedClasses(m map[string]int64) []string {
	out := make([]string, 0, len(m))
	for c := range m {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool {
		if m[out[i]] != m[out[j]] {
			return m[out[i]] > m[out[j]]
		}
		return out[i] < out[j]
	})
	return out
}

// MissingTables checks that the jobs, failed_jobs and job_batches tables
// exist (jobqueue.Schema), and the cache table when the app's cache store
// is database (queue:restart and maxExceptions live there: without it
// every loop's restart check fails). Other errors (no permission,
// connection lost) are returned.
func (q *Queue) MissingTables(ctx context.Context) ([]jobqueue.MissingTable, error) {
	return q.missingTables(ctx, true)
}

// MissingOutcomeTables is MissingTables without the jobs table
// (jobqueue.Repository): the tables a store whose jobs live elsewhere
// keeps here.
func (q *Queue) MissingOutcomeTables(ctx context.Context) ([]jobqueue.MissingTable, error) {
	return q.missingTables(ctx, false)
}

func (q *Queue) missingTables(ctx context.Context, jobs bool) ([]jobqueue.MissingTable, error) {
	var missing, tables []jobqueue.MissingTable
	if jobs {
		tables = append(tables, jobqueue.MissingTable{Table: q.st.T.Jobs, Role: "jobs", Artisan: "queue:table"})
	}
	tables = append(tables, []jobqueue.MissingTable{
		{Table: q.st.T.Failed, Role: "failed_jobs", Artisan: "queue:failed-table"},
		{Table: q.st.T.Batches, Role: "job_batches", Artisan: "queue:batches-table"},
	}...)
	if q.cache != nil {
		tables = append(tables, jobqueue.MissingTable{Table: q.cfg.CacheTable, Role: "cache", Artisan: "cache:table"})
	}
	for _, t := range tables {
		rows, err := q.db.QueryContext(ctx, "select 1 from "+q.d.Quote(t.Table)+" where 1 = 0")
		if err == nil {
			rows.Close()
			continue
		}
		if !isMissingTable(err) {
			return nil, err
		}
		missing = append(missing, t)
	}
	return missing, nil
}

// isMissingTable recognises "no such table" on each engine.
func isMissingTable(err error) bool {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number == 1146
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "42P01"
	}
	return strings.Contains(err.Error(), "no such table")
}
