-- league_open.lua: the last step of a season's close, once: the rewards it gave wait for
-- their players' next join, and the current season takes scores.
--
-- KEYS[1]  the league's season record (hash; see league_advance.lua)
-- KEYS[2]  rewards waiting for delivery (hash: player -> JSON list; see league_join.lua)
-- KEYS[3]  the joiners of season m (hash: player -> the caller that first joined them)
--
-- ARGV[1]  m, the season whose close is done (the current one is m + 1)
-- then pairs: player, JSON list of the reward names they won in m
--
-- Each reward waits held for the caller that joined the player in m: only a join
-- through that caller (or, once its key is revoked, through any key the league admits)
-- takes it.
--
-- Returns 1 when this call settled m, 0 when it was settled before.
--
-- Invariant: a season's rewards are handed to the waiting list once, even when the
-- close runs this step again after a crash; rewards still waiting from an earlier
-- season are kept (appended to).

local m = tonumber(ARGV[1])
if tonumber(redis.call('HGET', KEYS[1], 'settled') or '0') >= m then
  return 0
end
for i = 2, #ARGV, 2 do
  local waiting = redis.call('HGET', KEYS[2], ARGV[i])
  local list = waiting and cjson.decode(waiting) or {}
  local key = redis.call('HGET', KEYS[3], ARGV[i]) or nil
  for _, r in ipairs(cjson.decode(ARGV[i + 1])) do
    list[#list + 1] = {reward = r, season = m, key = key}
  end
  redis.call('HSET', KEYS[2], ARGV[i], cjson.encode(list))
end
redis.call('HSET', KEYS[1], 'settled', m)
if tonumber(redis.call('HGET', KEYS[1], 'n')) == m + 1 then
  redis.call('HSET', KEYS[1], 'state', 'open')
end
return 1
