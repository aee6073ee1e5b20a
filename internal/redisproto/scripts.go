package redisproto

import "github.com/redis/go-redis/v9"

// The Lua scripts below produce, key for key and byte for byte, the
// Redis state Laravel's Illuminate\Queue\LuaScripts produce for the same
// operation (8.x to 13.x; written from their documented behaviour, see
// docs/LARAVEL-VERSIONS.md, and checked against the installed Laravel's
// own scripts by the differential test). Where they add anything, it is a
// fence (a write that happens only while the job's reserved member is
// still there) or a check that leaves the state untouched. They run
// server-side with EVALSHA (EVAL when the server does not know them yet),
// and use only KEYS and ARGV, so a cluster routes them by their keys.
//
// The one state that matters most is the reserved member: the pop decodes
// the payload with Redis's bundled cjson, adds one to "attempts" and
// encodes it again, which reorders keys, turns [] into {} and rounds
// numbers to 14 digits. Deletes and releases name the job by exactly these
// bytes, so the decode, the one assignment and the encode must be the
// very operations Laravel's pop does, in the same order, on a table
// nothing else touched.

// pushScript is Laravel's push: the payload to the tail of the list and
// one wake-up token to the notify list.
//
// KEYS: 1 ready list, 2 notify list. ARGV: 1 payload.
var pushScript = redis.NewScript(`
redis.call('rpush', KEYS[1], ARGV[1])
redis.call('rpush', KEYS[2], 1)
`)

// laterScript is Laravel's delayed push (a Lua script since 12.45, a
// plain ZADD before): the payload into the delayed set, scored by the
// second it becomes ready. No token: the migration that moves it adds one.
//
// KEYS: 1 delayed set. ARGV: 1 ready-at score, 2 payload.
var laterScript = redis.NewScript(`
redis.call('zadd', KEYS[1], ARGV[1], ARGV[2])
`)

// sizeScript is Laravel's size(): ready + delayed + reserved (running
// jobs count).
//
// KEYS: 1 ready list, 2 delayed set, 3 reserved set.
var sizeScript = redis.NewScript(`
return redis.call('llen', KEYS[1]) + redis.call('zcard', KEYS[2]) + redis.call('zcard', KEYS[3])
`)

// clearScript is Laravel's clear() (queue:clear): the size, then all four
// keys deleted, running jobs' reservations included.
//
// KEYS: 1 ready list, 2 delayed set, 3 reserved set, 4 notify list.
var clearScript = redis.NewScript(`
local total = redis.call('llen', KEYS[1]) + redis.call('zcard', KEYS[2]) + redis.call('zcard', KEYS[3])
redis.call('del', KEYS[1], KEYS[2], KEYS[3], KEYS[4])
return total
`)

// luaMigrate moves the due members of a sorted set (score <= ARGV now) to
// the tail of the ready list, lowest score first, at most limit of them
// (negative: all; Laravel 8 has no limit), with one notify token each, and
// returns them. This is Laravel's migrateExpiredJobs: the members read are
// exactly the lowest ranks, removed by rank; pushed 100 per RPUSH to stay
// within Lua's argument limit.
const luaMigrate = `
local function migrate(from, to, notify, now, limit)
  local due = redis.call('zrangebyscore', from, '-inf', now, 'limit', 0, limit)
  local n = #due
  if n > 0 then
    redis.call('zremrangebyrank', from, 0, n - 1)
    for first = 1, n, 100 do
      local last = math.min(first + 99, n)
      redis.call('rpush', to, unpack(due, first, last))
      for _ = first, last do
        redis.call('rpush', notify, 1)
      end
    end
  end
  return due
end
`

// migrateScript is one migration on its own, as RedisQueue::migrate runs
// it twice before every pop (delayed, then reserved).
//
// KEYS: 1 source set, 2 ready list, 3 notify list. ARGV: 1 now, 2 limit.
var migrateScript = redis.NewScript(luaMigrate + `
return migrate(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2])
`)

// releaseScript is Laravel's release, fenced: the reserved member leaves
// the reserved set and enters the delayed set (scored now + delay) only
// if it was still reserved. Laravel's adds it even when the ZREM removed
// nothing, which makes a second copy of a job another worker holds.
//
// KEYS: 1 delayed set, 2 reserved set. ARGV: 1 reserved member, 2 score.
// Reply: 1 released, 0 lost.
var releaseScript = redis.NewScript(`
if redis.call('zrem', KEYS[2], ARGV[1]) == 0 then
  return 0
end
redis.call('zadd', KEYS[1], ARGV[2], ARGV[1])
return 1
`)

// unreserveScript gives jobs back as they were before the pop: each
// reserved member still there is removed and the original raw payload
// pushed back on the head of the list (attempts as pushed), with the
// notify token the pop took. Jobs come as (reserved, raw) pairs in pop
// order and go back last first, so they end up in their old order, ahead
// of everything that was behind them.
//
// KEYS: 1 ready list, 2 reserved set, 3 notify list. ARGV: reserved1,
// raw1, reserved2, raw2, ... Reply: one 1 (given back) or 0 (lost) per job.
var unreserveScript = redis.NewScript(`
local n = #ARGV / 2
local out = {}
for i = n, 1, -1 do
  if redis.call('zrem', KEYS[2], ARGV[2 * i - 1]) == 1 then
    redis.call('lpush', KEYS[1], ARGV[2 * i])
    redis.call('rpush', KEYS[3], 1)
    out[i] = 1
  else
    out[i] = 0
  end
end
return out
`)

// extendScript refreshes the reservations of running jobs of one queue:
// each member still reserved gets the score ARGV[1] (now + retry_after),
// never a lower one than it has. A member that is gone stays gone.
//
// KEYS: 1 reserved set. ARGV: 1 score, 2.. members. Reply: the score
// each job holds now, or 0 for a lost one.
var extendScript = redis.NewScript(`
local out = {}
local score = tonumber(ARGV[1])
for i = 2, #ARGV do
  local current = redis.call('zscore', KEYS[1], ARGV[i])
  if current then
    current = tonumber(current)
    if current < score then
      redis.call('zadd', KEYS[1], 'XX', score, ARGV[i])
      current = score
    end
    out[i - 1] = current
  else
    out[i - 1] = 0
  end
end
return out
`)

// completeScript removes a finished job's reserved member and, only if it
// was there, pushes the jobs that follow it (a chain's next link): each
// as push (ready list + token) or, with a score, as later.
//
// KEYS: 1 reserved set, then per follow-up its ready list, notify list
// and delayed set. ARGV: 1 reserved member, then per follow-up its
// payload and its ready-at score (” to push it ready). Reply: 1 done,
// 0 lost (nothing written).
var completeScript = redis.NewScript(`
if redis.call('zrem', KEYS[1], ARGV[1]) == 0 then
  return 0
end
local k = 2
for i = 2, #ARGV, 2 do
  if ARGV[i + 1] == '' then
    redis.call('rpush', KEYS[k], ARGV[i])
    redis.call('rpush', KEYS[k + 1], 1)
  else
    redis.call('zadd', KEYS[k + 2], ARGV[i + 1], ARGV[i])
  end
  k = k + 3
end
return 1
`)

// countsScript reads what a pop would find, without moving anything:
// ready, delayed (of which due), reserved (of which expired).
//
// KEYS: 1 ready list, 2 delayed set, 3 reserved set. ARGV: 1 now.
var countsScript = redis.NewScript(`
return {
  redis.call('llen', KEYS[1]),
  redis.call('zcard', KEYS[2]),
  redis.call('zcount', KEYS[2], '-inf', ARGV[1]),
  redis.call('zcard', KEYS[3]),
  redis.call('zcount', KEYS[3], '-inf', ARGV[1]),
}
`)
