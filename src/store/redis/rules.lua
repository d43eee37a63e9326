-- rules.lua: rate-limit rules, checked and consumed inside a write script; put in front
-- of vote.lua and score.lua.
--
-- A write script passes where its rules' keys and arguments start:
-- two KEYS per rule i = 0 .. r-1, at rule_key + 2i:
--   +1 the rule's counter: a string for calendar and campaign windows, a zset log
--      (score = write time in ms, member = '<count>:<tag>') for rolling windows
--   +2 rolling windows: the log's running total (string); else unused
-- six ARGV per rule i, at rule_arg + 6i, read once by rules_parse:
--   +1 rule id (the refusals field)
--   +2 kind: 'c' counter or 'l' rolling log
--   +3 the limit for this write
--   +4 TTL in seconds to give the counter
--   +5 counter: '1' to set the TTL on every write, '0' only when the counter is new;
--      log: the window's length in ms
--   +6 counter: when its window restarts (ms since the epoch), or -1 if it never does;
--      log: unused
-- None of them depends on the write's own time (the scripts work out the wait and a
-- log's horizon from it), so the writes of one call share them (see vote.lua).

-- What scripts use on every write, as locals: a global is a table lookup at each use.
local KEYS, ARGV, tonumber, call = KEYS, ARGV, tonumber, redis.call

-- The r rules whose arguments start at ARGV[rule_arg + 1], as a table indexed from 0 of
-- {id, counter (true for a counter, false for a log), limit, ttl (text), refresh (a
-- counter's flag), length (a log's, ms), ends (a counter's restart, ms; -1 for never)}.
local function rules_parse(rule_arg, r)
  local rules = {}
  for i = 0, r - 1 do
    local a = rule_arg + 6 * i
    local counter = ARGV[a + 2] == 'c'
    rules[i] = {id = ARGV[a + 1], counter = counter, limit = tonumber(ARGV[a + 3]),
      ttl = ARGV[a + 4], refresh = counter and ARGV[a + 5] == '1',
      length = not counter and tonumber(ARGV[a + 5]), ends = tonumber(ARGV[a + 6])}
  end
  return rules
end

-- A rolling log's horizon for a write at `at_ms`: entries at or before it have left the
-- window.
local function rule_horizon(rule, at_ms)
  return string.format('%d', at_ms - rule.length)
end

-- What every write script checks first: one MGET reads the idempotency record (the key
-- `idem_key`, when `keyed`) and every rule's count (a counter, or a rolling log's running
-- total); then every rule (`rules`, from rules_parse) is checked for `inc` more, for a
-- write at `at_ms`. A rolling log's running total may
-- still hold entries that have left the window: they are subtracted here, and dropped by
-- rules_consume when the write is admitted.
-- `also`, when given, is one more string key the same MGET reads for the caller.
-- Answers the reply to return at once — {'dup', record}, or {'limited', i, retry_ms} for
-- the rule that refuses (of those that do, the one that keeps refusing longest; retry_ms
-- is -1 for never), with the refusal counted in `refusals_key` — or else nil, used, stale,
-- also's value: what each rule has counted and whether its log holds entries that left
-- the window, for rules_consume.
-- (One function, helpers inlined: every local function is a closure the script makes
-- again on each call.)
local function write_checks(idem_key, keyed, rule_key, rules, r, inc, refusals_key,
    refusals_ttl, also, at_ms)
  local strings = {}
  if keyed then
    strings[1] = idem_key
  end
  local from = #strings
  for i = 0, r - 1 do
    local at = rule_key + 2 * i + 1
    if not rules[i].counter then
      at = at + 1
    end
    strings[from + i + 1] = KEYS[at]
  end
  if also then
    strings[from + r + 1] = also
  end
  local stored = {}
  if #strings > 0 then
    stored = call('MGET', unpack(strings))
  end
  if keyed and stored[1] then
    return {'dup', stored[1]}
  end
  local used, stale = {}, {}
  local refused, refused_retry = -1, 0
  for i = 0, r - 1 do
    local rule = rules[i]
    local limit = rule.limit
    local value = stored[from + i + 1]
    value = value and tonumber(value) or 0
    local retry
    if rule.counter then
      used[i] = value
      if value + inc > limit then
        retry = rule.ends < 0 and -1 or rule.ends - at_ms
      end
    else
      local key = KEYS[rule_key + 2 * i + 1]
      local horizon = rule_horizon(rule, at_ms)
      local total = value
      local gone = call('ZRANGEBYSCORE', key, '-inf', horizon)
      for _, entry in ipairs(gone) do
        total = total - tonumber(string.match(entry, '^(%d+)'))
      end
      used[i] = total
      stale[i] = #gone > 0
      if total + inc > limit then
        -- The write fits once enough of the oldest entries have left the window; each
        -- entry holds at least one, so at most `need` entries are read.
        local need = total + inc - limit
        local live = call('ZRANGEBYSCORE', key, '(' .. horizon, '+inf', 'WITHSCORES',
          'LIMIT', 0, need)
        local freed = 0
        retry = -1
        for j = 1, #live, 2 do
          freed = freed + tonumber(string.match(live[j], '^(%d+)'))
          if freed >= need then
            retry = tonumber(live[j + 1]) - tonumber(horizon)
            break
          end
        end
      end
    end
    -- Of the rules that refuse, keep the one whose wait is longest (-1: forever).
    if retry and (refused < 0
        or (refused_retry ~= -1 and (retry == -1 or retry > refused_retry))) then
      refused, refused_retry = i, retry
    end
  end
  if refused >= 0 then
    call('HINCRBY', refusals_key, rules[refused].id, '1')
    call('EXPIRE', refusals_key, refusals_ttl)
    return {'limited', refused, refused_retry}
  end
  return nil, used, stale, also and stored[from + r + 1]
end

-- Consumes `inc` (also given as the string `inc_text`) of every rule; a log's entry is
-- stamped `at_ms` (a number) and named by `tag`. A count is formatted only where it is set
-- whole.
local function rules_consume(rule_key, rules, r, used, stale, inc, inc_text, at_ms, tag)
  for i = 0, r - 1 do
    local key = KEYS[rule_key + 2 * i + 1]
    local rule = rules[i]
    local ttl = rule.ttl
    if rule.counter then
      if used[i] == 0 then
        call('SET', key, inc_text, 'EX', ttl)
      elseif rule.refresh then
        call('SET', key, string.format('%d', used[i] + inc), 'EX', ttl)
      else
        call('INCRBY', key, inc_text)
      end
    else
      if stale[i] then
        call('ZREMRANGEBYSCORE', key, '-inf', rule_horizon(rule, at_ms))
      end
      call('ZADD', key, string.format('%d', at_ms), inc_text .. ':' .. tag)
      call('EXPIRE', key, ttl)
      call('SET', KEYS[rule_key + 2 * i + 2], string.format('%d', used[i] + inc), 'EX',
        ttl)
    end
  end
end

