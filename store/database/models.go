package database

import (
	"context"
	"fmt"

	"github.com/laraworker/laraworker/laravel/appconfig"
)

// ModelExists reports whether the row of an Eloquent model exists: the
// query SerializesModels runs to restore a job's model (newQueryForRestoration
// ignores global scopes, so soft-deleted rows count as existing). table
// may be schema-qualified; key is the primary key column.
func (q *Queue) ModelExists(ctx context.Context, table, key string, id any) (bool, error) {
	if err := appconfig.ValidateTableName(table); err != nil {
		return false, err
	}
	if !appconfig.ValidIdentifier(key) {
		return false, fmt.Errorf("dbqueue: invalid key column %q", key)
	}
	query := q.d.Rebind(fmt.Sprintf("select 1 from %s where %s = ? limit 1", q.d.Quote(table), q.d.Quote(key)))
	rows, err := q.db.QueryContext(ctx, query, id)
	if err != nil {
		return false, fmt.Errorf("dbqueue: looking up a model in %s: %w", table, err)
	}
	defer rows.Close()
	found := rows.Next()
	return found, rows.Err()
}
