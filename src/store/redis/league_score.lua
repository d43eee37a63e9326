-- league_score.lua: change a player's score in their bracket of the current season —
-- add a (possibly negative) whole number of points, set it, or keep the higher of it and
-- a value — atomically with the idempotency record.
-- rules.lua comes in front of this file.
--
-- KEYS[1]  idempotency record (string; any key of the league when ARGV[5] is 0)
-- KEYS[2]  the league's season record (hash; see league_advance.lua)
-- KEYS[3]  the players of season n (hash: player -> '<tier>:<bracket>:<member>')
-- KEYS[4]  refusals of the write's hour (hash: limit id -> refused writes)
-- KEYS[5]  the player's bracket named by ARGV[7] (any key of the league when '')
-- then two keys per score limit i = 0 .. r-1, at 5 + 2i (see rules.lua)
--
-- ARGV[1]  n, the season the caller expects to be current
-- ARGV[2]  player id
-- ARGV[3]  the change: 'incr:<n>', 'set:<n>' or 'best:<n>', n an integer with
--          |n| <= ARGV[8]
-- ARGV[4]  now, ms since the epoch
-- ARGV[5]  idempotency record TTL in seconds, or 0 when the write has no key
-- ARGV[6]  the request's fingerprint (stored with the answer)
-- ARGV[7]  '<tier>:<bracket>': where the caller expects the player, or ''
--          (every key the script touches is in KEYS: a player's bracket is known only
--          once read, so a caller that expects another one is told where it is)
-- ARGV[8]  the largest allowed magnitude of a score (2^53 - 1)
-- ARGV[9]  r, the number of score limits (each counts 1 per write)
-- ARGV[10] TTL in seconds of the refusals hash
-- ARGV[11] a tag unique to this write, naming its entries in rolling logs
-- then six per limit i, at 11 + 6i (see rules.lua)
-- then one per limit i, at 11 + 6r + 1 + i: its counter's field (see rules.lua)
--
-- Returns one of
--   {'ok', tier, bracket, rank0, score}
--   {'dup', '<fingerprint>|<tier>|<bracket>|<rank0>|<score>'}  the first answer
--   {'limited', i, retry_ms}   limit i refused (see vote.lua)
--   {'stale', n}     the current season is n: call again with it
--   {'none'}         the league has no season in Redis
--   {'closing'}      season n is over, or the previous season's close is not done
--   {'not_joined'}   the player has not joined season n
--   {'place', tier, bracket}   the player's bracket: call again naming it
--   {'overflow'}     the score would pass ARGV[8] in magnitude (incr)
--
-- Invariant: every check comes before the first write, so a refused write changes no
-- score and no limit's count (a limit's refusal writes only its refusals counter). Scores are whole numbers below 2^53, so
-- the sorted set's doubles hold them exactly; the score is returned as Redis prints it
-- (Lua's own number printing keeps only 14 digits).

local idem_ttl = tonumber(ARGV[5])
local r = tonumber(ARGV[9])
local rules = rules_parse(11, r)
local field_arg = 11 + 6 * r
local now = tonumber(ARGV[4])
local hashes = counters_want(5, rules, r, field_arg)
counters_read()
local early, used, stale = write_checks(KEYS[1], idem_ttl > 0, 5, rules, r, 1, KEYS[4], ARGV[10],
  nil, now, hashes, field_arg)
if early then
  return early
end
local season = redis.call('HMGET', KEYS[2], 'n', 'ends', 'state')
if not season[1] then
  return {'none'}
end
if season[1] ~= ARGV[1] then
  return {'stale', tonumber(season[1])}
end
if season[3] ~= 'open' or now >= tonumber(season[2]) then
  return {'closing'}
end
local entry = redis.call('HGET', KEYS[3], ARGV[2])
if not entry then
  return {'not_joined'}
end
local tier, number, member = string.match(entry, '^(%d+):(%d+):(.*)$')
if ARGV[7] ~= tier .. ':' .. number then
  return {'place', tonumber(tier), tonumber(number)}
end
local key = KEYS[5]
local op, value = string.match(ARGV[3], '^(%a+):(-?%d+)$')
local current = tonumber(redis.call('ZSCORE', key, member) or '0')
local max = tonumber(ARGV[8])
if op == 'incr' and math.abs(current + tonumber(value)) > max then
  return {'overflow'}
end
local score
if op == 'incr' then
  score = redis.call('ZINCRBY', key, value, member)
elseif op == 'set' or tonumber(value) > current then
  redis.call('ZADD', key, value, member)
  score = redis.call('ZSCORE', key, member)
else
  score = redis.call('ZSCORE', key, member)
end
rules_consume(5, rules, r, used, stale, 1, '1', now, ARGV[11], hashes, field_arg, 1)
counters_write()
local rank = redis.call('ZREVRANK', key, member)
if idem_ttl > 0 then
  redis.call('SET', KEYS[1], table.concat({ARGV[6], tier, number, rank, score}, '|'),
    'EX', idem_ttl)
end
return {'ok', tonumber(tier), tonumber(number), rank, score}
