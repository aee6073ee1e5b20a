// Package sqldb opens the app's database as Laravel's connectors do
// (MySQL/MariaDB at READ COMMITTED with client-side bindings, PostgreSQL,
// SQLite in WAL with immediate transactions), holds each engine's SQL
// dialect and error classes (retryable, lost connection, setup problem),
// and runs transactions retried on deadlocks, lock-wait timeouts and
// serialization failures. It links the three drivers; packages store/database
// and dbcache build on it.
package sqldb
