// Package jobqueue is the job's vocabulary and the contract between the
// worker and the queue a job lives in: the claimed job (JobRow), what a
// claim may take (ClaimOptions), what follows an outcome (Followup: the
// chain's next link, the batch's counters), the errors every store returns
// alike (ErrReservationLost, ErrMissingTable, ...), the Store interface the
// worker runs on and the optional capabilities a store may have (a shared
// cache, unique locks, batches, admin operations, the cache stores and
// Redis limiters where Laravel's job middleware keep their state).
//
// It holds data types and interfaces only, and imports no database or
// Redis driver: the drivers implement it (package dbqueue for Laravel's
// database queue), and the worker, the fleet, the dashboard and the CLI
// depend on it alone, as River's rivertype and riverdriver separate its
// types and its drivers.
package jobqueue
