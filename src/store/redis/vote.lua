-- vote.lua: cast one vote on one board, atomically: the rate-limit rules are checked and
-- consumed, and every enabled period's bucket in both views, carry-over into each next
-- bucket, every rolling window, participants, the hourly counter and the idempotency
-- record change together, or nothing changes. window.lua comes in front of this file.
--
-- KEYS[1]  idempotency record (string; any key of the board when ARGV[6] is 0)
-- KEYS[2]  votes-per-hour counter (hash: epoch hour -> votes)
-- KEYS[3]  refusals of the vote's hour (hash: rule id -> refused votes)
-- then five keys per enabled period p = 0 .. n-1, at 3 + 5p:
--   +1 real scores of the vote's bucket        (zset)
--   +2 display scores of the vote's bucket     (zset)
--   +3 display scores of the next bucket       (zset; carry-over target, ignored for `all`)
--   +4 board participants of the vote's bucket (HyperLogLog)
--   +5 member participants of the vote's bucket (HyperLogLog)
-- then two keys per rule i = 0 .. r-1, at 3 + 5n + 2i:
--   +1 the rule's counter: a string for calendar and campaign windows, a zset log
--      (score = vote time in ms, member = '<count>:<tag>') for rolling windows
--   +2 rolling windows: the log's running total (string); else unused
-- then 3 + 5s keys per rolling window of s slots (see window.lua), one after another
--
-- ARGV[1]  member id
-- ARGV[2]  real increment (votes; also what each rule counts)
-- ARGV[3]  display increment (millionths)
-- ARGV[4]  carry-over increment (millionths; 0 = none)
-- ARGV[5]  voter id, or '' when the vote names none
-- ARGV[6]  idempotency record TTL in seconds, or 0 when the vote has no key
-- ARGV[7]  receipt: text stored with the scores so a replay can answer the same
-- ARGV[8]  votes-per-hour field (hours since the epoch)
-- ARGV[9]  n, the number of enabled periods
-- ARGV[10] the largest allowed score (2^53)
-- ARGV[11] index (0-based) of the `all` period among the n, or -1 when `all` is off
-- ARGV[12] the vote's time, ms since the epoch
-- ARGV[13] a tag unique to this vote, naming its entries in rolling logs
-- ARGV[14] TTL in seconds of the refusals hash
-- ARGV[15] r, the number of rules
-- ARGV[15 + 1 + p] '1' when period p carries over into its next bucket, else '0'
-- then six per rule i, at 15 + n + 6i:
--   +1 rule id (the refusals field)
--   +2 kind: 'c' counter or 'l' rolling log
--   +3 the limit for this vote
--   +4 TTL in seconds to give the counter
--   +5 counter: '1' to set the TTL on every write, '0' only when the counter is new;
--      log: the horizon in ms (entries at or before it have left the window)
--   +6 counter: ms from the vote until its window restarts, or -1 if it never does;
--      log: unused
-- then at 15 + n + 6r + 1: w, the number of rolling windows, and four per window k at
-- 15 + n + 6r + 1 + 4k:
--   +1 s, its slots
--   +2 the clock's slot (now)
--   +3 the vote's slot (its time)
--   +4 the most drained members this call subtracts from the window's totals
--
-- Returns one of
--   {'ok', real_0, display_0, real_1, display_1, ...}  new scores, as decimal strings:
--                              the n periods', then each rolling window's totals
--   {'dup', receipt_and_scores}                        the first answer for this key
--   {'limited', i, retry_ms}   rule i (0-based) refused: of the rules that refuse, the
--                              one that keeps refusing longest; retry_ms is -1 for never
--   {'overflow'}                                        a score would pass ARGV[10]
--
-- Increments go to redis.call as the strings in ARGV: a Lua number is formatted with
-- printf('%.14g') on every call, which cost several percent of the script's time.
--
-- Invariant: every check comes before the first write, so a refused vote changes no
-- score and no rule counter; a rate-limit refusal writes only its refusals counter.

local member = ARGV[1]
local real_inc = tonumber(ARGV[2])
local display_inc = tonumber(ARGV[3])
local carry_inc = tonumber(ARGV[4])
local voter = ARGV[5]
local idem_ttl = tonumber(ARGV[6])
local n = tonumber(ARGV[9])
local max_units = tonumber(ARGV[10])
local all_index = tonumber(ARGV[11])
local r = tonumber(ARGV[15])
local period_key = 3
local rule_key = 3 + 5 * n
local rule_arg = 15 + n
local window_arg = rule_arg + 6 * r
local w = tonumber(ARGV[window_arg + 1] or '0')

-- One MGET reads the idempotency record and every rule's string: a calendar or campaign
-- counter, or a rolling log's running total.
local strings = {}
if idem_ttl > 0 then
  strings[1] = KEYS[1]
end
local string_at = #strings
for i = 0, r - 1 do
  local at = rule_key + 2 * i + 1
  if ARGV[rule_arg + 6 * i + 2] == 'l' then
    at = at + 1
  end
  strings[#strings + 1] = KEYS[at]
end
local stored = {}
if #strings > 0 then
  stored = redis.call('MGET', unpack(strings))
end
if idem_ttl > 0 and stored[1] then
  return {'dup', stored[1]}
end

local function entry_count(entry)
  return tonumber(string.match(entry, '^(%d+)'))
end

-- Whether waiting `a` ms is longer than waiting `b` ms; -1 means forever.
local function longer(a, b)
  if b == -1 then
    return false
  end
  return a == -1 or a > b
end

-- Rate-limit rules: read every counter first; consume only when all of them admit.
local used = {}
local stale = {}
local refused, refused_retry = -1, 0
for i = 0, r - 1 do
  local key = KEYS[rule_key + 2 * i + 1]
  local a = rule_arg + 6 * i
  local limit = tonumber(ARGV[a + 3])
  local retry
  local value = tonumber(stored[string_at + i + 1] or '0')
  if ARGV[a + 2] == 'c' then
    used[i] = value
    retry = tonumber(ARGV[a + 6])
  else
    -- The running total still holds entries that have left the window: subtract them
    -- here, and drop them when the vote is admitted.
    local total = value
    local gone = redis.call('ZRANGEBYSCORE', key, '-inf', ARGV[a + 5])
    for _, entry in ipairs(gone) do
      total = total - entry_count(entry)
    end
    used[i] = total
    stale[i] = #gone > 0
    if total + real_inc > limit then
      -- The vote fits once enough of the oldest entries have left the window; each
      -- entry holds at least one vote, so at most `need` entries are read.
      local need = total + real_inc - limit
      local live = redis.call('ZRANGEBYSCORE', key, '(' .. ARGV[a + 5], '+inf',
        'WITHSCORES', 'LIMIT', 0, need)
      local freed = 0
      retry = -1
      for j = 1, #live, 2 do
        freed = freed + entry_count(live[j])
        if freed >= need then
          retry = tonumber(live[j + 1]) - tonumber(ARGV[a + 5])
          break
        end
      end
    end
  end
  if used[i] + real_inc > limit and (refused < 0 or longer(retry, refused_retry)) then
    refused, refused_retry = i, retry
  end
end
if refused >= 0 then
  redis.call('HINCRBY', KEYS[3], ARGV[rule_arg + 6 * refused + 1], '1')
  redis.call('EXPIRE', KEYS[3], ARGV[14])
  return {'limited', refused, refused_retry}
end

-- Every bucket's score is at most the all-time score of the same view (each unit of a
-- bucket comes from a vote that added at least as much to all-time), so when `all` is on
-- checking it bounds them all; otherwise every target is checked.
local function exceeds(key, inc)
  local current = tonumber(redis.call('ZSCORE', key, member) or '0')
  return current + inc > max_units
end
for p = 0, n - 1 do
  if all_index < 0 or p == all_index then
    local base = period_key + 5 * p
    if exceeds(KEYS[base + 1], real_inc) or exceeds(KEYS[base + 2], display_inc) then
      return {'overflow'}
    end
    if all_index < 0 and carry_inc > 0 and exceeds(KEYS[base + 3], carry_inc) then
      return {'overflow'}
    end
  end
end

-- Rolling windows hold only votes that all-time holds too; without `all`, their totals
-- are checked as they stand (before expired slots leave them, so never too leniently).
if all_index < 0 then
  local o = rule_key + 2 * r
  for k = 0, w - 1 do
    if exceeds(KEYS[o + 2], real_inc) or exceeds(KEYS[o + 3], display_inc) then
      return {'overflow'}
    end
    o = o + 3 + 5 * tonumber(ARGV[window_arg + 2 + 4 * k])
  end
end

for i = 0, r - 1 do
  local key = KEYS[rule_key + 2 * i + 1]
  local a = rule_arg + 6 * i
  local ttl = ARGV[a + 4]
  local after = string.format('%d', used[i] + real_inc)
  if ARGV[a + 2] == 'c' then
    if used[i] == 0 or ARGV[a + 5] == '1' then
      redis.call('SET', key, after, 'EX', ttl)
    else
      redis.call('INCRBY', key, ARGV[2])
    end
  else
    if stale[i] then
      redis.call('ZREMRANGEBYSCORE', key, '-inf', ARGV[a + 5])
    end
    redis.call('ZADD', key, ARGV[12], ARGV[2] .. ':' .. ARGV[13])
    redis.call('EXPIRE', key, ttl)
    redis.call('SET', KEYS[rule_key + 2 * i + 2], after, 'EX', ttl)
  end
end

local result = {'ok'}
for p = 0, n - 1 do
  local base = period_key + 5 * p
  result[#result + 1] = redis.call('ZINCRBY', KEYS[base + 1], ARGV[2], member)
  result[#result + 1] = redis.call('ZINCRBY', KEYS[base + 2], ARGV[3], member)
  if carry_inc > 0 and ARGV[15 + 1 + p] == '1' then
    redis.call('ZINCRBY', KEYS[base + 3], ARGV[4], member)
  end
  if voter ~= '' then
    redis.call('PFADD', KEYS[base + 4], voter)
    redis.call('PFADD', KEYS[base + 5], voter)
  end
end
local o = rule_key + 2 * r
for k = 0, w - 1 do
  local a = window_arg + 1 + 4 * k
  local slots = tonumber(ARGV[a + 1])
  local totals = window_add(o, slots, tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3]),
    tonumber(ARGV[a + 4]), member, ARGV[2], ARGV[3], voter)
  result[#result + 1] = totals[1]
  result[#result + 1] = totals[2]
  o = o + 3 + 5 * slots
end
redis.call('HINCRBY', KEYS[2], ARGV[8], ARGV[2])

if idem_ttl > 0 then
  local scores = {}
  for i = 2, #result do
    scores[#scores + 1] = result[i]
  end
  redis.call('SET', KEYS[1], ARGV[7] .. '|' .. table.concat(scores, ','), 'EX', idem_ttl)
end
return result
