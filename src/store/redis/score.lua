-- score.lua: apply one score write (incr, decr, set, best) to a member of a scores board,
-- atomically: the rate-limit rules are checked and consumed, and every enabled period's
-- bucket, every rolling window and trending period, participants, the hourly counter and
-- the idempotency record change together, or nothing changes. window.lua, rules.lua,
-- trend.lua and instance.lua come in front of this file.
--
-- Layouts: `full` keeps one sorted set per bucket. `top_n` keeps every member's exact
-- score in a hash and the best members in the sorted set: a member enters it when no
-- member is outside it, or with a score at least the set's lowest; past `trim_at`
-- members the set is cut back to the best `retain`. So every member outside the set
-- scores at most the set's lowest, and a kept member's rank (1 + members with a strictly
-- higher score) is exact from the set alone. A sharded board runs this script on the
-- member's shard, with the `full` layout.
--
-- KEYS[1]  idempotency record (string; any key of the board when ARGV[5] is 0)
-- KEYS[2]  writes-per-hour counter (hash: epoch hour -> writes)
-- KEYS[3]  refusals of the write's hour (hash: rule id -> refused writes)
-- KEYS[4]  late writes (hash: epoch hour -> writes, 'g:<ranking key>' -> '1'; see
--          vote.lua)
-- then two keys per enabled period p = 0 .. n-1, at 4 + 2p:
--   +1 ranking of the bucket (zset)
--   +2 exact scores of the bucket (hash; top_n only, else any key, unused)
-- then two keys per voter bucket v = 0 .. h-1, at 4 + 2n + 2v (see vote.lua):
--   +1 the bucket's distinct voters (HyperLogLog)
--   +2 the member's distinct voters in it (HyperLogLog)
-- then two keys per rule i = 0 .. r-1, at 4 + 2n + 2h + 2i (see rules.lua)
-- then the ledger of the board (or of the shard; list of entries, oldest first)
-- then 13 keys per rolling window k = 0 .. w-1 (see window.lua; `full` boards only), from
-- 6 + 2n + 2h + 2r + 13k
-- then 3 keys per trending period k = 0 .. t-1 (see trend.lua; `full` boards only), from
-- 6 + 2n + 2h + 2r + 13w + 3k
--
-- ARGV[1]  member id
-- ARGV[2]  op: 'incr', 'decr', 'set' or 'best'
-- ARGV[3]  value in units (a non-negative integer)
-- ARGV[4]  voter id, or ''
-- ARGV[5]  idempotency record TTL in seconds, or 0 when the write has no key
-- ARGV[6]  receipt: text stored with the scores so a replay can answer the same
-- ARGV[7]  writes-per-hour field (hours since the epoch), or '' to count nothing (a
--          sharded board's reserve step)
-- ARGV[8]  n, the number of enabled periods
-- ARGV[9]  the largest allowed magnitude of a score (2^53)
-- ARGV[10] the write's time, ms since the epoch
-- ARGV[11] a tag unique to this write, naming its entries in rolling logs
-- ARGV[12] TTL in seconds of the refusals hash
-- ARGV[13] r, the number of rules (each counts 1 per write)
-- ARGV[14] top_n: retain; 0 for the full layout
-- ARGV[15] top_n: trim_at
-- ARGV[16] h, the number of voter buckets
-- ARGV[17] '0', or when the write is late (its time passed a while ago) one character
--          per period: 'a' for `all`, else '1'. A late write holds the keys it writes
--          and marks rankings it found gone, as a late vote does (see vote.lua)
-- ARGV[18] a family instance's TTL in ms: every key the write touches expires that long
--          after it (see instance.lua); '0' on a plain board
-- ARGV[19] the write's ledger entry (domain::ledger::Entry as JSON), or '' when the
--          board keeps no ledger (and in a reserve step): appended when the write counts
-- then six per rule i, at 19 + 6i (see rules.lua)
-- then one per rule i, at 19 + 6r + 1 + i: its counter's field (see rules.lua)
-- then w, the number of rolling windows, at 20 + 7r, and five per window k after it, as
-- vote.lua takes them (slots, clock's slot, the write's slot, drain budget, the slots'
-- TTL on a family instance). Only `incr` and `decr` reach a board with windows: a window
-- adds up the writes within it.
-- then t, the number of trending periods, at 21 + 7r + 5w, and two per period after it
-- (see trend.lua); likewise only `incr` and `decr` reach them, adding the value (less
-- for `decr`) to both of the period's views.
--
-- Returns 'advance' when a window is out of its keys' reach, having changed nothing (see
-- vote.lua); otherwise one of
--   {'ok', score_0, score_1, ...}    the member's new score per period (decimal strings),
--                                    then its total in each rolling window
--   {'dup', receipt_and_scores}      the first answer for this key
--   {'limited', i, retry_ms}         rule i refused (see vote.lua)
--   {'overflow'}                     a score would pass ARGV[9] in magnitude
--   {'lowers'}                       top_n: the write would lower a kept score
--
-- Invariant: every check comes before the first write, so a refused write changes no
-- score and no rule counter; a rate-limit refusal writes only its refusals counter.

local member = ARGV[1]
local op = ARGV[2]
local value = tonumber(ARGV[3])
local voter = ARGV[4]
local idem_ttl = tonumber(ARGV[5])
local n = tonumber(ARGV[8])
local max_units = tonumber(ARGV[9])
local r = tonumber(ARGV[13])
local retain = tonumber(ARGV[14])
local trim_at = tonumber(ARGV[15])
local top_n = retain > 0
local h = tonumber(ARGV[16])
local voter_key = 4 + 2 * n
local rule_key = voter_key + 2 * h
local rule_arg = 19

local rules = rules_parse(rule_arg, r)
local field_arg = rule_arg + 6 * r
local at_ms = tonumber(ARGV[10])

local windows = {}
local wa = field_arg + r + 1
for k = 1, tonumber(ARGV[wa]) do
  local a = wa + 5 * (k - 1)
  windows[k] = {o = rule_key + 2 * r + 1 + 13 * (k - 1), slots = tonumber(ARGV[a + 1]),
    cur = tonumber(ARGV[a + 2]), at = tonumber(ARGV[a + 3]), budget = tonumber(ARGV[a + 4]),
    ring_ttl = ARGV[a + 5]}
  if not window_ready(windows[k]) then
    return 'advance'
  end
end
local trends = {}
local ta = wa + 5 * #windows + 1
for k = 1, tonumber(ARGV[ta]) do
  trends[k] = trend_parse(rule_key + 2 * r + 1 + 13 * #windows + 3 * (k - 1),
    ta + 2 * (k - 1))
end

local hashes = counters_want(rule_key, rules, r, field_arg)
counters_read()
-- The trending periods' origins are read with the idempotency record and rolling totals.
local also = trend_also(trends, nil)
local early, used, stale, stored, also_at = write_checks(KEYS[1], idem_ttl > 0, rule_key,
  rules, r, 1, KEYS[3], ARGV[12], also, at_ms, hashes, field_arg)
if early then
  return early
end
trend_found(also, stored, also_at, 0)

-- The new score in every bucket, checked before anything is written.
local new, changed = {}, {}
for p = 0, n - 1 do
  local base = 4 + 2 * p
  local old
  if top_n then
    old = redis.call('HGET', KEYS[base + 2], member)
  else
    old = redis.call('ZSCORE', KEYS[base + 1], member)
  end
  local before = tonumber(old or '0')
  local after
  -- incr and decr are checked before adding: past 2^53 a double no longer tells n + 1
  -- from n.
  if op == 'incr' then
    if value > max_units - before then
      return {'overflow'}
    end
    after = before + value
  elseif op == 'decr' then
    if value > max_units + before then
      return {'overflow'}
    end
    after = before - value
  elseif op == 'set' then
    after = value
  else
    after = math.max(before, value)
  end
  if math.abs(after) > max_units then
    return {'overflow'}
  end
  if top_n and old and after < before then
    return {'lowers'}
  end
  new[p] = after
  changed[p] = (not old) or after ~= before
end
local delta = op == 'decr' and -value or value
for _, win in ipairs(windows) do
  if not window_fits(win, member, delta, max_units) then
    return {'overflow'}
  end
end

rules_consume(rule_key, rules, r, used, stale, 1, '1', at_ms, ARGV[11], hashes, field_arg, 1)
counters_write()

local late = ARGV[17] ~= '0'
if late then
  for p = 0, n - 1 do
    local ranking = KEYS[4 + 2 * p + 1]
    -- 97 is 'a'.
    if string.byte(ARGV[17], p + 1) ~= 97 and redis.call('EXISTS', ranking) == 0 then
      redis.call('HSET', KEYS[4], 'g:' .. ranking, '1')
    end
  end
end

-- top_n: puts the member's new score in the ranking when it belongs there, and trims the
-- ranking back to `retain` once it passes `trim_at`.
local function keep(ranking, exact, score)
  if not redis.call('ZSCORE', ranking, member) then
    local card = redis.call('ZCARD', ranking)
    -- Members outside the ranking, besides this one (already in the hash).
    if redis.call('HLEN', exact) - card - 1 > 0 then
      local lowest = redis.call('ZRANGE', ranking, 0, 0, 'WITHSCORES')
      if #lowest == 0 or tonumber(lowest[2]) > score then
        return
      end
    end
    redis.call('ZADD', ranking, score, member)
    if card + 1 > trim_at then
      redis.call('ZREMRANGEBYRANK', ranking, 0, card - retain)
    end
    return
  end
  redis.call('ZADD', ranking, score, member)
end

local result = {'ok'}
for p = 0, n - 1 do
  local base = 4 + 2 * p
  local text = string.format('%d', new[p])
  if changed[p] then
    if top_n then
      redis.call('HSET', KEYS[base + 2], member, text)
      keep(KEYS[base + 1], KEYS[base + 2], new[p])
    else
      redis.call('ZADD', KEYS[base + 1], text, member)
    end
  end
  result[#result + 1] = text
end
local delta_text = string.format('%d', delta)
for _, win in ipairs(windows) do
  result[#result + 1] = window_add(win, member, delta_text, delta_text, voter, ARGV[18])[1]
end
for _, tr in ipairs(trends) do
  trend_add(tr, 1, member, delta, delta, at_ms, ARGV[18], false)
end
if voter ~= '' then
  for v = 0, h - 1 do
    redis.call('PFADD', KEYS[voter_key + 2 * v + 1], voter)
    redis.call('PFADD', KEYS[voter_key + 2 * v + 2], voter)
  end
end
if ARGV[7] ~= '' then
  redis.call('HINCRBY', KEYS[2], ARGV[7], '1')
  if late then
    redis.call('HINCRBY', KEYS[4], ARGV[7], '1')
  end
end
if late then
  for k = 5, (voter ~= '' and voter_key + 2 * h) or voter_key do
    redis.call('PERSIST', KEYS[k])
  end
end

if ARGV[19] ~= '' then
  redis.call('RPUSH', KEYS[rule_key + 2 * r + 1], ARGV[19])
end
if idem_ttl > 0 then
  local scores = {}
  for i = 2, #result do
    scores[#scores + 1] = result[i]
  end
  redis.call('SET', KEYS[1], ARGV[6] .. '|' .. table.concat(scores, ','), 'EX', idem_ttl)
end
if ARGV[18] ~= '0' then
  instance_expire(1, rule_key + 2 * r, idem_ttl > 0, rule_key, r, ARGV[18], {})
end
return result
