-- instances_open.lua: opening a family's rooms, in the family's own slot, before the
-- writes that open them (rules.lua comes in front of this file). A room is open while
-- the family's listing holds it (written within the TTL); a write to a room not open
-- would open it, and that is checked here: against the family's most live rooms, and
-- against its rules of rooms opened per creator, consumed once per room opened.
--
-- KEYS[1]  the family's live instances (zset: instance -> its last write, ms)
-- KEYS[2]  the family's refusals of the hour (hash: rule id -> refused openings)
-- then two keys per rule i = 0 .. r-1, at 2 + 2i (see rules.lua)
--
-- ARGV[1]  now, ms since the epoch
-- ARGV[2]  the instances' TTL in ms (older listing entries have expired: trimmed first)
-- ARGV[3]  max_live: the most instances live at once
-- ARGV[4]  r, the number of rules (each counts 1 per room opened)
-- ARGV[5]  TTL in seconds of the refusals hash
-- ARGV[6]  a tag unique to this call: room j's entries in rolling logs are '<tag>:<j>'
-- then six per rule i, at 6 + 6i (see rules.lua)
-- then one per rule i, at 6 + 6r + 1 + i: its counter's field (the creator)
-- then the instances the call writes, each once, at 6 + 7r + j (j = 1, 2, ...)
--
-- Returns one answer per instance, in order: 'live' (open already), 'opened' (listed
-- now, its rules consumed), 'full' (max_live are live) or {'limited', i, retry_ms}
-- (rule i refuses: see vote.lua).
--
-- Invariant: the listing never holds more than max_live live instances because of a
-- write, and a creator never opens more rooms than a rule allows in its window; an
-- instance refused here is not listed and consumes nothing (a rule's refusal counts
-- only in the refusals hash).

local now, ttl, max_live = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local r = tonumber(ARGV[4])
local rules = rules_parse(6, r)
local field_arg = 6 + 6 * r
local hashes = counters_want(2, rules, r, field_arg)
counters_read()
local listing = KEYS[1]
redis.call('ZREMRANGEBYSCORE', listing, '-inf', now - ttl)
local live = redis.call('ZCARD', listing)
local first = 7 + 7 * r
local out = {}
for a = first, #ARGV do
  local j = a - first + 1
  local instance = ARGV[a]
  if redis.call('ZSCORE', listing, instance) then
    out[j] = 'live'
  elseif live >= max_live then
    out[j] = 'full'
  else
    local early, used, stale = write_checks('', false, 2, rules, r, 1, KEYS[2], ARGV[5], nil,
      now, hashes, field_arg)
    if early then
      out[j] = early
    else
      rules_consume(2, rules, r, used, stale, 1, '1', now, ARGV[6] .. ':' .. j, hashes,
        field_arg, j)
      redis.call('ZADD', listing, now, instance)
      live = live + 1
      out[j] = 'opened'
    end
  end
end
counters_write()
return out
