package snapshot

import (
	"cmp"
	"context"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/laraworker/laraworker/internal/fleet"
)

// cachedFailed is what the dashboard keeps of one failed_jobs row, to
// count and filter failures by class, queue and date without reading the
// (large) rows again.
type cachedFailed struct {
	id       int64
	failedAt uint32
	class    uint32
	queue    uint16
	dead     bool
}

// failedCache mirrors failed_jobs the way jobCache mirrors jobs: failed
// rows never change, they are only added (tail) and deleted (retry,
// forget, prune, flush), which the lowest id (prune) and a rolling pass
// over the ids find. Deletions this dashboard makes are applied at once.
type failedCache struct {
	mu      sync.RWMutex
	rows    []cachedFailed
	dead    int
	queues  *names
	classes *names
	maxID   int64
	cursor  int64
	pass    PassState
	// caughtUp is set once the tail reached the end of the table: until
	// then the counts are a lower bound, and the page says so.
	caughtUp bool
	// perMinute counts failures by minute and class as first seen, for
	// the charts: a failure stays counted when its row is retried.
	perMinute map[int64]map[uint32]int64
	// tags are the models the rows hold (nil: not read).
	tags *tagSet
}

func newFailedCache() *failedCache {
	return &failedCache{queues: newNames(10000), classes: newNames(10000), perMinute: map[int64]map[uint32]int64{}}
}

// failedBudget bounds one refresh of the failed cache.
type failedBudget struct {
	tailRows int // new rows read per refresh
	// rollingRows is the rolling pass over the ids: failed rows are
	// large (exception texts of kilobytes), and they only ever disappear,
	// so it goes slower than the jobs table's.
	rollingRows int
}

var defaultFailedBudget = failedBudget{tailRows: 20000, rollingRows: 2000}

// chartSpan is how far back the charts go.
const chartSpan = 24 * time.Hour

func (c *failedCache) refresh(ctx context.Context, src *FailedTable, b failedBudget, now time.Time) error {
	if err := c.readTail(ctx, src, b.tailRows, now); err != nil {
		return err
	}
	if err := c.dropBelowMin(ctx, src); err != nil {
		return err
	}
	if err := c.rollOn(ctx, src, b.rollingRows, now); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	oldest := now.Add(-chartSpan).Unix() / 60 * 60
	for m := range c.perMinute {
		if m < oldest {
			delete(c.perMinute, m)
		}
	}
	if c.dead > 0 && c.dead*5 >= len(c.rows) {
		c.rows = slices.DeleteFunc(c.rows, func(r cachedFailed) bool { return r.dead })
		c.dead = 0
	}
	return nil
}

func (c *failedCache) readTail(ctx context.Context, src *FailedTable, budget int, now time.Time) error {
	oldest := now.Add(-chartSpan).Unix()
	for budget > 0 {
		c.mu.RLock()
		after := c.maxID
		c.mu.RUnlock()
		limit := min(budget, 5000)
		rows, err := src.after(ctx, after, limit)
		if err != nil {
			return err
		}
		classes := make([]string, len(rows))
		var missing []int64
		for i, r := range rows {
			if cl, ok := fleet.ClassOf(r.prefix); ok {
				classes[i] = cl
			} else {
				missing = append(missing, r.id)
			}
		}
		var tags [][]string
		if c.tags != nil {
			tags = make([][]string, len(rows))
			for i, r := range rows {
				if r.models != nil {
					tags[i] = TagsOf(r.models)
				}
			}
		}
		if len(missing) > 0 {
			full, err := src.payloads(ctx, missing)
			if err != nil {
				return err
			}
			for i, r := range rows {
				if classes[i] == "" {
					classes[i] = classOfPayload(full[r.id])
				}
			}
		}
		c.mu.Lock()
		for i, r := range rows {
			f := cachedFailed{id: r.id, failedAt: clampU32(r.failedAt), class: c.classes.id(classes[i]), queue: uint16(c.queues.id(r.queue))}
			c.rows = append(c.rows, f)
			if tags != nil && tags[i] != nil {
				c.tags.set(r.id, tags[i])
			}
			if r.failedAt >= oldest {
				m := r.failedAt / 60 * 60
				if c.perMinute[m] == nil {
					c.perMinute[m] = map[uint32]int64{}
				}
				c.perMinute[m][f.class]++
			}
		}
		if len(rows) > 0 {
			c.maxID = rows[len(rows)-1].id
		}
		if len(rows) < limit {
			c.caughtUp = true
		}
		c.mu.Unlock()
		budget -= len(rows)
		if len(rows) < limit {
			return nil
		}
	}
	return nil
}

func (c *failedCache) dropBelowMin(ctx context.Context, src *FailedTable) error {
	low, ok, err := src.minID(ctx)
	if err != nil {
		return err
	}
	if !ok {
		low = 1 << 62
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range c.rows {
		if r := &c.rows[i]; !r.dead && r.id < low && r.id <= c.maxID {
			c.kill(r)
		}
	}
	return nil
}

// rollOn lists the next ids of the rolling pass and marks cached rows
// missing from them deleted.
func (c *failedCache) rollOn(ctx context.Context, src *FailedTable, limit int, now time.Time) error {
	c.mu.RLock()
	from, top := c.cursor, c.maxID
	c.mu.RUnlock()
	if from == 0 {
		c.pass.Started = now
	}
	ids, err := src.idsAfter(ctx, from, limit)
	if err != nil {
		return err
	}
	upTo := top
	if len(ids) == limit && ids[len(ids)-1] < top {
		upTo = ids[len(ids)-1]
	}
	present := make(map[int64]bool, len(ids))
	for _, id := range ids {
		present[id] = true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	i := sort.Search(len(c.rows), func(i int) bool { return c.rows[i].id > from })
	for ; i < len(c.rows) && c.rows[i].id <= upTo; i++ {
		if r := &c.rows[i]; !r.dead && !present[r.id] {
			c.kill(r)
		}
	}
	if upTo >= top {
		c.cursor = 0
		c.pass.LastDone, c.pass.LastTook = now, now.Sub(c.pass.Started)
	} else {
		c.cursor = upTo
	}
	return nil
}

// forget marks rows this dashboard deleted (retry, forget).
func (c *failedCache) forget(ids []int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range ids {
		i := sort.Search(len(c.rows), func(i int) bool { return c.rows[i].id >= id })
		if i < len(c.rows) && c.rows[i].id == id && !c.rows[i].dead {
			c.kill(&c.rows[i])
		}
	}
}

// kill marks a cached row deleted (under c.mu); its tags go now.
func (c *failedCache) kill(r *cachedFailed) {
	r.dead = true
	c.dead++
	if c.tags != nil {
		c.tags.drop(r.id)
	}
}

// tagsOfRows lists the tags of the cached rows ids, by id.
func (c *failedCache) tagsOfRows(ids []int64) map[int64][]string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return tagsByID(c.tags, ids)
}

// FailedFilter selects failed jobs.
type FailedFilter struct {
	Class, Queue string
	From, To     int64  // failed_at bounds, unix; 0: none
	Tag          string // a model, "App\Models\Podcast:42"
}

// Any reports whether the filter selects anything at all.
func (f FailedFilter) Any() bool {
	return f.Class != "" || f.Queue != "" || f.From != 0 || f.To != 0 || f.Tag != ""
}

// selectIDs returns up to limit ids matching f, below before (0: from
// the newest), newest first, and whether more match further down.
func (c *failedCache) selectIDs(f FailedFilter, before int64, limit int) (ids []int64, more bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	class, queue := uint32(0), uint16(0)
	if f.Class != "" {
		id, ok := c.classes.lookup(f.Class)
		if !ok {
			return nil, false
		}
		class = id
	}
	if f.Queue != "" {
		id, ok := c.queues.lookup(f.Queue)
		if !ok {
			return nil, false
		}
		queue = uint16(id)
	}
	match := func(r cachedFailed) bool {
		return !r.dead && (f.Class == "" || r.class == class) && (f.Queue == "" || r.queue == queue) &&
			(f.From == 0 || int64(r.failedAt) >= f.From) && (f.To == 0 || int64(r.failedAt) < f.To)
	}
	if f.Tag != "" {
		if c.tags == nil {
			return nil, false
		}
		tagged := c.tags.rowsWith(f.Tag)
		for k := len(tagged) - 1; k >= 0; k-- {
			id := tagged[k]
			if before > 0 && id >= before {
				continue
			}
			i := sort.Search(len(c.rows), func(i int) bool { return c.rows[i].id >= id })
			if i < len(c.rows) && c.rows[i].id == id && match(c.rows[i]) {
				if len(ids) == limit {
					return ids, true
				}
				ids = append(ids, id)
			}
		}
		return ids, false
	}
	i := len(c.rows) - 1
	if before > 0 {
		i = sort.Search(len(c.rows), func(i int) bool { return c.rows[i].id >= before }) - 1
	}
	for ; i >= 0; i-- {
		if !match(c.rows[i]) {
			continue
		}
		if len(ids) == limit {
			return ids, true
		}
		ids = append(ids, c.rows[i].id)
	}
	return ids, false
}

// summarize writes the failed rows' part of sum.
func (c *failedCache) summarize(sum *Summary) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	byClass := map[uint32]int64{}
	byQueue := map[uint16]int64{}
	for _, r := range c.rows {
		if r.dead {
			continue
		}
		sum.FailedTotal++
		byClass[r.class]++
		byQueue[r.queue]++
	}
	for id, n := range byClass {
		sum.FailedByClass = append(sum.FailedByClass, Named{c.classes.name(id), n})
	}
	for id, n := range byQueue {
		sum.FailedByQueue = append(sum.FailedByQueue, Named{c.queues.name(uint32(id)), n})
	}
	byCount := func(a, b Named) int { return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Name, b.Name)) }
	slices.SortFunc(sum.FailedByClass, byCount)
	slices.SortFunc(sum.FailedByQueue, byCount)
	sum.FailedCaughtUp = c.caughtUp
	sum.FailedPass = c.pass
	if c.tags != nil {
		sum.TagsDropped += c.tags.dropped
	}
}

// Failures counts the failures of one class in one minute.
type Failures struct {
	Minute int64 // unix seconds
	Class  string
	Count  int64
}

// FailuresSince lists the failures per minute and class the snapshot saw
// from since on (at most a day back), as first read: a failure stays
// counted when its row is retried or forgotten.
func (s *Snapshot) FailuresSince(since int64) []Failures {
	c := s.failed
	c.mu.RLock()
	defer c.mu.RUnlock()
	var out []Failures
	for minute, byClass := range c.perMinute {
		if minute < since {
			continue
		}
		for class, n := range byClass {
			out = append(out, Failures{Minute: minute, Class: c.classes.name(class), Count: n})
		}
	}
	return out
}

// FailedIDs returns up to limit failed ids matching f below before (0:
// from the newest), newest first, from the cache; more says whether more
// match further down. The list is never nil: FailedTable.Page reads a nil
// list as "no filter", and an unknown class or a filter nothing matches
// must list no row, not every row.
func (s *Snapshot) FailedIDs(f FailedFilter, before int64, limit int) (ids []int64, more bool) {
	ids, more = s.failed.selectIDs(f, before, limit)
	if ids == nil {
		ids = []int64{}
	}
	return ids, more
}

// FailedTags lists the tags of the failed rows ids, by id.
func (s *Snapshot) FailedTags(ids []int64) map[int64][]string { return s.failed.tagsOfRows(ids) }

// ForgetFailed drops failed rows the dashboard deleted (retry, forget)
// from the cache at once, before the next refresh finds them gone.
func (s *Snapshot) ForgetFailed(ids []int64) { s.failed.forget(ids) }
