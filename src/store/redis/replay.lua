-- replay.lua: re-apply one batch of ledger entries to a board Redis lost (it came back
-- empty), exactly once: the batch applies only when the rebuild has reached `from`, and
-- moves it to `to` in the same step, so instances rebuilding together, or one cut off
-- half-way, never count an entry twice.
--
-- KEYS[1]  the rebuild's progress (hash: until -> last seq to replay, done -> replayed)
-- KEYS[2]  votes counter (hash: epoch hour -> votes, real rankings key -> votes in the
--          bucket; see vote.lua)
-- then one ranking (zset) per score change, then one HyperLogLog per voter set
-- ARGV[1]  from: the seq the rebuild must be at
-- ARGV[2]  to: the last seq of this batch
-- ARGV[3]  s, the score changes; then per change: member, units to add
-- then h, the voter sets; then per set: n, then n voters
-- then pairs: an epoch hour or a bucket's real rankings key, the votes it gains
--
-- Returns 1 when applied, 0 when the rebuild is elsewhere (nothing changed).

if redis.call('HGET', KEYS[1], 'done') ~= ARGV[1] then
  return 0
end
local a = 3
local s = tonumber(ARGV[a])
for i = 1, s do
  redis.call('ZINCRBY', KEYS[2 + i], ARGV[a + 2 * i], ARGV[a + 2 * i - 1])
end
a = a + 2 * s + 1
local h = tonumber(ARGV[a])
for i = 1, h do
  local n = tonumber(ARGV[a + 1])
  redis.call('PFADD', KEYS[2 + s + i], unpack(ARGV, a + 2, a + 1 + n))
  a = a + 1 + n
end
for i = a + 1, #ARGV, 2 do
  redis.call('HINCRBY', KEYS[2], ARGV[i], ARGV[i + 1])
end
redis.call('HSET', KEYS[1], 'done', ARGV[2])
return 1
