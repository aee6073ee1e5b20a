package snapshot

import (
	"bytes"
	"cmp"
	"context"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/laraworker/laraworker/internal/fleet"
)

// cachedJob is what the dashboard keeps of one jobs row: everything but
// the payload, whose class is interned. 32 bytes, so 1,000,000 rows take
// 32 MB.
type cachedJob struct {
	id        int64
	available uint32 // unix seconds
	reserved  uint32 // 0: not reserved
	created   uint32
	class     uint32
	queue     uint16
	attempts  uint16
	dead      bool // deleted; dropped at the next compaction
}

// jobCache mirrors the jobs table without ever scanning it whole. Each
// refresh reads, within a budget of rows:
//
//  1. the tail: rows with ids above the highest seen (new jobs);
//  2. per queue, the lowest id through Laravel's queue index: every
//     cached row of the queue below it is gone (claimed in id order);
//  3. the volatile rows by id: every reserved row, and per queue the
//     first ready rows in id order (where claims happen);
//  4. a slice of a rolling pass over the whole table in id order, which
//     catches what the others cannot see: deleted delayed jobs, rows
//     committed late below the tail, reservations far from the front.
//
// Delayed rows change only through (4), so counts are exact for new,
// ready and reserved rows as of the refresh, and for the rest as of the
// last pass; the page says when that was.
type jobCache struct {
	mu      sync.RWMutex
	rows    []cachedJob // by id
	dead    int
	queues  *names
	classes *names

	maxID  int64
	cursor int64 // rolling pass position
	// caughtUp is set once the tail reached the end of the table: until
	// then the counts miss rows, and the page says so.
	caughtUp bool
	pass     PassState
	front    map[uint16]int // how many ready rows to verify per queue
	// tags are the models the rows hold (nil: not read, --hide-payloads).
	tags *tagSet
}

func newJobCache() *jobCache {
	return &jobCache{queues: newNames(10000), classes: newNames(10000), front: map[uint16]int{}}
}

// jobBudget bounds one refresh; see refresh.
type jobBudget struct {
	tailRows    int // new rows read per refresh
	frontRows   int // most ready rows verified per queue
	rollingRows int // rows of the rolling pass over jobs per refresh
}

var defaultJobBudget = jobBudget{tailRows: 20000, frontRows: 20000, rollingRows: 5000}

// refresh runs one round of reads (see jobCache) and applies them.
func (c *jobCache) refresh(ctx context.Context, src *jobTable, b jobBudget, now time.Time) error {
	if err := c.readTail(ctx, src, b.tailRows); err != nil {
		return err
	}
	if err := c.dropBelowQueueMins(ctx, src); err != nil {
		return err
	}
	if err := c.verifyVolatile(ctx, src, b.frontRows, now); err != nil {
		return err
	}
	if err := c.rollOn(ctx, src, b.rollingRows, now); err != nil {
		return err
	}
	c.compact()
	return nil
}

func (c *jobCache) readTail(ctx context.Context, src *jobTable, budget int) error {
	for budget > 0 {
		c.mu.RLock()
		after := c.maxID
		c.mu.RUnlock()
		limit := min(budget, 5000)
		rows, err := src.after(ctx, after, limit, true)
		if err != nil {
			return err
		}
		classes, err := c.classesOf(ctx, src, rows)
		if err != nil {
			return err
		}
		tags := c.rowTags(rows)
		c.mu.Lock()
		for i, r := range rows {
			c.rows = append(c.rows, c.cached(r, classes[i]))
			c.setTags(r.id, tags, i)
		}
		if len(rows) > 0 {
			c.maxID = rows[len(rows)-1].id
		}
		c.mu.Unlock()
		budget -= len(rows)
		if len(rows) < limit {
			c.mu.Lock()
			c.caughtUp = true
			c.mu.Unlock()
			return nil
		}
	}
	return nil
}

// classesOf names each row's class from its payload prefix, reading the
// whole payload for the rare rows whose prefix lacks it.
func (c *jobCache) classesOf(ctx context.Context, src *jobTable, rows []scannedJob) ([]string, error) {
	out := make([]string, len(rows))
	var missing []int64
	at := map[int64]int{}
	for i, r := range rows {
		if cl, ok := fleet.ClassOf(r.prefix); ok {
			out[i] = cl
			continue
		}
		missing = append(missing, r.id)
		at[r.id] = i
	}
	if len(missing) == 0 {
		return out, nil
	}
	full, err := src.payloads(ctx, missing)
	if err != nil {
		return nil, err
	}
	for id, i := range at {
		out[i] = classOfPayload(full[id])
	}
	return out, nil
}

// rowTags reads the tags of the rows whose payload the read returned
// (those holding models), by index; nil when tags are off or none has.
func (c *jobCache) rowTags(rows []scannedJob) [][]string {
	if c.tags == nil {
		return nil
	}
	var out [][]string
	for i, r := range rows {
		if r.models == nil {
			continue
		}
		if out == nil {
			out = make([][]string, len(rows))
		}
		out[i] = TagsOf(r.models)
	}
	return out
}

// setTags gives row id the tags of index i (under c.mu).
func (c *jobCache) setTags(id int64, tags [][]string, i int) {
	if c.tags != nil && tags != nil && tags[i] != nil {
		c.tags.set(id, tags[i])
	}
}

// kill marks a cached row deleted (under c.mu): compact drops it, its
// tags go now.
func (c *jobCache) kill(r *cachedJob) {
	r.dead = true
	c.dead++
	if c.tags != nil {
		c.tags.drop(r.id)
	}
}

func (c *jobCache) cached(r scannedJob, class string) cachedJob {
	j := cachedJob{id: r.id, available: clampU32(r.available), created: clampU32(r.created),
		queue: uint16(c.queues.id(r.queue)), attempts: uint16(min(max(r.attempts, 0), 65535))}
	if r.reserved.Valid {
		j.reserved = max(clampU32(r.reserved.Int64), 1)
	}
	if class != "" {
		j.class = c.classes.id(class)
	}
	return j
}

func clampU32(v int64) uint32 { return uint32(min(max(v, 0), 1<<32-1)) }

// dropBelowQueueMins asks each queue's lowest id (one index lookup) and
// marks cached rows below it deleted.
func (c *jobCache) dropBelowQueueMins(ctx context.Context, src *jobTable) error {
	c.mu.RLock()
	queues := slices.Clone(c.queues.list)
	c.mu.RUnlock()
	mins := make([]int64, len(queues))
	for i, name := range queues {
		id, ok, err := src.minID(ctx, name)
		if err != nil {
			return err
		}
		if !ok {
			id = 1 << 62 // no rows left at all
		}
		mins[i] = id
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range c.rows {
		r := &c.rows[i]
		if !r.dead && int(r.queue) < len(mins) && r.id < mins[r.queue] {
			c.kill(r)
		}
	}
	return nil
}

// verifyVolatile re-reads every reserved row and, per queue, the first
// ready rows: as many as last time found changes for (doubling while
// they do, halving while they do not).
func (c *jobCache) verifyVolatile(ctx context.Context, src *jobTable, maxFront int, now time.Time) error {
	c.mu.RLock()
	var ids []int64
	nq := len(c.queues.list)
	sizes, counted := make([]int, nq), make([]int, nq)
	for q := range sizes {
		sizes[q] = c.frontSize(uint16(q), maxFront)
	}
	nowU := now.Unix()
	for _, r := range c.rows {
		if r.dead {
			continue
		}
		switch {
		case r.reserved != 0:
			ids = append(ids, r.id)
		case int64(r.available) <= nowU && counted[r.queue] < sizes[r.queue]:
			counted[r.queue]++
			ids = append(ids, r.id)
		}
	}
	taken := map[uint16]int{}
	for q, n := range counted {
		if n > 0 {
			taken[uint16(q)] = n
		}
	}
	c.mu.RUnlock()
	if len(ids) == 0 {
		return nil
	}
	fresh, err := src.byID(ctx, ids)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	changed := c.applyByID(ids, fresh)
	for q, n := range taken {
		k := c.frontSize(q, maxFront)
		if changed[q] {
			c.front[q] = min(k*2, maxFront)
		} else if n >= k {
			c.front[q] = max(k/2, 200)
		}
	}
	return nil
}

func (c *jobCache) frontSize(q uint16, maxFront int) int {
	if k, ok := c.front[q]; ok {
		return min(k, maxFront)
	}
	return min(2000, maxFront)
}

// applyByID updates the cached rows of ids from fresh (the ones that
// still exist) and marks the others deleted. It reports which queues
// changed.
func (c *jobCache) applyByID(ids []int64, fresh []scannedJob) map[uint16]bool {
	byID := make(map[int64]scannedJob, len(fresh))
	for _, f := range fresh {
		byID[f.id] = f
	}
	changed := map[uint16]bool{}
	for _, id := range ids {
		i, ok := c.find(id)
		if !ok {
			continue
		}
		r := &c.rows[i]
		f, exists := byID[id]
		if !exists {
			c.kill(r)
			changed[r.queue] = true
			continue
		}
		if c.update(r, f) {
			changed[r.queue] = true
		}
	}
	return changed
}

// update copies the mutable columns; it reports a change.
func (c *jobCache) update(r *cachedJob, f scannedJob) bool {
	var reserved uint32
	if f.reserved.Valid {
		reserved = max(clampU32(f.reserved.Int64), 1)
	}
	nr := *r
	nr.reserved, nr.attempts, nr.available = reserved, uint16(min(max(f.attempts, 0), 65535)), clampU32(f.available)
	nr.queue = uint16(c.queues.id(f.queue))
	if nr == *r {
		return false
	}
	*r = nr
	return true
}

func (c *jobCache) find(id int64) (int, bool) {
	i := sort.Search(len(c.rows), func(i int) bool { return c.rows[i].id >= id })
	// A dead copy may precede a live one when an id came back (a row
	// inserted with an explicit id).
	for i < len(c.rows) && c.rows[i].id == id {
		if !c.rows[i].dead {
			return i, true
		}
		i++
	}
	return i, false
}

// rollOn reads the next slice of the rolling pass and makes the cached
// rows of that id range equal to it.
func (c *jobCache) rollOn(ctx context.Context, src *jobTable, limit int, now time.Time) error {
	c.mu.RLock()
	from, top := c.cursor, c.maxID
	c.mu.RUnlock()
	if from == 0 {
		c.pass.Started = now
	}
	rows, err := src.after(ctx, from, limit, false)
	if err != nil {
		return err
	}
	// Rows past the tail are the tail's to add.
	for len(rows) > 0 && rows[len(rows)-1].id > top {
		rows = rows[:len(rows)-1]
	}
	upTo := top
	if len(rows) == limit {
		upTo = rows[len(rows)-1].id
	}
	var newRows []scannedJob
	c.mu.RLock()
	for _, r := range rows {
		if _, ok := c.find(r.id); !ok {
			newRows = append(newRows, r)
		}
	}
	c.mu.RUnlock()
	classes, err := c.classesOf(ctx, src, newRows)
	if err != nil {
		return err
	}
	if err := c.readModels(ctx, src, newRows); err != nil {
		return err
	}
	tags := c.rowTags(newRows)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.replaceRange(from, upTo, rows, newRows, classes, tags)
	if upTo >= top {
		c.cursor = 0
		c.pass.LastDone, c.pass.LastTook = now, now.Sub(c.pass.Started)
	} else {
		c.cursor = upTo
	}
	return nil
}

// readModels fills the models payload of rows the rolling pass found
// that were never cached (committed late): their tags.
func (c *jobCache) readModels(ctx context.Context, src *jobTable, rows []scannedJob) error {
	if c.tags == nil || len(rows) == 0 {
		return nil
	}
	ids := make([]int64, len(rows))
	for i, r := range rows {
		ids[i] = r.id
	}
	full, err := src.payloads(ctx, ids)
	if err != nil {
		return err
	}
	for i := range rows {
		if p := full[rows[i].id]; bytes.Contains(p, []byte(modelMarker)) {
			rows[i].models = p
		}
	}
	return nil
}

// replaceRange makes the rows with from < id <= upTo equal to fresh;
// newRows (with their classes and tags) are the fresh rows not cached yet.
func (c *jobCache) replaceRange(from, upTo int64, fresh, newRows []scannedJob, classes []string, tags [][]string) {
	present := make(map[int64]scannedJob, len(fresh))
	for _, f := range fresh {
		present[f.id] = f
	}
	i := sort.Search(len(c.rows), func(i int) bool { return c.rows[i].id > from })
	for ; i < len(c.rows) && c.rows[i].id <= upTo; i++ {
		r := &c.rows[i]
		if r.dead {
			continue
		}
		if f, ok := present[r.id]; ok {
			c.update(r, f)
		} else {
			c.kill(r)
		}
	}
	if len(newRows) == 0 {
		return
	}
	for k, r := range newRows {
		c.rows = append(c.rows, c.cached(r, classes[k]))
		c.setTags(r.id, tags, k)
	}
	slices.SortFunc(c.rows, func(a, b cachedJob) int {
		if a.id != b.id {
			return cmp.Compare(a.id, b.id)
		}
		// a dead copy sorts first so find() sees the live one
		return compareBool(b.dead, a.dead)
	})
}

func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// compact drops deleted rows once they are a fifth of the cache.
func (c *jobCache) compact() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dead == 0 || c.dead*5 < len(c.rows) {
		return
	}
	c.rows = slices.DeleteFunc(c.rows, func(r cachedJob) bool { return r.dead })
	c.dead = 0
}

// selectIDs returns up to limit ids matching f above after, in id order
// (the order claims take them), and whether more match.
func (c *jobCache) selectIDs(f JobFilter, after int64, limit int, now int64) (ids []int64, more bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var queue, class uint32
	var ok bool
	if f.Queue != "" {
		if queue, ok = c.queues.lookup(f.Queue); !ok {
			return nil, false
		}
	}
	if f.Class != "" {
		if class, ok = c.classes.lookup(f.Class); !ok {
			return nil, false
		}
	}
	match := func(r cachedJob) bool {
		return !r.dead && (f.Queue == "" || uint32(r.queue) == queue) && (f.Class == "" || r.class == class) && stateIs(r, f.State, now)
	}
	if f.Tag != "" {
		if c.tags == nil {
			return nil, false
		}
		for _, id := range c.tags.rowsWith(f.Tag) {
			if id <= after {
				continue
			}
			if i, ok := c.find(id); ok && match(c.rows[i]) {
				if len(ids) == limit {
					return ids, true
				}
				ids = append(ids, id)
			}
		}
		return ids, false
	}
	i := sort.Search(len(c.rows), func(i int) bool { return c.rows[i].id > after })
	for ; i < len(c.rows); i++ {
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

// tagsOfRows lists the tags of the cached rows ids, by id.
func (c *jobCache) tagsOfRows(ids []int64) map[int64][]string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return tagsByID(c.tags, ids)
}

func tagsByID(t *tagSet, ids []int64) map[int64][]string {
	if t == nil {
		return nil
	}
	out := map[int64][]string{}
	for _, id := range ids {
		if tags := t.of(id); tags != nil {
			out[id] = tags
		}
	}
	return out
}

func stateIs(r cachedJob, state string, now int64) bool {
	switch state {
	case "ready":
		return r.reserved == 0 && int64(r.available) <= now
	case "delayed":
		return r.reserved == 0 && int64(r.available) > now
	case "reserved":
		return r.reserved != 0
	}
	return true
}
