-- league_join.lua: a player joins the league's current season, atomically: a new player
-- gets the next place in a bracket of their tier (a counter per tier: bracket =
-- ceil(count / size)), so concurrent joins never overfill a bracket or put a player in
-- two; a player already in the season keeps their place. Either way the profile given
-- replaces the cached one, and the rewards waiting for the player that this caller may
-- take are handed over (once).
--
-- A returning player's tier is what the previous season gave them: while that season's
-- keys are here, computed from its final standings exactly as its close computes it
-- (they are frozen: no score is taken once a season is over), else the tier the last
-- close settled (KEYS[2]); a new player starts in the lowest tier.
--
-- Every key the script touches is in KEYS (Redis Cluster refuses a key that is not
-- while a slot moves). The brackets a join needs depend on what the script reads, so
-- the caller names the ones it expects (ARGV[7], ARGV[8]); when the script needs
-- others it answers 'place' before writing anything, and the caller calls again with
-- them.
--
-- KEYS[1]  the league's season record (hash; see league_advance.lua)
-- KEYS[2]  settled tiers (hash: player -> tier index for their next season)
-- KEYS[3]  rewards waiting for delivery (hash: player -> JSON list of
--          {"reward", "season", "key"}: what season `season` gave, held for `key`, the
--          caller that joined the player in that season)
-- KEYS[4]  the players of season n (hash: player -> '<tier>:<bracket>:<member>')
-- KEYS[5]  the counts of season n (hash: tier index -> players; 'seq' -> joins)
-- KEYS[6]  the profiles of season n (hash: player -> profile JSON)
-- KEYS[7]  the players of season n - 1 (hash, as KEYS[4])
-- KEYS[8]  the joiners of season n (hash: player -> the caller that first joined them)
-- KEYS[9]  the bracket of season n named by ARGV[7] (any key of the league when '')
-- KEYS[10] the bracket of season n - 1 named by ARGV[8] (any key of the league when '')
--
-- ARGV[1]  n, the season the caller expects to be current
-- ARGV[2]  player id
-- ARGV[3]  profile JSON, or '' to keep the cached one
-- ARGV[4]  now, ms since the epoch
-- ARGV[5]  the caller's id (`master`, `key:<id>`)
-- ARGV[6]  JSON list of further callers whose held rewards this join may take (their
--          keys are revoked), or ''
-- ARGV[7]  '<tier>:<bracket>' the caller expects the player in, or ''
-- ARGV[8]  '<tier>:<bracket>' the caller expects the player was in last season, or ''
--
-- A bracket's member is the inverted join sequence, zero-padded to 15 digits, then the
-- player id: on equal scores the sorted set's reverse order puts the earlier join first.
--
-- Returns one of
--   {'ok', tier, bracket, rank0, score, handed, held}  handed: JSON list of
--        {"reward", "season"} handed over now, or ''; held: JSON list of the callers
--        other rewards of the player wait for, or ''
--   {'place', tier, bracket, prev_tier, prev_bracket}  call again naming these brackets
--        (-1: not needed)
--   {'stale', n}   the current season is n: call again with it
--   {'none'}       the league has no season in Redis (new, or Redis lost it)
--   {'ended'}      season n is over and the next has not started: the caller starts it
--
-- Invariant: a player is in at most one bracket of a season; brackets of a tier fill in
-- join order, each to exactly `size` before the next one opens; a reward is handed to
-- the caller that played the season that won it (or whom ARGV[6] names), once.

local season = redis.call('HMGET', KEYS[1], 'n', 'ends', 'size', 'tiers', 'prev_tiers')
if not season[1] then
  return {'none'}
end
if season[1] ~= ARGV[1] then
  return {'stale', tonumber(season[1])}
end
if tonumber(ARGV[4]) >= tonumber(season[2]) then
  return {'ended'}
end
local player = ARGV[2]

local entry = redis.call('HGET', KEYS[4], player)
local tier, number, member
local prev_tier, prev_number = -1, -1
if entry then
  local t, k
  t, k, member = string.match(entry, '^(%d+):(%d+):(.*)$')
  tier, number = tonumber(t), tonumber(k)
else
  local tiers = cjson.decode(season[4])
  local prev = redis.call('HGET', KEYS[7], player)
  if prev then
    local t, k, m = string.match(prev, '^(%d+):(%d+):(.*)$')
    prev_tier, prev_number = tonumber(t), tonumber(k)
    if ARGV[8] ~= t .. ':' .. k then
      return {'place', -1, -1, prev_tier, prev_number}
    end
    local players = redis.call('ZCARD', KEYS[10])
    local rank = redis.call('ZREVRANK', KEYS[10], m)
    local ratios = cjson.decode(season[5])[prev_tier + 1]
    tier = prev_tier
    if rank and ratios then
      rank = rank + 1
      local up = math.floor(players * ratios.promote / 1000)
      local down = math.floor(players * ratios.demote / 1000)
      if rank <= up then
        tier = tier + 1
      elseif rank > players - down then
        tier = tier - 1
      end
    end
  else
    tier = tonumber(redis.call('HGET', KEYS[2], player) or '0')
  end
  if tier > #tiers - 1 then
    tier = #tiers - 1
  end
  local count = tonumber(redis.call('HGET', KEYS[5], tier) or '0')
  number = math.floor(count / tonumber(season[3])) + 1
end
if ARGV[7] ~= tier .. ':' .. number then
  return {'place', tier, number, prev_tier, prev_number}
end

if not entry then
  local seq = redis.call('HINCRBY', KEYS[5], 'seq', 1)
  redis.call('HINCRBY', KEYS[5], tier, 1)
  member = string.format('%015d', 999999999999999 - seq) .. player
  redis.call('HSET', KEYS[4], player, tier .. ':' .. number .. ':' .. member)
  redis.call('ZADD', KEYS[9], 0, member)
end
redis.call('HSETNX', KEYS[8], player, ARGV[5])
if ARGV[3] ~= '' then
  redis.call('HSET', KEYS[6], player, ARGV[3])
end

local handed, held = '', ''
local waiting = redis.call('HGET', KEYS[3], player)
if waiting then
  local may = {[ARGV[5]] = true}
  if ARGV[6] ~= '' then
    for _, caller in ipairs(cjson.decode(ARGV[6])) do
      may[caller] = true
    end
  end
  local give, keep, holders, seen = {}, {}, {}, {}
  for _, r in ipairs(cjson.decode(waiting)) do
    if type(r) == 'string' then
      r = {reward = r}
    end
    if r.key == nil or may[r.key] then
      give[#give + 1] = {reward = r.reward, season = r.season}
    else
      keep[#keep + 1] = r
      if not seen[r.key] then
        seen[r.key] = true
        holders[#holders + 1] = r.key
      end
    end
  end
  if #keep == 0 then
    redis.call('HDEL', KEYS[3], player)
  elseif #give > 0 then
    redis.call('HSET', KEYS[3], player, cjson.encode(keep))
  end
  if #give > 0 then
    handed = cjson.encode(give)
  end
  if #holders > 0 then
    held = cjson.encode(holders)
  end
end
return {'ok', tier, number, redis.call('ZREVRANK', KEYS[9], member),
  redis.call('ZSCORE', KEYS[9], member), handed, held}
