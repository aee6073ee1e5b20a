package snapshot

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"
)

// sqlJobs is the JobSource of a database queue: the jobs table, mirrored
// by a jobCache (see there for how it reads without scanning).
type sqlJobs struct {
	table      *jobTable
	cache      *jobCache
	budget     jobBudget
	retryAfter time.Duration
	now        func() time.Time
}

// SQLJobs is the JobSource of a database queue's jobs table.
func SQLJobs(t Tables) JobSource {
	return &sqlJobs{table: &jobTable{db: t.DB, d: t.Dialect, jobs: t.Dialect.Quote(t.Jobs)}, cache: newJobCache(),
		budget: defaultJobBudget, retryAfter: t.RetryAfter, now: time.Now}
}

func (s *sqlJobs) Refresh(ctx context.Context, now time.Time, _ []string) error {
	return s.cache.refresh(ctx, s.table, s.budget, now)
}

func (s *sqlJobs) ReadTags() {
	s.table.tags = true
	s.cache.tags = newTagSet()
}

// List reads the page's rows by primary key, picked from the cache; the
// cursor is the last id listed.
func (s *sqlJobs) List(ctx context.Context, f JobFilter, cursor string, limit int) ([]JobRow, string, error) {
	after, _ := strconv.ParseInt(cursor, 10, 64)
	ids, more := s.cache.selectIDs(f, after, limit, s.now().Unix())
	rows, err := s.table.rows(ctx, ids)
	if err != nil {
		return nil, "", err
	}
	tags := s.cache.tagsOfRows(ids)
	for i := range rows {
		rows[i].Tags = tags[rows[i].ID]
	}
	next := ""
	if more && len(ids) > 0 {
		next = strconv.FormatInt(ids[len(ids)-1], 10)
	}
	return rows, next, nil
}

func (s *sqlJobs) Job(ctx context.Context, ref JobRef) (JobRow, error) {
	id, err := strconv.ParseInt(ref.ID, 10, 64)
	if err != nil {
		return JobRow{}, fmt.Errorf("%w: %q is not a job id (the jobs table's ids are numbers)", ErrNotFound, ref.ID)
	}
	row, ok, err := s.table.row(ctx, id)
	if err != nil {
		return JobRow{}, err
	}
	if !ok {
		return JobRow{}, fmt.Errorf("%w: job %d is not in the jobs table any more (done, failed or released)", ErrNotFound, id)
	}
	return row, nil
}

// Summarize counts the cached rows as of now.
func (s *sqlJobs) Summarize(sum *Summary, now time.Time) {
	c := s.cache
	c.mu.RLock()
	defer c.mu.RUnlock()
	sum.Driver = "database"
	nowU := now.Unix()
	expiry := now.Add(-s.retryAfter).Unix()
	queues := make([]QueueCounts, len(c.queues.list))
	oldest := make([]int64, len(c.queues.list))
	classes := newClassTable(len(c.queues.list), len(c.classes.list))
	buckets := DelayBuckets(now)
	counts := make([]int64, len(buckets))
	var due []DueJob
	for _, r := range c.rows {
		if r.dead {
			continue
		}
		sum.JobsRows++
		cc := classes.get(r.queue, r.class)
		q := &queues[r.queue]
		switch {
		case r.reserved != 0 && int64(r.reserved) > expiry:
			q.Reserved++
			cc.Reserved++
		case r.reserved != 0:
			q.Expired++
			cc.Expired++
		case int64(r.available) <= nowU:
			q.Ready++
			cc.Ready++
			if oldest[r.queue] == 0 || int64(r.available) < oldest[r.queue] {
				oldest[r.queue] = int64(r.available)
			}
		default:
			q.Delayed++
			cc.Delayed++
			for i, b := range buckets {
				if int64(r.available) <= b.Until {
					counts[i]++
					break
				}
			}
			if len(due) < MaxDueShown || int64(r.available) < due[len(due)-1].AvailableAt.Unix() {
				due = AppendDue(due, DueJob{ID: r.id, Queue: c.queues.name(uint32(r.queue)), Class: c.classes.name(r.class),
					AvailableAt: time.Unix(int64(r.available), 0)})
			}
		}
		if r.reserved != 0 {
			sum.ReservedTotal++
			if len(sum.Reserved) < MaxReservedShown {
				sum.Reserved = append(sum.Reserved, ReservedJob{ID: r.id, Queue: c.queues.name(uint32(r.queue)), Class: c.classes.name(r.class),
					Attempts: int(r.attempts), ReservedAt: time.Unix(int64(r.reserved), 0), Expired: int64(r.reserved) <= expiry})
			}
		}
	}
	for i := range queues {
		queues[i].Queue = c.queues.name(uint32(i))
		if oldest[i] != 0 {
			queues[i].OldestReady = now.Sub(time.Unix(oldest[i], 0))
		}
		if queues[i] != (QueueCounts{Queue: queues[i].Queue}) {
			sum.Queues = append(sum.Queues, queues[i])
		}
	}
	slices.SortFunc(sum.Queues, func(a, b QueueCounts) int { return cmp.Compare(a.Queue, b.Queue) })
	for _, cc := range classes.all() {
		cc.Queue, cc.Class = c.queues.name(uint32(cc.q)), c.classes.name(cc.c)
		sum.Classes = append(sum.Classes, cc.ClassCounts)
	}
	SortClasses(sum.Classes)
	slices.SortFunc(sum.Reserved, func(a, b ReservedJob) int { return a.ReservedAt.Compare(b.ReservedAt) })
	for i, b := range buckets {
		sum.Schedule = append(sum.Schedule, Bucket{b.Label, counts[i]})
	}
	sum.NextDue = due
	sum.JobsPass = c.pass
	sum.JobsCaughtUp = c.caughtUp
	if c.tags != nil {
		sum.Tags, sum.TagsDropped = true, c.tags.dropped
	}
}

// SortClasses orders class counts as the pages list them: by queue, then
// most pending first.
func SortClasses(cs []ClassCounts) {
	slices.SortFunc(cs, func(a, b ClassCounts) int {
		return cmp.Or(cmp.Compare(a.Queue, b.Queue), cmp.Compare(b.Ready+b.Delayed, a.Ready+a.Delayed), cmp.Compare(a.Class, b.Class))
	})
}
