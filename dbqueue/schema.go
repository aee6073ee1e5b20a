package dbqueue

import (
	"context"
	"fmt"
)

// CreateTables creates jobs, failed_jobs and job_batches in the shapes of
// Laravel's own migrations for this engine, skipping any that exist.
func (q *Queue) CreateTables(ctx context.Context) error {
	for _, stmt := range q.d.CreateTables(q.st.t) {
		if _, err := q.db.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("dbqueue: creating queue tables: %w", err)
		}
	}
	return nil
}

// DropTables drops the three tables if they exist (tests, tooling).
func (q *Queue) DropTables(ctx context.Context) error {
	for _, t := range []string{q.st.t.Jobs, q.st.t.Failed, q.st.t.Batches} {
		if _, err := q.db.ExecContext(ctx, "drop table if exists "+q.d.Quote(t)); err != nil {
			return fmt.Errorf("dbqueue: dropping %s: %w", t, err)
		}
	}
	return nil
}
