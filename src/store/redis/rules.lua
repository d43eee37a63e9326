-- rules.lua: rate-limit rules, checked and consumed inside a write script; put in front
-- of vote.lua, score.lua and league_score.lua, with ring.lua in front of it.
--
-- A write script passes where its rules' keys and arguments start:
-- two KEYS per rule i = 0 .. r-1, at rule_key + 2i:
--   +1 the rule's counters: a hash (subject -> count) per calendar window and one for
--      the campaign; a zset log (score = write time in ms, member = '<count>:<tag>') of
--      one subject for rolling windows; a watch's rolling window, the hash (subject ->
--      ring, see ring.lua) of the window-long period of the write's time
--   +2 rolling windows: the log's running total (string); a watch's rolling window, the
--      hash of the period before; else unused
-- six ARGV per rule i, at rule_arg + 6i, read once by rules_parse:
--   +1 rule id (the refusals field)
--   +2 kind: 'c' counter or 'l' rolling log; a watch's 'wc' counter or 'ws' rolling
--      window in slots (vote.lua only: a watch counts as a rule does, and past its
--      limit, its threshold, it holds the vote instead of refusing it)
--   +3 the limit for this write
--   +4 TTL in seconds to give the counters (or the log)
--   +5 a log's or a slotted window's length in ms; a counter: unused (0)
--   +6 counter: when its window restarts (ms since the epoch), or -1 if it never does;
--      log: unused
-- None of them depends on the write's own time (the scripts work out the wait and a
-- log's horizon from it), so the writes of one call share them (see vote.lua); and one
-- ARGV per rule of the write's own, at field_arg + 1 + i: a counter's field (the
-- write's subject), '' for a rule's log.
--
-- A call reads each counter it needs once, before its writes (counters_want, then
-- counters_read: one HMGET per hash), keeps the counts its writes consume in `counters`
-- (each write sees the ones before it), and writes them once after them (counters_write:
-- one HSET and one EXPIRE per hash). A hash's TTL is set on every call that writes it:
-- a calendar window's ends a little after the window, the campaign's moves with each
-- write.
--
-- Every counter hash holds the field MARK with a value longer than 64 bytes, Redis's
-- default `hash-max-listpack-value`, so Redis keeps it as a hash table: a small hash is
-- otherwise a listpack (up to `hash-max-listpack-entries`, 512 by default in Redis 7.0)
-- whose every HMGET and HSET scans its fields one by one, and a window's few hundred
-- subjects (the /24 networks of a TV final's audience) cost a vote more there than all
-- its rules' other work (bench/notes/2026-11-29-watch-cost.md). The first HMGET of a
-- hash in a call asks for the mark too; a call that writes a hash without it adds it.
-- A subject is length-prefixed (it starts with a digit, or is empty), so no subject is
-- MARK.

-- What scripts use on every write, as locals: a global is a table lookup at each use.
local KEYS, ARGV, tonumber, call = KEYS, ARGV, tonumber, redis.call

-- Whole number `n` as decimal text, formatted once per call: string.format runs C's
-- sprintf, and a call's counts and increments repeat
-- (bench/notes/2026-11-29-vote-cpu.md).
local int_texts = {}
local function int_text(n)
  local text = int_texts[n]
  if not text then
    text = string.format('%d', n)
    int_texts[n] = text
  end
  return text
end

-- Decimal text `text` as a number, parsed once per call: tonumber runs glibc's strtod,
-- about a thousand instructions, and a call's increments repeat from vote to vote.
local numbers = {}
local function num(text)
  local n = numbers[text]
  if not n then
    n = tonumber(text)
    numbers[text] = n
  end
  return n
end

-- What write_checks answers as the strings it read when it reads none (never written).
local NOTHING = {}

-- A counter hash's mark and its value (see above).
local MARK = '~'
local MARK_VALUE = 'a value longer than hash-max-listpack-value keeps this hash a hash table'

-- The r rules whose arguments start at ARGV[rule_arg + 1], as a table indexed from 0 of
-- {id, counter (true for a counter or a slotted window, false for a log), watch (true
-- for a watch), limit, ttl, length (a log's, ms), width (a slotted window's slots, ms;
-- else false), ends (a counter's restart, ms; -1 for never)}; `logs` says whether any
-- rule is a log.
local function rules_parse(rule_arg, r)
  local rules = {logs = false}
  for i = 0, r - 1 do
    local a = rule_arg + 6 * i
    local kind = ARGV[a + 2]
    local slotted = kind == 'ws'
    local counter = slotted or kind == 'c' or kind == 'wc'
    rules[i] = {id = ARGV[a + 1], counter = counter, watch = #kind == 2,
      limit = tonumber(ARGV[a + 3]),
      ttl = tonumber(ARGV[a + 4]), length = not counter and tonumber(ARGV[a + 5]),
      width = slotted and tonumber(ARGV[a + 5]) / RING,
      ends = tonumber(ARGV[a + 6])}
    rules.logs = rules.logs or not counter
  end
  return rules
end

-- A rolling log's horizon for a write at `at_ms`: entries at or before it have left the
-- window.
local function rule_horizon(rule, at_ms)
  return string.format('%d', at_ms - rule.length)
end

-- The call's counter hashes, by key: {fields = every field wanted, in the order first
-- wanted, unread = the index in it of the first not read yet, count = field -> count
-- (false until read; a ring's text, or false for none, in a slotted window's hash),
-- read = field -> count as last read or written, ttl = the longest TTL a write asked
-- for, writes = the writes that moved them since the last write, failed = the read's
-- error, rings = whether it holds rings, before = a slotted window's hash of the period
-- before, marked = whether it holds MARK, once read}; `keys` in the order first wanted.
local counters = {keys = {}, of = {}}

-- The call's counter hash `key`, wanted for the first time here.
local function counters_of(key, rings)
  local c = counters.of[key]
  if not c then
    c = {fields = {}, unread = 1, count = {}, read = {}, ttl = 0, writes = {}, rings = rings}
    counters.of[key] = c
    counters.keys[#counters.keys + 1] = key
  end
  return c
end

-- Wants `field` of hash `c`.
local function counters_field(c, field)
  if c.count[field] == nil then
    local fields = c.fields
    c.count[field], fields[#fields + 1] = false, field
  end
end

-- A write's counters (its rule i's field at ARGV[field_arg + 1 + i]) are read before the
-- checks. Answers the write's hashes, what write_checks and rules_consume take with
-- field_arg: rule i's hash (as in `counters`) at i, found once (nothing for a log).
-- `hashes`, when given, is the table answered for an earlier write whose rules' keys
-- are the same (a vote.lua header's votes): its hashes are found once for all of them.
local function counters_want(rule_key, rules, r, field_arg, hashes)
  hashes = hashes or {}
  for i = 0, r - 1 do
    local rule = rules[i]
    if rule.counter then
      local c = hashes[i]
      if not c then
        c = counters_of(KEYS[rule_key + 2 * i + 1], rule.width and true)
        if rule.width then
          c.before = KEYS[rule_key + 2 * i + 2]
        end
        hashes[i] = c
      end
      local field = ARGV[field_arg + 1 + i]
      -- counters_field, inlined: it runs for every write and rule.
      local count = c.count
      if count[field] == nil then
        local fields = c.fields
        count[field], fields[#fields + 1] = false, field
      end
    end
  end
  return hashes
end

-- Reads every counter wanted: one HMGET per hash. A ring its period's hash lacks is
-- wanted from the hash of the period before, read in turn. A hash that cannot be read
-- fails the writes that check it (write_checks raises its error), not the others.
local function counters_read()
  local unread = true
  while unread do
    unread = false
    for _, key in ipairs(counters.keys) do
      local c = counters.of[key]
      local fields, from = c.fields, c.unread
      if #fields >= from then
        -- The first read of the hash asks whether it holds MARK, in front.
        local first = from == 1 and 1 or 0
        local ok, got
        if first == 1 then
          ok, got = pcall(call, 'HMGET', key, MARK, unpack(fields))
        else
          ok, got = pcall(call, 'HMGET', key, unpack(fields, from))
        end
        if ok then
          local count, read, rings = c.count, c.read, c.rings
          if first == 1 then
            c.marked = got[1] and true or false
          end
          for k = from, #fields do
            local value = got[k - from + 1 + first]
            if rings then
              value = value or false
              if not value and c.before then
                counters_field(counters_of(c.before, true), fields[k])
                unread = true
              end
            else
              value = value and tonumber(value) or 0
            end
            count[fields[k]], read[fields[k]] = value, value
          end
        else
          c.failed = got
        end
        c.unread = #fields + 1
      end
    end
  end
end

-- The ring of `field` in slotted window hash `c` as the call has it: its own, or the
-- period before's.
local function counters_ring(c, field)
  local text = c.count[field]
  if not text and c.before then
    local before = counters.of[c.before]
    text = before and before.count[field] or false
  end
  return text
end

-- Writes every count the call's writes moved: one HSET and one EXPIRE per hash. When one
-- fails, `failed(writes, err)` is told which writes moved it (without `failed`, the error
-- is raised).
local function counters_write(failed)
  for _, key in ipairs(counters.keys) do
    local c = counters.of[key]
    if #c.writes > 0 then
      local pairs_, count, read = {}, c.count, c.read
      for _, field in ipairs(c.fields) do
        local value = count[field]
        if value ~= read[field] then
          pairs_[#pairs_ + 1] = field
          pairs_[#pairs_ + 1] = c.rings and value or int_text(value)
          read[field] = value
        end
      end
      if #pairs_ > 0 and not c.marked then
        local n = #pairs_
        pairs_[n + 1], pairs_[n + 2] = MARK, MARK_VALUE
        c.marked = true
      end
      local ok, err = pcall(function()
        if #pairs_ > 0 then
          call('HSET', key, unpack(pairs_))
        end
        call('EXPIRE', key, c.ttl)
      end)
      if not ok then
        if not failed then
          error(err)
        end
        failed(c.writes, err)
      end
      c.writes = {}
    end
  end
end

-- What every write script checks first: one MGET reads the idempotency record (the key
-- `idem_key`, when `keyed`; vote.lua reads a call's records before its votes and passes
-- none) and every rolling log's running total, and the call's counters give the others'
-- counts (`hashes` and `field_arg`, see counters_want); then every rule
-- (`rules`, from rules_parse) is checked for `inc` more, for a write at `at_ms`. A
-- rolling log's running total may still hold entries that have left the window: they
-- are subtracted here, and dropped by rules_consume when the write is admitted.
-- `also`, when given, is a list of more string keys the same MGET reads for the caller.
-- Answers the reply to return at once — {'dup', record}, or {'limited', i, retry_ms} for
-- the rule that refuses (of those that do, the one that keeps refusing longest; retry_ms
-- is -1 for never), with the refusal counted in `refusals_key` — or else nil, used,
-- stale, the MGET's reply, the index in it after which `also`'s values stand (a value
-- of also[i] is at that index + i), the index of the first watch the write takes past
-- its threshold (nil for none) and whether the subject's count was within the threshold
-- before the write (the write flags it): what each rolling log has counted and whether it
-- holds entries that left the window (nil when the rules have no log), for
-- rules_consume.
-- (One function, helpers inlined: every local function is a closure the script makes
-- again on each call.)
local function write_checks(idem_key, keyed, rule_key, rules, r, inc, refusals_key,
    refusals_ttl, also, at_ms, hashes, field_arg)
  -- Nothing to read (a vote.lua vote, whose call reads its records, with no rolling
  -- log) makes no table.
  local stored, totals, also_at = NOTHING, nil, 0
  if keyed or rules.logs or also then
    local strings, n = {}, 0
    if keyed then
      strings[1], n = idem_key, 1
    end
    -- Where each rolling log's total is among the strings read.
    if rules.logs then
      totals = {}
      for i = 0, r - 1 do
        if not rules[i].counter then
          n = n + 1
          strings[n], totals[i] = KEYS[rule_key + 2 * i + 2], n
        end
      end
    end
    also_at = n
    if also then
      for i = 1, #also do
        strings[n + i] = also[i]
      end
    end
    if #strings > 0 then
      stored = call('MGET', unpack(strings))
    end
  end
  if keyed and stored[1] then
    return {'dup', stored[1]}
  end
  local used, stale, held, crossed
  local refused, refused_retry = -1, 0
  for i = 0, r - 1 do
    local rule = rules[i]
    local limit = rule.limit
    local retry, count
    local c = hashes[i]
    if c then
      if c.failed then
        error(c.failed)
      end
      if rule.width then
        -- A watch's slotted window: past its threshold, it holds the write.
        count = ring_total(counters_ring(c, ARGV[field_arg + 1 + i]),
          ring_slot(at_ms, rule.width))
        if count + inc > limit then
          retry = 0
        end
      else
        count = c.count[ARGV[field_arg + 1 + i]]
        if count + inc > limit then
          -- A blocked value (limit 0) never passes, whatever the window.
          retry = (limit <= 0 or rule.ends < 0) and -1 or rule.ends - at_ms
        end
      end
    else
      used, stale = used or {}, stale or {}
      local key = KEYS[rule_key + 2 * i + 1]
      local horizon = rule_horizon(rule, at_ms)
      local total = stored[totals[i]]
      total = total and tonumber(total) or 0
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
    if retry and rule.watch then
      if not held then
        held, crossed = i, count <= limit
      end
    -- Of the rules that refuse, keep the one whose wait is longest (-1: forever).
    elseif retry and (refused < 0
        or (refused_retry ~= -1 and (retry == -1 or retry > refused_retry))) then
      refused, refused_retry = i, retry
    end
  end
  if refused >= 0 then
    call('HINCRBY', refusals_key, rules[refused].id, '1')
    call('EXPIRE', refusals_key, refusals_ttl)
    return {'limited', refused, refused_retry}
  end
  return nil, used, stale, stored, also_at, held, crossed
end

-- Consumes `inc` (also given as the string `inc_text`) of every rule for write j (its
-- `hashes` and `field_arg`, see counters_want): a counter's new count goes to the
-- call's counters (counters_write writes it); a log's entry is stamped `at_ms` (a
-- number) and named by `tag`, and its total is set at once.
local function rules_consume(rule_key, rules, r, used, stale, inc, inc_text, at_ms, tag,
    hashes, field_arg, j)
  for i = 0, r - 1 do
    local rule = rules[i]
    local c = hashes[i]
    if c then
      local count, field, writes = c.count, ARGV[field_arg + 1 + i], c.writes
      if rule.width then
        count[field] = ring_add(counters_ring(c, field), ring_slot(at_ms, rule.width), inc)
      else
        count[field] = count[field] + inc
      end
      if rule.ttl > c.ttl then
        c.ttl = rule.ttl
      end
      writes[#writes + 1] = j
    else
      local key = KEYS[rule_key + 2 * i + 1]
      if stale[i] then
        call('ZREMRANGEBYSCORE', key, '-inf', rule_horizon(rule, at_ms))
      end
      call('ZADD', key, string.format('%d', at_ms), inc_text .. ':' .. tag)
      call('EXPIRE', key, rule.ttl)
      call('SET', KEYS[rule_key + 2 * i + 2], string.format('%d', used[i] + inc), 'EX',
        rule.ttl)
    end
  end
end
