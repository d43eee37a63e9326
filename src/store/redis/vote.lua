-- vote.lua: cast votes on one board, each atomically and in order: the rate-limit rules
-- are checked and consumed, and every enabled period's bucket in both views, carry-over
-- into each next bucket, every rolling window, participants, the hourly counter and the
-- idempotency record change together, or nothing changes. Each vote passes or fails on
-- its own and sees the votes before it in the call (group commit: one call applies the
-- votes that were in flight together, see store/redis/group_commit.rs). window.lua and
-- rules.lua come in front of this file.
--
-- ARGV[1] m, the number of votes. Then each vote in turn: its number of KEYS and of ARGV,
-- then its ARGV; its KEYS follow the previous votes' KEYS. Within a vote, its own KEYS[i]
-- and ARGV[i] are these:
--
-- KEYS[1]  idempotency record (string; any key of the board when ARGV[6] is 0)
-- KEYS[2]  votes-per-hour counter (hash: epoch hour -> votes)
-- KEYS[3]  refusals of the vote's hour (hash: rule id -> refused votes)
-- KEYS[4]  late votes (hash: epoch hour -> votes counted after their time had passed;
--          the archive task archives their closed buckets again)
-- then three keys per enabled period p = 0 .. n-1, at 4 + 3p:
--   +1 real scores of the vote's bucket        (zset)
--   +2 display scores of the vote's bucket     (zset)
--   +3 display scores of the next bucket       (zset; carry-over target, ignored for `all`)
-- then two keys per voter bucket v = 0 .. h-1 (the hour, day and all-time buckets the
-- vote counts voters in; a week's and a month's voters are their days'), at 4 + 3n + 2v:
--   +1 the bucket's distinct voters             (HyperLogLog)
--   +2 the member's distinct voters in it       (HyperLogLog)
-- then two keys per rule i = 0 .. r-1, at 4 + 3n + 2h + 2i (see rules.lua)
-- then 3 + 5s keys per rolling window of s slots (see window.lua), one after another
--
-- ARGV[1]  member id
-- ARGV[2]  real increment (votes; also what each rule counts)
-- ARGV[3]  display increment (millionths)
-- ARGV[4]  carry-over increment (millionths; 0 = none)
-- ARGV[5]  voter id, or '' when the vote names none
-- ARGV[6]  idempotency record TTL in seconds, or 0 when the vote has no key
-- ARGV[7]  receipt: text stored with the scores so a replay can answer the same
-- ARGV[8]  votes-per-hour field (hours since the epoch)
-- ARGV[9]  n, the number of enabled periods
-- ARGV[10] the largest allowed score (2^53)
-- ARGV[11] index (0-based) of the `all` period among the n, or -1 when `all` is off
-- ARGV[12] the vote's time, ms since the epoch
-- ARGV[13] a tag unique to this vote, naming its entries in rolling logs
-- ARGV[14] TTL in seconds of the refusals hash
-- ARGV[15] r, the number of rules
-- ARGV[16] h, the number of voter buckets
-- ARGV[17] '1' when the vote is late (its time passed a while ago), else '0'
-- ARGV[17 + 1 + p] '1' when period p carries over into its next bucket, else '0'
-- then six per rule i, at 17 + n + 6i (see rules.lua; a rule counts the real increment)
-- then at 17 + n + 6r + 1: w, the number of rolling windows, and four per window k at
-- 17 + n + 6r + 1 + 4k:
--   +1 s, its slots
--   +2 the clock's slot (now)
--   +3 the vote's slot (its time)
--   +4 the most drained members this call subtracts from the window's totals
--
-- Returns an array of each vote's reply, in order; a vote's reply is one of
--   {'ok', real_0, display_0, real_1, display_1, ...}  new scores, as decimal strings:
--                              the n periods', then each rolling window's totals
--   {'dup', receipt_and_scores}                        the first answer for this key
--   {'limited', i, retry_ms}   rule i (0-based) refused: of the rules that refuse, the
--                              one that keeps refusing longest; retry_ms is -1 for never
--   {'overflow'}                                        a score would pass ARGV[10]
--   an error, when a command of the vote failed (the others still run)
--
-- Increments go to redis.call as the strings in ARGV: a Lua number is formatted with
-- printf('%.14g') on every call, which cost several percent of the script's time.
--
-- Invariant: every check comes before the first write, so a refused vote changes no
-- score and no rule counter; a rate-limit refusal writes only its refusals counter.

local function exceeds(key, member, inc, max_units)
  local current = tonumber(redis.call('ZSCORE', key, member) or '0')
  return current + inc > max_units
end

-- Casts the vote whose own KEYS[i] is KEYS[kb + i] and own ARGV[i] is ARGV[ab + i].
local function cast(kb, ab)
  local member = ARGV[ab + 1]
  local real_inc = tonumber(ARGV[ab + 2])
  local display_inc = tonumber(ARGV[ab + 3])
  local carry_inc = tonumber(ARGV[ab + 4])
  local voter = ARGV[ab + 5]
  local idem_ttl = tonumber(ARGV[ab + 6])
  local n = tonumber(ARGV[ab + 9])
  local max_units = tonumber(ARGV[ab + 10])
  local all_index = tonumber(ARGV[ab + 11])
  local r = tonumber(ARGV[ab + 15])
  local h = tonumber(ARGV[ab + 16])
  local period_key = kb + 4
  local voter_key = period_key + 3 * n
  local rule_key = voter_key + 2 * h
  local rule_arg = ab + 17 + n
  local window_arg = rule_arg + 6 * r
  local w = tonumber(ARGV[window_arg + 1] or '0')

  -- The idempotency record, then the rate-limit rules: every counter is read first and
  -- consumed only when all of them admit.
  local early, used, stale = write_checks(KEYS[kb + 1], idem_ttl, rule_key, rule_arg, r,
    real_inc, KEYS[kb + 3], ARGV[ab + 14])
  if early then
    return early
  end

  -- Every bucket's score is at most the all-time score of the same view (each unit of a
  -- bucket comes from a vote that added at least as much to all-time), so when `all` is
  -- on checking it bounds them all; otherwise every target is checked.
  for p = 0, n - 1 do
    if all_index < 0 or p == all_index then
      local base = period_key + 3 * p
      if exceeds(KEYS[base + 1], member, real_inc, max_units)
          or exceeds(KEYS[base + 2], member, display_inc, max_units) then
        return {'overflow'}
      end
      if all_index < 0 and carry_inc > 0
          and exceeds(KEYS[base + 3], member, carry_inc, max_units) then
        return {'overflow'}
      end
    end
  end

  -- Rolling windows hold only votes that all-time holds too; without `all`, their totals
  -- are checked as they stand (before expired slots leave them, so never too leniently).
  if all_index < 0 then
    local o = rule_key + 2 * r
    for i = 0, w - 1 do
      if exceeds(KEYS[o + 2], member, real_inc, max_units)
          or exceeds(KEYS[o + 3], member, display_inc, max_units) then
        return {'overflow'}
      end
      o = o + 3 + 5 * tonumber(ARGV[window_arg + 2 + 4 * i])
    end
  end

  rules_consume(rule_key, rule_arg, r, used, stale, real_inc, ARGV[ab + 2], ARGV[ab + 12],
    ARGV[ab + 13])

  local result = {'ok'}
  for p = 0, n - 1 do
    local base = period_key + 3 * p
    result[#result + 1] = redis.call('ZINCRBY', KEYS[base + 1], ARGV[ab + 2], member)
    result[#result + 1] = redis.call('ZINCRBY', KEYS[base + 2], ARGV[ab + 3], member)
    if carry_inc > 0 and ARGV[ab + 17 + 1 + p] == '1' then
      redis.call('ZINCRBY', KEYS[base + 3], ARGV[ab + 4], member)
    end
  end
  if voter ~= '' then
    for v = 0, h - 1 do
      redis.call('PFADD', KEYS[voter_key + 2 * v + 1], voter)
      redis.call('PFADD', KEYS[voter_key + 2 * v + 2], voter)
    end
  end
  local o = rule_key + 2 * r
  for i = 0, w - 1 do
    local at = window_arg + 1 + 4 * i
    local slots = tonumber(ARGV[at + 1])
    local totals = window_add(o, slots, tonumber(ARGV[at + 2]), tonumber(ARGV[at + 3]),
      tonumber(ARGV[at + 4]), member, ARGV[ab + 2], ARGV[ab + 3], voter)
    result[#result + 1] = totals[1]
    result[#result + 1] = totals[2]
    o = o + 3 + 5 * slots
  end
  redis.call('HINCRBY', KEYS[kb + 2], ARGV[ab + 8], ARGV[ab + 2])
  if ARGV[ab + 17] == '1' then
    redis.call('HINCRBY', KEYS[kb + 4], ARGV[ab + 8], ARGV[ab + 2])
  end

  if idem_ttl > 0 then
    local scores = {}
    for i = 2, #result do
      scores[#scores + 1] = result[i]
    end
    redis.call('SET', KEYS[kb + 1], ARGV[ab + 7] .. '|' .. table.concat(scores, ','), 'EX',
      idem_ttl)
  end
  return result
end

local replies = {}
local kb, at = 0, 1
for j = 1, tonumber(ARGV[1]) do
  local keys, args = tonumber(ARGV[at + 1]), tonumber(ARGV[at + 2])
  local ok, reply = pcall(cast, kb, at + 2)
  if not ok then
    -- A command's error comes as a table with its message; Lua's own as a string.
    reply = redis.error_reply(type(reply) == 'table' and reply.err or tostring(reply))
  end
  replies[j] = reply
  kb, at = kb + keys, at + 2 + args
end
return replies
