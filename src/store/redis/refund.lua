-- refund.lua: give back one count of each rule a reserve step consumed (score.rs), when
-- the write it reserved for was refused or replayed. Counters that expired meanwhile are
-- left alone, so a refund never makes one up.
--
-- KEYS: two per rule i = 0 .. r-1, at 2i (see rules.lua): the counters or log, and the
--       log's running total
-- ARGV: two per rule i, at 2i:
--   +1 rule i's kind: 'c' counter or 'l' rolling log
--   +2 a counter's field (the subject); '' for a log
-- and last the write's tag (its log entries are '1:<tag>')
--
-- Returns the number of counts given back.

local r = (#ARGV - 1) / 2
local tag = ARGV[#ARGV]
local given = 0
for i = 0, r - 1 do
  local key = KEYS[2 * i + 1]
  if ARGV[2 * i + 1] == 'c' then
    local field = ARGV[2 * i + 2]
    if redis.call('HEXISTS', key, field) == 1 then
      redis.call('HINCRBY', key, field, '-1')
      given = given + 1
    end
  elseif redis.call('ZREM', key, '1:' .. tag) == 1 then
    if redis.call('EXISTS', KEYS[2 * i + 2]) == 1 then
      redis.call('DECRBY', KEYS[2 * i + 2], '1')
    end
    given = given + 1
  end
end
return given
