-- usage.lua: how much of each rate-limit rule's window is used, for the quota; ring.lua
-- comes in front.
--
-- KEYS     two per rule i = 0 .. r-1, at 2i:
--   +1 the rule's counters (hash: subject -> count), or its rolling log (zset:
--      '<count>:<tag>' -> ms)
--      or a slotted window's hash of rings (see ring.lua) of the period now
--   +2 a rolling log's running total (string); a slotted window's hash of the period
--      before; a counter repeats its own key
-- ARGV     three per rule, at 3i:
--   +1 kind: 'c' counter, 'l' rolling log or 's' slotted window
--   +2 a counter's or slotted window's field (the subject), or a log's horizon in ms
--      (entries at or before it have left the window)
--   +3 a slotted window's slot now; '' for the others
--
-- Returns {used_0, oldest_0, used_1, oldest_1, ...}: votes counted in the window, and
-- for a log the time (ms) of the oldest vote still in it (-1 for none, or a counter).
--
-- Invariant: a log's entries that have left the window are removed and subtracted from
-- its running total, as vote.lua does when it admits a vote; each entry is read once,
-- so a call costs amortised O(1) per rule, never the size of the log.

local result = {}
for i = 0, #ARGV / 3 - 1 do
  local key, total_key = KEYS[2 * i + 1], KEYS[2 * i + 2]
  local kind = ARGV[3 * i + 1]
  if kind == 'c' then
    result[#result + 1] = tonumber(redis.call('HGET', key, ARGV[3 * i + 2]) or '0')
    result[#result + 1] = -1
  elseif kind == 's' then
    local field = ARGV[3 * i + 2]
    local ring = redis.call('HGET', key, field) or redis.call('HGET', total_key, field)
    result[#result + 1] = ring_total(ring, tonumber(ARGV[3 * i + 3]))
    result[#result + 1] = -1
  else
    local horizon = ARGV[3 * i + 2]
    local total = tonumber(redis.call('GET', total_key) or '0')
    local gone = redis.call('ZRANGEBYSCORE', key, '-inf', horizon)
    if #gone > 0 then
      for _, entry in ipairs(gone) do
        total = total - tonumber(string.match(entry, '^(%d+)'))
      end
      redis.call('ZREMRANGEBYSCORE', key, '-inf', horizon)
      redis.call('SET', total_key, string.format('%d', total), 'XX', 'KEEPTTL')
    end
    local oldest = redis.call('ZRANGEBYSCORE', key, '(' .. horizon, '+inf', 'WITHSCORES',
      'LIMIT', 0, 1)
    result[#result + 1] = total
    result[#result + 1] = tonumber(oldest[2] or '-1')
  end
end
return result
