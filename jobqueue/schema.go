package jobqueue

import (
	"context"
	"fmt"
)

// Schema is a store whose queue lives in tables the app creates with
// Laravel's migrations (the database queue): the CLI checks them before a
// worker claims anything and creates them on request (`laraworker tables`,
// `work --create-tables`). A store without tables (Redis) has no Schema.
type Schema interface {
	// MissingTables names the queue tables (jobs, failed jobs, batches)
	// that do not exist. Other errors (no permission, connection lost) are
	// returned as errors.
	MissingTables(ctx context.Context) ([]MissingTable, error)
	// CreateTables creates the queue tables in the shapes of Laravel's
	// migrations, leaving those that exist alone.
	CreateTables(ctx context.Context) error
}

// MissingTable names a queue table that does not exist and how to make it.
type MissingTable struct {
	Table   string
	Role    string // jobs, failed_jobs, job_batches
	Artisan string // the artisan command that writes its migration
}

func (m MissingTable) String() string {
	return fmt.Sprintf("the %s table %q does not exist (php artisan %s && php artisan migrate, or laraworker tables)", m.Role, m.Table, m.Artisan)
}
