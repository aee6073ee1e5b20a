package dbqueue

import (
	"fmt"
	"strings"

	"github.com/laraworker/laraworker/appconfig"
	"github.com/laraworker/laraworker/sqldb"
)

// statements renders every SQL statement the queue runs, for one dialect
// and one set of table names. Keeping them in one place lets SQL.md be
// generated from (and checked against) the code.
type statements struct {
	d    sqldb.Dialect
	t    sqldb.Tables
	lock string // Laravel's lock for popping; "" on SQLite
}

func newStatements(d sqldb.Dialect, t sqldb.Tables, lock string) statements {
	return statements{d: d, t: t, lock: lock}
}

func (s statements) q(ident string) string { return s.d.Quote(ident) }

// sql finalises a statement written with '?' placeholders.
func (s statements) sql(query string) string { return s.d.Rebind(query) }

func placeholders(n int) string {
	if n <= 0 {
		return ""
	}
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// likeEscape is the LIKE escape character used by every filter. '!' rather
// than the engines' default '\' keeps the pattern independent of
// NO_BACKSLASH_ESCAPES / standard_conforming_strings, and payloads are full
// of backslashes we would otherwise have to double.
const likeEscape = '!'

// claimFilter is the shape of a claim's optional restrictions: how many
// displayName patterns to match, how many not to match, how many ids to
// skip.
type claimFilter struct {
	names, notNames, ids int
	// idArray binds the excluded ids as one array (PostgreSQL's
	// one-statement claim).
	idArray bool
	// fromID adds `id >= ?` after the other bindings: the claim starts
	// at a lower bound below which no row was claimable (claimscan.go).
	fromID bool
}

// claimSelect is Laravel's getNextAvailableJob query with `limit` and an
// optional displayName filter (nFilters alternatives).
func (s statements) claimSelect(limit, nFilters int) string {
	return s.claimSelectFiltered(limit, claimFilter{names: nFilters})
}

// claimSelectFiltered adds the filter: displayName patterns that must
// match, patterns that must not (classes the worker stopped claiming), and
// `id not in (...)` for rows a worker gave back to PHP and must not
// reserve again.
func (s statements) claimSelectFiltered(limit int, f claimFilter) string {
	b := "select * from " + s.claimableWhere(f)
	b += fmt.Sprintf(" order by %s asc limit %d", s.q("id"), limit)
	if s.lock != "" {
		b += " " + s.lock
	}
	return s.sql(b)
}

// countClaimable counts what claimSelectFiltered could return, reading
// without locks: a claim with SKIP LOCKED that comes back empty does not
// prove the queue is empty.
func (s statements) countClaimable(f claimFilter) string {
	return s.sql("select count(*) from " + s.claimableWhere(f))
}

// claimableWhere is the table and where clause shared by the claim and its
// count.
func (s statements) claimableWhere(f claimFilter) string {
	b := fmt.Sprintf("%s where %s = ? and ((%s is null and %s <= ?) or (%s <= ?))",
		s.q(s.t.Jobs), s.q("queue"), s.q("reserved_at"), s.q("available_at"), s.q("reserved_at"))
	if f.names > 0 {
		b += " and (" + s.payloadLikes(f.names) + ")"
	}
	if f.notNames > 0 {
		b += " and not (" + s.payloadLikes(f.notNames) + ")"
	}
	if f.ids > 0 && f.idArray {
		b += " and " + s.idsNotIn(f.ids)
	} else if f.ids > 0 {
		b += fmt.Sprintf(" and %s not in (%s)", s.q("id"), placeholders(f.ids))
	}
	if f.fromID {
		b += fmt.Sprintf(" and %s >= ?", s.q("id"))
	}
	return b
}

// payloadLikes is n `payload like ?` alternatives.
func (s statements) payloadLikes(n int) string {
	alts := make([]string, n)
	for i := range alts {
		alts[i] = fmt.Sprintf("%s like ? escape '%c'", s.q("payload"), likeEscape)
	}
	return strings.Join(alts, " or ")
}

// markReserved is Laravel's markJobAsReserved: attempts computed by the
// caller from the fetched row.
func (s statements) markReserved() string {
	return s.sql(fmt.Sprintf("update %s set %s = ?, %s = ? where %s = ?",
		s.q(s.t.Jobs), s.q("reserved_at"), s.q("attempts"), s.q("id")))
}

// markReservedMany reserves a batch; attempts is incremented in SQL, which
// is equivalent inside the claiming transaction because the rows are
// locked (or, on SQLite, the database is).
func (s statements) markReservedMany(n int) string {
	return s.sql(fmt.Sprintf("update %s set %s = ?, %s = %s + 1 where %s in (%s)",
		s.q(s.t.Jobs), s.q("reserved_at"), s.q("attempts"), s.q("attempts"), s.q("id"), placeholders(n)))
}

// findForUpdate is lockForUpdate()->find($id).
func (s statements) findForUpdate() string {
	b := fmt.Sprintf("select * from %s where %s = ? limit 1", s.q(s.t.Jobs), s.q("id"))
	if fu := s.d.ForUpdate(); fu != "" {
		b += " " + fu
	}
	return s.sql(b)
}

func (s statements) deleteJob() string {
	return s.sql(fmt.Sprintf("delete from %s where %s = ?", s.q(s.t.Jobs), s.q("id")))
}

func (s statements) deleteJobs(n int) string {
	return s.sql(fmt.Sprintf("delete from %s where %s in (%s)", s.q(s.t.Jobs), s.q("id"), placeholders(n)))
}

// deleteReservedJob deletes one job only while it carries this worker's
// reservation (bindings id, reserved_at): a row another worker reclaimed
// after retry_after has another reserved_at and is left alone.
func (s statements) deleteReservedJob() string {
	return s.sql(fmt.Sprintf("delete from %s where %s = ? and %s = ?", s.q(s.t.Jobs), s.q("id"), s.q("reserved_at")))
}

// deleteUnreservedJob deletes a row a claim selected but could not
// reserve (attempts overflowing), only while it is still unreserved.
func (s statements) deleteUnreservedJob() string {
	return s.sql(fmt.Sprintf("delete from %s where %s = ? and %s is null", s.q(s.t.Jobs), s.q("id"), s.q("reserved_at")))
}

// deleteReservedJobs deletes n jobs reserved with one token (a claim or a
// refresh sets one value for all its rows) and returns the ids deleted,
// which tell the rows whose reservation was lost. On PostgreSQL the ids
// are one array parameter (idArrays).
func (s statements) deleteReservedJobs(n int) string {
	ids := fmt.Sprintf("%s in (%s)", s.q("id"), placeholders(n))
	if s.idArrays() {
		ids = fmt.Sprintf("%s = any(cast(? as bigint[]))", s.q("id"))
	}
	return s.sql(fmt.Sprintf("delete from %s where %s = ? and %s returning %s",
		s.q(s.t.Jobs), s.q("reserved_at"), ids, s.q("id")))
}

// idArrays says whether id lists are bound as one array parameter
// (PostgreSQL) rather than written as one placeholder per id: the
// statement text is then the same for every list length, so the driver's
// prepared statement cache holds one statement instead of one per length
// (each new one costs a Parse round trip and evicts others). MySQL's
// driver interpolates client-side and SQLite's prepares every statement
// anyway: they keep the placeholders.
func (s statements) idArrays() bool { return s.d.Name() == appconfig.EnginePgSQL }

// lockReservedJobs is deleteReservedJobs' first half where DELETE has no
// RETURNING (MySQL): lock the rows that still carry the token, then
// delete those ids.
func (s statements) lockReservedJobs(n int) string {
	b := fmt.Sprintf("select %s from %s where %s = ? and %s in (%s)", s.q("id"), s.q(s.t.Jobs), s.q("reserved_at"), s.q("id"), placeholders(n))
	if fu := s.d.ForUpdate(); fu != "" {
		b += " " + fu
	}
	return s.sql(b)
}

var jobInsertColumns = []string{"queue", "attempts", "reserved_at", "available_at", "created_at", "payload"}

// insertJobs is buildDatabaseRecord's column order, n rows; with n == 1
// the dialect's "returning id" is appended.
func (s statements) insertJobs(n int) string {
	cols := make([]string, len(jobInsertColumns))
	for i, c := range jobInsertColumns {
		cols[i] = s.q(c)
	}
	row := "(" + placeholders(len(cols)) + ")"
	rows := strings.TrimSuffix(strings.Repeat(row+", ", n), ", ")
	b := fmt.Sprintf("insert into %s (%s) values %s", s.q(s.t.Jobs), strings.Join(cols, ", "), rows)
	if n == 1 {
		b += s.d.ReturningID()
	}
	return s.sql(b)
}

// extendReservation refreshes one job's reservation while it still
// carries the token this worker holds: bindings new reserved_at, id, token.
// One row per statement, so the rows affected say exactly which
// reservations still held.
func (s statements) extendReservation() string {
	return s.sql(fmt.Sprintf("update %s set %s = ? where %s = ? and %s = ?",
		s.q(s.t.Jobs), s.q("reserved_at"), s.q("id"), s.q("reserved_at")))
}

func (s statements) queueSizes() string {
	r, a := s.q("reserved_at"), s.q("available_at")
	return s.sql(fmt.Sprintf("select %s, "+
		"sum(case when %s is null and %s <= ? then 1 else 0 end), "+
		"sum(case when %s is null and %s > ? then 1 else 0 end), "+
		"sum(case when %s is not null and %s > ? then 1 else 0 end), "+
		"sum(case when %s is not null and %s <= ? then 1 else 0 end) "+
		"from %s group by %s order by %s",
		s.q("queue"), r, a, r, a, r, r, r, r, s.q(s.t.Jobs), s.q("queue"), s.q("queue")))
}

func (s statements) clearQueue() string {
	return s.sql(fmt.Sprintf("delete from %s where %s = ?", s.q(s.t.Jobs), s.q("queue")))
}

func (s statements) insertFailed() string {
	cols := []string{"uuid", "connection", "queue", "payload", "exception", "failed_at"}
	for i, c := range cols {
		cols[i] = s.q(c)
	}
	return s.sql(fmt.Sprintf("insert into %s (%s) values (%s)", s.q(s.t.Failed), strings.Join(cols, ", "), placeholders(len(cols))))
}

func (s statements) failedUUIDExists() string {
	return s.sql(fmt.Sprintf("select count(*) from %s where %s = ?", s.q(s.t.Failed), s.q("uuid")))
}

const failedColumns = "id, uuid, connection, queue, payload, exception, failed_at"

func (s statements) failedSelectList() string {
	cols := strings.Split(failedColumns, ", ")
	for i, c := range cols {
		cols[i] = s.q(c)
	}
	return strings.Join(cols, ", ")
}

// listFailed mirrors DatabaseUuidFailedJobProvider::all() (newest first),
// optionally restricted to one queue.
func (s statements) listFailed(byQueue bool) string {
	b := fmt.Sprintf("select %s from %s", s.failedSelectList(), s.q(s.t.Failed))
	if byQueue {
		b += fmt.Sprintf(" where %s = ?", s.q("queue"))
	}
	return s.sql(b + fmt.Sprintf(" order by %s desc", s.q("id")))
}

func (s statements) findFailedBy(column string) string {
	return s.sql(fmt.Sprintf("select %s from %s where %s = ? limit 1", s.failedSelectList(), s.q(s.t.Failed), s.q(column)))
}

func (s statements) forgetFailed() string {
	return s.sql(fmt.Sprintf("delete from %s where %s = ?", s.q(s.t.Failed), s.q("id")))
}

func (s statements) forgetFailedByUUID() string {
	return s.sql(fmt.Sprintf("delete from %s where %s = ?", s.q(s.t.Failed), s.q("uuid")))
}

// unparkHook rewrites a parked hook job (one no worker has taken) and
// makes it available: bindings payload, available_at, id, 0 (attempts).
// Statements on the hooks queue's table (HooksQueue).
func (s statements) unparkHook() string {
	return s.sql(fmt.Sprintf("update %s set %s = ?, %s = ? where %s = ? and %s is null and %s = ?",
		s.q(s.t.Jobs), s.q("payload"), s.q("available_at"), s.q("id"), s.q("reserved_at"), s.q("attempts")))
}

// deleteParkedHook deletes a hook job no worker has taken: bindings id,
// 0 (attempts).
func (s statements) deleteParkedHook() string {
	return s.sql(fmt.Sprintf("delete from %s where %s = ? and %s is null and %s = ?",
		s.q(s.t.Jobs), s.q("id"), s.q("reserved_at"), s.q("attempts")))
}

// findHookByUUID finds a hook job by its payload's leading uuid: bindings
// queue, the LIKE pattern.
func (s statements) findHookByUUID() string {
	return s.sql(fmt.Sprintf("select %s from %s where %s = ? and %s like ? escape '%c'",
		s.q("id"), s.q(s.t.Jobs), s.q("queue"), s.q("payload"), likeEscape))
}

func (s statements) flushFailed(before bool) string {
	b := fmt.Sprintf("delete from %s", s.q(s.t.Failed))
	if before {
		b += fmt.Sprintf(" where %s <= ?", s.q("failed_at"))
	}
	return s.sql(b)
}

// pruneFailed is queue:prune-failed's `take(1000)->delete()` loop body.
func (s statements) pruneFailed() string {
	return s.sql(s.d.DeleteLimited(s.t.Failed, s.q("failed_at")+" < ?", 1000))
}

func (s statements) findBatch(forUpdate bool) string {
	b := fmt.Sprintf("select * from %s where %s = ? limit 1", s.q(s.t.Batches), s.q("id"))
	if fu := s.d.ForUpdate(); forUpdate && fu != "" {
		b += " " + fu
	}
	return s.sql(b)
}

func (s statements) updateBatchCounts() string {
	return s.sql(fmt.Sprintf("update %s set %s = ?, %s = ?, %s = ? where %s = ?", s.q(s.t.Batches),
		s.q("pending_jobs"), s.q("failed_jobs"), s.q("failed_job_ids"), s.q("id")))
}

func (s statements) finishBatch() string {
	return s.sql(fmt.Sprintf("update %s set %s = ? where %s = ?", s.q(s.t.Batches), s.q("finished_at"), s.q("id")))
}

func (s statements) cancelBatch() string {
	return s.sql(fmt.Sprintf("update %s set %s = ?, %s = ? where %s = ?", s.q(s.t.Batches),
		s.q("cancelled_at"), s.q("finished_at"), s.q("id")))
}

// listBatches is DatabaseBatchRepository::get: by id, highest first,
// below a given id when before.
func (s statements) listBatches(before bool, limit int) string {
	b := "select * from " + s.q(s.t.Batches)
	if before {
		b += " where " + s.q("id") + " < ?"
	}
	return s.sql(b + fmt.Sprintf(" order by %s desc limit %d", s.q("id"), limit))
}

// findJob reads one jobs row by id (Laravel's columns: * would compute the
// claim index's generated column on MySQL/MariaDB).
func (s statements) findJob() string {
	return s.sql(fmt.Sprintf("select %s from %s where %s = ?", s.quotedList(jobColumns), s.q(s.t.Jobs), s.q("id")))
}

// findJobByUUID reads the rows whose payload holds a uuid key with the
// value; the caller checks the payload's own uuid.
func (s statements) findJobByUUID(limit int) string {
	return s.sql(fmt.Sprintf("select %s from %s where %s like ? order by %s limit %d",
		s.quotedList(jobColumns), s.q(s.t.Jobs), s.q("payload"), s.q("id"), limit))
}

// unreserve restores a claimed row as it was before the claim, guarded by
// the reservation this worker made.
func (s statements) unreserve() string {
	return s.sql(fmt.Sprintf("update %s set %s = null, %s = ? where %s = ? and %s = ?",
		s.q(s.t.Jobs), s.q("reserved_at"), s.q("attempts"), s.q("id"), s.q("reserved_at")))
}

// oneStatement is query on engines with one-statement claims, "" (not
// documented) on the others.
func (s statements) oneStatement(query string) string {
	if !s.oneStatementClaims() {
		return ""
	}
	return query
}

// namedStatement is one entry of SQL.md.
type namedStatement struct {
	Name, Note, SQL string
}

// catalogue lists each statement with representative parameters, in the
// order SQL.md documents them.
func (s statements) catalogue() []namedStatement {
	return []namedStatement{
		{"claim one: select", "Laravel's getNextAvailableJob; bindings queue, now, now - retry_after", s.claimSelect(1, 0)},
		{"claim one: reserve", "attempts = fetched attempts + 1, computed in Go as Laravel does", s.markReserved()},
		{"claim one, displayName filter (2 names)", "bindings: ..., `%\"displayName\":\"App\\\\Jobs\\\\X\"%` per name (LIKE-escaped with !)", s.claimSelect(1, 2)},
		{"claim batch (N=10): select", "", s.claimSelect(10, 0)},
		{"claim batch excluding 2 ids given back to PHP", "", s.claimSelectFiltered(10, claimFilter{ids: 2})},
		{"claim batch of every class but one (a class stopped by a configuration problem)", "", s.claimSelectFiltered(10, claimFilter{notNames: 1})},
		{"count claimable (before --stop-when-empty stops)", "no lock: SKIP LOCKED may have hidden rows", s.countClaimable(claimFilter{names: 1})},
		{"claim batch: reserve (3 rows)", "MySQL/MariaDB; PostgreSQL and SQLite only on the transactional fallback (a row whose attempts overflow)", s.markReservedMany(3)},
		{"claim batch as one statement (N=10, one class, 2 ids excluded)", "PostgreSQL and SQLite, without the claim index; autocommit; the rows come back unordered and are sorted by id in Go. PostgreSQL: the limit and the excluded ids are parameters (one array), so every batch size is one statement text", s.oneStatement(s.claimUpdateLaravel(10, claimFilter{names: 1, ids: 2, idArray: s.pgArrays()}))},
		{"claim batch from a lower bound on ids (N=10)", "Laravel's query and `id >= ?` (the last binding): after a claim from the start read many rows it could not take, the rows below the first one taken; from the start again every few seconds and when the bounded claim finds nothing (claimscan.go)", s.claimSelectFiltered(10, claimFilter{fromID: true})},
		{"claim batch as one statement from a lower bound on ids (N=10)", "PostgreSQL and SQLite; bindings as `claim batch as one statement`, the bound after the excluded ids", s.oneStatement(s.claimUpdateLaravel(10, claimFilter{fromID: true, idArray: s.pgArrays()}))},
		{"claim cost: rows of the queue up to the last row claimed", "after a slow claim from the start (at most every 30 s, until the warning is logged): how many rows it read per row it took", s.countQueueUpTo()},
		{"claim through the claim index: one class, 2 ids excluded (N=10)", "when `laraworker tables --index` made the claim index: one range of the class index, the rows available by now in (available_at, id) order, stopping after N that are not reserved or whose reservation expired (it reads past the reservations still running, nothing else). MySQL/MariaDB: this select, then `claim batch: reserve` in the transaction; PostgreSQL/SQLite: one statement", s.claimIndexed(10, indexedFilter{names: 1, ids: 2})},
		{"claim through the claim index: two classes", "the ready rows of both classes are read and sorted", s.claimIndexed(10, indexedFilter{names: 2})},
		{"claim through the claim index: every class but one (--unrouted=fail with a class stopped)", "the queue index; on PostgreSQL `available_at >= -9223372036854775807` excludes nothing and keeps the ordered index scan on a table without statistics", s.claimIndexed(10, indexedFilter{notNames: 1})},
		{"delete many (3 ids, fenced)", "the grouped delete of finished jobs; bindings: the token (reserved_at as the claim or the last refresh set it), ids (PostgreSQL: one array parameter, '{1,2,3}', so every batch size is one statement); the ids returned tell which reservations still held (MariaDB, PostgreSQL, SQLite)", s.deleteReservedJobs(3)},
		{"delete many on MySQL (no DELETE ... RETURNING): lock (3 ids)", "then `delete many` of the ids it returned, in one transaction", s.lockReservedJobs(3)},
		{"delete many", "", s.deleteJobs(3)},
		{"release / fail / finish: delete (fenced)", "bindings: id, token; 0 rows: the reservation was lost, the transaction is rolled back and nothing else is written", s.deleteReservedJob()},
		{"fail a row its claim could not reserve: delete (fenced)", "bindings: id; for a row selected unreserved whose attempts overflow the column", s.deleteUnreservedJob()},
		{"--laravel-exact delete / release / fail / finish: lock (Laravel's deleteReserved and deleteAndRelease)", "then the row's reserved_at is compared with the token in Go; only if it matches:", s.findForUpdate()},
		{"--laravel-exact: delete", "Laravel's; also the chain's next link and batch counters join this transaction", s.deleteJob()},
		{"push / release insert", "columns in buildDatabaseRecord order", s.insertJobs(1)},
		{"bulk push (2 rows)", "", s.insertJobs(2)},
		{"extend reservation (fenced, one row per statement)", "bindings: now, id, token; 0 rows: the reservation was lost", s.extendReservation()},
		{"unreserve (give a job back untouched)", "bindings: attempts before the claim, id, token", s.unreserve()},
		{"fail: uuid collision check", "", s.failedUUIDExists()},
		{"fail: insert failed_jobs", "failed_at bound as 'Y-m-d H:i:s' in APP_TIMEZONE", s.insertFailed()},
		{"hook job: insert (the bridge's RunFailureHooks / RunBatchCallbacks)", "`push / release insert` on the hooks queue's table, in the outcome's transaction after the batch update; a Redis queue's failure inserts it parked (available_at = now + retry_after) with its failed_jobs row", s.insertJobs(1)},
		{"hook job: unpark (Redis queue: after the job left Redis, with the batch update)", "bindings: payload (with the batch callbacks), now, id, 0 (attempts); 0 rows: a worker took it after its delay, the batch callbacks then go in a job of their own", s.unparkHook()},
		{"hook job: delete a parked one (Redis queue: the reservation turned out lost)", "with `fail: forget by uuid` in one transaction", s.deleteParkedHook()},
		{"fail: forget by uuid", "", s.forgetFailedByUUID()},
		{"hook job: find by uuid (after a commit whose answer was lost)", "bindings: the hooks queue, `{\"uuid\":\"<uuid>\",%`", s.findHookByUUID()},
		{"size per queue", "bindings: now, now, now - retry_after, now - retry_after", s.queueSizes()},
		{"clear queue", "", s.clearQueue()},
		{"list failed", "", s.listFailed(false)},
		{"list failed of one queue", "", s.listFailed(true)},
		{"find failed by uuid", "", s.findFailedBy("uuid")},
		{"find failed by id", "", s.findFailedBy("id")},
		{"forget failed", "", s.forgetFailed()},
		{"flush failed", "", s.flushFailed(false)},
		{"flush failed older than", "", s.flushFailed(true)},
		{"prune failed (repeat until 0 rows)", "", s.pruneFailed()},
		{"batch find", "", s.findBatch(false)},
		{"batch lock", "", s.findBatch(true)},
		{"batch update counters", "", s.updateBatchCounts()},
		{"batch finished", "", s.finishBatch()},
		{"batch cancel", "Batch::cancel() (the dashboard's cancel locks the row first: `batch lock`)", s.cancelBatch()},
		{"batch list (50, below an id)", "DatabaseBatchRepository::get: the dashboard's batches page", s.listBatches(true, 50)},
		{"find a job by id (laraworker inspect --id)", "", s.findJob()},
		{"find a job by uuid (laraworker inspect --uuid)", "binding: `%\"uuid\":\"UUID\"%`; reads the whole table (the payload has no index); the payload's uuid is checked in Go", s.findJobByUUID(uuidCandidates)},
		{"move: count a class by state (laraworker move)", "bindings: queue, the class's displayName patterns", s.countClassByState(1)},
		{"move: read candidates (no lock)", "bindings: from, patterns, last id read; displayName checked exactly in Go", s.moveSelect(1, moveBatch)},
		{"move: move (3 ids)", "bindings: to, from, ids; a row reserved meanwhile is not touched", s.moveJobs(3)},
		{"startup: sample payloads of the watched queues", "", s.samplePayloads(2, ClassSample)},
		{"claim index: create (laraworker tables --index)", "each statement ignored when what it adds is there; then the indexes of earlier versions are dropped (as in `drop`)", strings.Join(s.createClaimIndex(), ";\n")},
		{"claim index: drop (laraworker tables --drop-index)", "also drops the indexes earlier versions made: (queue, reserved_at, available_at), and the class and queue indexes with reserved_at", strings.Join(s.dropClaimIndex(), ";\n")},
	}
}
