// Package e2e runs laraworker next to the real `php artisan queue:work` of
// the Laravel 8 test app in testdata/laravel, on one database, and checks
// the rows both leave behind.
//
// The tests are skipped when php is not installed, unless LARAWORKER_E2E is
// set: then they run and fail without PHP. Each test runs once per
// database of LARAWORKER_E2E_DB, a comma separated list of mysql
// (MariaDB/MySQL at 127.0.0.1:3306, root, database laraworker_e2e), sqlite
// (a file in a temp dir) and pgsql (127.0.0.1:5432, postgres, database
// laraworker_e2e); the default is "mysql,sqlite". LARAWORKER_TEST_DB_SUFFIX
// is appended to the database names, so two checkouts can run the suite
// at once. LARAWORKER_E2E_BIN runs a
// given laraworker binary instead of building one.
package e2e
