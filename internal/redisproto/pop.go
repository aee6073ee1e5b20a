package redisproto

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"slices"
	"time"
)

// PopOptions shape a pop.
type PopOptions struct {
	// Max is how many jobs to pop at most (0 means 1). Each is popped
	// exactly as Laravel's pop script pops one, in one script run.
	Max int
	// Only, when set, pops only jobs whose displayName is listed; Except
	// never pops the listed ones. A job of another class at the head is
	// left where it is, untouched (PopResult.Head names it), and the pop
	// takes the jobs it may take from behind it, within the lookahead
	// (Lookahead, LookaheadBytes). Names match ignoring ASCII case, as
	// PHP class names do. A job the pop cannot read is popped whatever the
	// filter (PHP's pop would lose it).
	Only   []string
	Except []string
	// LeaveIDs are payload "id"s (Job.ID) of jobs the caller gave back
	// (Unreserve) and must not pop again: such a job is left in place as
	// one of a foreign class is, so it waits for another worker (PHP's)
	// instead of going round between pop and give-back.
	LeaveIDs []string
	// Lookahead bounds how many jobs the pop looks past and leaves, once
	// the head is a job it leaves (another class, an id to leave, a copy
	// of a reserved job), before it gives up finding one it takes:
	// DefaultLookahead when 0, none when negative (the pop then stops at
	// the first job it leaves). LookaheadBytes bounds their bytes
	// (DefaultLookaheadBytes when 0): the pop stops looking once it has
	// read that many. The jobs looked past are judged by their bytes
	// (the displayName found in them), never decoded, and stay in place
	// and in order; PopResult.LookedPast counts them, and ReportLooked
	// asks for each in PopResult.Looked (which costs the server a little
	// more per job: ask when the report is needed, not at every pop).
	Lookahead      int
	LookaheadBytes int64
	ReportLooked   bool
	// Block waits on the queue's notify list (BLPOP, for the connection's
	// block_for) when the queue is empty, then pops once more without
	// migrating, as RedisQueue::retrieveNextJob does. Laravel 11.27+ blocks
	// only on the first queue of --queue=a,b. With block_for 0 the wait
	// lasts until a job is pushed or ctx ends; it is cut into 1 s BLPOPs so
	// that ctx ending stops it within a second. Without block_for, Block
	// does nothing.
	Block bool
	// Exact runs the migrations as Laravel does, as two scripts before the
	// pop script (three round trips); otherwise one script migrates and
	// pops, which gives the state of Laravel's three with nothing between.
	Exact bool
	// Migrated asks for the members the pop's migrations moved to the
	// list (PopResult.Migrated), which Horizon's records hear of.
	Migrated bool
}

// PopResult is what a pop took.
type PopResult struct {
	// Jobs are the popped jobs in list order; a job with Err set could not
	// be read (MalformedError) and must be failed or given back.
	Jobs []*Job
	// Head is the job at the head of the list the pop left in place
	// (Only/Except, LeaveIDs, or a copy of a reserved job), if any.
	Head *Head
	// LookedPast is how many jobs behind Head the pop looked past and
	// left in place; Looked lists them in list order, with
	// PopOptions.ReportLooked (their DisplayName and UUID as their bytes
	// tell them, "" where they do not). LookaheadCut is set when it
	// stopped looking at its bound (PopOptions.Lookahead, LookaheadBytes)
	// before the end of the list, so that jobs it would take may wait
	// further down.
	LookedPast   int
	Looked       []Head
	LookaheadCut bool
	// Migrated are the members the migrations moved from the delayed and
	// reserved sets to the list (delayed first), with PopOptions.Migrated.
	Migrated []string
}

// Pop is RedisQueue::pop on one queue ("" is the default): the due
// delayed and expired reserved jobs move to the list, then up to
// opts.Max jobs are popped from its head, each counted and reserved until
// now + retry_after. An empty queue gives an empty result, no error.
func (q *Queue) Pop(ctx context.Context, queue string, opts PopOptions) (PopResult, error) {
	k := q.keys(queue)
	if k.err != nil {
		return PopResult{}, k.err
	}
	var moved []string
	if opts.Exact {
		var err error
		if moved, err = q.migrate(ctx, k.name); err != nil {
			return PopResult{}, err
		}
		if !opts.Migrated {
			moved = nil
		}
	}
	res, err := q.claim(ctx, k, opts, !opts.Exact)
	res.Migrated = append(moved, res.Migrated...)
	if err != nil || len(res.Jobs) > 0 || res.Head != nil || !opts.Block || q.cfg.BlockFor == nil {
		return res, err
	}
	notify := k.Notify
	woken, err := q.waitNotify(ctx, notify)
	if err != nil || !woken {
		return res, err
	}
	moved = res.Migrated
	res, err = q.claim(ctx, k, opts, false)
	res.Migrated = append(moved, res.Migrated...)
	if err == nil && len(res.Jobs) == 0 && res.Head != nil {
		// The token woke this pop for a job it leaves in place: hand it on,
		// so that a worker blocked on the queue (PHP's) wakes for that job
		// instead of waiting out its block_for.
		err = q.wrap(q.rdb.RPush(ctx, notify, 1).Err())
	}
	return res, err
}

// claim runs claimScript once.
func (q *Queue) claim(ctx context.Context, k *queueKeys, opts PopOptions, migrate bool) (PopResult, error) {
	now := q.now().Unix()
	until := now + q.retrySeconds
	max := max(opts.Max, 1)
	classes := q.lastClasses.Load()
	if classes == nil || !slices.Equal(classes.only, opts.Only) || !slices.Equal(classes.except, opts.Except) {
		classes = newClassArgs(opts.Only, opts.Except)
		q.lastClasses.Store(classes)
	}
	report := "0"
	if opts.Migrated {
		report = "1"
	}
	depth, budget := lookahead(opts)
	looked := "0"
	if opts.ReportLooked {
		looked = "1"
	}
	args := make([]any, 0, 12+len(classes.args)+len(opts.LeaveIDs))
	migrations := "0"
	if migrate {
		migrations = q.migrateSets
	}
	args = append(args, now, until, migrations, q.migrationLimit, max, classes.kind, report,
		depth, budget, takeMarker, looked, len(classes.args))
	args = append(args, classes.args...)
	for _, id := range opts.LeaveIDs {
		args = append(args, id)
	}
	// Once sent, the pop is waited for even if ctx ends (a worker told to
	// stop): the jobs it reserves must reach the caller, or they would sit
	// reserved until retry_after and come back with an attempt counted.
	if err := ctx.Err(); err != nil {
		return PopResult{}, err
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), popAnswerTimeout)
	defer cancel()
	reply, err := claimScript.Run(sctx, q.rdb, []string{k.Ready, k.Reserved, k.Notify, k.Delayed}, args...).Result()
	if err != nil {
		return PopResult{}, q.wrap(err)
	}
	res, err := parseClaim(k.name, reply, until)
	if err != nil {
		return PopResult{}, q.wrap(err)
	}
	return res, nil
}

// classArgs are claimScript's class arguments: the filter's kind ("0"
// none, "1" Only, "2" Except) and each name beside its ASCII-lowered form
// (PHP compares class names so). A worker pops with the same lists pop
// after pop, and lowering them on each pop cost two allocations a name:
// the last rendering is kept (Queue.lastClasses) and used while the lists
// are equal, compared by content.
type classArgs struct {
	only, except []string // copies of the lists rendered
	kind         string
	args         []any
}

func newClassArgs(only, except []string) *classArgs {
	c := &classArgs{only: slices.Clone(only), except: slices.Clone(except), kind: "0"}
	names := c.only
	switch {
	case len(only) > 0:
		c.kind = "1"
	case len(except) > 0:
		c.kind, names = "2", c.except
	}
	for _, n := range names {
		c.args = append(c.args, n, asciiLower(n))
	}
	return c
}

// The lookahead's bounds when PopOptions leaves them 0: far enough that
// a few jobs of other classes never hold a pop's jobs back, near enough
// that a pop which finds nothing of its own costs the server a
// millisecond or so, not a scan of the queue.
const (
	DefaultLookahead      = 1000
	DefaultLookaheadBytes = 16 << 20
)

// lookahead is claimScript's lookahead bounds: jobs and bytes.
func lookahead(opts PopOptions) (int, int64) {
	depth, budget := opts.Lookahead, opts.LookaheadBytes
	switch {
	case depth < 0:
		return 0, 0
	case depth == 0:
		depth = DefaultLookahead
	}
	if budget <= 0 {
		budget = DefaultLookaheadBytes
	}
	return depth, budget
}

// takeMarker is what a job the lookahead takes is replaced by, for the
// instant between the LSET and the LREM that remove it by its place
// inside one script: no job is these bytes (not JSON, random).
var takeMarker = func() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return "\x00laraworker: a job taken by its place\x00" + hex.EncodeToString(b)
}()

// popAnswerTimeout bounds the wait for a pop's answer once the pop is
// sent (the connection's own read timeout usually ends it first).
const popAnswerTimeout = time.Minute

// waitNotify is the BLPOP on the notify list: true when a token came.
// It runs on the wall clock (not SetClock's): it is a real wait.
func (q *Queue) waitNotify(ctx context.Context, key string) (bool, error) {
	total := *q.cfg.BlockFor
	deadline := time.Now().Add(total)
	for {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		// go-redis sends BLPOP whole seconds; block_for is an integer in
		// Laravel's config anyway.
		wait := time.Second
		if total > 0 {
			left := time.Until(deadline)
			if left <= 0 {
				return false, nil
			}
			wait = max(min(wait, left.Round(time.Second)), time.Second)
		}
		_, err := q.rdb.BLPop(ctx, wait, key).Result()
		switch {
		case err == nil:
			return true, nil
		case isNil(err):
			// Timed out: loop, which ends at the deadline.
		case ctx.Err() != nil:
			return false, ctx.Err()
		default:
			return false, q.wrap(err)
		}
	}
}

// Migrate is RedisQueue::migrate: the due delayed jobs, then the expired
// reservations, move to the tail of the list, as two scripts.
func (q *Queue) Migrate(ctx context.Context, queue string) error {
	_, err := q.migrate(ctx, queue)
	return err
}

// migrate is Migrate, returning the members moved (delayed ones first).
func (q *Queue) migrate(ctx context.Context, queue string) ([]string, error) {
	k := q.keys(queue)
	moved, err := q.MigrateExpired(ctx, k.Delayed, k.Ready)
	if err != nil || q.cfg.NeverExpire {
		return moved, err
	}
	expired, err := q.MigrateExpired(ctx, k.Reserved, k.Ready)
	return append(moved, expired...), err
}

// MigrateExpired is RedisQueue::migrateExpiredJobs(from, to): the
// members of the sorted set from (a full key) whose score is due move to
// the list to, at most migration_batch_size of them; it returns them.
func (q *Queue) MigrateExpired(ctx context.Context, from, to string) ([]string, error) {
	reply, err := migrateScript.Run(ctx, q.rdb, []string{from, to, to + ":notify"}, q.now().Unix(), q.migrationLimit).StringSlice()
	if err != nil && !isNil(err) {
		return nil, q.wrap(err)
	}
	return reply, nil
}

// seconds rounds a delay down to whole seconds, negative to zero (PHP's
// availableAt takes integer seconds).
func seconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64(d / time.Second)
}

// asciiLower folds ASCII letters only, as PHP does for class names.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
