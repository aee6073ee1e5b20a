// Package pulsetest creates Laravel Pulse's tables in tests and reads
// them back as a user inspecting them sees them. Pulse itself cannot be
// installed beside the test app (Laravel 8.83; Pulse needs 10+): the DDL
// below is written from the schema of its migration (Pulse 1.x,
// database/migrations/2023_06_07_000001_create_pulse_tables.php), engine
// by engine, key_hash included: a virtual unhex(md5(key)) on MySQL and
// MariaDB, a stored md5(key)::uuid on PostgreSQL, a plain column Pulse
// fills on SQLite.
package pulsetest

import (
	"database/sql"
	"fmt"
	"strconv"
	"testing"
)

// ddl is Pulse's three tables per engine; %[1]s is the table prefix.
var ddl = map[string][]string{
	"mysql": {
		"create table `%[1]spulse_values` (`id` bigint unsigned not null auto_increment primary key, `timestamp` int unsigned not null, " +
			"`type` varchar(255) not null, `key` mediumtext not null, `key_hash` char(16) charset binary as (unhex(md5(`key`))) virtual, " +
			"`value` mediumtext not null, index (`timestamp`), index (`type`), unique (`type`, `key_hash`))",
		"create table `%[1]spulse_entries` (`id` bigint unsigned not null auto_increment primary key, `timestamp` int unsigned not null, " +
			"`type` varchar(255) not null, `key` mediumtext not null, `key_hash` char(16) charset binary as (unhex(md5(`key`))) virtual, " +
			"`value` bigint null, index (`timestamp`), index (`type`), index (`key_hash`), index (`timestamp`, `type`, `key_hash`, `value`))",
		"create table `%[1]spulse_aggregates` (`id` bigint unsigned not null auto_increment primary key, `bucket` int unsigned not null, " +
			"`period` mediumint unsigned not null, `type` varchar(255) not null, `key` mediumtext not null, " +
			"`key_hash` char(16) charset binary as (unhex(md5(`key`))) virtual, `aggregate` varchar(255) not null, " +
			"`value` decimal(20, 2) not null, `count` int unsigned null, unique (`bucket`, `period`, `type`, `aggregate`, `key_hash`), " +
			"index (`period`, `bucket`), index (`type`), index (`period`, `type`, `aggregate`, `bucket`))",
	},
	"pgsql": {
		`create table "%[1]spulse_values" ("id" bigserial primary key, "timestamp" integer not null, "type" varchar(255) not null, ` +
			`"key" text not null, "key_hash" uuid generated always as (md5("key")::uuid) stored, "value" text not null, unique ("type", "key_hash"))`,
		`create table "%[1]spulse_entries" ("id" bigserial primary key, "timestamp" integer not null, "type" varchar(255) not null, ` +
			`"key" text not null, "key_hash" uuid generated always as (md5("key")::uuid) stored, "value" bigint null)`,
		`create table "%[1]spulse_aggregates" ("id" bigserial primary key, "bucket" integer not null, "period" integer not null, ` +
			`"type" varchar(255) not null, "key" text not null, "key_hash" uuid generated always as (md5("key")::uuid) stored, ` +
			`"aggregate" varchar(255) not null, "value" decimal(20, 2) not null, "count" integer null, ` +
			`unique ("bucket", "period", "type", "aggregate", "key_hash"))`,
	},
	"sqlite": {
		`create table "%[1]spulse_values" ("id" integer primary key autoincrement not null, "timestamp" integer not null, "type" varchar not null, ` +
			`"key" text not null, "key_hash" varchar not null, "value" text not null, unique ("type", "key_hash"))`,
		`create table "%[1]spulse_entries" ("id" integer primary key autoincrement not null, "timestamp" integer not null, "type" varchar not null, ` +
			`"key" text not null, "key_hash" varchar not null, "value" integer null)`,
		`create table "%[1]spulse_aggregates" ("id" integer primary key autoincrement not null, "bucket" integer not null, "period" integer not null, ` +
			`"type" varchar not null, "key" text not null, "key_hash" varchar not null, "aggregate" varchar not null, "value" numeric not null, ` +
			`"count" integer null, unique ("bucket", "period", "type", "aggregate", "key_hash"))`,
	},
}

// Engine maps a driver name to the DDL's engine (MariaDB is mysql).
func Engine(driver string) string {
	if driver == "mariadb" {
		return "mysql"
	}
	return driver
}

// CreateTables creates Pulse's tables behind prefix and drops them when
// the test ends.
func CreateTables(t testing.TB, db *sql.DB, driver, prefix string) {
	t.Helper()
	engine := Engine(driver)
	for _, stmt := range ddl[engine] {
		if _, err := db.Exec(fmt.Sprintf(stmt, prefix)); err != nil {
			t.Fatalf("creating Pulse's tables on %s: %v", engine, err)
		}
	}
	t.Cleanup(func() {
		for _, table := range []string{"pulse_values", "pulse_entries", "pulse_aggregates"} {
			q := `"`
			if engine == "mysql" {
				q = "`"
			}
			db.Exec("drop table " + q + prefix + table + q)
		}
	})
}

// Aggregate is a pulse_aggregates row; KeyHash is the md5 of the key in
// hex, however the engine stores it.
type Aggregate struct {
	Bucket, Period       int64
	Type, Key, Aggregate string
	Value                string // decimal, as the database prints it
	Count                sql.NullInt64
	KeyHash              string
}

// Entry is a pulse_entries row.
type Entry struct {
	Timestamp int64
	Type, Key string
	Value     sql.NullInt64
	KeyHash   string
}

// keyHash reads key_hash as hex on every engine.
func keyHash(engine string) string {
	switch engine {
	case "mysql":
		return "lower(hex(`key_hash`))"
	case "pgsql":
		return `replace("key_hash"::text, '-', '')`
	}
	return `"key_hash"`
}

// Aggregates reads every pulse_aggregates row, ordered by period, bucket,
// type, aggregate and key.
func Aggregates(t testing.TB, db *sql.DB, driver, prefix string) []Aggregate {
	t.Helper()
	engine := Engine(driver)
	q := quoter(engine)
	cast := "cast(" + q("value") + " as char(32))"
	if engine != "mysql" {
		cast = "cast(" + q("value") + " as text)"
	}
	rows, err := db.Query(fmt.Sprintf("select %s, %s, %s, %s, %s, %s, %s, %s from %s order by %[2]s, %[1]s, %[3]s, %[5]s, %[4]s",
		q("bucket"), q("period"), q("type"), q("key"), q("aggregate"), cast, q("count"), keyHash(engine), q(prefix+"pulse_aggregates")))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []Aggregate
	for rows.Next() {
		var a Aggregate
		if err := rows.Scan(&a.Bucket, &a.Period, &a.Type, &a.Key, &a.Aggregate, &a.Value, &a.Count, &a.KeyHash); err != nil {
			t.Fatal(err)
		}
		a.Value = number(t, a.Value)
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// Entries reads every pulse_entries row in id order.
func Entries(t testing.TB, db *sql.DB, driver, prefix string) []Entry {
	t.Helper()
	engine := Engine(driver)
	q := quoter(engine)
	rows, err := db.Query(fmt.Sprintf("select %s, %s, %s, %s, %s from %s order by %s", q("timestamp"), q("type"), q("key"), q("value"),
		keyHash(engine), q(prefix+"pulse_entries"), q("id")))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []Entry
	for rows.Next() {
		var e Entry
		if err := rows.Scan(&e.Timestamp, &e.Type, &e.Key, &e.Value, &e.KeyHash); err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func quoter(engine string) func(string) string {
	c := `"`
	if engine == "mysql" {
		c = "`"
	}
	return func(s string) string { return c + s + c }
}

// number is a decimal as text without trailing zeros ("3.00" is "3",
// "2.50" is "2.5"), whatever the engine prints.
func number(t testing.TB, s string) string {
	t.Helper()
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("pulse_aggregates.value %q is not a number", s)
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}
