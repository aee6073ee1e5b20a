package fleet

import (
	"context"
	"fmt"
)

// Tables names laraworker's own tables. Every process of an app, Go or
// PHP, must use the same names: DefaultTables behind the database
// connection's table prefix (On), unless tests give each run its
// own.
type Tables struct {
	Workers, Pauses, History string
}

// DefaultTables are the names `laraworker tables` creates on a connection
// without a table prefix.
var DefaultTables = TablesWithPrefix("laraworker_")

// TablesWithPrefix names the three tables prefix+"workers", ...
func TablesWithPrefix(prefix string) Tables {
	return Tables{Workers: prefix + "workers", Pauses: prefix + "pauses", History: prefix + "history"}
}

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
// Columns are documented in README's Dashboard section, for a PHP bridge
// that records its workers.
func createStatements(d Dialect, tb Tables) []string {
	t := typesFor(d.Name())
	q := d.Quote
	return []string{
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
			q("version") + " varchar(64) not null)" + t.tail,
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
			"primary key (" + q("minute") + ", " + q("queue") + ", " + q("class") + "))" + t.tail,
	}
}

// CreateTables creates laraworker's own tables if they are missing; it
// never touches Laravel's.
func (s *Store) CreateTables(ctx context.Context) error {
	for _, stmt := range createStatements(s.d, s.t) {
		if _, err := s.db.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("fleet: creating laraworker's tables: %w", err)
		}
	}
	return nil
}

// DropTables drops laraworker's own tables (tests, tooling).
func (s *Store) DropTables(ctx context.Context) error {
	for _, t := range []string{s.t.Workers, s.t.Pauses, s.t.History} {
		if _, err := s.db.ExecContext(ctx, "drop table if exists "+s.d.Quote(t)); err != nil {
			return fmt.Errorf("fleet: dropping %s: %w", t, err)
		}
	}
	return nil
}
