// Package reliability checks what laraworker promises under crashes,
// database faults, load, long jobs, hostile input and attempts to leak
// secrets, against real MariaDB/PostgreSQL and, where PHP is installed, a
// real `php artisan queue:work` on the same tables.
//
// The Laravel app (testdata/laravel) is copied to a temp dir and set up on
// the MariaDB database laraworker_rel, never in place. Without PHP the
// mixed-fleet parts are skipped and the Go-only variants run.
//
// Environment:
//
//	LARAWORKER_REL_LOAD_PROCS, LARAWORKER_REL_LOAD_JOBS, LARAWORKER_REL_LOAD_PHP
//	                              size of TestLoad (default 4 procs, 10000 jobs, 2 PHP)
//	LARAWORKER_TEST_DB_SUFFIX     appended to the app's database name
//
// The tests of Laravel's Redis queue (redis*_test.go) point the app's
// "redis" queue connection at a redis-server of their own
// (internal/testredis), never at the machine's.
//
// The tests that stop a database server (TestDatabaseRestart) or change a
// server's settings (TestPostgresSerializationFailures,
// TestPostgresIdleInTransactionTimeout) start a server of their own with
// mariadb-install-db/mariadbd or initdb/postgres (as the postgres user
// when run as root) in a temp directory, on a free port; they never touch
// the shared servers.
package reliability
