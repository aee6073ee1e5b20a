// Package redisjobs is a Laravel Redis queue connection's pending jobs as
// the dashboard's snapshot.JobSource: per queue the ready list, the
// delayed set (with its schedule) and the reserved set (with the expired
// reservations apart), the first jobs of each for the Jobs page, and the
// reserved ones for Running now. Failed jobs and the fleet stay in the
// app's database, read by package snapshot as for a database queue.
//
// # Cost
//
// A refresh never reads a whole list or set: one script per queue
// (redisproto.Peek) returns its counts (LLEN, ZCARD, ZCOUNT), the first
// Options.Head jobs of its list and delayed set (cut to their first 400
// and last 200 bytes: Laravel writes uuid and displayName first,
// createdAt, id and attempts last; whole when they hold a model, for the
// tags) and at most snapshot.MaxReservedShown reserved jobs over all
// queues. No key lists a connection's queues: they are found by a SCAN of
// the connection's keys, one step of Options.ScanCount keys per node per
// refresh, plus the queues the connection names (Options.Queues) and
// those the fleet's workers watch. So a refresh costs the same with a
// hundred jobs or ten million.
//
// # What it cannot tell
//
// Redis jobs have no number: a job is named by its payload's "id" and its
// queue, and only the first Options.Head jobs of a list or set can be
// listed or opened. The classes and tags are counted among those first
// jobs (Summary.Sampled says how many). How long the oldest ready job has
// waited is read from its "createdAt" (and "delay"), which Laravel writes
// from 12.11 on; for an older Laravel's job it is how long the dashboard
// has seen that job among the first of its list, a lower bound; a due
// delayed job waits since its score.
package redisjobs
