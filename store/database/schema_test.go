package database

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/laraworker/laraworker/internal/sqldb"
	"github.com/laraworker/laraworker/internal/testutil/testdsn"
	"github.com/laraworker/laraworker/laravel/appconfig"
)

// laravelDDL returns the statements Laravel's schema builder compiles for
// engine (testdata/laravel_ddl.txt, made by gen_laravel_ddl.php), with
// the given table names.
func laravelDDL(t *testing.T, engine string, tb sqldb.Tables) []string {
	t.Helper()
	raw, err := os.ReadFile("testdata/laravel_ddl.txt")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	section := ""
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, "== ") {
			section = strings.TrimPrefix(line, "== ")
			continue
		}
		if section != engine+shapeSection(tb.Shape) || strings.TrimSpace(line) == "" {
			continue
		}
		line = strings.TrimSuffix(line, ";")
		line = strings.NewReplacer("lwjobs", tb.Jobs, "lwfailed", tb.Failed, "lwbatches", tb.Batches).Replace(line)
		out = append(out, line)
	}
	if len(out) < 5 {
		t.Fatalf("no DDL for %s in fixture", engine)
	}
	return out
}

// shapeSection is the suffix of laravel_ddl.txt's sections for a shape.
func shapeSection(s sqldb.TableShape) string {
	switch {
	case s.IndexedFailed:
		return " 13.9"
	case s.SmallAttempts:
		return " 13.6"
	}
	return ""
}

// describe returns a table's shape: columns (type, nullability, default,
// auto-increment) and indexes, with the table name replaced by T.
func describe(t *testing.T, e *testEnv, table string) string {
	t.Helper()
	var queries []string
	switch e.engine {
	case appconfig.EngineMySQL:
		queries = []string{
			"select column_name, column_type, is_nullable, coalesce(column_default, 'NULL'), extra, coalesce(collation_name, '') from information_schema.columns where table_schema = database() and table_name = ? order by ordinal_position",
			"select index_name, non_unique, group_concat(column_name order by seq_in_index) from information_schema.statistics where table_schema = database() and table_name = ? group by index_name, non_unique order by index_name",
			"select table_collation from information_schema.tables where table_schema = database() and table_name = ?",
		}
	case appconfig.EnginePgSQL:
		queries = []string{
			"select column_name, data_type, coalesce(character_maximum_length, 0), is_nullable, coalesce(column_default, 'NULL'), coalesce(datetime_precision, -1) from information_schema.columns where table_schema = current_schema() and table_name = $1 order by ordinal_position",
			"select indexname, indexdef from pg_indexes where schemaname = current_schema() and tablename = $1 order by indexname",
		}
	case appconfig.EngineSQLite:
		queries = []string{
			"select name, type, \"notnull\", coalesce(dflt_value, 'NULL'), pk from pragma_table_info(?) order by cid",
			"select l.name, l.\"unique\", l.origin, i.name from pragma_index_list(?1) l join pragma_index_info(l.name) i order by l.name",
			"select instr(lower(sql), 'autoincrement') > 0 from sqlite_master where type = 'table' and name = ?",
		}
	}
	var b strings.Builder
	for _, q := range queries {
		rows, err := e.q.db.QueryContext(e.ctx, q, table)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]sql.NullString, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for _, v := range vals {
				b.WriteString(v.String + " | ")
			}
			b.WriteString("\n")
		}
		rows.Close()
	}
	return strings.ReplaceAll(b.String(), table, "T")
}

// TestTablesMatchLaravel creates the tables with our DDL and with the DDL
// Laravel itself compiles, and compares what the database reports.
func TestTablesMatchLaravel(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		sfx := testdsn.Suffix(t)
		php := sqldb.Tables{Jobs: "php_jobs_" + sfx, Failed: "php_failed_jobs_" + sfx, Batches: "php_job_batches_" + sfx}
		t.Cleanup(func() {
			for _, tb := range []string{php.Jobs, php.Failed, php.Batches} {
				e.q.db.Exec("drop table if exists " + e.q.d.Quote(tb))
			}
		})
		for _, stmt := range laravelDDL(t, e.engine, php) {
			e.exec(t, stmt)
		}
		// Our DDL is idempotent.
		if err := e.q.CreateTables(e.ctx); err != nil {
			t.Fatal(err)
		}
		ours := sqldb.Tables{Jobs: e.cfg.JobsTable, Failed: e.cfg.FailedTable, Batches: e.cfg.BatchesTable}
		pairs := [][2]string{{php.Jobs, ours.Jobs}, {php.Failed, ours.Failed}, {php.Batches, ours.Batches}}
		for _, p := range pairs {
			want, got := describe(t, e, p[0]), describe(t, e, p[1])
			if want != got {
				t.Errorf("%s differs from Laravel's:\nLaravel:\n%s\nours:\n%s", p[1], want, got)
			}
		}
		if e.engine == appconfig.EngineMySQL {
			d := describe(t, e, ours.Jobs)
			for _, want := range []string{"attempts | tinyint(3) unsigned | NO", "id | bigint(20) unsigned | NO | NULL | auto_increment", "T_queue_index | 1 | queue"} {
				if !strings.Contains(d, want) {
					t.Errorf("jobs lacks %q:\n%s", want, d)
				}
			}
			if d := describe(t, e, ours.Failed); !strings.Contains(d, "T_uuid_unique | 0 | uuid") {
				t.Errorf("failed_jobs lacks unique uuid index:\n%s", d)
			}
		}
		if testing.Verbose() {
			fmt.Println(describe(t, e, ours.Jobs))
		}
	})
}

// TestTablesMatchLaravel13: on an app of Laravel 13.6+ CreateTables makes
// jobs.attempts unsignedSmallInteger, and on 13.9+ also failed_jobs'
// connection and queue varchar(255) with the (connection, queue,
// failed_at) index, as those versions' stubs do, which the database
// reports the same as Laravel's compiled blueprints; earlier versions and
// an unknown one keep 8.x-12.x's shapes (TestTablesMatchLaravel).
func TestTablesMatchLaravel13(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		for _, version := range []string{"13.6.0", "13.26.1"} {
			sfx := testdsn.Suffix(t)
			cfg := e.cfg
			cfg.JobsTable, cfg.FailedTable, cfg.BatchesTable = "l13_jobs_"+sfx, "l13_failed_jobs_"+sfx, "l13_job_batches_"+sfx // index names sort before PRIMARY, as php13_ ones do
			q, err := Open(e.ctx, cfg, Options{LaravelVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			php := sqldb.Tables{Jobs: "php13_jobs_" + sfx, Failed: "php13_failed_jobs_" + sfx, Batches: "php13_job_batches_" + sfx, Shape: sqldb.ShapeFor(version)}
			t.Cleanup(func() {
				q.DropTables(context.Background())
				for _, tb := range []string{php.Jobs, php.Failed, php.Batches} {
					e.q.db.Exec("drop table if exists " + e.q.d.Quote(tb))
				}
				q.Close()
			})
			for _, stmt := range laravelDDL(t, e.engine, php) {
				e.exec(t, stmt)
			}
			if err := q.CreateTables(e.ctx); err != nil {
				t.Fatal(err)
			}
			if err := q.CreateTables(e.ctx); err != nil { // idempotent
				t.Fatal(err)
			}
			for _, p := range [][2]string{{php.Jobs, cfg.JobsTable}, {php.Failed, cfg.FailedTable}, {php.Batches, cfg.BatchesTable}} {
				if want, got := describe(t, e, p[0]), describe(t, e, p[1]); want != got {
					t.Errorf("%s: %s differs from Laravel's:\nLaravel:\n%s\nours:\n%s", version, p[1], want, got)
				}
			}
			if e.engine == appconfig.EngineMySQL {
				d := describe(t, e, cfg.JobsTable) + describe(t, e, cfg.FailedTable)
				want := []string{"attempts | smallint(5) unsigned | NO"}
				if version == "13.26.1" {
					want = append(want, "connection | varchar(255) | NO", "T_connection_queue_failed_at_index | 1 | connection,queue,failed_at")
				}
				for _, w := range want {
					if !strings.Contains(d, w) {
						t.Errorf("%s: the tables lack %q:\n%s", version, w, d)
					}
				}
			}
		}
	})
}
