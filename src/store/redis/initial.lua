-- initial.lua: bring members' initial votes on the all-time display board to given values.
--
-- KEYS[1]  all-time display scores (zset)
-- KEYS[2]  initial votes already applied (hash: member -> millionths)
-- KEYS[3]  the board's headroom mark (see vote.lua), removed when a score moves: the
--          next vote that needs it looks again
-- ARGV[1]  the largest allowed score (2^53 units)
-- ARGV[2]  'apply', or 'check' to check the bound and write nothing
-- ARGV     then pairs: member id, target initial votes in millionths (0 removes the record)
--
-- Each member's score moves by target minus what was applied before, so running the
-- same call twice changes nothing: a retry after a lost reply is safe.
-- Returns {'ok', members whose score moved}, or {'overflow', member} when a score would
-- pass ARGV[1]; then nothing changed.
--
-- Invariant: every member is checked before the first write.

local max_units = tonumber(ARGV[1])
local moves = {}
for i = 3, #ARGV, 2 do
  local member, target = ARGV[i], tonumber(ARGV[i + 1])
  local applied = tonumber(redis.call('HGET', KEYS[2], member) or '0')
  local delta = target - applied
  if delta > 0 then
    local score = tonumber(redis.call('ZSCORE', KEYS[1], member) or '0')
    if score + delta > max_units then
      return {'overflow', member}
    end
  end
  moves[#moves + 1] = {member, target, delta}
end
if ARGV[2] == 'check' then
  return {'ok', 0}
end

local moved = 0
for _, move in ipairs(moves) do
  local member, target, delta = move[1], move[2], move[3]
  if delta ~= 0 then
    if moved == 0 then
      redis.call('DEL', KEYS[3])
    end
    redis.call('ZINCRBY', KEYS[1], string.format('%d', delta), member)
    moved = moved + 1
  end
  if target == 0 then
    redis.call('HDEL', KEYS[2], member)
  else
    redis.call('HSET', KEYS[2], member, string.format('%d', target))
  end
end
return {'ok', moved}
