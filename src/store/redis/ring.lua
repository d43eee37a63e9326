-- ring.lua: a watch's rolling window kept in slots, one hash field per subject; put in
-- front of rules.lua, refund.lua, usage.lua and ring_add.lua.
--
-- A watch over a rolling window of length L counts in RING slots of L / RING each, slot
-- s covering the times [s * L / RING, (s + 1) * L / RING) since the epoch: a vote is
-- counted from its time until its slot's start plus L, so for between 0.9 L and L. The
-- window of a write in slot s holds slots s - RING + 1 .. s (and any kept after s: a
-- write timed before its subject's newest vote counts that one too, as a log would).
--
-- A subject's ring is the text '<base> <total> <c_0> <c_1> ... <c_k>': base the newest
-- slot it counted in, c_i the votes of slot base - i (k < RING; the older are left out
-- when zero), total their sum. A write in the newest slot reads and rewrites only the
-- first three numbers. The field lives in a hash per period of length L (epoch-aligned):
-- a ring written in one period is found in its hash or the one before (see rules.lua's
-- counters_read), and a ring older than that holds nothing in any window now. A vote
-- timed in one period that comes after its subject's ring moved on to the next period's
-- hash counts in its own period's hash, which the next period's ring does not see: it
-- counts less long than its window (a watch's count is a threshold's measure, not a
-- tally; the ledger keeps every vote).

local RING = 10

-- The slot of a write at `at_ms` in a ring whose slots are `width` ms.
local function ring_slot(at_ms, width)
  return math.floor(at_ms / width)
end

-- The base and counts (c[0] .. c[RING - 1], zeros filled in) of ring `text`.
local function ring_decode(text)
  local c, i, base = {}, -2, nil
  for number in string.gmatch(text, '%d+') do
    if i == -2 then
      base = tonumber(number)
    elseif i >= 0 then
      c[i] = tonumber(number)
    end
    i = i + 1
  end
  for k = i, RING - 1 do
    c[k] = 0
  end
  return base, c
end

-- The text of a ring of `base` and counts `c`, trailing zeros left out (one kept).
local function ring_encode(base, c)
  local last, total = 0, 0
  for k = 0, RING - 1 do
    total = total + c[k]
    if c[k] ~= 0 then
      last = k
    end
  end
  local parts = {string.format('%d', base), string.format('%d', total)}
  for k = 0, last do
    parts[k + 3] = string.format('%d', c[k])
  end
  return table.concat(parts, ' ')
end

-- What ring `text` (false for none) counts in the window of a write in slot `s`.
local function ring_total(text, s)
  if not text then
    return 0
  end
  local base, total = string.match(text, '^(%d+) (%d+)')
  base = tonumber(base)
  if s <= base then
    return tonumber(total)
  end
  if s - base >= RING then
    return 0
  end
  local _, c = ring_decode(text)
  local sum = 0
  for k = 0, RING - 1 - (s - base) do
    sum = sum + c[k]
  end
  return sum
end

-- Ring `text` (false for none) with `inc` more votes in slot `s`: slots that left the
-- window of s are dropped; a slot older than every kept one takes nothing.
local function ring_add(text, s, inc)
  if not text then
    return string.format('%d %d %d', s, inc, inc)
  end
  local base, total, first, rest = string.match(text, '^(%d+) (%d+) (%d+)(.*)$')
  base = tonumber(base)
  if s == base then
    return string.format('%d %d %d', base, tonumber(total) + inc, tonumber(first) + inc)
      .. rest
  end
  local _, c = ring_decode(text)
  if s < base then
    if base - s >= RING then
      return text
    end
    c[base - s] = c[base - s] + inc
    return ring_encode(base, c)
  end
  local shift, moved = s - base, {}
  for k = 0, RING - 1 do
    moved[k] = k >= shift and c[k - shift] or 0
  end
  moved[0] = moved[0] + inc
  return ring_encode(s, moved)
end

-- Ring `text` with `inc` fewer votes in slot `s`, or nil when that slot has left it or
-- holds fewer (a refund never makes a count up).
local function ring_take(text, s, inc)
  local base, c = ring_decode(text)
  local k = base - s
  if k < 0 or k >= RING or c[k] < inc then
    return nil
  end
  c[k] = c[k] - inc
  return ring_encode(base, c)
end
