package horizon

import (
	"context"
	"errors"
	"math"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"
)

// Reserved is what a pop's JobReserved does (MarkJobAsReserved: the
// job's hash says reserved, with the reserved payload; StartTimingJob:
// its stopwatch starts), for the jobs of one pop, and, first, what the
// pop's migrations did (JobsMigrated, MarkJobsAsMigrated: each migrated
// job's hash says pending, with the payload moved).
func (r *Recorder) Reserved(ctx context.Context, migrated, reserved []Job) error {
	now := r.now()
	t := microtime(now)
	var errs []error
	ds := make([]decoded, len(reserved))
	for i, j := range reserved {
		d, err := decode(j.Payload)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		ds[i] = d
	}
	_, err := r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, j := range migrated {
			d, err := decode(j.Payload)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			p.HMSet(ctx, r.key(d.id), "status", "pending", "payload", j.Payload, "updated_at", t)
		}
		for i, j := range reserved {
			if ds[i].id != "" {
				p.HMSet(ctx, r.key(ds[i].id), "status", "reserved", "payload", j.Payload, "updated_at", t, "reserved_at", t)
			}
		}
		return nil
	})
	r.mu.Lock()
	for i, j := range reserved {
		if ds[i].id != "" {
			r.running[j.Payload] = running{start: now, d: ds[i]}
		}
	}
	r.mu.Unlock()
	return errors.Join(append(errs, r.maybeTrim(ctx, now), pipeErr(err))...)
}

// take ends a job's stopwatch and returns what Reserved read of its
// payload, reading it now for a job this process did not reserve (ok
// false: no stopwatch).
func (r *Recorder) take(reserved string) (running, bool, error) {
	r.mu.Lock()
	j, ok := r.running[reserved]
	delete(r.running, reserved)
	r.mu.Unlock()
	if ok {
		return j, true, nil
	}
	d, err := decode(reserved)
	return running{d: d}, false, err
}

// Released is JobReleased's MarkJobAsReleased: the hash says pending
// again, with the reserved payload (attempts counted).
func (r *Recorder) Released(ctx context.Context, j Job) error {
	run, _, err := r.take(j.Payload)
	if err != nil {
		return err
	}
	return r.rdb.HMSet(ctx, r.key(run.d.id), "status", "pending", "payload", j.Payload, "updated_at", microtime(r.now())).Err()
}

// Unreserved records a job Go gave back untouched (no Laravel
// counterpart: PHP never pops a job it does not run): its hash says
// pending again, with the payload as it is back in the list.
func (r *Recorder) Unreserved(ctx context.Context, j Job, original string) error {
	r.Forget(j.Payload)
	d, err := decode(original)
	if err != nil {
		return err
	}
	return r.rdb.HMSet(ctx, r.key(d.id), "status", "pending", "payload", original, "updated_at", microtime(r.now())).Err()
}

// Forget stops the stopwatch of a job whose reservation was lost (its
// outcome belongs to whoever popped it next).
func (r *Recorder) Forget(reserved string) {
	r.mu.Lock()
	delete(r.running, reserved)
	r.mu.Unlock()
}

// runtime is Stopwatch::check: milliseconds since the pop, rounded to two
// decimals, 0 for a job this process did not pop (`?: 0`).
func runtime(j running, timed bool, now time.Time) float64 {
	if !timed {
		return 0
	}
	return math.Round(float64(now.Sub(j.start).Microseconds())/1000*100) / 100
}

// Completed is what deleting finished jobs does (JobDeleted, the job not
// failed): MarkJobAsComplete (the hash says completed, the job moves from
// pending_jobs to completed_jobs, or silenced_jobs when its payload says
// so, and expires after trim.completed; a retry's parent hears of it; a
// job with a monitored tag is remembered in monitored_jobs) and
// UpdateJobMetrics (throughput and running average runtime of its queue
// and its class).
func (r *Recorder) Completed(ctx context.Context, jobs []Job) error {
	now := r.now()
	ds := make([]decoded, 0, len(jobs))
	done := make([]Job, 0, len(jobs))
	ms := make([]float64, 0, len(jobs))
	var errs []error
	for _, j := range jobs {
		run, timed, err := r.take(j.Payload)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		ds, done, ms = append(ds, run.d), append(done, j), append(ms, runtime(run, timed, now))
	}
	errs = append(errs, r.retried(ctx, ds, "completed"))
	monitored, err := r.monitored(ctx, ds)
	errs = append(errs, err)
	var queueRuns, classRuns runs
	_, err = r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, d := range ds {
			r.completed(ctx, p, d, now)
			if tags := intersect(d.tags, monitored); len(tags) > 0 {
				r.remember(ctx, p, done[i], d, now)
			}
			queueRuns.add("queue:"+done[i].Queue, ms[i])
			classRuns.add("job:"+d.name, ms[i])
		}
		queueRuns.send(ctx, p, r, "measured_queues")
		classRuns.send(ctx, p, r, "measured_jobs")
		return nil
	})
	return errors.Join(append(errs, pipeErr(err), r.maybeTrim(ctx, now))...)
}

// completed is RedisJobRepository::completed's pipeline.
func (r *Recorder) completed(ctx context.Context, p redis.Pipeliner, d decoded, now time.Time) {
	set := "completed_jobs"
	if d.silenced {
		set = "silenced_jobs"
	}
	id := r.key(d.id)
	p.Do(ctx, "zadd", r.key(set), negMicrotime(now), d.id)
	p.ZRem(ctx, r.key("pending_jobs"), d.id)
	p.HMSet(ctx, id, "status", "completed", "completed_at", microtime(now))
	p.ExpireAt(ctx, id, time.Unix(expireAt(now, r.cfg.Trim.Completed), 0))
}

// remember is RedisJobRepository::remember: a job with a monitored tag.
func (r *Recorder) remember(ctx context.Context, p redis.Pipeliner, j Job, d decoded, now time.Time) {
	id := r.key(d.id)
	p.Do(ctx, "zadd", r.key("monitored_jobs"), negMicrotime(now), d.id)
	p.HMSet(ctx, id, "id", d.id, "connection", r.connection, "queue", j.Queue, "name", d.name,
		"status", "completed", "payload", j.Payload, "completed_at", microtime(now))
	p.ExpireAt(ctx, id, time.Unix(expireAt(now, r.cfg.Trim.Monitored), 0))
}

// Failed is what failing a job does: Laravel's Job::fail deletes it first
// (JobDeleted with the job failed: MarkJobAsComplete's completed(),
// without metrics or remember), then JobFailed (MarkJobAsFailed: the
// job in failed_jobs and recent_failed_jobs, out of pending, completed and
// silenced, its hash with the exception, kept for trim.failed;
// StoreTagsForFailedJob: failed:<tag> sets). exception is the text the
// failed_jobs row holds ((string) $exception for PHP).
func (r *Recorder) Failed(ctx context.Context, j Job, exception string) error {
	run, _, err := r.take(j.Payload)
	if err != nil {
		return err
	}
	d := run.d
	now := r.now()
	errs := []error{r.retried(ctx, []decoded{d}, "failed")}
	_, err = r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		r.completed(ctx, p, d, now)
		score := negMicrotime(now)
		id := r.key(d.id)
		p.Do(ctx, "zadd", r.key("failed_jobs"), score, d.id)
		p.Do(ctx, "zadd", r.key("recent_failed_jobs"), score, d.id)
		p.ZRem(ctx, r.key("pending_jobs"), d.id)
		p.ZRem(ctx, r.key("completed_jobs"), d.id)
		p.ZRem(ctx, r.key("silenced_jobs"), d.id)
		// context: json_encode($exception->context()) when the exception
		// has one, else null, which phpredis sends as "".
		p.HMSet(ctx, id, "id", d.id, "connection", r.connection, "queue", j.Queue, "name", d.name,
			"status", "failed", "payload", j.Payload, "exception", exception, "context", "", "failed_at", microtime(now))
		p.ExpireAt(ctx, id, time.Unix(expireAt(now, r.cfg.Trim.Failed), 0))
		for _, tag := range d.tags {
			key := r.key("failed:" + tag)
			p.Do(ctx, "zadd", key, microtime(now), d.id)
			p.Expire(ctx, key, time.Duration(r.cfg.Trim.FailedTags)*time.Minute)
		}
		return nil
	})
	return errors.Join(append(errs, pipeErr(err), r.maybeTrim(ctx, now))...)
}

// monitored is TagRepository::monitoring(), read once for the jobs that
// have tags (PHP reads it once per job).
func (r *Recorder) monitored(ctx context.Context, ds []decoded) ([]string, error) {
	if !slices.ContainsFunc(ds, func(d decoded) bool { return len(d.tags) > 0 }) {
		return nil, nil
	}
	return r.rdb.SMembers(ctx, r.key("monitoring")).Result()
}

// intersect is array_intersect($tags, $monitoring).
func intersect(tags, monitoring []string) []string {
	var out []string
	for _, t := range tags {
		if slices.Contains(monitoring, t) {
			out = append(out, t)
		}
	}
	return out
}

// pipeErr drops the "no reply" of a pipeline whose commands all ran.
func pipeErr(err error) error {
	if errors.Is(err, redis.Nil) {
		return nil
	}
	return err
}
