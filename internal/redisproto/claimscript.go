package redisproto

import "github.com/redis/go-redis/v9"

// claimScript is Laravel's pop, up to ARGV[5] times, optionally preceded
// by the two migrations and optionally leaving in place the jobs of
// classes the caller does not run, and then taking the caller's jobs
// from behind them.
//
// Each pop is Laravel's: LPOP the head; decode it; attempts + 1; encode;
// ZADD that reserved copy with score ARGV[2] (now + retry_after); LPOP one
// notify token. Migrating first in the same script gives a state Laravel's
// three separate EVALs also give (the one where nothing ran between them).
// Two steps are cheaper for the server than Laravel's commands and leave
// the same state: the ZADD is a ZADD NX, which also tells a copy (below)
// without a ZSCORE first, and the notify tokens of all the jobs popped
// go in one LTRIM at the end instead of one LPOP each (nothing in between
// reads the notify list; an LTRIM past its end empties it, as LPOPs do).
//
// What Laravel's pop does not do:
//   - With a class filter (ARGV[6] = 1: only the names listed, 2: all but
//     those) or ids to leave (jobs the caller gave back), the head is
//     decoded before it is reserved; a head of another class, or one whose
//     "id" is listed, goes back to the head of the list at once (LPUSH of
//     the bytes the LPOP took, in the same script: no other client sees
//     it gone, and its bytes, place and attempts are as they were; an
//     LPOP and an LPUSH cost a server less than LINDEX then LPOP).
//     Reading the decoded table does not change it, so the reserved copy
//     is the same.
//   - A head that cannot be decoded or counted (not JSON, not an object,
//     no numeric "attempts") makes Laravel's script raise after its LPOP:
//     the job is gone. Here it is reserved under its own raw bytes and
//     returned with the error, so the caller can fail it (the raw bytes
//     are then its fence) instead of losing it.
//   - A job whose reserved copy (or, unreadable, whose raw bytes) is in
//     the reserved set already is a byte-for-byte copy of a job reserved
//     now (the same payload pushed twice): the two would share one
//     member, and settling one would settle, or lose, the other. It goes
//     back to the head, untouched, and is left as a head (why "copy")
//     until that reservation is gone.
//   - Past a head it leaves (any of the three reasons), the script looks
//     further down the list (the lookahead: it passes ARGV[8] jobs and
//     ARGV[9] bytes of them at most) for the first job it takes, one
//     LINDEX at a time (a range could read many large jobs at once). A job is
//     judged first by its bytes, never decoded: the displayName is found
//     with a plain string.find (in a JSON object's keys only a key can be
//     followed by ':"'; inside a string every quote is escaped). Only the
//     job the bytes say it may take is decoded, and then judged exactly
//     as a head is (class, id, a readable "attempts", a copy); a job that
//     is not a JSON object is taken as unreadable, as a head is. The job
//     taken is removed by its place, exactly it (LSET to a marker, then
//     LREM of that marker: a byte-identical job elsewhere in the list is
//     not touched), and reserved and counted as Laravel's pop reserves the
//     head: the same member, score and notify token. The jobs looked past
//     stay where they were, in their order, untouched.
//
// KEYS: 1 ready list, 2 reserved set, 3 notify list, 4 delayed set.
// ARGV: 1 now, 2 reservation expiry score, 3 migrate first (2: the
// delayed set, then the reserved set, as RedisQueue::migrate; 1: only the
// delayed set, as Laravel with retryAfter null; 0: no),
// 4 migration limit (-1 all), 5 max jobs, 6 filter (0 none, 1 only the
// names, 2 all but the names), 7 report the migrated members (1) or not
// (0), 8 lookahead jobs (0: stop at the first job left), 9 lookahead
// bytes, 10 the marker a job taken from behind is removed by, 11 report
// each job the lookahead passed (1) or only how many (0), 12 how many
// names follow (n), 13..12+n class names (displayName), each as given and
// in ASCII lower case: PHP class names are case-insensitive, and Lua's
// string.lower, like PHP's, folds ASCII only (a displayName spelled as
// given is found without lowering it); then the payload "id"s of jobs to
// leave in place.
//
// Reply: {blocked, migrated, looked, job...} where blocked is false or
// {displayName, uuid, why} of the head left in place (why: "class", "id"
// or "copy"), migrated is false or the members the migrations moved
// (delayed ones first, as Horizon's JobsMigrated events hear of them),
// looked is false or {cut, n, displayName, uuid, why, ...}: cut 1 when
// the lookahead stopped at its bound before the end of the list, n how
// many jobs it looked past and left, then, when asked (ARGV[11]), each of
// them (why as for the head; displayName and uuid as their bytes tell
// them, "" when they do not); and each job is {raw,
// reserved, attempts, id, uuid, error}: reserved false and error set for
// an undecodable job; attempts the reserved copy's count; id and uuid
// false unless strings.
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
local depth, budget, marker = tonumber(ARGV[8]), tonumber(ARGV[9]), ARGV[10]
local report = ARGV[11] == '1'
local lastName = 12 + tonumber(ARGV[12])
local names, leave = {}, {}
for i = 13, lastName do
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

local function listed(name)
  return name and (names[name] or names[string.lower(name)]) == true or false
end

-- why a readable job is left in place: 'class', 'id', or false (taken).
local function leftFor(decoded)
  if filter ~= '0' and listed(str(decoded['displayName'])) ~= (filter == '1') then
    return 'class'
  end
  local id = str(decoded['id'])
  if id and leave[id] then return 'id' end
  return false
end

-- the reservation of a decoded job: ok, and the reserved copy (or the
-- error), and the member the reserved set would hold.
local function reservation(job, ok, decoded)
  local reserved
  if ok then
    ok, reserved = pcall(reserve, decoded)
  else
    reserved = decoded
  end
  return ok, reserved, ok and reserved or job
end

local out = {false, false, false}
if ARGV[7] == '1' and #moved > 0 then
  out[2] = moved
end

-- reserve adds a job's member to the reserved set (Laravel's ZADD), or
-- says it cannot: its member is there already (a copy).
local function reserveMember(member)
  return redis.call('zadd', KEYS[2], 'NX', expiry, member) == 1
end

-- commit records a job taken off the list and reserved (reserveMember).
-- Its notify token (Laravel's LPOP after the ZADD) goes with the others
-- in one LTRIM at the end: nothing between reads the list.
local tokens = 0
local function commit(job, ok, decoded, reserved)
  tokens = tokens + 1
  if ok then
    out[#out + 1] = {job, reserved, decoded['attempts'], str(decoded['id']), str(decoded['uuid']), false}
  else
    out[#out + 1] = {job, false, false, false, false, tostring(reserved)}
  end
end

-- the string value that starts at byte from, with its escaped
-- backslashes unescaped (a class name as PHP writes it); nil when longer
-- than a class name can be. Other escapes stay: no class name holds a
-- quote or a slash, and one written with \u escapes (Horizon writes
-- non-ASCII so) matches no name here, so its job is left, and judged
-- exactly once at the head. A plain replacement, no callback: this runs
-- for every job the lookahead reads.
local function plain(job, from)
  local q = string.find(job, '"', from, true)
  if not q or q - from > 512 then return nil end
  return (string.gsub(string.sub(job, from, q - 1), '\\\\', '\\'))
end

local function field(job, key)
  local _, j = string.find(job, '"' .. key .. '":"', 1, true)
  if not j then return nil end
  return plain(job, j + 1)
end

-- judge tells, from a job's bytes alone, whether the lookahead may take
-- it (true, then it is decoded) or leaves it ('class').
local function judge(job, name)
  if string.byte(job, 1) ~= 123 and not string.find(job, '^%s*{') then
    return true -- not a JSON object: unreadable, taken as a head is
  end
  if filter == '0' then return true end
  if name == nil then
    return filter == '2' or 'class'
  end
  if listed(name) ~= (filter == '1') then return 'class' end
  return true
end

-- lookahead looks from place pos on for a job to take, takes the first
-- and returns true; false when none is left within the bounds.
local looked, pos, passed, read = false, 1, 0, 0
local function lookahead()
  while true do
    if passed >= depth or read >= budget then
      looked[1] = 1
      return false
    end
    local job = redis.call('lindex', KEYS[1], pos)
    if not job then return false end
    local name = field(job, 'displayName')
    local why = judge(job, name)
    local ok, decoded, reserved, member
    if why == true then
      ok, decoded = pcall(cjson.decode, job)
      why = false
      if ok and countable(decoded) then
        why = leftFor(decoded)
        name = str(decoded['displayName']) or nil
      end
      if not why then
        ok, reserved, member = reservation(job, ok, decoded)
        if not reserveMember(member) then why = 'copy' end
      end
    end
    if not why then
      redis.call('lset', KEYS[1], pos, marker)
      redis.call('lrem', KEYS[1], 1, marker)
      commit(job, ok, decoded, reserved)
      return true
    end
    if report then
      looked[#looked + 1] = name or ''
      looked[#looked + 1] = field(job, 'uuid') or ''
      looked[#looked + 1] = why
    end
    passed, pos, read = passed + 1, pos + 1, read + #job
    looked[2] = passed
  end
end

for _ = 1, tonumber(ARGV[5]) do
  if looked then
    if not lookahead() then break end
  else
    local job = redis.call('lpop', KEYS[1])
    if not job then break end
    local ok, decoded = pcall(cjson.decode, job)
    -- Only a job the pop can count is left to another worker: one it
    -- cannot, PHP's pop would lose, so it is taken (and returned as
    -- malformed) whatever its class.
    local why = false
    if peek and ok and countable(decoded) then
      why = leftFor(decoded)
    end
    local reserved, member
    if not why then
      ok, reserved, member = reservation(job, ok, decoded)
      if not reserveMember(member) then why = 'copy' end
    end
    if why then
      redis.call('lpush', KEYS[1], job)
      local name, uuid = false, false
      if type(decoded) == 'table' then
        name, uuid = str(decoded['displayName']), str(decoded['uuid'])
      end
      out[1] = {name or '', uuid or '', why}
      if depth <= 0 then break end
      looked = {0, 0}
      out[3] = looked
      if not lookahead() then break end
    else
      commit(job, ok, decoded, reserved)
    end
  end
end
if tokens > 0 then
  redis.call('ltrim', KEYS[3], tokens, -1)
end
return out
`)
