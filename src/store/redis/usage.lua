-- usage.lua: how much of each rate-limit rule's window is used, for the quota.
--
-- KEYS     two per rule i = 0 .. r-1, at 2i:
--   +1 the rule's counters (hash: subject -> count), or its rolling log (zset:
--      '<count>:<tag>' -> ms)
--   +2 a rolling log's running total (string); a counter repeats its own key
-- ARGV     two per rule, at 2i:
--   +1 kind: 'c' counter or 'l' rolling log
--   +2 a counter's field (the subject), or a log's horizon in ms (entries at or before
--      it have left the window)
--
-- Returns {used_0, oldest_0, used_1, oldest_1, ...}: votes counted in the window, and
-- for a log the time (ms) of the oldest vote still in it (-1 for none, or a counter).
--
-- Invariant: a log's entries that have left the window are removed and subtracted from
-- its running total, as vote.lua does when it admits a vote; each entry is read once,
-- so a call costs amortised O(1) per rule, never the size of the log.

local result = {}
for i = 0, #ARGV / 2 - 1 do
  local key, total_key = KEYS[2 * i + 1], KEYS[2 * i + 2]
  local kind = ARGV[2 * i + 1]
  if kind == 'c' then
    result[#result + 1] = tonumber(redis.call('HGET', key, ARGV[2 * i + 2]) or '0')
    result[#result + 1] = -1
  else
    local horizon = ARGV[2 * i + 2]
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
