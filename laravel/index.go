package laravel

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-sql-driver/mysql"
)

// ClaimIndexColumns are the columns of the optional composite index on the
// jobs table (`laraworker tables --index`): the claim query's equality
// column, then the two columns of its availability condition. Laravel's
// migration only indexes `queue`.
var ClaimIndexColumns = []string{"queue", "reserved_at", "available_at"}

// ClaimIndexName is the index's name, built as Laravel's
// Blueprint::createIndexName would for index(ClaimIndexColumns).
func (q *Queue) ClaimIndexName() string {
	return indexName(lastPart(q.st.t.Jobs), strings.Join(ClaimIndexColumns, "_"), "index")
}

// CreateClaimIndex adds the composite index if it is missing.
func (q *Queue) CreateClaimIndex(ctx context.Context) error {
	_, err := q.db.ExecContext(ctx, createClaimIndexSQL(q.d, q.st.t.Jobs, q.ClaimIndexName()))
	var me *mysql.MySQLError
	if errors.As(err, &me) && me.Number == 1061 { // ER_DUP_KEYNAME: already there
		return nil
	}
	if err != nil {
		return fmt.Errorf("laravel: creating index %s: %w", q.ClaimIndexName(), err)
	}
	return nil
}

// DropClaimIndex removes the composite index if it exists.
func (q *Queue) DropClaimIndex(ctx context.Context) error {
	_, err := q.db.ExecContext(ctx, dropClaimIndexSQL(q.d, q.st.t.Jobs, q.ClaimIndexName()))
	var me *mysql.MySQLError
	if errors.As(err, &me) && me.Number == 1091 { // ER_CANT_DROP_FIELD_OR_KEY: not there
		return nil
	}
	if err != nil {
		return fmt.Errorf("laravel: dropping index %s: %w", q.ClaimIndexName(), err)
	}
	return nil
}

// createClaimIndexSQL: MySQL has no "create index if not exists" (MariaDB
// has), so its duplicate-name error is what makes the call idempotent.
func createClaimIndexSQL(d Dialect, table, name string) string {
	cols := make([]string, len(ClaimIndexColumns))
	for i, c := range ClaimIndexColumns {
		cols[i] = d.Quote(c)
	}
	list := strings.Join(cols, ", ")
	if d.Name() == EngineMySQL {
		return fmt.Sprintf("create index %s on %s (%s)", d.Quote(name), d.Quote(table), list)
	}
	return fmt.Sprintf("create index if not exists %s on %s (%s)", d.Quote(name), d.Quote(table), list)
}

// dropClaimIndexSQL: on PostgreSQL an index lives in its table's schema.
func dropClaimIndexSQL(d Dialect, table, name string) string {
	switch d.Name() {
	case EngineMySQL:
		return fmt.Sprintf("drop index %s on %s", d.Quote(name), d.Quote(table))
	case EnginePgSQL:
		if i := strings.LastIndexByte(table, '.'); i >= 0 {
			name = table[:i] + "." + name
		}
	}
	return "drop index if exists " + d.Quote(name)
}
