package redisqueue

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

// claimScript is Laravel's pop, up to ARGV[5] times, optionally preceded
// by the two migrations and optionally stopping at a job of a class the
// caller does not run.
//
// Each pop is Laravel's: LPOP the head; decode it; attempts + 1; encode;
// ZADD that reserved copy with score ARGV[2] (now + retry_after); LPOP one
// notify token. Migrating first in the same script gives a state Laravel's
// three separate EVALs also give (the one where nothing ran between them).
//
// Three things Laravel's pop does not do:
//   - With a class filter (ARGV[6] = 1: only the names listed, 2: all but
//     those) or ids to leave (jobs the caller gave back), the head is
//     decoded before it is reserved; a head of another class, or one whose
//     "id" is listed, goes back to the head of the list at once (LPUSH of
//     the bytes the LPOP took, in the same script: no other client sees
//     it gone, and its bytes, place and attempts are as they were; an
//     LPOP and an LPUSH cost a server less than LINDEX then LPOP), and the
//     script stops and returns its displayName and uuid. Reading the
//     decoded table does not change it, so the reserved copy is the same.
//   - A head that cannot be decoded or counted (not JSON, not an object,
//     no numeric "attempts") makes Laravel's script raise after its LPOP:
//     the job is gone. Here it is reserved under its own raw bytes and
//     returned with the error, so the caller can fail it (the raw bytes
//     are then its fence) instead of losing it.
//   - A job whose reserved copy (or, unreadable, whose raw bytes) is in
//     the reserved set already is a byte-for-byte copy of a job reserved
//     now (the same payload pushed twice): the two would share one
//     member, and settling one would settle, or lose, the other. It goes
//     back to the head, untouched, and the script stops and returns it as
//     a head left in place (why "copy") until that reservation is gone.
//
// KEYS: 1 ready list, 2 reserved set, 3 notify list, 4 delayed set.
// ARGV: 1 now, 2 reservation expiry score, 3 migrate first (2: the
// delayed set, then the reserved set, as RedisQueue::migrate; 1: only the
// delayed set, as Laravel with retryAfter null; 0: no),
// 4 migration limit (-1 all), 5 max jobs, 6 filter (0 none, 1 only the
// names, 2 all but the names), 7 report the migrated members (1) or not
// (0), 8 how many names follow (n), 9..8+n class names (displayName),
// each as given and in ASCII lower case: PHP class names are
// case-insensitive, and Lua's string.lower, like PHP's, folds ASCII only
// (a displayName spelled as given is found without lowering it); then the
// payload "id"s of jobs to leave in place.
//
// Reply: {blocked, migrated, job...} where blocked is false or
// {displayName, uuid, why} of the head left in place (why: "class", "id"
// or "copy"), migrated is false or the members the migrations moved (delayed
// ones first, as Horizon's JobsMigrated events hear of them), and each
// job is {raw, reserved, attempts, id, uuid, error}: reserved false and
// error set for an undecodable job; attempts the reserved copy's count;
// id and uuid false unless strings.
var claimScript = redis.NewScript(luaMigrate + `
local now, expiry = ARGV[1], ARGV[2]
local moved = {}
if ARGV[3] ~= '0' then
  moved = migrate(KEYS[4], KEYS[1], KEYS[3], now, ARGV[4])
end
if ARGV[3] == '2' then
  local expired = migrate(KEYS[2], KEYS[1], KEYS[3], now, ARGV[4])
  for i = 1, #expired do
    moved[#moved + 1] = expired[i]
  end
end

local filter = ARGV[6]
local lastName = 8 + tonumber(ARGV[8])
local names, leave = {}, {}
for i = 9, lastName do
  names[ARGV[i]] = true
end
local peek = filter ~= '0'
for i = lastName + 1, #ARGV do
  leave[ARGV[i]] = true
  peek = true
end

local function str(v)
  if type(v) == 'string' then return v end
  return false
end

local function countable(decoded)
  if type(decoded) ~= 'table' then return false end
  local n = tonumber(decoded['attempts'])
  return n ~= nil and n == n and n ~= math.huge and n ~= -math.huge
end

local function reserve(decoded)
  decoded['attempts'] = decoded['attempts'] + 1
  return cjson.encode(decoded)
end

local out = {false, false}
if ARGV[7] == '1' and #moved > 0 then
  out[2] = moved
end
for _ = 1, tonumber(ARGV[5]) do
  local job, ok, decoded
  if not peek then
    job = redis.call('lpop', KEYS[1])
    if not job then break end
    ok, decoded = pcall(cjson.decode, job)
  else
    job = redis.call('lpop', KEYS[1])
    if not job then break end
    ok, decoded = pcall(cjson.decode, job)
    -- Only a job the pop can count is left to another worker: one it
    -- cannot, PHP's pop would lose, so it is taken (and returned as
    -- malformed) whatever its class.
    if ok and countable(decoded) then
      local name = str(decoded['displayName'])
      local why = false
      if filter ~= '0' then
        local listed = name and (names[name] or names[string.lower(name)]) == true or false
        if listed ~= (filter == '1') then why = 'class' end
      end
      local id = str(decoded['id'])
      if not why and id and leave[id] then why = 'id' end
      if why then
        redis.call('lpush', KEYS[1], job)
        out[1] = {name or '', str(decoded['uuid']) or '', why}
        break
      end
    end
  end
  local reserved
  if ok then
    ok, reserved = pcall(reserve, decoded)
  else
    reserved = decoded
  end
  if redis.call('zscore', KEYS[2], ok and reserved or job) then
    redis.call('lpush', KEYS[1], job)
    local name, uuid = false, false
    if type(decoded) == 'table' then
      name, uuid = str(decoded['displayName']), str(decoded['uuid'])
    end
    out[1] = {name or '', uuid or '', 'copy'}
    break
  end
  if ok then
    redis.call('zadd', KEYS[2], expiry, reserved)
    redis.call('lpop', KEYS[3])
    out[#out + 1] = {job, reserved, decoded['attempts'], str(decoded['id']), str(decoded['uuid']), false}
  else
    redis.call('zadd', KEYS[2], expiry, job)
    redis.call('lpop', KEYS[3])
    out[#out + 1] = {job, false, false, false, false, tostring(reserved)}
  end
end
return out
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
