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
-- ARGV[1]  this step's name, '<revocation id>:<chunk>'
-- ARGV[2]  c, the number of changes; then per change i (1-based) at 1 + 2i, 2 + 2i: the
--          member, the units to add (negative)
-- then at 3 + 2c: b, the number of buckets whose vote counts go down; then per bucket
-- its real rankings key (as the counter's field) and the votes revoked in it
-- then pairs from 4 + 2c + 2b: an epoch hour, the votes revoked in it
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
for i = 4 + 2 * c + 2 * b, #ARGV, 2 do
  redis.call('HINCRBY', KEYS[1], ARGV[i], -tonumber(ARGV[i + 1]))
  redis.call('HINCRBY', KEYS[2], ARGV[i], ARGV[i + 1])
end
return gone
