package sqlstmt

import (
	"fmt"
	"strings"

	"github.com/laraworker/laraworker/laravel/appconfig"
)

// Statements of the batched claim outside --laravel-exact: the indexed
// path (the claim index is there) and the one-statement forms
// (PostgreSQL, SQLite). In the one-statement forms the limit is a
// parameter, so every batch size is the same statement text (a worker
// whose free places change renders none anew); on PostgreSQL every list
// is one array parameter too, so every number of excluded ids is the
// same text as well.

// IndexedFilter is the shape of a claim's restrictions on the indexed
// path: classes to take (none: every class), classes not to take, ids not
// to take.
type IndexedFilter struct {
	Names, NotNames, IDs int
}

// PgArrays says whether the engine binds a list as one array parameter.
func (s Statements) PgArrays() bool { return s.pg }

// BindsLimit says whether the claim's limit is a parameter (bound by the
// caller, last of the range's arguments): in the one-statement forms
// (PostgreSQL, SQLite); MySQL's select has it in its text.
func (s Statements) BindsLimit() bool { return s.oneStmt }

// limitClause is `limit n`, a parameter where BindsLimit.
func (s Statements) limitClause(n int) string {
	if s.BindsLimit() {
		return " limit ?"
	}
	return fmt.Sprintf(" limit %d", n)
}

// classMatch restricts to n classes. One class is an equality, so the
// index's (available_at, id) order serves the claim's order without a
// sort; several read every ready row of those classes and sort them
// (PostgreSQL: `= any` of one array).
func (s Statements) classMatch(n int) string {
	e := s.ClassExpr()
	switch {
	case n == 1:
		return e + " = ?" + s.ClassCollate()
	case s.PgArrays():
		return e + " = any(?)"
	}
	return e + s.ClassCollate() + " in (" + Placeholders(n) + ")"
}

// classNotMatch excludes n classes. A row without a readable displayName
// (NULL) is not one of them, as `not (payload like ...)` would say.
func (s Statements) classNotMatch(n int) string {
	e := s.ClassExpr()
	if s.PgArrays() {
		return "(" + e + " is null or " + e + " <> all(?))"
	}
	return "(" + e + " is null or " + e + s.ClassCollate() + " not in (" + Placeholders(n) + "))"
}

// idsNotIn excludes n ids.
func (s Statements) idsNotIn(n int) string {
	if s.PgArrays() {
		return s.Q("id") + " <> all(?)"
	}
	return fmt.Sprintf("%s not in (%s)", s.Q("id"), Placeholders(n))
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
func (s Statements) indexedRange(all bool, limit int, f IndexedFilter) string {
	if f.Names > 1 && s.PgArrays() {
		return s.indexedRangePerClass(limit, f)
	}
	cols := s.Q("id")
	if all {
		// Laravel's columns, not *: * would compute the generated column
		// (a JSON parse of the payload) for every row returned.
		cols = s.QuotedList(jobColumns)
	}
	b := fmt.Sprintf("select %s from %s where %s", cols, s.indexedFrom(f), s.indexedWhere(f))
	b += fmt.Sprintf(" order by %s, %s", s.Q("available_at"), s.Q("id")) + s.limitClause(limit)
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
func (s Statements) indexedFrom(f IndexedFilter) string {
	idx := s.ClaimIndexName()
	if f.Names > 0 {
		idx = s.ClassIndexName()
	}
	switch s.d.Name() {
	case appconfig.EngineSQLite:
		return s.Q(s.T.Jobs) + " indexed by " + s.Q(idx)
	case appconfig.EngineMySQL:
		return s.Q(s.T.Jobs) + " force index (" + s.Q(idx) + ")"
	}
	return s.Q(s.T.Jobs)
}

// indexedWhere is the range's condition with the filter. Its arguments:
// queue, classes, now, now - retry_after, excluded classes, excluded ids.
func (s Statements) indexedWhere(f IndexedFilter) string {
	b := s.Q("queue") + " = ?"
	if f.Names > 0 {
		b += " and " + s.classMatch(f.Names)
	}
	r := s.Q("reserved_at")
	b += fmt.Sprintf(" and %s <= ?%s and (%s is null or %s <= ?)", s.Q("available_at"), s.availableFloor(f), r, r)
	if f.NotNames > 0 {
		b += " and " + s.classNotMatch(f.NotNames)
	}
	if f.IDs > 0 {
		b += " and " + s.idsNotIn(f.IDs)
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
func (s Statements) availableFloor(f IndexedFilter) string {
	if !s.PgArrays() || f.Names > 0 {
		return ""
	}
	return fmt.Sprintf(" and %s >= -9223372036854775807", s.Q("available_at"))
}

// indexedRangePerClass is PostgreSQL's range for several classes: one
// range of the class index per class (a lateral subquery over the array
// of names), each stopping after limit rows, then the first limit of
// those. With `= any(array)` PostgreSQL would read the ready rows of every
// class in the queue index's order once it has statistics. Up to limit
// rows per class are locked for the statement; those not taken are free
// again when it ends.
func (s Statements) indexedRangePerClass(limit int, f IndexedFilter) string {
	one := f
	one.Names = 1
	inner := s.indexedRange(false, limit, one)
	inner = strings.Replace(inner, "select "+s.Q("id")+" from",
		fmt.Sprintf("select %s, %s from", s.Q("id"), s.Q("available_at")), 1)
	// The class is the lateral column instead of a parameter.
	inner = strings.Replace(inner, s.ClassExpr()+" = ?", s.ClassExpr()+" = "+s.Q("c")+"."+s.Q("name"), 1)
	r := func(c string) string { return s.Q("r") + "." + s.Q(c) }
	return fmt.Sprintf("select %s from unnest(?::text[]) as %s(%s) cross join lateral (%s) as %s order by %s, %s limit ?",
		r("id"), s.Q("c"), s.Q("name"), inner, s.Q("r"), r("available_at"), r("id"))
}

// ClaimSelectIndexed is the indexed claim's select on MySQL/MariaDB (no
// UPDATE ... RETURNING there: the transaction then reserves the ids).
func (s Statements) ClaimSelectIndexed(limit int, f IndexedFilter) string {
	return s.sql(s.indexedRange(true, limit, f))
}

// ClaimUpdateIndexed reserves up to limit rows in one statement
// (PostgreSQL, SQLite) and returns them.
func (s Statements) ClaimUpdateIndexed(limit int, f IndexedFilter) string {
	if s.PgArrays() {
		return s.sql(fmt.Sprintf("with %s as (%s) ", s.Q("picked"), s.indexedRange(false, limit, f)) + s.reservePicked())
	}
	return s.sql(s.reserveIn(s.indexedRange(false, limit, f)))
}

// ClaimUpdateLaravel reserves up to a limit of rows in one statement with
// Laravel's where clause and order (PostgreSQL, SQLite). The limit is a
// parameter: one text (and one kept) for every batch size.
func (s Statements) ClaimUpdateLaravel(f ClaimFilter) string {
	return s.kept(textKey{stmt: textClaimUpdate, f: f}, func() string { return s.renderClaimUpdateLaravel(f) })
}

func (s Statements) renderClaimUpdateLaravel(f ClaimFilter) string {
	ids := fmt.Sprintf("select %s from %s order by %s asc limit ?", s.Q("id"), s.claimableWhere(f), s.Q("id"))
	if s.PgArrays() {
		if s.lock != "" {
			ids += " " + s.lock
		}
		return s.sql(fmt.Sprintf("with %s as (%s) ", s.Q("picked"), ids) + s.reservePicked())
	}
	return s.sql(s.reserveIn(ids))
}

// reservePicked is PostgreSQL's update of the ids a `picked` CTE locked;
// attempts is incremented on the locked row, as the transaction's
// `attempts + 1` does.
func (s Statements) reservePicked() string {
	return fmt.Sprintf("update %s as %s set %s = ?, %s = %s.%s + 1 from %s where %s.%s = %s.%s returning %s.*",
		s.Q(s.T.Jobs), s.Q("j"), s.Q("reserved_at"), s.Q("attempts"), s.Q("j"), s.Q("attempts"),
		s.Q("picked"), s.Q("j"), s.Q("id"), s.Q("picked"), s.Q("id"), s.Q("j"))
}

// reserveIn is SQLite's: the database is locked for the statement, so the
// subquery's rows cannot change under it.
func (s Statements) reserveIn(ids string) string {
	return fmt.Sprintf("update %s set %s = ?, %s = %s + 1 where %s in (%s) returning *",
		s.Q(s.T.Jobs), s.Q("reserved_at"), s.Q("attempts"), s.Q("attempts"), s.Q("id"), ids)
}

// OneStatementClaims says whether the engine has UPDATE ... RETURNING, so
// that a claim can be one autocommitted statement.
func (s Statements) OneStatementClaims() bool { return s.oneStmt }

// claimIndexed is the indexed claim's statement on this engine: the
// select of MySQL's transaction, the claiming update elsewhere.
func (s Statements) claimIndexed(limit int, f IndexedFilter) string {
	if s.OneStatementClaims() {
		return s.ClaimUpdateIndexed(limit, f)
	}
	return s.ClaimSelectIndexed(limit, f)
}
