-- rules.lua: rate-limit rules, checked and consumed inside a write script; put in front
-- of vote.lua and score.lua.
--
-- A write script passes where its rules' keys and arguments start:
-- two KEYS per rule i = 0 .. r-1, at rule_key + 2i:
--   +1 the rule's counter: a string for calendar and campaign windows, a zset log
--      (score = write time in ms, member = '<count>:<tag>') for rolling windows
--   +2 rolling windows: the log's running total (string); else unused
-- six ARGV per rule i, at rule_arg + 6i:
--   +1 rule id (the refusals field)
--   +2 kind: 'c' counter or 'l' rolling log
--   +3 the limit for this write
--   +4 TTL in seconds to give the counter
--   +5 counter: '1' to set the TTL on every write, '0' only when the counter is new;
--      log: the horizon in ms (entries at or before it have left the window)
--   +6 counter: ms from the write until its window restarts, or -1 if it never does;
--      log: unused

-- Appends to `strings` the key each rule keeps its count in (a counter, or a log's
-- running total), so the caller reads them all with one MGET.
local function rules_strings(rule_key, rule_arg, r, strings)
  for i = 0, r - 1 do
    local at = rule_key + 2 * i + 1
    if ARGV[rule_arg + 6 * i + 2] == 'l' then
      at = at + 1
    end
    strings[#strings + 1] = KEYS[at]
  end
end

local function entry_count(entry)
  return tonumber(string.match(entry, '^(%d+)'))
end

-- Whether waiting `a` ms is longer than waiting `b` ms; -1 means forever.
local function longer(a, b)
  if b == -1 then
    return false
  end
  return a == -1 or a > b
end

-- Reads every rule's count (stored[from + i + 1] is rule i's string) and answers
-- (used, stale, refused, retry): what each rule has counted, whether its log holds
-- entries that left the window, and the rule that refuses `inc` more (of those that do,
-- the one that keeps refusing longest; -1 when all admit) with its retry in ms.
local function rules_check(rule_key, rule_arg, r, stored, from, inc)
  local used, stale = {}, {}
  local refused, refused_retry = -1, 0
  for i = 0, r - 1 do
    local key = KEYS[rule_key + 2 * i + 1]
    local a = rule_arg + 6 * i
    local limit = tonumber(ARGV[a + 3])
    local retry
    local value = tonumber(stored[from + i + 1] or '0')
    if ARGV[a + 2] == 'c' then
      used[i] = value
      retry = tonumber(ARGV[a + 6])
    else
      -- The running total still holds entries that have left the window: subtract them
      -- here, and drop them when the write is admitted.
      local total = value
      local gone = redis.call('ZRANGEBYSCORE', key, '-inf', ARGV[a + 5])
      for _, entry in ipairs(gone) do
        total = total - entry_count(entry)
      end
      used[i] = total
      stale[i] = #gone > 0
      if total + inc > limit then
        -- The write fits once enough of the oldest entries have left the window; each
        -- entry holds at least one, so at most `need` entries are read.
        local need = total + inc - limit
        local live = redis.call('ZRANGEBYSCORE', key, '(' .. ARGV[a + 5], '+inf',
          'WITHSCORES', 'LIMIT', 0, need)
        local freed = 0
        retry = -1
        for j = 1, #live, 2 do
          freed = freed + entry_count(live[j])
          if freed >= need then
            retry = tonumber(live[j + 1]) - tonumber(ARGV[a + 5])
            break
          end
        end
      end
    end
    if used[i] + inc > limit and (refused < 0 or longer(retry, refused_retry)) then
      refused, refused_retry = i, retry
    end
  end
  return used, stale, refused, refused_retry
end

-- Counts a refusal by rule `refused` in the hour's refusals hash.
local function rules_refuse(refusals_key, rule_arg, refused, ttl)
  redis.call('HINCRBY', refusals_key, ARGV[rule_arg + 6 * refused + 1], '1')
  redis.call('EXPIRE', refusals_key, ttl)
end

-- Consumes `inc` (also given as the string `inc_text`) of every rule; a log's entry is
-- stamped `at_ms` and named by `tag`.
local function rules_consume(rule_key, rule_arg, r, used, stale, inc, inc_text, at_ms, tag)
  for i = 0, r - 1 do
    local key = KEYS[rule_key + 2 * i + 1]
    local a = rule_arg + 6 * i
    local ttl = ARGV[a + 4]
    local after = string.format('%d', used[i] + inc)
    if ARGV[a + 2] == 'c' then
      if used[i] == 0 or ARGV[a + 5] == '1' then
        redis.call('SET', key, after, 'EX', ttl)
      else
        redis.call('INCRBY', key, inc_text)
      end
    else
      if stale[i] then
        redis.call('ZREMRANGEBYSCORE', key, '-inf', ARGV[a + 5])
      end
      redis.call('ZADD', key, at_ms, inc_text .. ':' .. tag)
      redis.call('EXPIRE', key, ttl)
      redis.call('SET', KEYS[rule_key + 2 * i + 2], after, 'EX', ttl)
    end
  end
end

-- What every write script checks first: one MGET reads the idempotency record (the key
-- `idem_key`, when idem_ttl > 0) and every rule's count; then the rules are checked for
-- `inc` more.
-- Answers the reply to return at once — {'dup', record}, or {'limited', i, retry_ms}
-- with the refusal counted in `refusals_key` — or else nil, used, stale for
-- rules_consume.
local function write_checks(idem_key, idem_ttl, rule_key, rule_arg, r, inc, refusals_key,
    refusals_ttl)
  local strings = {}
  if idem_ttl > 0 then
    strings[1] = idem_key
  end
  local string_at = #strings
  rules_strings(rule_key, rule_arg, r, strings)
  local stored = {}
  if #strings > 0 then
    stored = redis.call('MGET', unpack(strings))
  end
  if idem_ttl > 0 and stored[1] then
    return {'dup', stored[1]}
  end
  local used, stale, refused, retry = rules_check(rule_key, rule_arg, r, stored, string_at, inc)
  if refused >= 0 then
    rules_refuse(refusals_key, rule_arg, refused, refusals_ttl)
    return {'limited', refused, retry}
  end
  return nil, used, stale
end
