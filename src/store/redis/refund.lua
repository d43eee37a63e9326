-- refund.lua: give back what a reserve step consumed of each rule (score.rs, vote.rs),
-- when the write it reserved for was refused or replayed. Counters that expired
-- meanwhile are left alone, so a refund never makes one up. ring.lua comes in front.
--
-- KEYS: two per rule i = 0 .. r-1, at 2i (see rules.lua): the counters or log, and the
--       log's running total
-- ARGV: three per rule i, at 3i:
--   +1 rule i's kind: 'c' counter, 'l' rolling log or 's' a watch's slotted window
--   +2 a counter's or slotted window's field (the subject); '' for a log
--   +3 a slotted window's slot of the write (see ring.lua); '' for the others
-- then the write's count (1 for a score write, a vote's count), and last the write's tag
-- (its log entries are '<count>:<tag>')
--
-- Returns the number of rules given back to.

local r = (#ARGV - 2) / 3
local count, tag = ARGV[#ARGV - 1], ARGV[#ARGV]
local given = 0
for i = 0, r - 1 do
  local key, kind, field = KEYS[2 * i + 1], ARGV[3 * i + 1], ARGV[3 * i + 2]
  if kind == 'c' then
    if redis.call('HEXISTS', key, field) == 1 then
      redis.call('HINCRBY', key, field, '-' .. count)
      given = given + 1
    end
  elseif kind == 's' then
    local ring = redis.call('HGET', key, field)
    ring = ring and ring_take(ring, tonumber(ARGV[3 * i + 3]), tonumber(count))
    if ring then
      redis.call('HSET', key, field, ring)
      given = given + 1
    end
  elseif redis.call('ZREM', key, count .. ':' .. tag) == 1 then
    if redis.call('EXISTS', KEYS[2 * i + 2]) == 1 then
      redis.call('DECRBY', KEYS[2 * i + 2], count)
    end
    given = given + 1
  end
end
return given
