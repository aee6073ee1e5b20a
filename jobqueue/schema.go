package jobqueue

import (
	"context"
	"fmt"
)

// Schema is the tables a store keeps in the app's database, which the app
// creates with Laravel's migrations: failed_jobs and job_batches for
// every store, and the jobs table of the database queue. The CLI checks
// them before a worker claims anything and creates them on request
// (`laraworker tables`, `work --create-tables`).
type Schema interface {
	// MissingTables names the store's tables (jobs, failed jobs,
	// batches, and the cache table when the app's cache store is database)
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
	Role    string // jobs, failed_jobs, job_batches, or cache
	Artisan string // the artisan command that writes its migration
}

func (m MissingTable) String() string {
	if m.Role == "cache" {
		// laraworker tables does not create the app's cache table: the
		// app's own migration does, for PHP's workers too.
		return fmt.Sprintf("the cache table %q does not exist, and the app's cache store is database: PHP's workers and laraworker read queue:restart and maxExceptions there (php artisan %s && php artisan migrate; Laravel 11+: php artisan make:cache-table)", m.Table, m.Artisan)
	}
	return fmt.Sprintf("the %s table %q does not exist (php artisan %s && php artisan migrate, or laraworker tables)", m.Role, m.Table, m.Artisan)
}
