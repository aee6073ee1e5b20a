package sqldb

import (
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/laraworker/laraworker/laravel/appconfig"
)

type pgsqlDialect struct{}

func (pgsqlDialect) Name() string               { return appconfig.EnginePgSQL }
func (pgsqlDialect) Quote(ident string) string  { return quoteWith(ident, '"') }
func (pgsqlDialect) ForUpdate() string          { return "for update" }
func (pgsqlDialect) ReturningID() string        { return ` returning "id"` }
func (pgsqlDialect) TxOptions() *sql.TxOptions  { return nil }
func (pgsqlDialect) ServerVersionQuery() string { return "show server_version" }

// Rebind numbers placeholders ($1, $2, ...). Our statements never contain
// '?' inside string literals, so no quoting awareness is needed.
func (pgsqlDialect) Rebind(query string) string {
	if !strings.Contains(query, "?") {
		return query
	}
	var b strings.Builder
	n := 0
	for i := 0; i < len(query); i++ {
		if query[i] == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(query[i])
	}
	return b.String()
}

// DeleteLimited uses ctid as Laravel's PostgresGrammar does for
// delete-with-limit.
func (d pgsqlDialect) DeleteLimited(table, where string, n int) string {
	t := d.Quote(table)
	return fmt.Sprintf("delete from %s where ctid in (select ctid from %s where %s limit %d)", t, t, where, n)
}

// CreateTables renders Laravel's migrations as PostgresGrammar compiles
// them, idempotent.
// Tiny and small integers are both smallint there: 13.6's attempts
// changes nothing.
func (d pgsqlDialect) CreateTables(t Tables) []string {
	q := d.Quote
	connQueue := `"connection" text not null, "queue" text not null, `
	if t.Shape.IndexedFailed {
		connQueue = `"connection" varchar(255) not null, "queue" varchar(255) not null, `
	}
	stmts := []string{
		"create table if not exists " + q(t.Jobs) + ` ("id" bigserial primary key not null, "queue" varchar(255) not null, "payload" text not null, "attempts" smallint not null, "reserved_at" integer null, "available_at" integer not null, "created_at" integer not null)`,
		"create index if not exists " + q(IndexName(LastPart(t.Jobs), "queue", "index")) + " on " + q(t.Jobs) + ` ("queue")`,
		"create table if not exists " + q(t.Failed) + ` ("id" bigserial primary key not null, "uuid" varchar(255) not null, ` + connQueue + `"payload" text not null, "exception" text not null, "failed_at" timestamp(0) without time zone default CURRENT_TIMESTAMP not null, constraint ` + q(IndexName(LastPart(t.Failed), "uuid", "unique")) + ` unique ("uuid"))`,
		"create table if not exists " + q(t.Batches) + ` ("id" varchar(255) not null, "name" varchar(255) not null, "total_jobs" integer not null, "pending_jobs" integer not null, "failed_jobs" integer not null, "failed_job_ids" text not null, "options" text null, "cancelled_at" integer null, "created_at" integer not null, "finished_at" integer null, primary key ("id"))`,
	}
	if t.Shape.IndexedFailed {
		stmts = append(stmts, "create index if not exists "+q(IndexName(LastPart(t.Failed), failedIndexColumns, "index"))+" on "+q(t.Failed)+` ("connection", "queue", "failed_at")`)
	}
	return stmts
}

func (pgsqlDialect) Classify(err error) ErrorClass {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code == "40001", pe.Code == "40P01", pe.Code == "55P03":
			// serialization_failure, deadlock_detected, lock_not_available
			return ErrRetryable
		case strings.HasPrefix(pe.Code, "08"), pe.Code == "57P01", pe.Code == "57P02", pe.Code == "57P03",
			pe.Code == "25P03", pe.Code == "57P05":
			// connection exceptions, admin/crash shutdown, cannot connect now;
			// the server ended the session: idle in a transaction, or idle,
			// past its timeout
			return ErrLostConnection
		}
		return messageClass(err)
	}
	if pgconn.Timeout(err) {
		return ErrLostConnection
	}
	if commonLostConnection(err) {
		return ErrLostConnection
	}
	return messageClass(err)
}

// IsOutOfRange: numeric_value_out_of_range.
func (pgsqlDialect) IsOutOfRange(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "22003"
}

func (pgsqlDialect) IsUniqueViolation(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}
