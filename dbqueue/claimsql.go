package dbqueue

import (
	"fmt"
	"strings"

	"github.com/laraworker/laraworker/appconfig"
)

// Statements of the batched claim outside --laravel-exact: the indexed
// path (the claim index is there) and the one-statement forms
// (PostgreSQL, SQLite). On PostgreSQL every list is one array parameter
// and the limit a parameter, so every batch size and every number of
// excluded ids is the same statement text.

// indexedFilter is the shape of a claim's restrictions on the indexed
// path: classes to take (none: every class), classes not to take, ids not
// to take.
type indexedFilter struct {
	names, notNames, ids int
}

// pgArrays: the engine binds a list as one array parameter.
func (s statements) pgArrays() bool { return s.d.Name() == appconfig.EnginePgSQL }

// limitClause is `limit n`, a parameter on PostgreSQL (bound by the
// caller, see claimLimitArg).
func (s statements) limitClause(n int) string {
	if s.pgArrays() {
		return " limit ?"
	}
	return fmt.Sprintf(" limit %d", n)
}

// classMatch restricts to n classes. One class is an equality, so the
// index's (available_at, id) order serves the claim's order without a
// sort; several read every ready row of those classes and sort them
// (PostgreSQL: `= any` of one array).
func (s statements) classMatch(n int) string {
	e := s.classExpr()
	switch {
	case n == 1:
		return e + " = ?" + s.classCollate()
	case s.pgArrays():
		return e + " = any(?)"
	}
	return e + s.classCollate() + " in (" + placeholders(n) + ")"
}

// classNotMatch excludes n classes. A row without a readable displayName
// (NULL) is not one of them, as `not (payload like ...)` would say.
func (s statements) classNotMatch(n int) string {
	e := s.classExpr()
	if s.pgArrays() {
		return "(" + e + " is null or " + e + " <> all(?))"
	}
	return "(" + e + " is null or " + e + s.classCollate() + " not in (" + placeholders(n) + "))"
}

// idsNotIn excludes n ids.
func (s statements) idsNotIn(n int) string {
	if s.pgArrays() {
		return s.q("id") + " <> all(?)"
	}
	return fmt.Sprintf("%s not in (%s)", s.q("id"), placeholders(n))
}

// indexedRange selects the ids (or, with all, the rows) a claim may take
// as one range of the claim index: the rows available by now, in
// (available_at, id) order, that are not reserved or whose reservation
// expired. It reads past the reservations still running (reserved_at is
// not in the index) and nothing else.
//
// Laravel's condition is `(reserved_at is null and available_at <= now)
// or reserved_at <= now - retry_after`. The range leaves out one kind of
// row of it: an expired reservation with available_at in the future.
// Laravel's writers never make one (a row is reserved only once it is
// available, and available_at never changes after the insert); a row
// written by hand that way is left to PHP workers. Taking it here would
// mean reading every delayed row of the class on every claim.
func (s statements) indexedRange(all bool, limit int, f indexedFilter) string {
	if f.names > 1 && s.pgArrays() {
		return s.indexedRangePerClass(limit, f)
	}
	cols := s.q("id")
	if all {
		// Laravel's columns, not *: * would compute the generated column
		// (a JSON parse of the payload) for every row returned.
		cols = s.quotedList(jobColumns)
	}
	b := fmt.Sprintf("select %s from %s where %s", cols, s.indexedFrom(f), s.indexedWhere(f))
	b += fmt.Sprintf(" order by %s, %s", s.q("available_at"), s.q("id")) + s.limitClause(limit)
	if s.lock != "" {
		b += " " + s.lock
	}
	return b
}

// indexedFrom names the index to read where the engine may otherwise
// choose another without statistics (SQLite the queue index, testing
// every row's payload; MariaDB the other claim index). The index is known
// to exist on this path; if it went away the claim fails and the worker
// looks again.
func (s statements) indexedFrom(f indexedFilter) string {
	idx := s.claimIndexName()
	if f.names > 0 {
		idx = s.classIndexName()
	}
	switch s.d.Name() {
	case appconfig.EngineSQLite:
		return s.q(s.t.Jobs) + " indexed by " + s.q(idx)
	case appconfig.EngineMySQL:
		return s.q(s.t.Jobs) + " force index (" + s.q(idx) + ")"
	}
	return s.q(s.t.Jobs)
}

// indexedWhere is the range's condition with the filter. Its arguments:
// queue, classes, now, now - retry_after, excluded classes, excluded ids.
func (s statements) indexedWhere(f indexedFilter) string {
	b := s.q("queue") + " = ?"
	if f.names > 0 {
		b += " and " + s.classMatch(f.names)
	}
	r := s.q("reserved_at")
	b += fmt.Sprintf(" and %s <= ?%s and (%s is null or %s <= ?)", s.q("available_at"), s.availableFloor(f), r, r)
	if f.notNames > 0 {
		b += " and " + s.classNotMatch(f.notNames)
	}
	if f.ids > 0 {
		b += " and " + s.idsNotIn(f.ids)
	}
	return b
}

// availableFloor bounds available_at from below on PostgreSQL's claim
// of every class (the queue index). The bound excludes no row: the least
// bigint but one, written as a constant so that it is no parameter typed
// as the (integer) column. Without statistics PostgreSQL
// estimates `available_at <= now` as a third of the rows, too few for
// the claim's limit to pay for reading the index in order, and plans a
// bitmap scan and a sort of every ready row; a range with both bounds
// is estimated at 0.5% instead, and the ordered index scan wins. With
// statistics the bound does not change the estimate. Not on the class
// index: the same estimate there makes PostgreSQL read the queue index
// instead, and test every row's class.
func (s statements) availableFloor(f indexedFilter) string {
	if !s.pgArrays() || f.names > 0 {
		return ""
	}
	return fmt.Sprintf(" and %s >= -9223372036854775807", s.q("available_at"))
}

// indexedRangePerClass is PostgreSQL's range for several classes: one
// range of the class index per class (a lateral subquery over the array
// of names), each stopping after limit rows, then the first limit of
// those. With `= any(array)` PostgreSQL would read the ready rows of every
// class in the queue index's order once it has statistics. Up to limit
// rows per class are locked for the statement; those not taken are free
// again when it ends.
func (s statements) indexedRangePerClass(limit int, f indexedFilter) string {
	one := f
	one.names = 1
	inner := s.indexedRange(false, limit, one)
	inner = strings.Replace(inner, "select "+s.q("id")+" from",
		fmt.Sprintf("select %s, %s from", s.q("id"), s.q("available_at")), 1)
	// The class is the lateral column instead of a parameter.
	inner = strings.Replace(inner, s.classExpr()+" = ?", s.classExpr()+" = "+s.q("c")+"."+s.q("name"), 1)
	r := func(c string) string { return s.q("r") + "." + s.q(c) }
	return fmt.Sprintf("select %s from unnest(?::text[]) as %s(%s) cross join lateral (%s) as %s order by %s, %s limit ?",
		r("id"), s.q("c"), s.q("name"), inner, s.q("r"), r("available_at"), r("id"))
}

// claimSelectIndexed is the indexed claim's select on MySQL/MariaDB (no
// UPDATE ... RETURNING there: the transaction then reserves the ids).
func (s statements) claimSelectIndexed(limit int, f indexedFilter) string {
	return s.sql(s.indexedRange(true, limit, f))
}

// claimUpdateIndexed reserves up to limit rows in one statement
// (PostgreSQL, SQLite) and returns them.
func (s statements) claimUpdateIndexed(limit int, f indexedFilter) string {
	if s.pgArrays() {
		return s.sql(fmt.Sprintf("with %s as (%s) ", s.q("picked"), s.indexedRange(false, limit, f)) + s.reservePicked())
	}
	return s.sql(s.reserveIn(s.indexedRange(false, limit, f)))
}

// claimUpdateLaravel reserves up to limit rows in one statement with
// Laravel's where clause and order (PostgreSQL, SQLite).
func (s statements) claimUpdateLaravel(limit int, f claimFilter) string {
	ids := fmt.Sprintf("select %s from %s order by %s asc", s.q("id"), s.claimableWhere(f), s.q("id"))
	ids += s.limitClause(limit)
	if s.pgArrays() {
		if s.lock != "" {
			ids += " " + s.lock
		}
		return s.sql(fmt.Sprintf("with %s as (%s) ", s.q("picked"), ids) + s.reservePicked())
	}
	return s.sql(s.reserveIn(ids))
}

// reservePicked is PostgreSQL's update of the ids a `picked` CTE locked;
// attempts is incremented on the locked row, as the transaction's
// `attempts + 1` does.
func (s statements) reservePicked() string {
	return fmt.Sprintf("update %s as %s set %s = ?, %s = %s.%s + 1 from %s where %s.%s = %s.%s returning %s.*",
		s.q(s.t.Jobs), s.q("j"), s.q("reserved_at"), s.q("attempts"), s.q("j"), s.q("attempts"),
		s.q("picked"), s.q("j"), s.q("id"), s.q("picked"), s.q("id"), s.q("j"))
}

// reserveIn is SQLite's: the database is locked for the statement, so the
// subquery's rows cannot change under it.
func (s statements) reserveIn(ids string) string {
	return fmt.Sprintf("update %s set %s = ?, %s = %s + 1 where %s in (%s) returning *",
		s.q(s.t.Jobs), s.q("reserved_at"), s.q("attempts"), s.q("attempts"), s.q("id"), ids)
}

// oneStatementClaims: the engine has UPDATE ... RETURNING and a claim can
// be one autocommitted statement.
func (s statements) oneStatementClaims() bool {
	return s.d.Name() == appconfig.EnginePgSQL || s.d.Name() == appconfig.EngineSQLite
}

// claimIndexed is the indexed claim's statement on this engine: the
// select of MySQL's transaction, the claiming update elsewhere.
func (s statements) claimIndexed(limit int, f indexedFilter) string {
	if s.oneStatementClaims() {
		return s.claimUpdateIndexed(limit, f)
	}
	return s.claimSelectIndexed(limit, f)
}
