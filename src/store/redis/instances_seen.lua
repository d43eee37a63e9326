-- instances_seen.lua: notes that instances of one family were written, in the family's
-- own slot; run after their write scripts succeeded.
--
-- KEYS[1]  the family's live instances (zset: instance -> its last write, ms)
-- KEYS[2]  a sharded family's last refresh of each instance's shards (zset: instance ->
--          ms); any key of the family otherwise
-- KEYS[3]  the instances whose ledgers hold entries not yet in SQL (zset: instance -> ms
--          the oldest was noted)
-- ARGV[1]  now, ms since the epoch
-- ARGV[2]  the instances' TTL in ms: entries older than now - TTL have expired and are
--          trimmed from both sets
-- ARGV[3]  how often a sharded instance's shards are refreshed, in ms; 0 for a family
--          that is not sharded
-- ARGV[4]  d: the first d instances written appended ledger entries
-- ARGV[5 ..] the instances written
--
-- Returns the instances whose shards are due for a refresh (each write touches only its
-- member's shard: the others' keys would expire while the instance is live); their
-- refresh is recorded now.

local now = tonumber(ARGV[1])
local cutoff = now - tonumber(ARGV[2])
local every = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', cutoff)
if every > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', cutoff)
end
local d = tonumber(ARGV[4])
local due = {}
for i = 5, #ARGV do
  local instance = ARGV[i]
  redis.call('ZADD', KEYS[1], 'GT', now, instance)
  if i - 4 <= d then
    -- LT: an instance already noted keeps the time its oldest entry was noted.
    redis.call('ZADD', KEYS[3], 'LT', now, instance)
  end
  if every > 0 then
    local last = redis.call('ZSCORE', KEYS[2], instance)
    if not last or now - tonumber(last) >= every then
      redis.call('ZADD', KEYS[2], now, instance)
      due[#due + 1] = instance
    end
  end
end
return due
