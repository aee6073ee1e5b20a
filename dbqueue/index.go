package dbqueue

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-sql-driver/mysql"
	"github.com/laraworker/laraworker/appconfig"
	"github.com/laraworker/laraworker/sqldb"
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
const ClassColumn = "laraworker_class"

// classColumnLength bounds the generated column: a longer displayName is
// cut, so an insert never fails on it; names that long use the LIKE path.
const classColumnLength = 255

// jobColumns are the columns of Laravel's jobs table.
var jobColumns = []string{"id", "queue", "payload", "attempts", "reserved_at", "available_at", "created_at"}

// ClaimIndexColumns are the columns of the queue index.
var ClaimIndexColumns = []string{"queue", "available_at", "id"}

// ClaimIndexName is the queue index's name.
func (q *Queue) ClaimIndexName() string { return q.st.claimIndexName() }

// ClassIndexName is the class index's name.
func (q *Queue) ClassIndexName() string { return q.st.classIndexName() }

// The names say the columns: an index of an earlier version (other
// columns) has another name, so detection never mistakes one for the
// other.
func (s statements) claimIndexName() string {
	return sqldb.IndexName(sqldb.LastPart(s.t.Jobs), "laraworker_available", "index")
}

func (s statements) classIndexName() string {
	return sqldb.IndexName(sqldb.LastPart(s.t.Jobs), "laraworker_class_available", "index")
}

// previousIndexNames are the indexes earlier versions created with
// `tables --index`: (queue, reserved_at, available_at); then the class
// and queue indexes with reserved_at. CreateClaimIndex replaces them,
// DropClaimIndex removes them too.
func (s statements) previousIndexNames() []string {
	t := sqldb.LastPart(s.t.Jobs)
	return []string{
		sqldb.IndexName(t, "queue_reserved_at_available_at", "index"),
		sqldb.IndexName(t, "laraworker_class", "index"),
		sqldb.IndexName(t, "laraworker_claim", "index"),
	}
}

// CreateClaimIndex adds the claim index (and the class column on MySQL)
// where missing, drops the indexes of earlier versions, then switches
// this queue's claims to it.
func (q *Queue) CreateClaimIndex(ctx context.Context) error {
	for _, stmt := range q.st.createClaimIndex() {
		if _, err := q.db.ExecContext(ctx, stmt); err != nil && !isMySQLError(err, 1060, 1061) { // duplicate column, duplicate key name
			return fmt.Errorf("dbqueue: creating the claim index: %w", err)
		}
	}
	// Dropped once the new ones exist. A running worker of the earlier
	// version whose claim then fails re-reads the catalogue and falls
	// back to Laravel's query (stillIndexed).
	for _, stmt := range q.st.dropPreviousIndexes() {
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
	for _, stmt := range q.st.dropClaimIndex() {
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

// classExpr is the displayName as the class index holds it. Invalid JSON
// gives NULL rather than an error where the engine would raise one, so an
// insert never fails because of the index.
func (s statements) classExpr() string {
	p := s.q("payload")
	switch s.d.Name() {
	case appconfig.EngineMySQL:
		return s.q(ClassColumn)
	case appconfig.EnginePgSQL:
		// text::json and ->> are immutable; Laravel's payloads are always
		// JSON (json_encode), so the cast never fails on its inserts.
		return fmt.Sprintf("(%s::json ->> 'displayName')", p)
	}
	return fmt.Sprintf("(case when json_valid(%s) then json_extract(%s, '$.displayName') end)", p, p)
}

// classCollate makes SQLite's comparison case-insensitive as its LIKE is
// (MySQL's column takes the table's _ci collation; PostgreSQL's LIKE and
// = are both case-sensitive).
func (s statements) classCollate() string {
	if s.d.Name() == appconfig.EngineSQLite {
		return " collate nocase"
	}
	return ""
}

func (s statements) quotedList(cols []string) string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = s.q(c)
	}
	return strings.Join(out, ", ")
}

func (s statements) createIndex(name, cols string) string {
	if s.d.Name() == appconfig.EngineMySQL { // MySQL has no "if not exists" here: 1061 is ignored
		return fmt.Sprintf("create index %s on %s (%s)", s.q(name), s.q(s.t.Jobs), cols)
	}
	return fmt.Sprintf("create index if not exists %s on %s (%s)", s.q(name), s.q(s.t.Jobs), cols)
}

func (s statements) createClaimIndex() []string {
	var out []string
	if s.d.Name() == appconfig.EngineMySQL {
		p := s.q("payload")
		out = append(out, fmt.Sprintf("alter table %s add column %s varchar(%d) generated always as "+
			"(case when json_valid(%s) then left(json_unquote(json_extract(%s, '$.displayName')), %d) end) virtual",
			s.q(s.t.Jobs), s.q(ClassColumn), classColumnLength, p, p, classColumnLength))
	}
	classCols := s.q("queue") + ", " + s.classExpr() + s.classCollate() + ", " + s.quotedList(ClaimIndexColumns[1:])
	return append(out,
		s.createIndex(s.classIndexName(), classCols),
		s.createIndex(s.claimIndexName(), s.quotedList(ClaimIndexColumns)))
}

// dropPreviousIndexes drops the indexes of earlier versions (not the
// class column, which the class index still uses).
func (s statements) dropPreviousIndexes() []string {
	var out []string
	for _, n := range s.previousIndexNames() {
		out = append(out, dropIndexSQL(s.d, s.t.Jobs, n))
	}
	return out
}

func (s statements) dropClaimIndex() []string {
	out := []string{dropIndexSQL(s.d, s.t.Jobs, s.classIndexName()), dropIndexSQL(s.d, s.t.Jobs, s.claimIndexName())}
	out = append(out, s.dropPreviousIndexes()...)
	if s.d.Name() == appconfig.EngineMySQL {
		out = append(out, fmt.Sprintf("alter table %s drop column %s", s.q(s.t.Jobs), s.q(ClassColumn)))
	}
	return out
}

// dropIndexSQL: on PostgreSQL an index lives in its table's schema; MySQL
// has no "if exists" (1091 is ignored).
func dropIndexSQL(d sqldb.Dialect, table, name string) string {
	switch d.Name() {
	case appconfig.EngineMySQL:
		return fmt.Sprintf("drop index %s on %s", d.Quote(name), d.Quote(table))
	case appconfig.EnginePgSQL:
		if i := strings.LastIndexByte(table, '.'); i >= 0 {
			name = table[:i] + "." + name
		}
	}
	return "drop index if exists " + d.Quote(name)
}
