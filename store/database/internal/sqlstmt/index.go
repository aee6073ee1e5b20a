package sqlstmt

import (
	"fmt"
	"strings"

	"github.com/laraworker/laraworker/internal/sqldb"
	"github.com/laraworker/laraworker/laravel/appconfig"
)

// ClassColumn is the generated column holding the payload's displayName
// on MySQL and MariaDB.
const ClassColumn = "laraworker_class"

// ClassColumnLength bounds the generated column: a longer displayName is
// cut, so an insert never fails on it; names that long use the LIKE path.
const ClassColumnLength = 255

// jobColumns are the columns of Laravel's jobs table.
var jobColumns = []string{"id", "queue", "payload", "attempts", "reserved_at", "available_at", "created_at"}

// ClaimIndexColumns are the columns of the queue index.
var ClaimIndexColumns = []string{"queue", "available_at", "id"}

// ClaimIndexName is the queue index's name. The names say the columns:
// an index of an earlier version (other columns) has another name, so
// detection never mistakes one for the other.
func (s Statements) ClaimIndexName() string {
	return sqldb.IndexName(sqldb.LastPart(s.T.Jobs), "laraworker_available", "index")
}

// ClassIndexName is the class index's name.
func (s Statements) ClassIndexName() string {
	return sqldb.IndexName(sqldb.LastPart(s.T.Jobs), "laraworker_class_available", "index")
}

// PreviousIndexNames are the indexes earlier versions created with
// `tables --index`: (queue, reserved_at, available_at); then the class
// and queue indexes with reserved_at. CreateClaimIndex replaces them,
// DropClaimIndex removes them too.
func (s Statements) PreviousIndexNames() []string {
	t := sqldb.LastPart(s.T.Jobs)
	return []string{
		sqldb.IndexName(t, "queue_reserved_at_available_at", "index"),
		sqldb.IndexName(t, "laraworker_class", "index"),
		sqldb.IndexName(t, "laraworker_claim", "index"),
	}
}

// ClassExpr is the displayName as the class index holds it. Invalid JSON
// gives NULL rather than an error where the engine would raise one, so an
// insert never fails because of the index.
func (s Statements) ClassExpr() string {
	p := s.Q("payload")
	switch s.d.Name() {
	case appconfig.EngineMySQL:
		return s.Q(ClassColumn)
	case appconfig.EnginePgSQL:
		// text::json and ->> are immutable; Laravel's payloads are always
		// JSON (json_encode), so the cast never fails on its inserts.
		return fmt.Sprintf("(%s::json ->> 'displayName')", p)
	}
	return fmt.Sprintf("(case when json_valid(%s) then json_extract(%s, '$.displayName') end)", p, p)
}

// ClassCollate makes SQLite's comparison case-insensitive as its LIKE is
// (MySQL's column takes the table's _ci collation; PostgreSQL's LIKE and
// = are both case-sensitive).
func (s Statements) ClassCollate() string {
	if s.d.Name() == appconfig.EngineSQLite {
		return " collate nocase"
	}
	return ""
}

// QuotedList is the columns quoted and comma-separated.
func (s Statements) QuotedList(cols []string) string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = s.Q(c)
	}
	return strings.Join(out, ", ")
}

// CreateIndex creates index name on the jobs table's cols (already quoted).
func (s Statements) CreateIndex(name, cols string) string {
	if s.d.Name() == appconfig.EngineMySQL { // MySQL has no "if not exists" here: 1061 is ignored
		return fmt.Sprintf("create index %s on %s (%s)", s.Q(name), s.Q(s.T.Jobs), cols)
	}
	return fmt.Sprintf("create index if not exists %s on %s (%s)", s.Q(name), s.Q(s.T.Jobs), cols)
}

// CreateClaimIndex adds the class column (MySQL) and the two indexes of
// the claim index, each statement skipping what exists.
func (s Statements) CreateClaimIndex() []string {
	var out []string
	if s.d.Name() == appconfig.EngineMySQL {
		p := s.Q("payload")
		out = append(out, fmt.Sprintf("alter table %s add column %s varchar(%d) generated always as "+
			"(case when json_valid(%s) then left(json_unquote(json_extract(%s, '$.displayName')), %d) end) virtual",
			s.Q(s.T.Jobs), s.Q(ClassColumn), ClassColumnLength, p, p, ClassColumnLength))
	}
	classCols := s.Q("queue") + ", " + s.ClassExpr() + s.ClassCollate() + ", " + s.QuotedList(ClaimIndexColumns[1:])
	return append(out,
		s.CreateIndex(s.ClassIndexName(), classCols),
		s.CreateIndex(s.ClaimIndexName(), s.QuotedList(ClaimIndexColumns)))
}

// DropPreviousIndexes drops the indexes of earlier versions (not the
// class column, which the class index still uses).
func (s Statements) DropPreviousIndexes() []string {
	var out []string
	for _, n := range s.PreviousIndexNames() {
		out = append(out, dropIndexSQL(s.d, s.T.Jobs, n))
	}
	return out
}

// DropClaimIndex drops what CreateClaimIndex adds and the indexes of
// earlier versions.
func (s Statements) DropClaimIndex() []string {
	out := []string{dropIndexSQL(s.d, s.T.Jobs, s.ClassIndexName()), dropIndexSQL(s.d, s.T.Jobs, s.ClaimIndexName())}
	out = append(out, s.DropPreviousIndexes()...)
	if s.d.Name() == appconfig.EngineMySQL {
		out = append(out, fmt.Sprintf("alter table %s drop column %s", s.Q(s.T.Jobs), s.Q(ClassColumn)))
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
