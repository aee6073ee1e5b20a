package redisproto

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// Queues lists the queues that have any of their keys on the connection
// (no key lists them: it scans for <prefix>queues:*, on every master of a
// cluster, as Laravel 13.8's allQueueNames() does with KEYS). A queue's
// name is as it appears in its keys: on a 13.5+ cluster, wrapped in
// braces, which names the same keys.
func (q *Queue) Queues(ctx context.Context) ([]string, error) {
	base := q.cfg.Redis.Prefix + "queues:"
	pattern := globEscape(base) + "*"
	var mu sync.Mutex
	seen := map[string]bool{}
	scan := func(ctx context.Context, c redis.Cmdable) error {
		iter := c.Scan(ctx, 0, pattern, 1000).Iterator()
		for iter.Next(ctx) {
			name := strings.TrimPrefix(iter.Val(), base)
			for _, suffix := range []string{":delayed", ":reserved", ":notify"} {
				name = strings.TrimSuffix(name, suffix)
			}
			mu.Lock()
			seen[name] = true
			mu.Unlock()
		}
		return iter.Err()
	}
	var err error
	if cc, ok := q.rdb.(*redis.ClusterClient); ok {
		err = cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error { return scan(ctx, c) })
	} else {
		err = scan(ctx, q.rdb)
	}
	if err != nil {
		return nil, q.wrap(err)
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	slices.Sort(names)
	return names, nil
}

// globEscape escapes the characters SCAN's MATCH treats as a pattern.
func globEscape(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		if strings.IndexByte(`*?[]\`, c) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	return b.String()
}

// ClassCount is how many jobs of one class a queue holds.
type ClassCount struct {
	// Class is the name as the caller asked for it.
	Class string
	// Ready and Delayed are in the list and the delayed set (what Move
	// moves); Reserved are running (or a crashed worker's).
	Ready, Delayed, Reserved int64
}

// CountClasses counts the jobs of each class (displayName, ASCII case
// ignored) in a queue's list, delayed set and reserved set, read at one
// instant, by one script that reads every job of the queue inside Redis
// (an admin command's cost, not a worker's) and answers with the counts
// only: the jobs never leave Redis.
func (q *Queue) CountClasses(ctx context.Context, queue string, classes []string) ([]ClassCount, error) {
	queue = q.cfg.queueName(queue)
	if err := q.cfg.CheckQueue(queue); err != nil {
		return nil, err
	}
	out := make([]ClassCount, len(classes))
	if len(classes) == 0 {
		return out, nil
	}
	k := q.cfg.Keys(queue)
	args := make([]any, len(classes))
	for i, c := range classes {
		out[i].Class = c
		args[i] = asciiLower(c)
	}
	counts, err := countClassesScript.Run(ctx, q.rdb, []string{k.Ready, k.Delayed, k.Reserved}, args...).Int64Slice()
	if err != nil {
		return nil, q.wrap(err)
	}
	if len(counts) != 3*len(classes) {
		return nil, fmt.Errorf("redisqueue: unexpected class counts %v", counts)
	}
	for i := range out {
		out[i].Ready, out[i].Delayed, out[i].Reserved = counts[3*i], counts[3*i+1], counts[3*i+2]
	}
	return out, nil
}

// moveScript moves the jobs of some classes from one queue to another,
// never touching a reserved one: from the list (keeping the order of
// both the moved and the staying jobs, each moved job with a notify token
// on the target and one token fewer on the source) and from the delayed
// set (with its score). It reads every job of the source queue in one
// script, which holds Redis meanwhile: an admin command's cost.
//
// KEYS: 1 source list, 2 source delayed set, 3 source notify list,
// 4 target list, 5 target delayed set, 6 target notify list. ARGV: class
// names in ASCII lower case. Reply: {name, count, ...} for the moved ones.
var moveScript = redis.NewScript(`
local names = {}
for i = 1, #ARGV do
  names[ARGV[i]] = true
end
local moved = {}
local function selected(job)
  local ok, decoded = pcall(cjson.decode, job)
  if not ok or type(decoded) ~= 'table' or type(decoded['displayName']) ~= 'string' then
    return false
  end
  local name = string.lower(decoded['displayName'])
  if names[name] then
    moved[name] = (moved[name] or 0) + 1
    return true
  end
  return false
end
local function pushAll(key, items)
  for first = 1, #items, 100 do
    redis.call('rpush', key, unpack(items, first, math.min(first + 99, #items)))
  end
end

local keep, go = {}, {}
for _, job in ipairs(redis.call('lrange', KEYS[1], 0, -1)) do
  if selected(job) then go[#go + 1] = job else keep[#keep + 1] = job end
end
if #go > 0 then
  redis.call('del', KEYS[1])
  pushAll(KEYS[1], keep)
  pushAll(KEYS[4], go)
  for _ = 1, #go do
    redis.call('rpush', KEYS[6], 1)
    redis.call('lpop', KEYS[3])
  end
end

local delayed = redis.call('zrange', KEYS[2], 0, -1, 'withscores')
for i = 1, #delayed, 2 do
  if selected(delayed[i]) then
    redis.call('zrem', KEYS[2], delayed[i])
    redis.call('zadd', KEYS[5], delayed[i + 1], delayed[i])
  end
end

local out = {}
for name, n in pairs(moved) do
  out[#out + 1] = name
  out[#out + 1] = n
end
return out
`)

// Move puts the ready and delayed jobs of classes (displayName, ASCII case
// ignored) on queue from onto queue to, in one script, never touching a
// reserved job, and returns how many moved per class as the caller spelt
// it. A delayed job keeps its due time. On a cluster both queues must
// share a slot (one hash tag), or the move is refused.
func (q *Queue) Move(ctx context.Context, from, to string, classes []string) (map[string]int64, error) {
	from, to = q.cfg.queueName(from), q.cfg.queueName(to)
	for _, name := range []string{from, to} {
		if err := q.cfg.CheckQueue(name); err != nil {
			return nil, err
		}
	}
	src, dst := q.cfg.Keys(from), q.cfg.Keys(to)
	if src == dst {
		return nil, fmt.Errorf("redisqueue: moving from queue %q onto itself", from)
	}
	keys := []string{src.Ready, src.Delayed, src.Notify, dst.Ready, dst.Delayed, dst.Notify}
	if !q.cfg.sameSlot(keys...) {
		return nil, fmt.Errorf("redisqueue: queues %q and %q are in different Redis Cluster slots, which no script can reach at once; give them one hash tag (e.g. {jobs}high and {jobs}low): %w", from, to, ErrCrossSlot)
	}
	args := make([]any, len(classes))
	spelling := map[string]string{}
	for i, c := range classes {
		args[i] = asciiLower(c)
		if _, ok := spelling[asciiLower(c)]; !ok {
			spelling[asciiLower(c)] = c
		}
	}
	reply, err := moveScript.Run(ctx, q.rdb, keys, args...).Slice()
	if err != nil && !isNil(err) {
		return nil, q.wrap(err)
	}
	out := make(map[string]int64, len(classes))
	for _, c := range classes {
		out[c] = 0
	}
	for i := 0; i+1 < len(reply); i += 2 {
		n, _ := reply[i+1].(int64)
		out[spelling[asString(reply[i])]] = n
	}
	return out, nil
}
