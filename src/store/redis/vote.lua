-- vote.lua: cast one vote on one board, atomically: every enabled period's bucket in both
-- views, carry-over into each next bucket, participants, the hourly counter and the
-- idempotency record change together, or nothing changes.
--
-- KEYS[1]  idempotency record (string; any key of the board when ARGV[6] is 0)
-- KEYS[2]  votes-per-hour counter (hash: epoch hour -> votes)
-- then five keys per enabled period p = 0 .. n-1, at 2 + 5p:
--   +1 real scores of the vote's bucket        (zset)
--   +2 display scores of the vote's bucket     (zset)
--   +3 display scores of the next bucket       (zset; carry-over target, ignored for `all`)
--   +4 board participants of the vote's bucket (HyperLogLog)
--   +5 member participants of the vote's bucket (HyperLogLog)
--
-- ARGV[1]  member id
-- ARGV[2]  real increment (votes)
-- ARGV[3]  display increment (millionths)
-- ARGV[4]  carry-over increment (millionths; 0 = none)
-- ARGV[5]  voter id, or '' when the vote names none
-- ARGV[6]  idempotency record TTL in seconds, or 0 when the vote has no key
-- ARGV[7]  receipt: text stored with the scores so a replay can answer the same
-- ARGV[8]  votes-per-hour field (hours since the epoch)
-- ARGV[9]  n, the number of enabled periods
-- ARGV[10] the largest allowed score (2^53)
-- ARGV[11] index (0-based) of the `all` period among the n, or -1 when `all` is off
-- ARGV[11 + 1 + p] '1' when period p carries over into its next bucket, else '0'
--
-- Returns one of
--   {'ok', real_0, display_0, real_1, display_1, ...}  new scores, as decimal strings
--   {'dup', receipt_and_scores}                        the first answer for this key
--   {'overflow'}                                        a score would pass ARGV[10]
--
-- Invariant: the checks come before the first write, so a refused vote writes nothing.

local member = ARGV[1]
local real_inc = tonumber(ARGV[2])
local display_inc = tonumber(ARGV[3])
local carry_inc = tonumber(ARGV[4])
local voter = ARGV[5]
local idem_ttl = tonumber(ARGV[6])
local n = tonumber(ARGV[9])
local max_units = tonumber(ARGV[10])
local all_index = tonumber(ARGV[11])

if idem_ttl > 0 then
  local first = redis.call('GET', KEYS[1])
  if first then
    return {'dup', first}
  end
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
    local base = 2 + 5 * p
    if exceeds(KEYS[base + 1], real_inc) or exceeds(KEYS[base + 2], display_inc) then
      return {'overflow'}
    end
    if all_index < 0 and carry_inc > 0 and exceeds(KEYS[base + 3], carry_inc) then
      return {'overflow'}
    end
  end
end

local result = {'ok'}
for p = 0, n - 1 do
  local base = 2 + 5 * p
  result[#result + 1] = redis.call('ZINCRBY', KEYS[base + 1], real_inc, member)
  result[#result + 1] = redis.call('ZINCRBY', KEYS[base + 2], display_inc, member)
  if carry_inc > 0 and ARGV[12 + p] == '1' then
    redis.call('ZINCRBY', KEYS[base + 3], carry_inc, member)
  end
  if voter ~= '' then
    redis.call('PFADD', KEYS[base + 4], voter)
    redis.call('PFADD', KEYS[base + 5], voter)
  end
end
redis.call('HINCRBY', KEYS[2], ARGV[8], real_inc)

if idem_ttl > 0 then
  local scores = {}
  for i = 2, #result do
    scores[#scores + 1] = result[i]
  end
  redis.call('SET', KEYS[1], ARGV[7] .. '|' .. table.concat(scores, ','), 'EX', idem_ttl)
end
return result
