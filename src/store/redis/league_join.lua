-- league_join.lua: a player joins the league's current season, atomically: a new player
-- gets the next place in a bracket of their tier (a counter per tier: bracket =
-- ceil(count / size)), so concurrent joins never overfill a bracket or put a player in
-- two; a player already in the season keeps their place. Either way the profile given
-- replaces the cached one and rewards waiting for the player are handed over (once).
--
-- A returning player's tier is what the previous season gave them: while that season's
-- keys are here, computed from its final standings exactly as its close computes it
-- (they are frozen: no score is taken once a season is over), else the tier the last
-- close settled (KEYS[2]); a new player starts in the lowest tier.
--
-- KEYS[1]  the league's season record (hash; see league_advance.lua)
-- KEYS[2]  settled tiers (hash: player -> tier index for their next season)
-- KEYS[3]  rewards waiting for delivery (hash: player -> JSON list of rewards)
-- KEYS[4]  the players of season n (hash: player -> '<tier>:<bracket>:<member>')
-- KEYS[5]  the counts of season n (hash: tier index -> players; 'seq' -> joins)
-- KEYS[6]  the profiles of season n (hash: player -> profile JSON)
-- KEYS[7]  the players of season n - 1 (hash, as KEYS[4])
--
-- ARGV[1]  n, the season the caller expects to be current
-- ARGV[2]  player id
-- ARGV[3]  profile JSON, or '' to keep the cached one
-- ARGV[4]  now, ms since the epoch
-- ARGV[5]  the key prefix of season n's brackets (+ '<tier>:<bracket>': a sorted set
--          in the league's slot)
-- ARGV[6]  the same prefix for season n - 1
--
-- A bracket's member is the inverted join sequence, zero-padded to 15 digits, then the
-- player id: on equal scores the sorted set's reverse order puts the earlier join first.
--
-- Returns one of
--   {'ok', tier, bracket, rank0, score, rewards}  rewards: a JSON list, or ''
--   {'stale', n}   the current season is n: call again with it
--   {'none'}       the league has no season in Redis (new, or Redis lost it)
--   {'ended'}      season n is over and the next has not started: the caller starts it
--
-- Invariant: a player is in at most one bracket of a season; brackets of a tier fill in
-- join order, each to exactly `size` before the next one opens.

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

local function bracket_key(prefix, tier, number)
  return prefix .. tier .. ':' .. number
end

local entry = redis.call('HGET', KEYS[4], player)
local tier, number, member
if entry then
  tier, number, member = string.match(entry, '^(%d+):(%d+):(.*)$')
else
  local tiers = cjson.decode(season[4])
  local prev = redis.call('HGET', KEYS[7], player)
  if prev then
    local t, k, m = string.match(prev, '^(%d+):(%d+):(.*)$')
    t = tonumber(t)
    local key = bracket_key(ARGV[6], t, k)
    local players = redis.call('ZCARD', key)
    local rank = redis.call('ZREVRANK', key, m)
    local ratios = cjson.decode(season[5])[t + 1]
    if rank and ratios then
      rank = rank + 1
      local up = math.floor(players * ratios.promote / 1000)
      local down = math.floor(players * ratios.demote / 1000)
      if rank <= up then
        t = t + 1
      elseif rank > players - down then
        t = t - 1
      end
    end
    tier = t
  else
    tier = tonumber(redis.call('HGET', KEYS[2], player) or '0')
  end
  if tier > #tiers - 1 then
    tier = #tiers - 1
  end
  local seq = redis.call('HINCRBY', KEYS[5], 'seq', 1)
  local count = redis.call('HINCRBY', KEYS[5], tier, 1)
  number = math.floor((count - 1) / tonumber(season[3])) + 1
  member = string.format('%015d', 999999999999999 - seq) .. player
  redis.call('HSET', KEYS[4], player, tier .. ':' .. number .. ':' .. member)
  redis.call('ZADD', bracket_key(ARGV[5], tier, number), 0, member)
end
if ARGV[3] ~= '' then
  redis.call('HSET', KEYS[6], player, ARGV[3])
end
local rewards = redis.call('HGET', KEYS[3], player)
if rewards then
  redis.call('HDEL', KEYS[3], player)
end
local key = bracket_key(ARGV[5], tier, number)
return {'ok', tonumber(tier), tonumber(number), redis.call('ZREVRANK', key, member),
  redis.call('ZSCORE', key, member), rewards or ''}
