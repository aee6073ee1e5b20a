package worker

import (
	"context"
	"slices"
	"sync/atomic"
	"time"

	"github.com/laraworker/laraworker/internal/queuepause"
	"github.com/laraworker/laraworker/laravel/appconfig"
)

// Laravel's own queue pauses: `php artisan queue:pause connection:queue`
// (12.40+) and `queue:pause --all` (13.25+) keep a flag in the app's
// default cache store, which `php artisan queue:work` reads before each
// pop and skips the paused queues (package queuepause). The worker reads
// the same flags in Config.Cache, at most once per laravelPauseEvery,
// before a claim: a paused queue is not claimed from within about a
// second, and `queue:continue` lets it be claimed again as fast. They are
// separate from laraworker's own pauses (the dashboard's, `laraworker
// pause`: Pause, PauseQueues), which only Go workers obey; a queue is
// claimed only when neither holds it. On an app whose Laravel predates
// `queue:pause` (before 12.40, when the version is known) no key is read:
// its PHP workers read none.

// laravelPauseEvery is how long one read of Laravel's pause flags holds:
// a handful of cache reads a second at most, never one per job.
const laravelPauseEvery = time.Second

// laravelPauses is the producer's view of Laravel's pauses.
type laravelPauses struct {
	// none: the app's Laravel has no queue pause, so its workers read no
	// pause key and neither does Go (a key there is not Laravel's).
	none bool
	// The producer alone reads and writes these.
	read    time.Time
	state   queuepause.State
	failing bool
	// allHeld: the last claim found every queue it could claim from
	// paused by Laravel, so it claimed nothing (the loop then sleeps no
	// longer than a read holds, to see queue:continue within a second).
	allHeld bool
	// published is state.Queues for Stats.
	published atomic.Pointer[[]string]
}

// hasLaravelPause reports whether Laravel at version (empty: unknown)
// may have paused a queue: `queue:pause` came in 12.40.
func hasLaravelPause(version string) bool {
	return version == "" || appconfig.VersionCompare(version, "12.40") >= 0
}

// pauseName is the name Laravel's pause key uses for a configured queue:
// the connection's default queue for "".
func (w *Worker) pauseName(queue string) string {
	if queue != "" {
		return queue
	}
	return w.store.DefaultQueue()
}

// laravelPaused returns the configured queues ("" for the default one)
// Laravel's pause holds now, reading the flags again when the last read
// is older than laravelPauseEvery. A failed read keeps the last state
// (and says so once): a cache that is down must not stop the queue.
func (w *Worker) laravelPaused(ctx context.Context, queues []string) []string {
	lp := &w.lpause
	if w.cfg.Cache == nil || lp.none {
		return nil
	}
	if now := w.clock.Now(); now.Sub(lp.read) >= laravelPauseEvery {
		lp.read = now
		w.readLaravelPauses(ctx, queues)
	}
	var out []string
	for _, q := range queues {
		if lp.state.Paused(w.pauseName(q)) {
			out = append(out, q)
		}
	}
	return out
}

func (w *Worker) readLaravelPauses(ctx context.Context, queues []string) {
	lp := &w.lpause
	names := make([]string, 0, len(queues))
	for _, q := range queues {
		names = append(names, w.pauseName(q))
	}
	st, err := queuepause.Read(ctx, w.cfg.Cache, w.store.Connection(), names)
	if err != nil {
		if !lp.failing && ctx.Err() == nil {
			w.log.Warn().Err(err).Strs("paused", lp.state.Queues).
				Msg("reading Laravel's queue pauses (php artisan queue:pause) failed; the queues keep the state last read")
		}
		lp.failing = true
		return
	}
	lp.failing = false
	w.logPauseChange(lp.state, st)
	lp.state = st
	list := slices.Clone(st.Queues)
	lp.published.Store(&list)
}

// logPauseChange says which queues Laravel paused or resumed since the
// last read (what PHP's WorkerQueuePaused and WorkerQueueResumed events
// tell).
func (w *Worker) logPauseChange(before, after queuepause.State) {
	var paused, resumed []string
	for _, q := range after.Queues {
		if !before.Paused(q) {
			paused = append(paused, q)
		}
	}
	for _, q := range before.Queues {
		if !after.Paused(q) {
			resumed = append(resumed, q)
		}
	}
	if len(paused) > 0 {
		w.log.Info().Strs("queues", paused).Str("connection", w.store.Connection()).Bool("all", after.All).
			Msg("paused by Laravel (php artisan queue:pause): these queues are not claimed until queue:continue")
	}
	if len(resumed) > 0 {
		w.log.Info().Strs("queues", resumed).Str("connection", w.store.Connection()).
			Msg("resumed by Laravel (php artisan queue:continue): these queues are claimed again")
	}
}

// claimed maps the queues a claim takes from through Laravel's
// Queue::forward (Config.QueueForwards): `queue:work --queue=old` pops
// the queue old forwards to. A queue two names forward to is claimed
// from once, at its first place.
func (w *Worker) claimed(queues []string) []string {
	if len(w.cfg.QueueForwards) == 0 {
		return queues
	}
	out := make([]string, 0, len(queues))
	for _, q := range queues {
		if to, ok := w.cfg.QueueForwards[w.pauseName(q)]; ok && to != "" {
			q = to
		}
		if !slices.Contains(out, q) {
			out = append(out, q)
		}
	}
	return out
}
