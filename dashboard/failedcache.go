package dashboard

import (
	"context"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/laraworker/laraworker/fleet"
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
	pass    passState
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

// chartSpan is how far back the charts go.
const chartSpan = 24 * time.Hour

func (c *failedCache) refresh(ctx context.Context, src *source, tailRows, rollingRows int, now time.Time) error {
	if err := c.readTail(ctx, src, tailRows, now); err != nil {
		return err
	}
	if err := c.dropBelowMin(ctx, src); err != nil {
		return err
	}
	if err := c.rollOn(ctx, src, rollingRows, now); err != nil {
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

func (c *failedCache) readTail(ctx context.Context, src *source, budget int, now time.Time) error {
	oldest := now.Add(-chartSpan).Unix()
	for budget > 0 {
		c.mu.RLock()
		after := c.maxID
		c.mu.RUnlock()
		limit := min(budget, 5000)
		rows, err := src.failedAfter(ctx, after, limit)
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
					tags[i] = tagsOf(r.models)
				}
			}
		}
		if len(missing) > 0 {
			full, err := src.payloads(ctx, src.failed, missing)
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

func (c *failedCache) dropBelowMin(ctx context.Context, src *source) error {
	low, ok, err := src.minFailedID(ctx)
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
func (c *failedCache) rollOn(ctx context.Context, src *source, limit int, now time.Time) error {
	c.mu.RLock()
	from, top := c.cursor, c.maxID
	c.mu.RUnlock()
	if from == 0 {
		c.pass.Started = now
	}
	ids, err := src.failedIDsAfter(ctx, from, limit)
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

// failedFilter selects cached failed rows.
type failedFilter struct {
	class, queue string
	from, to     int64  // failed_at bounds, unix; 0: none
	tag          string // a model, "App\Models\Podcast:42"
}

func (f failedFilter) any() bool {
	return f.class != "" || f.queue != "" || f.from != 0 || f.to != 0 || f.tag != ""
}

// select returns up to limit ids matching f, below before (0: from the
// newest), newest first, and whether more match further down.
func (c *failedCache) selectIDs(f failedFilter, before int64, limit int) (ids []int64, more bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	class, queue := uint32(0), uint16(0)
	if f.class != "" {
		id, ok := c.classes.lookup(f.class)
		if !ok {
			return nil, false
		}
		class = id
	}
	if f.queue != "" {
		id, ok := c.queues.lookup(f.queue)
		if !ok {
			return nil, false
		}
		queue = uint16(id)
	}
	match := func(r cachedFailed) bool {
		return !r.dead && (f.class == "" || r.class == class) && (f.queue == "" || r.queue == queue) &&
			(f.from == 0 || int64(r.failedAt) >= f.from) && (f.to == 0 || int64(r.failedAt) < f.to)
	}
	if f.tag != "" {
		if c.tags == nil {
			return nil, false
		}
		tagged := c.tags.rowsWith(f.tag)
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
