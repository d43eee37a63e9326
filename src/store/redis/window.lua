-- window.lua: the rolling windows' library, put in front of the scripts that use it
-- (vote.lua, window_page.lua, window_advance.lua). A rolling window of n slots keeps,
-- under the board's hash tag:
--   state (hash): head, the newest slot reached; pending, how many members the drains
--                 still hold; lone, when set, the slot whose drain alone holds them
--   the totals per member, real and display (zsets)
--   the real and display scores of each slot (zsets), slot s at ring index s mod n
--   the voters of each slot (HyperLogLogs)
--   real and display drains (zsets): slots that have left the window but are not yet
--                 fully subtracted from the totals, at the slot's ring index
-- The totals always equal the slots from head - n + 1 to head plus what the drains still
-- hold. A slot that leaves the window is renamed to its drain in the same script that
-- stops counting it (O(1)), and the drains are subtracted a bounded number of members
-- per call, so no call blocks Redis for long, whatever the slot's size. Readers drain
-- until nothing is pending before they read; a vote answers its member's totals minus
-- what the drains hold of it. Both are exact.
--
-- Two ways in. A full advance (window_advance) takes every key, 3 + 5n, at KEYS[o + 1]:
-- the state, the totals (real, display), then each ring whole (real slots, display
-- slots, voters, real drains, display drains); reads and window_advance.lua use it. A
-- vote takes 13 keys whatever n is, at KEYS[o + 1]: the state, the totals, then the five
-- ring keys (real, display, voters, real drain, display drain) of the index of its
-- clock's slot c and those of slot c + 1. That is enough when the head is c - 1 with
-- nothing pending (the vote moves it: the slot leaving, c - n, has c's index), or c or
-- c + 1 (another instance's clock ahead by less than a slot) with nothing pending or
-- only that slot's drain: see window_ready. Otherwise vote.lua answers 'advance' before
-- it changes anything, and the caller runs window_advance.lua until the window is at
-- the clock with nothing pending, then calls again: once per idle gap, first write or
-- slot whose drain outlived the next slot.

-- A member whose window total is exactly 0 is left out of the totals: a votes board's
-- then has no vote left in the window (votes are positive); a scores board's writes there
-- add up to nothing.

-- Subtracts up to `budget` drained members of the drains at KEYS[drains[1]],
-- KEYS[drains[2]], ... (real, display alternately: view v's total is KEYS[o + 2 + v]),
-- dropping members whose total is then 0. Returns how many it subtracted.
local function window_subtract(o, drains, budget)
  local done = 0
  for k, d in ipairs(drains) do
    if done >= budget then
      break
    end
    local total = KEYS[o + 2 + (k - 1) % 2]
    local entries = redis.call('ZRANGE', KEYS[d], 0, budget - done - 1, 'WITHSCORES')
    for j = 1, #entries, 2 do
      -- A scores board's slot may hold a negative sum: take its sign off, or put one on.
      local held = entries[j + 1]
      local minus = string.byte(held) == 45 and string.sub(held, 2) or '-' .. held
      local left = redis.call('ZINCRBY', total, minus, entries[j])
      if tonumber(left) == 0 then
        redis.call('ZREM', total, entries[j])
      end
    end
    if #entries > 0 then
      redis.call('ZREMRANGEBYRANK', KEYS[d], 0, #entries / 2 - 1)
      done = done + #entries / 2
    end
  end
  return done
end

-- Brings the window at KEYS[o + 1 ..] (every key) forward to slot `cur` (the caller's
-- clock): each slot that has left the window becomes its drain and its voters are
-- deleted, and then up to `budget` drained members are subtracted. A slot whose drain
-- still holds the slot n before it stops the head there (the drain comes first: the
-- caller calls again). After n or more idle slots the whole window is deleted at once.
-- Idempotent; a clock behind the head moves nothing.
-- A window without state was never written, or was a family instance's that expired:
-- a read (`writing` false) finds it empty and writes nothing; a write deletes what an
-- expired instance's slots may have left (they outlive its state, see window_add).
-- Returns the head and how many members the drains still hold: the caller calls again
-- until the head is at its clock and none are.
local function window_advance(o, n, cur, budget, writing)
  local state = redis.call('HMGET', KEYS[o + 1], 'head', 'pending')
  local head = state[1] and tonumber(state[1])
  local pending = tonumber(state[2] or '0')
  local moved, renamed = false, false
  if not head and not writing then
    return cur, 0
  end
  if not head or cur - head >= n then
    local keys = {}
    for k = o + 2, o + 3 + 5 * n do
      keys[#keys + 1] = KEYS[k]
    end
    redis.call('DEL', unpack(keys))
    head, pending, moved, renamed = cur, 0, true, true
  else
    while head < cur do
      -- Slot head + 1 - n leaves; its index is head + 1's.
      local i = (head + 1) % n
      local drain_r, drain_d = KEYS[o + 4 + 3 * n + i], KEYS[o + 4 + 4 * n + i]
      if redis.call('EXISTS', drain_r, drain_d) > 0 then
        break
      end
      for v = 0, 1 do
        local slot = KEYS[o + 4 + v * n + i]
        local size = redis.call('ZCARD', slot)
        if size > 0 then
          redis.call('RENAME', slot, v == 0 and drain_r or drain_d)
          pending = pending + size
        end
      end
      redis.call('DEL', KEYS[o + 4 + 2 * n + i])
      head, moved, renamed = head + 1, true, true
    end
  end
  if pending > 0 then
    local drains = {}
    for i = 0, n - 1 do
      drains[#drains + 1] = o + 4 + 3 * n + i
      drains[#drains + 1] = o + 4 + 4 * n + i
    end
    pending = pending - window_subtract(o, drains, budget)
    moved = true
  end
  if moved then
    redis.call('HSET', KEYS[o + 1], 'head', head, 'pending', pending)
  end
  if renamed then
    redis.call('HDEL', KEYS[o + 1], 'lone')
  end
  return head, pending
end

-- The vote path's state of each window, by its state key: read once per call, then kept
-- here as the call's votes change it (a call's headers may share a window).
local window_states = {}

-- The state of the window `win` (see vote.lua's headers): {head, pending, lone}, head
-- nil when the window has none.
local function window_state(win)
  local key = KEYS[win.o + 1]
  local st = window_states[key]
  if not st then
    local raw = redis.call('HMGET', key, 'head', 'pending', 'lone')
    st = {head = raw[1] and tonumber(raw[1]), pending = tonumber(raw[2] or '0'),
      lone = raw[3] and tonumber(raw[3])}
    window_states[key] = st
  end
  return st
end

-- Whether a vote whose clock's slot is win.cur can count in the window `win` with the
-- keys it has (see the top of this file).
local function window_ready(win)
  local st = window_state(win)
  local head, c = st.head, win.cur
  if not head then
    return false
  end
  if head == c - 1 then
    return st.pending == 0
  end
  return (head == c or head == c + 1) and (st.pending == 0 or st.lone == head)
end

-- Whether a write of `delta` units (a number) to `member` keeps its window total and its
-- head slot's sum in the window `win` (ready) within ±max_units: a scores board's writes
-- may go either way, so a slot's sum may pass its total. As they stand (drains not yet
-- subtracted), so never too leniently.
local function window_fits(win, member, delta, max_units)
  local st = window_state(win)
  local keys = {KEYS[win.o + 2]}
  -- One slot behind, the head moves on to an empty slot.
  if st.head == win.cur then
    keys[2] = KEYS[win.o + 4]
  elseif st.head == win.cur + 1 then
    keys[2] = KEYS[win.o + 9]
  end
  for _, key in ipairs(keys) do
    -- Compared before adding: past 2^53 a double no longer tells n + 1 from n.
    local held = tonumber(redis.call('ZSCORE', key, member) or '0')
    if delta > max_units - held or delta < -max_units - held then
      return false
    end
  end
  return true
end

-- Counts a vote stamped in slot win.at into the window `win` (ready: see window_ready):
-- it moves the head to the vote's clock when one slot behind, subtracts up to
-- win.budget members of the pending drain, and lands in the head slot (a vote stamped
-- before it never goes into a slot that may already have left), unless it is older than
-- the whole window, which it skips. `real` and `display` are the increments as decimal
-- strings. On a family instance (`ttl` not '0') the state and totals expire `ttl` ms
-- after the vote and the slots it writes win.ring_ttl ms after (at least the window's
-- span: a slot must last until it has left the window and been subtracted). Returns the
-- member's window totals {real, display} after the vote, as decimal strings.
local function window_add(win, member, real, display, voter, ttl)
  local o, n, st = win.o, win.slots, window_state(win)
  local changed = false
  if st.head == win.cur - 1 then
    -- Slot cur - n leaves: its keys are cur's.
    for v = 0, 1 do
      local size = redis.call('ZCARD', KEYS[o + 4 + v])
      if size > 0 then
        redis.call('RENAME', KEYS[o + 4 + v], KEYS[o + 7 + v])
        st.pending = st.pending + size
      end
    end
    redis.call('DEL', KEYS[o + 6])
    st.head, st.lone, changed = win.cur, win.cur, true
  end
  -- The head slot's five keys: the clock's or the next one's.
  local ring = st.head == win.cur and o + 3 or o + 8
  if st.pending > 0 then
    st.pending = st.pending - window_subtract(o, {ring + 4, ring + 5}, win.budget)
    changed = true
  end
  local totals = {}
  if win.at > st.head - n then
    redis.call('ZINCRBY', KEYS[ring + 1], real, member)
    redis.call('ZINCRBY', KEYS[ring + 2], display, member)
    if voter ~= '' then
      redis.call('PFADD', KEYS[ring + 3], voter)
    end
    for v = 1, 2 do
      totals[v] = redis.call('ZINCRBY', KEYS[o + 1 + v], v == 1 and real or display, member)
      if tonumber(totals[v]) == 0 then
        redis.call('ZREM', KEYS[o + 1 + v], member)
      end
    end
    if ttl ~= '0' then
      for k = ring + 1, ring + 3 do
        redis.call('PEXPIRE', KEYS[k], win.ring_ttl)
      end
    end
  else
    totals[1] = redis.call('ZSCORE', KEYS[o + 2], member) or '0'
    totals[2] = redis.call('ZSCORE', KEYS[o + 3], member) or '0'
  end
  if changed then
    redis.call('HSET', KEYS[o + 1], 'head', st.head, 'pending', st.pending, 'lone',
      st.lone or st.head)
  end
  if ttl ~= '0' then
    for k = o + 1, o + 3 do
      redis.call('PEXPIRE', KEYS[k], ttl)
    end
  end
  if st.pending > 0 then
    for v = 0, 1 do
      local held = redis.call('ZSCORE', KEYS[ring + 4 + v], member)
      if held then
        totals[v + 1] = string.format('%d', tonumber(totals[v + 1]) - tonumber(held))
      end
    end
  end
  return totals
end
