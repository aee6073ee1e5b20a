package sqlstmt

import (
	"fmt"
	"strings"
	"sync"

	"github.com/laraworker/laraworker/internal/sqldb"
	"github.com/laraworker/laraworker/laravel/appconfig"
)

// Statements renders every SQL statement the queue runs, for one dialect
// and one set of table names. Keeping them in one place lets SQL.md be
// generated from (and checked against) the code.
type Statements struct {
	d     sqldb.Dialect
	T     sqldb.Tables // the queue's tables, as configured
	lock  string       // Laravel's lock for popping; "" on SQLite
	texts *texts
	// pg and oneStmt are PgArrays and OneStatementClaims, which each
	// claim asks.
	pg, oneStmt bool
}

// New renders the statements of one dialect on the tables t, claiming
// with lock (Laravel's getLockForPopping clause, sqldb.LockForPopping).
func New(d sqldb.Dialect, t sqldb.Tables, lock string) Statements {
	name := d.Name()
	return Statements{d: d, T: t, lock: lock, texts: &texts{},
		pg: name == appconfig.EnginePgSQL, oneStmt: name == appconfig.EnginePgSQL || name == appconfig.EngineSQLite}
}

// texts keeps the statements a job's path renders (claim, reserve,
// delete) once per shape: rendering them (quoting, formatting, the
// PostgreSQL placeholder rewrite) cost about a twentieth of the worker's
// instructions per job at concurrency 1. The shapes are few (the batch
// sizes up to the claim's limit and the filters of one worker's
// configuration); past maxTexts they are rendered each time.
type texts struct {
	m sync.Map // textKey -> string
	n sync.Mutex
	k int
}

// maxTexts bounds the kept statements.
const maxTexts = 4096

// textKey names one rendered statement.
type textKey struct {
	stmt  uint8
	n     int
	f     ClaimFilter
	limit int
}

// Which statement a textKey names.
const (
	textClaimSelect uint8 = iota + 1
	textClaimUpdate
	textMarkReserved
	textMarkReservedMany
	textDeleteReservedJobs
	textLockReservedJobs
	textDeleteJobs
	textDeleteReservedJob
)

// kept returns the statement for k, rendered by render the first time.
func (s Statements) kept(k textKey, render func() string) string {
	if s.texts == nil {
		return render()
	}
	if v, ok := s.texts.m.Load(k); ok {
		return v.(string)
	}
	text := render()
	s.texts.n.Lock()
	if s.texts.k < maxTexts {
		s.texts.k++
		s.texts.m.Store(k, text)
	}
	s.texts.n.Unlock()
	return text
}

// Q quotes an identifier for the dialect.
func (s Statements) Q(ident string) string { return s.d.Quote(ident) }

// sql finalises a statement written with '?' placeholders.
func (s Statements) sql(query string) string { return s.d.Rebind(query) }

func Placeholders(n int) string {
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

// ClaimFilter is the shape of a claim's optional restrictions: how many
// displayName patterns to match, how many not to match, how many ids to
// skip.
type ClaimFilter struct {
	Names, NotNames, IDs int
	// IDArray binds the excluded ids as one array (PostgreSQL's
	// one-statement claim).
	IDArray bool
	// FromID adds `id >= ?` after the other bindings: the claim starts
	// at a lower bound below which no row was claimable (store/database's
	// claimscan.go).
	FromID bool
	// Primary makes MySQL/MariaDB read the primary key in id order
	// (`force index (primary)`) instead of the plan it picks, often the
	// queue index with a lookup per row; ignored elsewhere (claimscan.go).
	Primary bool
}

// ClaimSelect is Laravel's getNextAvailableJob query with `limit` and an
// optional displayName filter (nFilters alternatives).
func (s Statements) ClaimSelect(limit, nFilters int) string {
	return s.ClaimSelectFiltered(limit, ClaimFilter{Names: nFilters})
}

// ClaimSelectFiltered adds the filter: displayName patterns that must
// match, patterns that must not (classes the worker stopped claiming), and
// `id not in (...)` for rows a worker gave back to PHP and must not
// reserve again.
func (s Statements) ClaimSelectFiltered(limit int, f ClaimFilter) string {
	return s.kept(textKey{stmt: textClaimSelect, limit: limit, f: f}, func() string { return s.renderClaimSelectFiltered(limit, f) })
}

func (s Statements) renderClaimSelectFiltered(limit int, f ClaimFilter) string {
	b := "select * from " + s.claimableWhere(f)
	b += fmt.Sprintf(" order by %s asc limit %d", s.Q("id"), limit)
	if s.lock != "" {
		b += " " + s.lock
	}
	return s.sql(b)
}

// Unlocked is a claim's select without its lock clause: the look a
// claim after an empty one runs first, outside a transaction
// (store/database's peek.go). "" when the engine locks nothing (SQLite)
// or the select does not end with the lock.
func (s Statements) Unlocked(claimSelect string) string {
	if s.lock == "" || !strings.HasSuffix(claimSelect, " "+s.lock) {
		return ""
	}
	return strings.TrimSuffix(claimSelect, " "+s.lock)
}

// CountClaimable counts what ClaimSelectFiltered could return, reading
// without locks: a claim with SKIP LOCKED that comes back empty does not
// prove the queue is empty.
func (s Statements) CountClaimable(f ClaimFilter) string {
	return s.sql("select count(*) from " + s.claimableWhere(f))
}

// claimableWhere is the table and where clause shared by the claim and its
// count.
func (s Statements) claimableWhere(f ClaimFilter) string {
	table := s.Q(s.T.Jobs)
	if f.Primary && s.IndexHints() {
		table += " force index (primary)"
	}
	b := fmt.Sprintf("%s where %s = ? and ((%s is null and %s <= ?) or (%s <= ?))",
		table, s.Q("queue"), s.Q("reserved_at"), s.Q("available_at"), s.Q("reserved_at"))
	if f.Names > 0 {
		b += " and (" + s.payloadLikes(f.Names) + ")"
	}
	if f.NotNames > 0 {
		b += " and not (" + s.payloadLikes(f.NotNames) + ")"
	}
	if f.IDs > 0 && f.IDArray {
		b += " and " + s.idsNotIn(f.IDs)
	} else if f.IDs > 0 {
		b += fmt.Sprintf(" and %s not in (%s)", s.Q("id"), Placeholders(f.IDs))
	}
	if f.FromID {
		b += fmt.Sprintf(" and %s >= ?", s.Q("id"))
	}
	return b
}

// CountQueueUpTo counts a queue's rows up to an id: what Laravel's claim
// read to reach that row.
func (s Statements) CountQueueUpTo() string {
	return s.sql(fmt.Sprintf("select count(*) from %s where %s = ? and %s <= ?", s.Q(s.T.Jobs), s.Q("queue"), s.Q("id")))
}

// CountTable counts the table's rows (all queues).
func (s Statements) CountTable() string {
	return s.sql("select count(*) from " + s.Q(s.T.Jobs))
}

// IndexHints says whether the engine takes MySQL's index hints
// (ClaimFilter.Primary).
func (s Statements) IndexHints() bool { return s.d.Name() == appconfig.EngineMySQL }

// payloadLikes is n `payload like ?` alternatives.
func (s Statements) payloadLikes(n int) string {
	alts := make([]string, n)
	for i := range alts {
		alts[i] = fmt.Sprintf("%s like ? escape '%c'", s.Q("payload"), likeEscape)
	}
	return strings.Join(alts, " or ")
}

// MarkReserved is Laravel's markJobAsReserved: attempts computed by the
// caller from the fetched row.
func (s Statements) MarkReserved() string {
	return s.kept(textKey{stmt: textMarkReserved}, func() string { return s.renderMarkReserved() })
}

func (s Statements) renderMarkReserved() string {
	return s.sql(fmt.Sprintf("update %s set %s = ?, %s = ? where %s = ?",
		s.Q(s.T.Jobs), s.Q("reserved_at"), s.Q("attempts"), s.Q("id")))
}

// MarkReservedMany reserves a batch; attempts is incremented in SQL, which
// is equivalent inside the claiming transaction because the rows are
// locked (or, on SQLite, the database is).
func (s Statements) MarkReservedMany(n int) string {
	return s.kept(textKey{stmt: textMarkReservedMany, n: n}, func() string { return s.renderMarkReservedMany(n) })
}

func (s Statements) renderMarkReservedMany(n int) string {
	return s.sql(fmt.Sprintf("update %s set %s = ?, %s = %s + 1 where %s in (%s)",
		s.Q(s.T.Jobs), s.Q("reserved_at"), s.Q("attempts"), s.Q("attempts"), s.Q("id"), Placeholders(n)))
}

// FindForUpdate is lockForUpdate()->find($id).
func (s Statements) FindForUpdate() string {
	b := fmt.Sprintf("select * from %s where %s = ? limit 1", s.Q(s.T.Jobs), s.Q("id"))
	if fu := s.d.ForUpdate(); fu != "" {
		b += " " + fu
	}
	return s.sql(b)
}

// DeleteJob is Laravel's delete by id (--laravel-exact): binding id.
func (s Statements) DeleteJob() string {
	return s.sql(fmt.Sprintf("delete from %s where %s = ?", s.Q(s.T.Jobs), s.Q("id")))
}

// DeleteJobs deletes n rows by id.
func (s Statements) DeleteJobs(n int) string {
	return s.kept(textKey{stmt: textDeleteJobs, n: n}, func() string { return s.renderDeleteJobs(n) })
}

func (s Statements) renderDeleteJobs(n int) string {
	return s.sql(fmt.Sprintf("delete from %s where %s in (%s)", s.Q(s.T.Jobs), s.Q("id"), Placeholders(n)))
}

// DeleteReservedJob deletes one job only while it carries this worker's
// reservation (bindings id, reserved_at): a row another worker reclaimed
// after retry_after has another reserved_at and is left alone.
func (s Statements) DeleteReservedJob() string {
	return s.kept(textKey{stmt: textDeleteReservedJob}, func() string { return s.renderDeleteReservedJob() })
}

func (s Statements) renderDeleteReservedJob() string {
	return s.sql(fmt.Sprintf("delete from %s where %s = ? and %s = ?", s.Q(s.T.Jobs), s.Q("id"), s.Q("reserved_at")))
}

// DeleteUnreservedJob deletes a row a claim selected but could not
// reserve (attempts overflowing), only while it is still unreserved.
func (s Statements) DeleteUnreservedJob() string {
	return s.sql(fmt.Sprintf("delete from %s where %s = ? and %s is null", s.Q(s.T.Jobs), s.Q("id"), s.Q("reserved_at")))
}

// DeleteReservedJobs deletes n jobs reserved with one token (a claim or a
// refresh sets one value for all its rows) and returns the ids deleted,
// which tell the rows whose reservation was lost. On PostgreSQL the ids
// are one array parameter (IDArrays).
func (s Statements) DeleteReservedJobs(n int) string {
	return s.kept(textKey{stmt: textDeleteReservedJobs, n: n}, func() string { return s.renderDeleteReservedJobs(n) })
}

func (s Statements) renderDeleteReservedJobs(n int) string {
	ids := fmt.Sprintf("%s in (%s)", s.Q("id"), Placeholders(n))
	if s.IDArrays() {
		ids = fmt.Sprintf("%s = any(cast(? as bigint[]))", s.Q("id"))
	}
	return s.sql(fmt.Sprintf("delete from %s where %s = ? and %s returning %s",
		s.Q(s.T.Jobs), s.Q("reserved_at"), ids, s.Q("id")))
}

// IDArrays says whether id lists are bound as one array parameter
// (PostgreSQL) rather than written as one placeholder per id: the
// statement text is then the same for every list length, so the driver's
// prepared statement cache holds one statement instead of one per length
// (each new one costs a Parse round trip and evicts others). MySQL's
// driver interpolates client-side and SQLite's prepares every statement
// anyway: they keep the placeholders.
func (s Statements) IDArrays() bool { return s.d.Name() == appconfig.EnginePgSQL }

// LockReservedJobs is DeleteReservedJobs' first half where DELETE has no
// RETURNING (MySQL): lock the rows that still carry the token, then
// delete those ids.
func (s Statements) LockReservedJobs(n int) string {
	return s.kept(textKey{stmt: textLockReservedJobs, n: n}, func() string { return s.renderLockReservedJobs(n) })
}

func (s Statements) renderLockReservedJobs(n int) string {
	b := fmt.Sprintf("select %s from %s where %s = ? and %s in (%s)", s.Q("id"), s.Q(s.T.Jobs), s.Q("reserved_at"), s.Q("id"), Placeholders(n))
	if fu := s.d.ForUpdate(); fu != "" {
		b += " " + fu
	}
	return s.sql(b)
}

var JobInsertColumns = []string{"queue", "attempts", "reserved_at", "available_at", "created_at", "payload"}

// InsertJobs is buildDatabaseRecord's column order, n rows; with n == 1
// the dialect's "returning id" is appended.
func (s Statements) InsertJobs(n int) string {
	cols := make([]string, len(JobInsertColumns))
	for i, c := range JobInsertColumns {
		cols[i] = s.Q(c)
	}
	row := "(" + Placeholders(len(cols)) + ")"
	rows := strings.TrimSuffix(strings.Repeat(row+", ", n), ", ")
	b := fmt.Sprintf("insert into %s (%s) values %s", s.Q(s.T.Jobs), strings.Join(cols, ", "), rows)
	if n == 1 {
		b += s.d.ReturningID()
	}
	return s.sql(b)
}

// ExtendReservation refreshes one job's reservation while it still
// carries the token this worker holds: bindings new reserved_at, id, token.
// One row per statement, so the rows affected say exactly which
// reservations still held.
func (s Statements) ExtendReservation() string {
	return s.sql(fmt.Sprintf("update %s set %s = ? where %s = ? and %s = ?",
		s.Q(s.T.Jobs), s.Q("reserved_at"), s.Q("id"), s.Q("reserved_at")))
}

// QueueSizes counts each queue's rows by state:
// ready, delayed, reserved, reservation expired.
func (s Statements) QueueSizes() string {
	r, a := s.Q("reserved_at"), s.Q("available_at")
	return s.sql(fmt.Sprintf("select %s, "+
		"sum(case when %s is null and %s <= ? then 1 else 0 end), "+
		"sum(case when %s is null and %s > ? then 1 else 0 end), "+
		"sum(case when %s is not null and %s > ? then 1 else 0 end), "+
		"sum(case when %s is not null and %s <= ? then 1 else 0 end) "+
		"from %s group by %s order by %s",
		s.Q("queue"), r, a, r, a, r, r, r, r, s.Q(s.T.Jobs), s.Q("queue"), s.Q("queue")))
}

// ClearQueue is queue:clear: every row of one queue.
func (s Statements) ClearQueue() string {
	return s.sql(fmt.Sprintf("delete from %s where %s = ?", s.Q(s.T.Jobs), s.Q("queue")))
}

// InsertFailed is DatabaseUuidFailedJobProvider::log.
func (s Statements) InsertFailed() string {
	cols := []string{"uuid", "connection", "queue", "payload", "exception", "failed_at"}
	for i, c := range cols {
		cols[i] = s.Q(c)
	}
	return s.sql(fmt.Sprintf("insert into %s (%s) values (%s)", s.Q(s.T.Failed), strings.Join(cols, ", "), Placeholders(len(cols))))
}

// FailedUUIDExists counts failed_jobs rows with a uuid (a collision check
// before the insert).
func (s Statements) FailedUUIDExists() string {
	return s.sql(fmt.Sprintf("select count(*) from %s where %s = ?", s.Q(s.T.Failed), s.Q("uuid")))
}

const failedColumns = "id, uuid, connection, queue, payload, exception, failed_at"

func (s Statements) failedSelectList() string {
	cols := strings.Split(failedColumns, ", ")
	for i, c := range cols {
		cols[i] = s.Q(c)
	}
	return strings.Join(cols, ", ")
}

// ListFailed mirrors DatabaseUuidFailedJobProvider::all() (newest first),
// optionally restricted to one queue.
func (s Statements) ListFailed(byQueue bool) string {
	b := fmt.Sprintf("select %s from %s", s.failedSelectList(), s.Q(s.T.Failed))
	if byQueue {
		b += fmt.Sprintf(" where %s = ?", s.Q("queue"))
	}
	return s.sql(b + fmt.Sprintf(" order by %s desc", s.Q("id")))
}

// FindFailedBy reads one failed_jobs row by column (a constant name, uuid
// or id, never a value).
func (s Statements) FindFailedBy(column string) string {
	return s.sql(fmt.Sprintf("select %s from %s where %s = ? limit 1", s.failedSelectList(), s.Q(s.T.Failed), s.Q(column)))
}

// ForgetFailed is queue:forget by id.
func (s Statements) ForgetFailed() string {
	return s.sql(fmt.Sprintf("delete from %s where %s = ?", s.Q(s.T.Failed), s.Q("id")))
}

// ForgetFailedByUUID is queue:forget by uuid.
func (s Statements) ForgetFailedByUUID() string {
	return s.sql(fmt.Sprintf("delete from %s where %s = ?", s.Q(s.T.Failed), s.Q("uuid")))
}

// UnparkHook rewrites a parked hook job (one no worker has taken) and
// makes it available: bindings payload, available_at, id, 0 (attempts).
// Statements on the hooks queue's table (HooksQueue).
func (s Statements) UnparkHook() string {
	return s.sql(fmt.Sprintf("update %s set %s = ?, %s = ? where %s = ? and %s is null and %s = ?",
		s.Q(s.T.Jobs), s.Q("payload"), s.Q("available_at"), s.Q("id"), s.Q("reserved_at"), s.Q("attempts")))
}

// DeleteParkedHook deletes a hook job no worker has taken: bindings id,
// 0 (attempts).
func (s Statements) DeleteParkedHook() string {
	return s.sql(fmt.Sprintf("delete from %s where %s = ? and %s is null and %s = ?",
		s.Q(s.T.Jobs), s.Q("id"), s.Q("reserved_at"), s.Q("attempts")))
}

// FindHookByUUID finds a hook job by its payload's leading uuid: bindings
// queue, the LIKE pattern.
func (s Statements) FindHookByUUID() string {
	return s.sql(fmt.Sprintf("select %s from %s where %s = ? and %s like ? escape '%c'",
		s.Q("id"), s.Q(s.T.Jobs), s.Q("queue"), s.Q("payload"), likeEscape))
}

// FlushFailed is queue:flush, with before only rows failed up to a time.
func (s Statements) FlushFailed(before bool) string {
	b := fmt.Sprintf("delete from %s", s.Q(s.T.Failed))
	if before {
		b += fmt.Sprintf(" where %s <= ?", s.Q("failed_at"))
	}
	return s.sql(b)
}

// PruneFailed is queue:prune-failed's `take(1000)->delete()` loop body.
func (s Statements) PruneFailed() string {
	return s.sql(s.d.DeleteLimited(s.T.Failed, s.Q("failed_at")+" < ?", 1000))
}

// FindBatch reads one job_batches row by id, locked with forUpdate.
func (s Statements) FindBatch(forUpdate bool) string {
	b := fmt.Sprintf("select * from %s where %s = ? limit 1", s.Q(s.T.Batches), s.Q("id"))
	if fu := s.d.ForUpdate(); forUpdate && fu != "" {
		b += " " + fu
	}
	return s.sql(b)
}

// UpdateBatchCounts writes a batch's counters after a member's outcome.
func (s Statements) UpdateBatchCounts() string {
	return s.sql(fmt.Sprintf("update %s set %s = ?, %s = ?, %s = ? where %s = ?", s.Q(s.T.Batches),
		s.Q("pending_jobs"), s.Q("failed_jobs"), s.Q("failed_job_ids"), s.Q("id")))
}

// FinishBatch sets a batch's finished_at.
func (s Statements) FinishBatch() string {
	return s.sql(fmt.Sprintf("update %s set %s = ? where %s = ?", s.Q(s.T.Batches), s.Q("finished_at"), s.Q("id")))
}

// CancelBatch is Batch::cancel(): cancelled_at and finished_at.
func (s Statements) CancelBatch() string {
	return s.sql(fmt.Sprintf("update %s set %s = ?, %s = ? where %s = ?", s.Q(s.T.Batches),
		s.Q("cancelled_at"), s.Q("finished_at"), s.Q("id")))
}

// ListBatches is DatabaseBatchRepository::get: by id, highest first,
// below a given id when before.
func (s Statements) ListBatches(before bool, limit int) string {
	b := "select * from " + s.Q(s.T.Batches)
	if before {
		b += " where " + s.Q("id") + " < ?"
	}
	return s.sql(b + fmt.Sprintf(" order by %s desc limit %d", s.Q("id"), limit))
}

// FindJob reads one jobs row by id (Laravel's columns: * would compute the
// claim index's generated column on MySQL/MariaDB).
func (s Statements) FindJob() string {
	return s.sql(fmt.Sprintf("select %s from %s where %s = ?", s.QuotedList(jobColumns), s.Q(s.T.Jobs), s.Q("id")))
}

// FindJobByUUID reads the rows whose payload holds a uuid key with the
// value; the caller checks the payload's own uuid.
func (s Statements) FindJobByUUID(limit int) string {
	return s.sql(fmt.Sprintf("select %s from %s where %s like ? order by %s limit %d",
		s.QuotedList(jobColumns), s.Q(s.T.Jobs), s.Q("payload"), s.Q("id"), limit))
}

// Unreserve restores a claimed row as it was before the claim, guarded by
// the reservation this worker made.
func (s Statements) Unreserve() string {
	return s.sql(fmt.Sprintf("update %s set %s = null, %s = ? where %s = ? and %s = ?",
		s.Q(s.T.Jobs), s.Q("reserved_at"), s.Q("attempts"), s.Q("id"), s.Q("reserved_at")))
}
