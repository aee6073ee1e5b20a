package database

import (
	"context"
	"fmt"
	"unicode/utf8"

	"github.com/laraworker/laraworker/internal/sqldb"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/store/database/internal/sqlstmt"
)

// ClaimPath names the statements a batched claim runs.
type ClaimPath string

const (
	// ClaimPathLaravel is Laravel's where clause in id order, the
	// displayName filter a LIKE on the payload: every row of other
	// classes and every delayed row before the first claimable one is read.
	ClaimPathLaravel ClaimPath = "laravel"
	// ClaimPathIndexed uses the claim index (CreateClaimIndex): the
	// class's claimable rows in (available_at, id) order.
	ClaimPathIndexed ClaimPath = "indexed"
)

// ClaimPathInfo is what DetectClaimPath found.
type ClaimPathInfo struct {
	Path ClaimPath
	// NoStatistics: PostgreSQL has never analysed the jobs table. Open's
	// own sessions then read Laravel's claim in id order (sqldb), past any
	// delayed row or row of another queue ahead. Only reported on the
	// Laravel path; the indexed path's plan does not need statistics.
	NoStatistics bool
	// PreviousIndex: the claim index of an earlier version is there (it
	// holds reserved_at) and not this version's: claims use Laravel's
	// query until `laraworker tables --index` replaces it.
	PreviousIndex bool
}

// DetectClaimPath looks for the claim index in the catalogue and makes
// this queue's claims use it when both its indexes are there (Laravel's
// query otherwise). Workers call it at start; CreateClaimIndex and
// DropClaimIndex call it after changing the schema.
func (q *Queue) DetectClaimPath(ctx context.Context) (ClaimPathInfo, error) {
	n, err := q.countIndexes(ctx, q.ClassIndexName(), q.ClaimIndexName())
	if err != nil {
		return ClaimPathInfo{}, fmt.Errorf("dbqueue: looking for the claim index: %w", err)
	}
	info := ClaimPathInfo{Path: ClaimPathLaravel}
	if n == 2 {
		info.Path = ClaimPathIndexed
	} else if n, err = q.countIndexes(ctx, q.st.PreviousIndexNames()...); err != nil {
		return ClaimPathInfo{}, fmt.Errorf("dbqueue: looking for the claim index: %w", err)
	} else {
		info.PreviousIndex = n > 0
	}
	q.indexed.Store(info.Path == ClaimPathIndexed)
	if info.Path == ClaimPathLaravel && q.d.Name() == appconfig.EnginePgSQL {
		if info.NoStatistics, err = q.pgNeverAnalysed(ctx); err != nil {
			return ClaimPathInfo{}, fmt.Errorf("dbqueue: reading the jobs table's statistics: %w", err)
		}
	}
	return info, nil
}

// countIndexes counts which of the named indexes the jobs table has.
func (q *Queue) countIndexes(ctx context.Context, names ...string) (int, error) {
	var query string
	var args []any
	for _, n := range names {
		args = append(args, n)
	}
	switch q.d.Name() {
	case appconfig.EngineMySQL:
		query = "select count(distinct index_name) from information_schema.statistics where table_schema = " +
			"coalesce(?, database()) and table_name = ? and index_name in (" + sqlstmt.Placeholders(len(names)) + ")"
		args = append([]any{mysqlSchema(q.st.T.Jobs), sqldb.LastPart(q.st.T.Jobs)}, args...)
	case appconfig.EnginePgSQL:
		// to_regclass resolves the name as the claim would (search_path).
		query = "select count(*) from pg_index i join pg_class c on c.oid = i.indexrelid " +
			"where i.indrelid = to_regclass($1) and i.indisvalid and c.relname = any($2)"
		args = []any{q.st.Q(q.st.T.Jobs), pgIdentifiers(names)}
	default:
		query = "select count(*) from sqlite_master where type = 'index' and tbl_name = ? and name in (" + sqlstmt.Placeholders(len(names)) + ")"
		args = append([]any{sqldb.LastPart(q.st.T.Jobs)}, args...)
	}
	var n int
	err := q.db.QueryRowContext(ctx, query, args...).Scan(&n)
	return n, err
}

// Identifier limits: PostgreSQL cuts longer names to NAMEDATALEN - 1
// bytes, MySQL refuses names over 64 characters.
const (
	pgMaxIdentifier    = 63
	mysqlMaxIdentifier = 64
)

// pgIdentifiers cuts names to PostgreSQL's 63-byte identifier limit, as
// CREATE INDEX does when it stores them: a longer name (a long table name
// plus an index suffix) would otherwise fail the comparison with
// relname ("identifier too long") and stop the worker at start-up.
func pgIdentifiers(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		if len(n) > pgMaxIdentifier {
			n = n[:pgMaxIdentifier]
			for !utf8.ValidString(n) { // PostgreSQL never cuts inside a character
				n = n[:len(n)-1]
			}
		}
		out[i] = n
	}
	return out
}

// mysqlSchema is the database a qualified table name names, nil for the
// connection's own.
func mysqlSchema(table string) any {
	for i := len(table) - 1; i >= 0; i-- {
		if table[i] == '.' {
			return table[:i]
		}
	}
	return nil
}

// pgNeverAnalysed: reltuples is -1 until the first ANALYZE or VACUUM
// (PostgreSQL 14+). Older servers say 0, which cannot be told from an
// empty table: no hint there.
func (q *Queue) pgNeverAnalysed(ctx context.Context) (bool, error) {
	var reltuples float64
	err := q.db.QueryRowContext(ctx, "select coalesce((select reltuples from pg_class where oid = to_regclass($1)), 0)",
		q.st.Q(q.st.T.Jobs)).Scan(&reltuples)
	return reltuples < 0, err
}
