package sqldb

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/laraworker/laraworker/laravel/appconfig"
	"modernc.org/sqlite"
)

type sqliteDialect struct{}

func (sqliteDialect) Name() string               { return appconfig.EngineSQLite }
func (sqliteDialect) Quote(ident string) string  { return quoteWith(ident, '"') }
func (sqliteDialect) Rebind(query string) string { return query }

// ForUpdate: SQLite has no row locks; SQLiteGrammar::compileLock renders
// nothing. Writers are serialised by BEGIN IMMEDIATE instead.
func (sqliteDialect) ForUpdate() string          { return "" }
func (sqliteDialect) ReturningID() string        { return "" }
func (sqliteDialect) TxOptions() *sql.TxOptions  { return nil }
func (sqliteDialect) ServerVersionQuery() string { return "select sqlite_version()" }

// DeleteLimited uses rowid as Laravel's SQLiteGrammar does.
func (d sqliteDialect) DeleteLimited(table, where string, n int) string {
	t := d.Quote(table)
	return fmt.Sprintf("delete from %s where rowid in (select rowid from %s where %s limit %d)", t, t, where, n)
}

// CreateTables renders Laravel's migrations as SQLiteGrammar compiles
// them, idempotent.
func (d sqliteDialect) CreateTables(t Tables) []string {
	q := d.Quote
	// SQLite puts an index in the table's schema and wants the index name
	// qualified instead of the table.
	idx := func(table, col, kind string) string {
		name := IndexName(LastPart(table), col, kind)
		if i := strings.LastIndexByte(table, '.'); i >= 0 {
			return q(table[:i]) + "." + q(name)
		}
		return q(name)
	}
	// Every integer is integer there: 13.6's attempts changes nothing.
	connQueue := `"connection" text not null, "queue" text not null, `
	if t.Shape.IndexedFailed {
		connQueue = `"connection" varchar not null, "queue" varchar not null, `
	}
	stmts := []string{
		"create table if not exists " + q(t.Jobs) + ` ("id" integer not null primary key autoincrement, "queue" varchar not null, "payload" text not null, "attempts" integer not null, "reserved_at" integer, "available_at" integer not null, "created_at" integer not null)`,
		"create index if not exists " + idx(t.Jobs, "queue", "index") + " on " + q(LastPart(t.Jobs)) + ` ("queue")`,
		"create table if not exists " + q(t.Failed) + ` ("id" integer not null primary key autoincrement, "uuid" varchar not null, ` + connQueue + `"payload" text not null, "exception" text not null, "failed_at" datetime default CURRENT_TIMESTAMP not null)`,
		"create unique index if not exists " + idx(t.Failed, "uuid", "unique") + " on " + q(LastPart(t.Failed)) + ` ("uuid")`,
		"create table if not exists " + q(t.Batches) + ` ("id" varchar not null, "name" varchar not null, "total_jobs" integer not null, "pending_jobs" integer not null, "failed_jobs" integer not null, "failed_job_ids" text not null, "options" text, "cancelled_at" integer, "created_at" integer not null, "finished_at" integer, primary key ("id"))`,
	}
	if t.Shape.IndexedFailed {
		stmts = append(stmts, "create index if not exists "+idx(t.Failed, failedIndexColumns, "index")+" on "+q(LastPart(t.Failed))+` ("connection", "queue", "failed_at")`)
	}
	return stmts
}

// SQLite result codes (primary code is the low byte of extended codes).
const (
	sqliteBusy   = 5
	sqliteLocked = 6
)

func (sqliteDialect) Classify(err error) ErrorClass {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqliteBusy, sqliteLocked:
			return ErrRetryable
		}
		return messageClass(err)
	}
	return messageClass(err)
}

// IsOutOfRange never holds: SQLite integers are 64-bit whatever the
// declared type.
func (sqliteDialect) IsOutOfRange(error) bool { return false }

func (sqliteDialect) IsUniqueViolation(err error) bool {
	var se *sqlite.Error
	// SQLITE_CONSTRAINT_UNIQUE = 2067, SQLITE_CONSTRAINT_PRIMARYKEY = 1555
	return errors.As(err, &se) && (se.Code() == 2067 || se.Code() == 1555)
}
