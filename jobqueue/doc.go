// Package jobqueue is the job's vocabulary and the contract between
// laraworker and the queue a job lives in: the claimed job (JobRow), what
// a claim may take (ClaimOptions), what follows an outcome (Followup: the
// chain's next link, the batch's counters, the bridge's hook jobs), the
// errors every store returns alike (ErrReservationLost, ErrMissingTable,
// ErrNotSupported, ...), what a worker reports of itself (WorkerStats,
// Outcome), and the Store interface every store implements.
//
// It holds data types and interfaces only, and imports no other package
// of the module and no driver: the stores implement it (package
// store/database for Laravel's database queue on MySQL/MariaDB,
// PostgreSQL and SQLite; package store/redis for its Redis queue), and
// the worker, the fleet, the dashboard and the CLI depend on it alone, as
// River's rivertype and riverdriver separate its types and its drivers.
//
// # The contract
//
// Store is one interface, checked by the compiler, made of named parts:
// Queue (the worker's claims and fenced outcomes), Admin (artisan's
// queue:* commands on the jobs: sizes, clear, move, push, retry, single
// jobs, the classes waiting), FailedJobs and Batches (Laravel's failed job
// provider and batch repository), Schema (the tables kept in the app's
// database) and SharedState (the app's cache stores and Redis
// connections, where PHP and Go workers share restart signals, counters,
// locks and middleware state). A store implements all of it. What its
// backend cannot do it answers with an error wrapping ErrNotSupported
// (beanstalkd cannot clear a tube; SQS cannot read a queued job by id),
// which callers report as the store's limit, not as a fault (the startup
// checks skip what needs it; `inspect --id` says the connection has no
// lookup of single jobs). It never leaves a method out, so a store that
// forgets one fails to compile instead of degrading silently.
//
// Three capabilities are optional, and the only ones a caller asks for
// with a type assertion: ModelLookup (whether a model's row exists, which
// needs the app's database; without it, jobs holding models go to PHP
// workers), LeftReporter (what claims left in place on a queue they
// cannot reorder, a Redis list; it may also be a prometheus.Collector of
// those jobs) and Waiter (a signal of pushes the worker waits on after an
// empty claim instead of polling: Redis's :notify lists).
//
// # How to add a store
//
// A store for another of Laravel's queue drivers (SQS, beanstalkd) lives
// in its own package under store/ and imports this package, never
// another store's package:
//
//  1. Implement Queue as Laravel's queue and worker do for that driver:
//     the claim (pop, reserve, attempts counted as Laravel counts them),
//     and every write fenced by the reservation the claim handed out
//     (JobRow.ReservedAt, or the store's own handle in
//     JobRow.Reservation): a write after another worker took the job
//     changes nothing and returns ErrReservationLost. Writes are retried
//     by the worker, so they must be safe to repeat.
//  2. Keep the failed jobs and batches where Laravel keeps them whatever
//     the driver: in the app's database. Build the store on a Repository
//     (package store/database's Queue opened on the app's database under
//     the store's connection name, which its caller opens and passes in)
//     and delegate FailedJobs, Batches, Schema (its outcome tables),
//     SharedState and ModelLookup to it; write a failure's row, the
//     batch's counters and the bridge's hook jobs through its Record...
//     methods, after the job is settled in the backend, as package
//     store/redis does (store/redis/outcomes.go).
//  3. Implement Admin; what the backend cannot do returns an error
//     wrapping ErrNotSupported that says why.
//  4. Assert it at compile time: var _ jobqueue.Store = (*Store)(nil),
//     and the optional capabilities it has.
//  5. Open it in the CLI: one constructor file in
//     console/internal/queueconn per driver (dbconnection.go,
//     redisconnection.go), chosen by the queue connection's driver.
//  6. Pass the conformance suite: a storetest_test.go in the store's
//     package calls storetest.Run (package jobqueue/storetest) with a
//     factory that opens a fresh store and declares, in
//     Config.Unsupported, what the backend cannot do; the suite accepts
//     ErrNotSupported for those only, and checks they really are not
//     done. The store is done when the suite passes in `go test -race`.
//
// The import check (internal/archtest) fails when a store imports
// another store's package or something above it.
package jobqueue
