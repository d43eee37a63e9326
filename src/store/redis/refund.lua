-- refund.lua: give back one count of each rule a reserve step consumed (score.rs), when
-- the write it reserved for was refused or replayed. Counters that expired meanwhile are
-- left alone, so a refund never makes one up.
--
-- KEYS: two per rule i = 0 .. r-1, at 2i (see rules.lua): the counter or log, and the
--       log's running total
-- ARGV[1 + i]  rule i's kind: 'c' counter or 'l' rolling log
-- ARGV[r + 1]  the write's tag (its log entries are '1:<tag>')
--
-- Returns the number of counts given back.

local r = #ARGV - 1
local tag = ARGV[r + 1]
local given = 0
for i = 0, r - 1 do
  local key = KEYS[2 * i + 1]
  if ARGV[i + 1] == 'c' then
    if redis.call('EXISTS', key) == 1 then
      redis.call('DECRBY', key, '1')
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
