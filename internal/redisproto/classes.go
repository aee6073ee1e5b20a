package redisproto

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// The class scripts read jobs inside Redis and answer with class names or
// counts only: a start-up check that reads thousands of jobs, one of them
// maybe of many megabytes, gets a few kilobytes, never the jobs.

// luaDisplayName is displayName(job) in Lua: the payload's displayName
// found with a plain string.find (inside a JSON string every quote is
// escaped, so '"displayName":"' can only be a key; a key of a nested
// object is possible and taken, which a count of classes tolerates), the
// value unescaped when it holds no escape but \\ and \/; else, for a job
// of at most 64 KiB, the decoded payload's; else "".
const luaDisplayName = `
local function displayName(job)
  local _, j = string.find(job, '"displayName":"', 1, true)
  if j then
    local q = string.find(job, '"', j + 1, true)
    if q and q - j <= 512 then
      local bad = false
      local s = string.gsub(string.sub(job, j + 1, q - 1), '\\(.?)', function(c)
        if c == '\\' or c == '/' then return c end
        bad = true
        return ''
      end)
      if not bad then return s end
    end
  end
  if #job > 65536 then return '' end
  local ok, decoded = pcall(cjson.decode, job)
  if ok and type(decoded) == 'table' and type(decoded['displayName']) == 'string' then
    return decoded['displayName']
  end
  return ''
end
`

// sampleClassesScript returns the displayNames of the first ARGV[1] jobs
// of a queue: its list from the head, then its delayed set from the
// soonest due, read 100 at a time.
//
// KEYS: 1 ready list, 2 delayed set. ARGV: 1 limit. Reply: the names.
var sampleClassesScript = redis.NewScript(luaDisplayName + `
local limit = tonumber(ARGV[1])
local out = {}
local function read(get)
  local from = 0
  while #out < limit do
    local last = math.min(from + 99, from + limit - #out - 1)
    local jobs = get(from, last)
    for _, job in ipairs(jobs) do
      out[#out + 1] = displayName(job)
    end
    if #jobs < last - from + 1 then return end
    from = last + 1
  end
end
read(function(a, b) return redis.call('lrange', KEYS[1], a, b) end)
read(function(a, b) return redis.call('zrange', KEYS[2], a, b) end)
return out
`)

// SampleClasses returns the displayNames ("" for a job whose class its
// bytes do not tell) of the first limit jobs of queue: its list from the
// head, then its delayed set from the soonest due. The names are read
// inside Redis; the jobs never leave it.
func (q *Queue) SampleClasses(ctx context.Context, queue string, limit int) ([]string, error) {
	queue = q.cfg.queueName(queue)
	if err := q.cfg.CheckQueue(queue); err != nil {
		return nil, err
	}
	if limit <= 0 {
		return nil, nil
	}
	k := q.cfg.Keys(queue)
	names, err := sampleClassesScript.Run(ctx, q.rdb, []string{k.Ready, k.Delayed}, limit).StringSlice()
	if err != nil && !isNil(err) {
		return nil, q.wrap(err)
	}
	return names, nil
}

// countClassesScript counts the jobs of some classes (displayName, ASCII
// case ignored, decoded as moveScript decodes it) in a queue's list,
// delayed set and reserved set, at one instant, inside Redis.
//
// KEYS: 1 ready list, 2 delayed set, 3 reserved set. ARGV: class names
// in ASCII lower case. Reply: {ready, delayed, reserved} counts per name,
// in ARGV order.
var countClassesScript = redis.NewScript(`
local index = {}
for i = 1, #ARGV do
  if not index[ARGV[i]] then index[ARGV[i]] = i end
end
local out = {}
for i = 1, 3 * #ARGV do out[i] = 0 end
local function count(jobs, field)
  for _, job in ipairs(jobs) do
    local ok, decoded = pcall(cjson.decode, job)
    if ok and type(decoded) == 'table' and type(decoded['displayName']) == 'string' then
      local i = index[string.lower(decoded['displayName'])]
      if i then out[3 * (i - 1) + field] = out[3 * (i - 1) + field] + 1 end
    end
  end
end
local function each(get, field)
  local from = 0
  while true do
    local jobs = get(from, from + 99)
    count(jobs, field)
    if #jobs < 100 then return end
    from = from + 100
  end
end
each(function(a, b) return redis.call('lrange', KEYS[1], a, b) end, 1)
each(function(a, b) return redis.call('zrange', KEYS[2], a, b) end, 2)
each(function(a, b) return redis.call('zrange', KEYS[3], a, b) end, 3)
return out
`)
