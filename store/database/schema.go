package database

import (
	"context"
	"fmt"
	"strings"

	"github.com/laraworker/laraworker/internal/sqldb"
)

// CreateTables creates jobs, failed_jobs and job_batches in the shapes of
// Laravel's own migrations for this engine, skipping any that exist.
func (q *Queue) CreateTables(ctx context.Context) error {
	for _, stmt := range q.d.CreateTables(q.st.T) {
		if _, err := q.db.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("dbqueue: creating queue tables: %w", err)
		}
	}
	return nil
}

// CreateOutcomeTables creates failed_jobs and job_batches alone, skipping
// any that exists: the tables a queue whose jobs live elsewhere (Laravel's
// Redis queue) keeps in the database. The engine's statements are those of
// CreateTables, less those of the jobs table (each names its table, quoted
// whole, so the jobs table's name is never part of another's).
func (q *Queue) CreateOutcomeTables(ctx context.Context) error {
	jobs := q.d.Quote(sqldb.LastPart(q.st.T.Jobs))
	for _, stmt := range q.d.CreateTables(q.st.T) {
		if strings.Contains(stmt, jobs) {
			continue
		}
		if _, err := q.db.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("dbqueue: creating queue tables: %w", err)
		}
	}
	return nil
}

// DropTables drops the three tables if they exist (tests, tooling).
func (q *Queue) DropTables(ctx context.Context) error {
	for _, t := range []string{q.st.T.Jobs, q.st.T.Failed, q.st.T.Batches} {
		if _, err := q.db.ExecContext(ctx, "drop table if exists "+q.d.Quote(t)); err != nil {
			return fmt.Errorf("dbqueue: dropping %s: %w", t, err)
		}
	}
	return nil
}
