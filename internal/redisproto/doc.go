// Package redisproto speaks Laravel's Redis queue protocol
// (Illuminate\Queue\RedisQueue, LuaScripts and RedisJob, Laravel 8 to 13),
// so Go workers and `php artisan queue:work redis` share one queue.
//
// # Keys and scripts
//
// A queue NAME on a connection with prefix P (the Redis connection's
// options.prefix, which phpredis and predis put before every key) has
// four keys: P+"queues:NAME" (the ready list, RPUSH/LPOP),
// P+"queues:NAME:delayed" and P+"queues:NAME:reserved" (sorted sets
// scored by Unix seconds) and P+"queues:NAME:notify" (tokens that wake
// blocking pops). On a Redis Cluster the four keys must share a slot:
// the app names its queues {NAME}, or Laravel 13.5+ adds the braces
// (Config.HashTagQueues). Every operation is one Lua script run with
// EVALSHA, leaving the state Laravel's own scripts leave; a differential
// test drives the installed Laravel's RedisQueue and this package through
// the same random operations and compares every key byte for byte.
//
// # Jobs and their fence
//
// Pop moves due delayed jobs and expired reservations to the list, then
// pops as Laravel's pop script does: LPOP, cjson decode, attempts + 1,
// cjson encode, ZADD of that re-encoded copy to the reserved set (score
// now + retry_after). A Job keeps both strings: Payload (the list's bytes,
// what failed_jobs stores) and Reserved (the re-encoded member). Reserved
// is the fence: Delete, Release, Unreserve, Extend and Complete act only
// while that member is still in the reserved set, and otherwise write
// nothing and report ErrReservationLost. A job running past retry_after
// is moved back by any worker's next pop and popped again (as attempt
// + 1) with another member, so the first worker's late writes are no-ops.
//
// # Where it differs from Laravel
//
//   - Release is fenced (Laravel re-adds a job whose reservation is gone,
//     making a second copy).
//
//   - A payload the pop script cannot read (not JSON, no numeric
//     "attempts") is lost by Laravel's pop; here it is reserved under its
//     raw bytes and returned with a MalformedError, to be failed.
//
//   - Pop can pop several jobs in one script (each exactly as Laravel's
//     pop), migrate in the same script, and leave in place a head job of
//     a class the caller does not run (PopOptions.Only/Except) or one it
//     gave back (PopOptions.LeaveIDs), for PHP; it then takes the caller's
//     jobs from behind it, within the lookahead (PopOptions.Lookahead),
//     each removed by its place and reserved exactly as Laravel's pop
//     reserves a head, the jobs passed left in place and in order. A
//     blocking pop woken for a job it leaves hands its notify token on.
//
//   - A job byte-for-byte identical to one reserved now (a payload pushed
//     twice) would be reserved under the same member, so that settling one
//     copy settles the other (Laravel then runs both, and a fenced write
//     here would find the second lost): Pop leaves it in place
//     (PopResult.Head.Copy) until that reservation is gone.
//
//   - Extend (no Laravel counterpart) moves a running job's expiry to
//     now + retry_after; PHP sees only a later expiry.
//
//   - Unreserve gives a popped job back untouched: its member leaves the
//     reserved set and its original payload goes back to the head of the
//     list (where the pop took it), with its notify token; PHP pops it as
//     if it had never been popped.
//
//   - Complete deletes a job and pushes its chain's next link in one
//     script; Laravel pushes from inside the job and deletes afterwards.
//
//   - Move and CountClasses (laraworker's `move` and class counts) and
//     Withdraw (taking back a job pushed by mistake) have no Laravel
//     counterpart; Queues finds the queues with SCAN, as 13.8's
//     allQueueNames() does with KEYS.
//
// The clients NewClient builds never send a command again after a broken
// connection (go-redis would, and a script that ran already would run
// twice: a push twice); the caller gets the error and decides.
//
// # Failing a job
//
// The failed job goes to the app's failed_jobs table, which Redis cannot
// share a transaction with. A failure that never loses the job: Extend the
// job (it fails if the reservation is lost: write nothing), write the
// failed_jobs row, then Delete; if that Delete reports the job lost (it
// expired in between, which the Extend makes take retry_after), delete
// the failed row again.
//
// # Clock
//
// Scores are Unix seconds from this process's clock, as Laravel's are
// from PHP's: Go and PHP workers need synchronised clocks, as two PHP
// servers do.
package redisproto
