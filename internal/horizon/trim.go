package horizon

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// maybeTrim runs the trims a Horizon master supervisor runs from its
// loop, as often as it does: TrimRecentJobs every minute, TrimFailedJobs
// every trim.failed / 12 minutes and TrimMonitoredJobs every
// trim.monitored / 12 (at least 1), the first ones at once. Without a
// Horizon master running (Go serving the queues instead of Horizon's
// workers), nothing else would trim the sets Go writes to.
func (r *Recorder) maybeTrim(ctx context.Context, now time.Time) error {
	every := [3]time.Duration{time.Minute,
		time.Duration(max(1, r.cfg.Trim.Failed/12)) * time.Minute,
		time.Duration(max(1, r.cfg.Trim.Monitored/12)) * time.Minute}
	var due [3]bool
	r.mu.Lock()
	anyDue := false
	for i := range due {
		if r.trimmed[i].IsZero() || !now.Before(r.trimmed[i].Add(every[i])) {
			due[i], anyDue = true, true
			r.trimmed[i] = now
		}
	}
	r.mu.Unlock()
	if !anyDue {
		return nil
	}
	_, err := r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		if due[0] {
			// RedisJobRepository::trimRecentJobs.
			for _, s := range []struct {
				key     string
				minutes int
			}{{"recent_jobs", r.cfg.Trim.Recent}, {"recent_failed_jobs", r.cfg.Trim.RecentFailed},
				{"pending_jobs", r.cfg.Trim.Pending}, {"completed_jobs", r.cfg.Trim.Completed},
				{"silenced_jobs", r.cfg.Trim.Completed}} {
				r.trim(ctx, p, s.key, s.minutes, now)
			}
		}
		if due[1] {
			r.trim(ctx, p, "failed_jobs", r.cfg.Trim.Failed, now)
		}
		if due[2] {
			r.trim(ctx, p, "monitored_jobs", r.cfg.Trim.Monitored, now)
		}
		return nil
	})
	return pipeErr(err)
}

// trim removes the entries older than minutes from a "newest first" set
// (scores are -microtime): ZREMRANGEBYSCORE key -(now - minutes) +inf.
func (r *Recorder) trim(ctx context.Context, p redis.Pipeliner, key string, minutes int, now time.Time) {
	min := strconv.FormatInt(-(now.Unix() - int64(minutes)*60), 10)
	p.ZRemRangeByScore(ctx, r.key(key), min, "+inf")
}
