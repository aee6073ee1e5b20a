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
//	LARAWORKER_TEST_RESTART_DB=1  run TestMariaDBRestart (stops and starts
//	                              the MariaDB server: run it alone)
package reliability
