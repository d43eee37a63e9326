-- instances_unopen.lua: takes rooms that instances_open.lua opened back out of their
-- family's listing when the writes that opened them were refused, so a refused write
-- opens nothing. A room another write listed since (a later score) stays. The rules'
-- counts are given back by refund.lua.
--
-- KEYS[1]  the family's live instances (zset: instance -> its last write, ms)
-- ARGV[1]  the ms the rooms were opened at (their score in the listing)
-- ARGV[2 ..] the rooms
--
-- Returns how many rooms it took out.

local taken = 0
for i = 2, #ARGV do
  if redis.call('ZSCORE', KEYS[1], ARGV[i]) == ARGV[1] then
    taken = taken + redis.call('ZREM', KEYS[1], ARGV[i])
  end
end
return taken
