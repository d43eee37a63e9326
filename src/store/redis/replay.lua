-- replay.lua: re-apply one batch of ledger entries to a board Redis lost (it came back
-- empty), exactly once: the batch applies only when the rebuild has reached `from`, and
-- moves it to `to` in the same step, so instances rebuilding together, or one cut off
-- half-way, never count an entry twice.
--
-- KEYS[1]  the rebuild's progress (hash: until -> last seq to replay, done -> replayed)
-- KEYS[2]  votes counter (hash: epoch hour -> votes, real rankings key -> votes in the
--          bucket; see vote.lua)
-- then one ranking (zset) per score change, then one HyperLogLog per voter set, then
-- three keys per trending change: the period's real and display scores and its origin
-- (see trend.lua)
-- ARGV[1]  from: the seq the rebuild must be at
-- ARGV[2]  to: the last seq of this batch
-- ARGV[3]  s, the score changes; then per change: member, units to add
-- then h, the voter sets; then per set: n, then n voters
-- then t, the trending changes; then five per change: the member, the real and display
-- units to add, each weighted by 2^((at − ref)/H) over the entries' times `at`, ref (ms)
-- and H (the half-life, ms), weighed against the period's origin by trend_apply.lua (a
-- period Redis lost starts again from ref)
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
local t = tonumber(ARGV[a + 1])
for k = 0, t - 1 do
  local at = a + 1 + 5 * k
  trend_apply(2 + s + h + 3 * k, ARGV[at + 1], tonumber(ARGV[at + 2]),
    tonumber(ARGV[at + 3]), tonumber(ARGV[at + 4]), tonumber(ARGV[at + 5]), true)
end
a = a + 1 + 5 * t
for i = a + 1, #ARGV, 2 do
  redis.call('HINCRBY', KEYS[2], ARGV[i], ARGV[i + 1])
end
redis.call('HSET', KEYS[1], 'done', ARGV[2])
return 1
