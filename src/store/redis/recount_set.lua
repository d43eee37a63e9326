-- recount_set.lua: set one member's score in one ranking to what the ledger recounted,
-- only if it is still what the recount read (a vote that counted since then moved it,
-- and the recount looks again rather than lose that vote).
--
-- KEYS[1]  the ranking (zset)
-- ARGV[1]  member id
-- ARGV[2]  the score the recount read, in units, or '' when the member was absent
-- ARGV[3]  the recounted score in units; '0' removes the member
--
-- Returns 1 when it was set, 0 when the score had moved (nothing changed).

local now = redis.call('ZSCORE', KEYS[1], ARGV[1])
if (now and string.format('%d', tonumber(now)) or '') ~= ARGV[2] then
  return 0
end
if ARGV[3] == '0' then
  redis.call('ZREM', KEYS[1], ARGV[1])
else
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
end
return 1
