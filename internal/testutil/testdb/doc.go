// Package testdb gives tests outside package laravel a real database per
// engine with freshly named tables: MariaDB (LARAWORKER_TEST_MYSQL_DSN,
// default root@127.0.0.1:3306/test), PostgreSQL (LARAWORKER_TEST_PG_DSN,
// default postgres@127.0.0.1:5432/test) and SQLite in a temp dir. A server
// that cannot be reached skips the test, unless LARAWORKER_TEST_REQUIRE_DB
// is set (CI sets it), which fails it.
package testdb
