package fleet

import (
	"context"
	"fmt"
	"strings"
)

// Tables names laraworker's own tables. Every process of an app, Go or
// PHP, must use the same names: DefaultTables behind the database
// connection's table prefix (On), unless tests give each run its
// own.
type Tables struct {
	Workers, Pauses, History, Recent string
}

// DefaultTables are the names `laraworker tables` creates on a connection
// without a table prefix.
var DefaultTables = TablesWithPrefix("laraworker_")

// TablesWithPrefix names the tables prefix+"workers", ...
func TablesWithPrefix(prefix string) Tables {
	return Tables{Workers: prefix + "workers", Pauses: prefix + "pauses", History: prefix + "history", Recent: prefix + "recent"}
}

// all lists the tables in creation order.
func (t Tables) all() []string { return []string{t.Workers, t.Pauses, t.History, t.Recent} }

// Column types per engine: MySQL/MariaDB needs lengths on indexed text
// (191 characters keeps a utf8mb4 key under the 767-byte limit of old
// servers); PostgreSQL and SQLite do not.
type columnTypes struct {
	key, text, bigint, small, tail string
}

func typesFor(engine string) columnTypes {
	switch engine {
	case "mysql", "mariadb":
		return columnTypes{key: "varchar(191)", text: "longtext", bigint: "bigint", small: "smallint",
			tail: " default character set utf8mb4 collate 'utf8mb4_unicode_ci'"}
	case "pgsql":
		return columnTypes{key: "varchar(191)", text: "text", bigint: "bigint", small: "smallint"}
	}
	return columnTypes{key: "varchar", text: "text", bigint: "integer", small: "integer"}
}

// createStatements is the DDL of laraworker's own tables, idempotent.
// Columns are documented in docs/DASHBOARD.md ("laraworker's tables"), for a PHP bridge
// that records its workers.
func createStatements(d Dialect, tb Tables) []string {
	t := typesFor(d.Name())
	q := d.Quote
	stmts := []string{
		"create table if not exists " + q(tb.Workers) + " (" +
			q("id") + " " + t.key + " not null primary key, " +
			q("kind") + " varchar(16) not null, " +
			q("name") + " varchar(255) not null, " +
			q("host") + " varchar(255) not null, " +
			q("pid") + " " + t.bigint + " not null, " +
			q("queues") + " " + t.text + " not null, " +
			q("concurrency") + " " + t.bigint + " not null, " +
			q("started_at") + " " + t.bigint + " not null, " +
			q("last_seen_at") + " " + t.bigint + " not null, " +
			q("stopped_at") + " " + t.bigint + " null, " +
			q("jobs_done") + " " + t.bigint + " not null, " +
			q("jobs_failed") + " " + t.bigint + " not null, " +
			q("jobs_released") + " " + t.bigint + " not null, " +
			q("memory_bytes") + " " + t.bigint + " not null, " +
			q("paused") + " " + t.small + " not null, " +
			q("paused_queues") + " " + t.text + " not null, " +
			q("running") + " " + t.text + " not null, " +
			q("version") + " varchar(64) not null, " +
			q(returnedColumn) + " " + t.bigint + " not null default 0)" + t.tail,
		"create table if not exists " + q(tb.Pauses) + " (" +
			q("scope") + " varchar(16) not null, " +
			q("target") + " " + t.key + " not null, " +
			q("created_at") + " " + t.bigint + " not null, " +
			"primary key (" + q("scope") + ", " + q("target") + "))" + t.tail,
		"create table if not exists " + q(tb.History) + " (" +
			q("minute") + " " + t.bigint + " not null, " +
			q("queue") + " " + t.key + " not null, " +
			q("class") + " " + t.key + " not null, " +
			q("done") + " " + t.bigint + " not null, " +
			q("failed") + " " + t.bigint + " not null, " +
			q("released") + " " + t.bigint + " not null, " +
			timingDDL(d) +
			"primary key (" + q("minute") + ", " + q("queue") + ", " + q("class") + "))" + t.tail,
		"create table if not exists " + q(tb.Recent) + " (" +
			q("worker") + " " + t.key + " not null, " +
			q("slot") + " " + t.bigint + " not null, " +
			q("job_id") + " " + t.bigint + " not null, " +
			q("uuid") + " varchar(64) not null, " +
			q("queue") + " " + t.key + " not null, " +
			q("class") + " " + t.key + " not null, " +
			q("outcome") + " varchar(16) not null, " +
			q("attempt") + " " + t.bigint + " not null, " +
			q("finished_at") + " " + t.bigint + " not null, " +
			q("run_ms") + " " + t.bigint + " not null, " +
			q("wait_ms") + " " + t.bigint + " not null, " +
			"primary key (" + q("worker") + ", " + q("slot") + ")" + recentIndexInline(d, tb) + ")" + t.tail,
	}
	if d.Name() != "mysql" {
		// MySQL has no "create index if not exists": its index is declared
		// in the table (recentIndexInline).
		stmts = append(stmts, "create index if not exists "+q(recentIndex(tb))+" on "+q(tb.Recent)+" ("+q("finished_at")+")")
	}
	return stmts
}

// timingDDL declares the history's runtime and wait columns (see
// timing.go), each "bigint not null default 0" so writers that do not
// know them (older workers and bridges) still insert rows.
func timingDDL(d Dialect) string {
	var b strings.Builder
	for _, c := range timingColumns {
		b.WriteString(d.Quote(c) + " " + typesFor(d.Name()).bigint + " not null default 0, ")
	}
	return b.String()
}

// recentIndex names the index that lists recent jobs newest first.
func recentIndex(tb Tables) string { return tb.Recent + "_finished_at_index" }

func recentIndexInline(d Dialect, tb Tables) string {
	if d.Name() != "mysql" {
		return ""
	}
	return ", index " + d.Quote(recentIndex(tb)) + " (" + d.Quote("finished_at") + ")"
}

// CreateTables creates laraworker's own tables if they are missing and
// adds the columns an earlier version's tables lack (the history's runtime
// and wait columns); it never touches Laravel's.
func (s *Store) CreateTables(ctx context.Context) error {
	for _, stmt := range createStatements(s.d, s.t) {
		if _, err := s.db.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("fleet: creating laraworker's tables: %w", err)
		}
	}
	if err := s.addMissingColumns(ctx, s.t.History, timingColumns); err != nil {
		return fmt.Errorf("fleet: adding the runtime and wait columns to %s: %w", s.t.History, err)
	}
	if err := s.addMissingColumns(ctx, s.t.Workers, []string{returnedColumn}); err != nil {
		return fmt.Errorf("fleet: adding the %s column to %s: %w", returnedColumn, s.t.Workers, err)
	}
	s.schema.forget()
	return nil
}

// MissingTables lists laraworker's own tables that do not exist, and
// reports whether the history table lacks the columns an earlier version
// did not make (CreateTables adds them).
func (s *Store) MissingTables(ctx context.Context) (missing []string, oldColumns bool, err error) {
	for _, t := range s.t.all() {
		cols, err := s.columnsOf(ctx, t)
		if err != nil {
			return nil, false, err
		}
		if len(cols) == 0 {
			missing = append(missing, t)
			continue
		}
		switch t {
		case s.t.History:
			for _, c := range timingColumns {
				oldColumns = oldColumns || !cols[c]
			}
		case s.t.Workers:
			oldColumns = oldColumns || !cols[returnedColumn]
		}
	}
	return missing, oldColumns, nil
}

// Ensure makes laraworker's own tables when any is missing, and adds the
// columns an earlier version's lack (CreateTables); it reports what it
// created. Laravel's tables are never touched.
func (s *Store) Ensure(ctx context.Context) (created []string, err error) {
	missing, old, err := s.MissingTables(ctx)
	if err != nil || (len(missing) == 0 && !old) {
		return nil, err
	}
	if err := s.CreateTables(ctx); err != nil {
		return nil, err
	}
	return missing, nil
}

// DropTables drops laraworker's own tables (tests, tooling).
func (s *Store) DropTables(ctx context.Context) error {
	for _, t := range s.t.all() {
		if _, err := s.db.ExecContext(ctx, "drop table if exists "+s.d.Quote(t)); err != nil {
			return fmt.Errorf("fleet: dropping %s: %w", t, err)
		}
	}
	s.schema.forget()
	return nil
}
