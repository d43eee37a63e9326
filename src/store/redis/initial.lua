-- initial.lua: bring members' initial votes on the all-time display board to given values.
--
-- KEYS[1]  all-time display scores (zset)
-- KEYS[2]  initial votes already applied (hash: member -> millionths)
-- ARGV     pairs: member id, target initial votes in millionths (0 removes the record)
--
-- Each member's score moves by target minus what was applied before, so running the
-- same call twice changes nothing: a retry after a lost reply is safe.
-- Returns the number of members whose score moved.

local moved = 0
for i = 1, #ARGV, 2 do
  local member, target = ARGV[i], tonumber(ARGV[i + 1])
  local applied = tonumber(redis.call('HGET', KEYS[2], member) or '0')
  if target ~= applied then
    redis.call('ZINCRBY', KEYS[1], target - applied, member)
    moved = moved + 1
  end
  if target == 0 then
    redis.call('HDEL', KEYS[2], member)
  else
    redis.call('HSET', KEYS[2], member, target)
  end
end
return moved
