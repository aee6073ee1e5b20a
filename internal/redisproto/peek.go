package redisproto

import (
	"context"
	"fmt"
	"math"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// Peek is a bounded look at one queue for a dashboard: its counts and
// the first jobs of its list and sorted sets, read at one instant by one
// script that changes nothing. What it reads is bounded by PeekOptions,
// never by the queue's length: a list of ten million jobs costs what a
// list of a hundred does.

// PeekOptions bound what Peek reads.
type PeekOptions struct {
	// Head is how many jobs Peek returns from the start of the list (the
	// next to be popped) and of the delayed set (the soonest due).
	Head int
	// Reserved is how many reserved jobs it returns, the earliest expiry
	// first. They come whole: the pop re-encoded them, so their keys are
	// in no set order.
	Reserved int
	// Prefix and Suffix, when Prefix is not 0, cut a ready or delayed job
	// longer than both to its first Prefix and last Suffix bytes: Laravel
	// writes uuid and displayName first and createdAt, id and attempts
	// last.
	Prefix, Suffix int
	// Whole, when not empty, returns whole the jobs that contain it
	// (a dashboard's tags: "ModelIdentifier").
	Whole string
	// DueBy are Unix seconds: Peek counts the delayed jobs due by each.
	DueBy []int64
}

// Peeked is one job as Peek returns it.
type Peeked struct {
	// Head is the job, or its first Prefix bytes when it was cut; Tail
	// its last Suffix bytes then ("" when it is whole).
	Head, Tail string
	// Score is a delayed job's due second, a reserved job's expiry (0 for
	// a ready job).
	Score int64
}

// Cut reports whether Peek cut the job.
func (p Peeked) Cut() bool { return p.Tail != "" }

// View is one queue as Peek read it.
type View struct {
	Counts
	// DueBy counts the delayed jobs due by each PeekOptions.DueBy.
	DueBy                    []int64
	Ready, Delayed, Reserved []Peeked
}

// peekScript reads counts and the first jobs of a queue.
//
// KEYS: 1 ready list, 2 delayed set, 3 reserved set. ARGV: 1 now, 2 head,
// 3 reserved, 4 prefix, 5 suffix, 6 whole marker, 7... due-by seconds.
// Reply: {counts (ready, delayed, due, reserved, expired, due-by...),
// ready {head, tail, ...}, delayed {head, tail, score, ...}, reserved
// {member, score, ...}}.
var peekScript = redis.NewScript(`
local now, head, nres = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local pre, suf, marker = tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6]
local function cut(out, job)
  if pre == 0 or #job <= pre + suf or (marker ~= '' and string.find(job, marker, 1, true)) then
    out[#out + 1] = job
    out[#out + 1] = ''
  else
    out[#out + 1] = string.sub(job, 1, pre)
    out[#out + 1] = suf > 0 and string.sub(job, -suf) or ''
  end
end
local counts = {
  redis.call('llen', KEYS[1]),
  redis.call('zcard', KEYS[2]),
  redis.call('zcount', KEYS[2], '-inf', now),
  redis.call('zcard', KEYS[3]),
  redis.call('zcount', KEYS[3], '-inf', now),
}
for i = 7, #ARGV do
  counts[#counts + 1] = redis.call('zcount', KEYS[2], '-inf', ARGV[i])
end
local ready, delayed, reserved = {}, {}, {}
if head > 0 then
  for _, job in ipairs(redis.call('lrange', KEYS[1], 0, head - 1)) do
    cut(ready, job)
  end
  local d = redis.call('zrange', KEYS[2], 0, head - 1, 'withscores')
  for i = 1, #d, 2 do
    cut(delayed, d[i])
    delayed[#delayed + 1] = d[i + 1]
  end
end
if nres > 0 then
  reserved = redis.call('zrange', KEYS[3], 0, nres - 1, 'withscores')
end
return {counts, ready, delayed, reserved}
`)

// Peek reads a queue's counts and first jobs (see PeekOptions) without
// changing anything.
func (q *Queue) Peek(ctx context.Context, queue string, opts PeekOptions) (View, error) {
	k := q.keys(queue)
	if k.err != nil {
		return View{}, k.err
	}
	args := []any{q.now().Unix(), max(opts.Head, 0), max(opts.Reserved, 0), max(opts.Prefix, 0), max(opts.Suffix, 0), opts.Whole}
	for _, s := range opts.DueBy {
		args = append(args, s)
	}
	reply, err := peekScript.Run(ctx, q.rdb, []string{k.Ready, k.Delayed, k.Reserved}, args...).Slice()
	if err != nil {
		return View{}, q.wrap(err)
	}
	v, err := parseView(reply, len(opts.DueBy))
	if err != nil {
		return View{}, q.wrap(err)
	}
	return v, nil
}

func parseView(reply []any, dueBy int) (View, error) {
	if len(reply) != 4 {
		return View{}, fmt.Errorf("unexpected peek reply of %d parts", len(reply))
	}
	parts := make([][]any, 4)
	for i, p := range reply {
		parts[i], _ = p.([]any)
	}
	counts := parts[0]
	if len(counts) != 5+dueBy {
		return View{}, fmt.Errorf("unexpected peek counts %v", counts)
	}
	n := func(i int) int64 { v, _ := counts[i].(int64); return v }
	v := View{Counts: Counts{Ready: n(0), Delayed: n(1), DelayedDue: n(2), Reserved: n(3), ReservedExpired: n(4)}}
	for i := range dueBy {
		v.DueBy = append(v.DueBy, n(5+i))
	}
	for i := 0; i+1 < len(parts[1]); i += 2 {
		v.Ready = append(v.Ready, Peeked{Head: asString(parts[1][i]), Tail: asString(parts[1][i+1])})
	}
	for i := 0; i+2 < len(parts[2]); i += 3 {
		v.Delayed = append(v.Delayed, Peeked{Head: asString(parts[2][i]), Tail: asString(parts[2][i+1]), Score: score(parts[2][i+2])})
	}
	for i := 0; i+1 < len(parts[3]); i += 2 {
		v.Reserved = append(v.Reserved, Peeked{Head: asString(parts[3][i]), Score: score(parts[3][i+1])})
	}
	return v, nil
}

// score reads a sorted set's score as Lua returns it (a string), in
// whole seconds.
func score(v any) int64 {
	f, err := strconv.ParseFloat(asString(v), 64)
	if err != nil || math.IsNaN(f) {
		return 0
	}
	return int64(math.Floor(f))
}
