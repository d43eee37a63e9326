-- refund.lua: give back what a reserve step consumed of each rule (score.rs, vote.rs),
-- when the write it reserved for was refused or replayed. Counters that expired
-- meanwhile are left alone, so a refund never makes one up.
--
-- KEYS: two per rule i = 0 .. r-1, at 2i (see rules.lua): the counters or log, and the
--       log's running total
-- ARGV: two per rule i, at 2i:
--   +1 rule i's kind: 'c' counter or 'l' rolling log
--   +2 a counter's field (the subject); '' for a log
-- then the write's count (1 for a score write, a vote's count), and last the write's tag
-- (its log entries are '<count>:<tag>')
--
-- Returns the number of rules given back to.

local r = (#ARGV - 2) / 2
local count, tag = ARGV[#ARGV - 1], ARGV[#ARGV]
local given = 0
for i = 0, r - 1 do
  local key = KEYS[2 * i + 1]
  if ARGV[2 * i + 1] == 'c' then
    local field = ARGV[2 * i + 2]
    if redis.call('HEXISTS', key, field) == 1 then
      redis.call('HINCRBY', key, field, '-' .. count)
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
