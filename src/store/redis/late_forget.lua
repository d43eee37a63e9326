-- late_forget.lua: forgets late-write counts of hours the archive no longer needs, each
-- only while it still holds the count the archive read, so a late write counted
-- meanwhile keeps its hour.
--
-- KEYS[1]  late writes of one slot (hash: epoch hour -> writes; see vote.lua)
-- ARGV     pairs: epoch hour, the count read
--
-- Returns the number of hours forgotten.

local forgotten = 0
for i = 1, #ARGV, 2 do
  if redis.call('HGET', KEYS[1], ARGV[i]) == ARGV[i + 1] then
    redis.call('HDEL', KEYS[1], ARGV[i])
    forgotten = forgotten + 1
  end
end
return forgotten
