-- voter_union.lua: the union of HyperLogLogs, some in this slot and some passed in as
-- values (read from other slots: a sharded board's shards), without leaving a key.
-- A cluster forbids a PFCOUNT over keys of several slots; this copies the values into
-- one slot instead.
--
-- KEYS[1]  a scratch key for the union
-- KEYS[2]  a scratch key for one passed value
-- KEYS[3…] HyperLogLogs in this slot (missing ones count as empty)
-- ARGV[1]  "count" (answer the union's cardinality) or "value" (answer its bytes)
-- ARGV[2…] HyperLogLog values, as GET answers them
--
-- Both scratch keys are gone when the script returns.

local union, copy = KEYS[1], KEYS[2]
redis.call('DEL', union)
redis.call('PFADD', union)
if #KEYS > 2 then
  redis.call('PFMERGE', union, unpack(KEYS, 3))
end
for i = 2, #ARGV do
  redis.call('SET', copy, ARGV[i])
  redis.call('PFMERGE', union, copy)
end
local answer
if ARGV[1] == 'count' then
  answer = redis.call('PFCOUNT', union)
else
  answer = redis.call('GET', union)
end
redis.call('DEL', union, copy)
return answer
