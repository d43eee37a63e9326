-- revoke.lua: take revoked votes back out of a board's rankings and counts, in one step,
-- once: the step is remembered by the revocation's id (and chunk), so a repeat after a
-- failure changes nothing it did already.
-- Rankings move by the (negative) amounts given, which commute with votes counted
-- meanwhile; a member left at 0 leaves the ranking (no vote makes a score of 0). The
-- buckets' and the hours' vote counts go down, and their late-write counts up, so the archive writes
-- again the closed buckets those hours count in (see vote.lua).
--
-- KEYS[1]  votes counter (hash: epoch hour -> votes, real rankings key -> votes in the
--          bucket; see vote.lua)
-- KEYS[2]  late writes (hash: epoch hour -> writes)
-- KEYS[3]  the steps done (hash: '<revocation id>:<chunk>' -> 1)
-- then one ranking (zset) per change
-- then three keys per trending change k (0-based) at 4 + c + 3k: the period's real and
--          display scores and its origin (see trend.lua)
-- ARGV[1]  this step's name, '<revocation id>:<chunk>'
-- ARGV[2]  c, the number of changes; then per change i (1-based) at 1 + 2i, 2 + 2i: the
--          member, the units to add (negative)
-- then at 3 + 2c: b, the number of buckets whose vote counts go down; then per bucket
-- its real rankings key (as the counter's field) and the votes revoked in it
-- then at 4 + 2c + 2b: t, the number of trending changes; then five per change k at
--          5 + 2c + 2b + 5k: the member, the real and display units to take out, each
--          already weighted by 2^((at − ref)/H) over the votes' times `at`, ref (ms) and
--          H (the half-life, ms); trend_apply.lua weighs them against the period's
--          origin. A member left at about 0 (within 1e-12 of what was taken out) leaves
--          the period's rankings.
-- then pairs from 5 + 2c + 2b + 5t: an epoch hour, the votes revoked in it
--
-- Returns how many members left a ranking (-1: the step was done before).

if redis.call('HSETNX', KEYS[3], ARGV[1], '1') == 0 then
  return -1
end
local c = tonumber(ARGV[2])
local gone = 0
for i = 1, c do
  local key, member = KEYS[3 + i], ARGV[1 + 2 * i]
  local score = redis.call('ZINCRBY', key, ARGV[2 + 2 * i], member)
  if tonumber(score) == 0 then
    redis.call('ZREM', key, member)
    gone = gone + 1
  end
end
local b = tonumber(ARGV[3 + 2 * c])
for i = 4 + 2 * c, 3 + 2 * c + 2 * b, 2 do
  redis.call('HINCRBY', KEYS[1], ARGV[i], -tonumber(ARGV[i + 1]))
end
local ta = 4 + 2 * c + 2 * b
local t = tonumber(ARGV[ta])
for k = 0, t - 1 do
  local a, o = ta + 5 * k, 3 + c + 3 * k
  local member = ARGV[a + 1]
  local scores, added = trend_apply(o, member, -tonumber(ARGV[a + 2]),
    -tonumber(ARGV[a + 3]), tonumber(ARGV[a + 4]), tonumber(ARGV[a + 5]), false)
  for v = 1, scores and 2 or 0 do
    if math.abs(scores[v]) <= 1e-12 * math.abs(added[v]) then
      redis.call('ZREM', KEYS[o + v], member)
      gone = gone + 1
    end
  end
end
for i = ta + 1 + 5 * t, #ARGV, 2 do
  redis.call('HINCRBY', KEYS[1], ARGV[i], -tonumber(ARGV[i + 1]))
  redis.call('HINCRBY', KEYS[2], ARGV[i], ARGV[i + 1])
end
return gone
