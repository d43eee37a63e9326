-- ring.lua: a watch's rolling window kept in slots, one hash field per subject; put in
-- front of rules.lua, refund.lua, usage.lua and ring_add.lua.
--
-- A watch over a rolling window of length L counts in RING slots of L / RING each, slot
-- s covering the times [s * L / RING, (s + 1) * L / RING) since the epoch: a vote is
-- counted from its time until its slot's start plus L, so for between 0.9 L and L. The
-- window of a write in slot s holds slots s - RING + 1 .. s (and any kept after s: a
-- write timed before its subject's newest vote counts that one too, as a log would).
--
-- A subject's ring is packed (Redis's `struct` library) as little-endian doubles
-- `<base> <total> <c_0> <c_1> ... <c_k>`: base the newest slot it counted in, c_i the
-- votes of slot base - i (k < RING; the older are left out when zero), total their sum.
-- A write in the newest slot reads and rewrites only the first three numbers; packing
-- and unpacking in C costs a vote 40 % of what patterns and decimal text did
-- (bench/notes/2026-11-29-watch-cost.md). A double holds every whole number up to
-- 2^53 exactly. The field lives in a hash per period of length L (epoch-aligned):
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

-- The base and counts (c[0] .. c[RING - 1], zeros filled in) of ring `packed`.
local function ring_decode(packed)
  local n = #packed / 8
  local v = {struct.unpack('<' .. string.rep('d', n), packed)}
  local c = {}
  for k = 0, RING - 1 do
    c[k] = k + 3 <= n and v[k + 3] or 0
  end
  return v[1], c
end

-- The packed ring of `base` and counts `c`, trailing zeros left out (one kept).
local function ring_encode(base, c)
  local last, total = 0, 0
  for k = 0, RING - 1 do
    total = total + c[k]
    if c[k] ~= 0 then
      last = k
    end
  end
  local v = {base, total}
  for k = 0, last do
    v[k + 3] = c[k]
  end
  return struct.pack('<' .. string.rep('d', last + 3), unpack(v))
end

-- What ring `packed` (false for none) counts in the window of a write in slot `s`.
local function ring_total(packed, s)
  if not packed then
    return 0
  end
  local base, total = struct.unpack('<dd', packed)
  if s <= base then
    return total
  end
  if s - base >= RING then
    return 0
  end
  local _, c = ring_decode(packed)
  local sum = 0
  for k = 0, RING - 1 - (s - base) do
    sum = sum + c[k]
  end
  return sum
end

-- Ring `packed` (false for none) with `inc` more votes in slot `s`: slots that left the
-- window of s are dropped; a slot older than every kept one takes nothing.
local function ring_add(packed, s, inc)
  if not packed then
    return struct.pack('<ddd', s, inc, inc)
  end
  local base, total, first = struct.unpack('<ddd', packed)
  if s == base then
    return struct.pack('<ddd', base, total + inc, first + inc) .. string.sub(packed, 25)
  end
  local _, c = ring_decode(packed)
  if s < base then
    if base - s >= RING then
      return packed
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

-- Ring `packed` with `inc` fewer votes in slot `s`, or nil when that slot has left it or
-- holds fewer (a refund never makes a count up).
local function ring_take(packed, s, inc)
  local base, c = ring_decode(packed)
  local k = base - s
  if k < 0 or k >= RING or c[k] < inc then
    return nil
  end
  c[k] = c[k] - inc
  return ring_encode(base, c)
end
