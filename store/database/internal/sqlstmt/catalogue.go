package sqlstmt

import (
	"strings"
)

// oneStatement is query on engines with one-statement claims, "" (not
// documented) on the others.
func (s Statements) oneStatement(query string) string {
	if !s.OneStatementClaims() {
		return ""
	}
	return query
}

// indexHinted is query on MySQL/MariaDB, "" (not documented) on the
// others.
func (s Statements) indexHinted(query string) string {
	if !s.IndexHints() {
		return ""
	}
	return query
}

// Named is one entry of SQL.md.
type Named struct {
	Name, Note, SQL string
}

// Sizes are the limits the queue passes to the statements that take one,
// for the catalogue to show them as they run.
type Sizes struct {
	UUIDCandidates, MoveBatch, ClassSample, SamplePrefix int
}

// Catalogue lists each statement with representative parameters, in the
// order SQL.md documents them.
func (s Statements) Catalogue(z Sizes) []Named {
	return []Named{
		{"claim one: select", "Laravel's getNextAvailableJob; bindings queue, now, now - retry_after", s.ClaimSelect(1, 0)},
		{"claim one: reserve", "attempts = fetched attempts + 1, computed in Go as Laravel does", s.MarkReserved()},
		{"claim one, displayName filter (2 names)", "bindings: ..., `%\"displayName\":\"App\\\\Jobs\\\\X\"%` per name (LIKE-escaped with !)", s.ClaimSelect(1, 2)},
		{"claim batch (N=10): select", "", s.ClaimSelect(10, 0)},
		{"claim batch excluding 2 ids given back to PHP", "", s.ClaimSelectFiltered(10, ClaimFilter{IDs: 2})},
		{"claim batch of every class but one (a class stopped by a configuration problem)", "", s.ClaimSelectFiltered(10, ClaimFilter{NotNames: 1})},
		{"look before a claim, after a claim on the queue found nothing", "the claim's select of one row without its lock, autocommitted (no transaction): the claim's transaction runs only when it finds a row, so an idle worker's empty claim is one round trip instead of the select and its rollback (peek.go); MySQL/MariaDB, and PostgreSQL where the claim is a transaction; not with --laravel-exact", s.Unlocked(s.ClaimSelect(1, 0))},
		{"count claimable (before --stop-when-empty stops)", "no lock: SKIP LOCKED may have hidden rows", s.CountClaimable(ClaimFilter{Names: 1})},
		{"claim batch: reserve (3 rows)", "MySQL/MariaDB; PostgreSQL and SQLite only on the transactional fallback (a row whose attempts overflow)", s.MarkReservedMany(3)},
		{"claim batch as one statement (one class, 2 ids excluded)", "PostgreSQL and SQLite, without the claim index; autocommit; the rows come back unordered and are sorted by id in Go. The limit is a parameter (the last binding before PostgreSQL's reserved_at), so every batch size is one statement text; PostgreSQL: the excluded ids are one array parameter", s.oneStatement(s.ClaimUpdateLaravel(ClaimFilter{Names: 1, IDs: 2, IDArray: s.PgArrays()}))},
		{"claim batch from a lower bound on ids (N=10)", "Laravel's query and `id >= ?` (the last binding): after a claim from the start read many rows it could not take, the rows below the first one taken; from the start again every few seconds and when the bounded claim finds nothing (claimscan.go)", s.ClaimSelectFiltered(10, ClaimFilter{FromID: true})},
		{"claim batch as one statement from a lower bound on ids", "PostgreSQL and SQLite; bindings as `claim batch as one statement`, the bound after the excluded ids", s.oneStatement(s.ClaimUpdateLaravel(ClaimFilter{FromID: true, IDArray: s.PgArrays()}))},
		{"claim cost: rows of the queue up to the last row claimed", "after a slow claim from the start (at most every 30 s, until the warning is logged): how many rows it read per row it took", s.CountQueueUpTo()},
		{"claim cost: rows of the table", "MySQL/MariaDB, after `claim cost` found a costly claim: whether the queue holds at least half of the table's rows", s.indexHinted(s.CountTable())},
		{"claim batch from the start along the primary key (N=10)", "MySQL/MariaDB, on a queue measured as above that holds at least half of the table's rows: Laravel's query (same rows, same order) with the primary key forced, for the claims from the start that go back for rows below the bound. MariaDB otherwise reads such a queue through the queue index with a lookup per row, about four times the cost of reading the rows in id order (claimscan.go)", s.indexHinted(s.ClaimSelectFiltered(10, ClaimFilter{Primary: true}))},
		{"claim through the claim index: one class, 2 ids excluded (N=10)", "when `laraworker tables --index` made the claim index: one range of the class index, the rows available by now in (available_at, id) order, stopping after N that are not reserved or whose reservation expired (it reads past the reservations still running, nothing else). MySQL/MariaDB: this select, then `claim batch: reserve` in the transaction; PostgreSQL/SQLite: one statement", s.claimIndexed(10, IndexedFilter{Names: 1, IDs: 2})},
		{"claim through the claim index: two classes", "the ready rows of both classes are read and sorted", s.claimIndexed(10, IndexedFilter{Names: 2})},
		{"claim through the claim index: every class but one (--unrouted=fail with a class stopped)", "the queue index; on PostgreSQL `available_at >= -9223372036854775807` excludes nothing and keeps the ordered index scan on a table without statistics", s.claimIndexed(10, IndexedFilter{NotNames: 1})},
		{"delete many (3 ids, fenced)", "the grouped delete of finished jobs; bindings: the token (reserved_at as the claim or the last refresh set it), ids (PostgreSQL: one array parameter, '{1,2,3}', so every batch size is one statement); the ids returned tell which reservations still held (MariaDB, PostgreSQL, SQLite)", s.DeleteReservedJobs(3)},
		{"delete many on MySQL (no DELETE ... RETURNING): lock (3 ids)", "then `delete many` of the ids it returned, in one transaction", s.LockReservedJobs(3)},
		{"delete many", "", s.DeleteJobs(3)},
		{"release / fail / finish: delete (fenced)", "bindings: id, token; 0 rows: the reservation was lost, the transaction is rolled back and nothing else is written", s.DeleteReservedJob()},
		{"fail a row its claim could not reserve: delete (fenced)", "bindings: id; for a row selected unreserved whose attempts overflow the column", s.DeleteUnreservedJob()},
		{"--laravel-exact delete / release / fail / finish: lock (Laravel's deleteReserved and deleteAndRelease)", "then the row's reserved_at is compared with the token in Go; only if it matches:", s.FindForUpdate()},
		{"--laravel-exact: delete", "Laravel's; also the chain's next link and batch counters join this transaction", s.DeleteJob()},
		{"push / release insert", "columns in buildDatabaseRecord order", s.InsertJobs(1)},
		{"bulk push (2 rows)", "", s.InsertJobs(2)},
		{"extend reservation (fenced, one row per statement)", "bindings: now, id, token; 0 rows: the reservation was lost", s.ExtendReservation()},
		{"unreserve (give a job back untouched)", "bindings: attempts before the claim, id, token", s.Unreserve()},
		{"fail: uuid collision check", "", s.FailedUUIDExists()},
		{"fail: insert failed_jobs", "failed_at bound as 'Y-m-d H:i:s' in APP_TIMEZONE", s.InsertFailed()},
		{"hook job: insert (the bridge's RunFailureHooks / RunBatchCallbacks)", "`push / release insert` on the hooks queue's table, in the outcome's transaction after the batch update; a Redis queue's failure inserts it parked (available_at = now + retry_after) with its failed_jobs row", s.InsertJobs(1)},
		{"hook job: unpark (Redis queue: after the job left Redis, with the batch update)", "bindings: payload (with the batch callbacks), now, id, 0 (attempts); 0 rows: a worker took it after its delay, the batch callbacks then go in a job of their own", s.UnparkHook()},
		{"hook job: delete a parked one (Redis queue: the reservation turned out lost)", "with `fail: forget by uuid` in one transaction", s.DeleteParkedHook()},
		{"fail: forget by uuid", "", s.ForgetFailedByUUID()},
		{"hook job: find by uuid (after a commit whose answer was lost)", "bindings: the hooks queue, `{\"uuid\":\"<uuid>\",%`", s.FindHookByUUID()},
		{"size per queue", "bindings: now, now, now - retry_after, now - retry_after", s.QueueSizes()},
		{"clear queue", "", s.ClearQueue()},
		{"list failed", "", s.ListFailed(false)},
		{"list failed of one queue", "", s.ListFailed(true)},
		{"find failed by uuid", "", s.FindFailedBy("uuid")},
		{"find failed by id", "", s.FindFailedBy("id")},
		{"forget failed", "", s.ForgetFailed()},
		{"flush failed", "", s.FlushFailed(false)},
		{"flush failed older than", "", s.FlushFailed(true)},
		{"prune failed (repeat until 0 rows)", "", s.PruneFailed()},
		{"batch find", "", s.FindBatch(false)},
		{"batch lock", "", s.FindBatch(true)},
		{"batch update counters", "", s.UpdateBatchCounts()},
		{"batch finished", "", s.FinishBatch()},
		{"batch cancel", "Batch::cancel() (the dashboard's cancel locks the row first: `batch lock`)", s.CancelBatch()},
		{"batch list (50, below an id)", "DatabaseBatchRepository::get: the dashboard's batches page", s.ListBatches(true, 50)},
		{"find a job by id (laraworker inspect --id)", "", s.FindJob()},
		{"find a job by uuid (laraworker inspect --uuid)", "binding: `%\"uuid\":\"UUID\"%`; reads the whole table (the payload has no index); the payload's uuid is checked in Go", s.FindJobByUUID(z.UUIDCandidates)},
		{"move: count a class by state (laraworker move)", "bindings: queue, the class's displayName patterns", s.CountClassByState(1)},
		{"move: read candidates (no lock)", "bindings: from, patterns, last id read; displayName checked exactly in Go", s.MoveSelect(1, z.MoveBatch)},
		{"move: move (3 ids)", "bindings: to, from, ids; a row reserved meanwhile is not touched", s.MoveJobs(3)},
		{"startup: sample payloads of the watched queues", "the first characters of each payload only (its uuid and displayName)", s.SamplePayloads(2, z.ClassSample, z.SamplePrefix)},
		{"claim index: create (laraworker tables --index)", "each statement ignored when what it adds is there; then the indexes of earlier versions are dropped (as in `drop`)", strings.Join(s.CreateClaimIndex(), ";\n")},
		{"claim index: drop (laraworker tables --drop-index)", "also drops the indexes earlier versions made: (queue, reserved_at, available_at), and the class and queue indexes with reserved_at", strings.Join(s.DropClaimIndex(), ";\n")},
	}
}
