-- league_advance.lua: start the league's next season, once, whoever asks: season n
-- stops taking scores and joins, and season n + 1 takes joins at once; it takes scores
-- when n's close is done (league_open.lua). The league's first season starts open.
--
-- KEYS[1]  the league's season record (hash):
--            n          the current season's number
--            state      'open' (takes scores) or 'waiting' (the previous season's close
--                       is not done: joins only)
--            ends       when the current season ends, ms since the epoch
--            size, tiers, rewards        what the current season runs with (bracket
--                       size; tiers and rewards as JSON, ratios in thousandths)
--            prev_size, prev_tiers, prev_rewards, prev_ends   the same of season n - 1
--            settled    the last season whose close is done
--
-- ARGV[1]  the season the caller saw current (0: none yet)
-- ARGV[2]  when the next season ends, ms since the epoch
-- ARGV[3]  its bracket size
-- ARGV[4]  its tiers (JSON)
-- ARGV[5]  its rewards (JSON)
-- ARGV[6]  the number the season takes when the league has none in Redis (1 for a new
--          league; a restore after Redis lost its data takes SQL's latest)
-- ARGV[7]  when season n stopped, ms since the epoch (its end, or earlier when closed
--          by hand): kept as prev_ends
--
-- Returns the current season's number after the call: the one this call started, or
-- whatever another caller made current.

local n = tonumber(redis.call('HGET', KEYS[1], 'n') or '0')
if n ~= tonumber(ARGV[1]) then
  return n
end
local state, next = 'open', tonumber(ARGV[6])
if n > 0 then
  local cur = redis.call('HMGET', KEYS[1], 'ends', 'size', 'tiers', 'rewards')
  redis.call('HSET', KEYS[1], 'prev_ends', math.min(tonumber(cur[1]), tonumber(ARGV[7])),
    'prev_size', cur[2], 'prev_tiers', cur[3], 'prev_rewards', cur[4])
  state, next = 'waiting', n + 1
end
redis.call('HSET', KEYS[1], 'n', next, 'state', state, 'ends', ARGV[2], 'size', ARGV[3],
  'tiers', ARGV[4], 'rewards', ARGV[5])
return next
