package database

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-sql-driver/mysql"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/store/database/internal/sqlstmt"
)

// The claim index is laraworker's optional, additive schema on the jobs
// table (`laraworker tables --index`, or the bridge's migration): two
// indexes, and on MySQL/MariaDB the generated column the first one needs.
//
//   - the class index: (queue, class, available_at, id), where class is the
//     payload's displayName (a VIRTUAL generated column on MySQL, an
//     expression on PostgreSQL and SQLite). A claim of one class is one
//     range scan of that class's rows available by now, in (available_at,
//     id) order, that stops after n claimable rows: PHP-only classes and
//     delayed rows are never read; the rows it reads and skips are the
//     class's reservations still running.
//   - the queue index: (queue, available_at, id), the same without the
//     class, for claims that take every class (--unrouted=fail).
//
// Neither holds reserved_at (nor attempts): a claim's update then changes
// no indexed column, so it moves the row in no secondary index on
// MySQL/MariaDB and can be a HOT update on PostgreSQL. (The first version,
// with reserved_at after the class, made a table holding only Go's jobs
// drain at a third of its rate on MariaDB.)
//
// Laravel's own writers never name these, so they keep working; dropping
// them (DropClaimIndex) gives the table back exactly as it was.

// ClassColumn is the generated column holding the payload's displayName
// on MySQL and MariaDB.
const ClassColumn = sqlstmt.ClassColumn

// ClaimIndexColumns are the columns of the queue index.
var ClaimIndexColumns = sqlstmt.ClaimIndexColumns

// ClaimIndexName is the queue index's name.
func (q *Queue) ClaimIndexName() string { return q.st.ClaimIndexName() }

// ClassIndexName is the class index's name.
func (q *Queue) ClassIndexName() string { return q.st.ClassIndexName() }

// CreateClaimIndex adds the claim index (and the class column on MySQL)
// where missing, drops the indexes of earlier versions, then switches
// this queue's claims to it.
func (q *Queue) CreateClaimIndex(ctx context.Context) error {
	if err := q.checkIndexNameLengths(); err != nil {
		return err
	}
	for _, stmt := range q.st.CreateClaimIndex() {
		if _, err := q.db.ExecContext(ctx, stmt); err != nil && !isMySQLError(err, 1060, 1061) { // duplicate column, duplicate key name
			return fmt.Errorf("dbqueue: creating the claim index: %w", err)
		}
	}
	// Dropped once the new ones exist. A running worker of the earlier
	// version whose claim then fails re-reads the catalogue and falls
	// back to Laravel's query (stillIndexed).
	for _, stmt := range q.st.DropPreviousIndexes() {
		if _, err := q.db.ExecContext(ctx, stmt); err != nil && !isMySQLError(err, 1091) { // can't drop: not there
			return fmt.Errorf("dbqueue: dropping the previous claim index: %w", err)
		}
	}
	_, err := q.DetectClaimPath(ctx)
	return err
}

// DropClaimIndex removes what CreateClaimIndex added (and the index of
// earlier versions), then switches this queue's claims back to Laravel's
// query.
func (q *Queue) DropClaimIndex(ctx context.Context) error {
	for _, stmt := range q.st.DropClaimIndex() {
		if _, err := q.db.ExecContext(ctx, stmt); err != nil && !isMySQLError(err, 1091) { // can't drop: not there
			return fmt.Errorf("dbqueue: dropping the claim index: %w", err)
		}
	}
	_, err := q.DetectClaimPath(ctx)
	return err
}

func isMySQLError(err error, numbers ...uint16) bool {
	var me *mysql.MySQLError
	if !errors.As(err, &me) {
		return false
	}
	for _, n := range numbers {
		if me.Number == n {
			return true
		}
	}
	return false
}

// checkIndexNameLengths refuses index names the server would cut
// (PostgreSQL, to 63 bytes: the two claim indexes would get one name) or
// refuse (MySQL, over 64 characters), naming the cause: the jobs table's
// name is too long for the names the claim index adds to it.
func (q *Queue) checkIndexNameLengths() error {
	limit := 0
	switch q.d.Name() {
	case appconfig.EnginePgSQL:
		limit = pgMaxIdentifier
	case appconfig.EngineMySQL:
		limit = mysqlMaxIdentifier
	default:
		return nil
	}
	for _, name := range []string{q.ClassIndexName(), q.ClaimIndexName()} {
		if len(name) > limit {
			return fmt.Errorf("dbqueue: the claim index's name %q is longer than the %d the server allows: the jobs table's name (%q) is too long for the claim index; Laravel's claim query keeps working without it", name, limit, q.st.T.Jobs)
		}
	}
	return nil
}
