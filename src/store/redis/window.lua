-- window.lua: the rolling windows' library, put in front of the scripts that use it
-- (vote.lua, window_page.lua). A rolling window of n slots keeps, under the board's hash
-- tag, 3 + 5n keys from KEYS[o + 1]:
--   +1            state (hash): head, the newest slot reached; pending, how many
--                 members the drains still hold
--   +2, +3        the totals per member, real and display (zsets)
--   +4 .. +3+n    the real scores of each slot (zsets), slot s at ring index s mod n
--   +4+n ..       the display scores of each slot
--   +4+2n ..      the voters of each slot (HyperLogLogs)
--   +4+3n ..      real drains: slots that have left the window but are not yet fully
--                 subtracted from the totals
--   +4+4n ..      display drains
-- The totals always equal the slots from head - n + 1 to head plus what the drains still
-- hold. A slot that leaves the window is renamed to its drain in the same script that
-- stops counting it (O(1)), and the drains are subtracted a bounded number of members
-- per call, so no call blocks Redis for long, whatever the slot's size. Readers drain
-- until nothing is pending before they read; a vote answers its member's totals minus
-- what the drains hold of it. Both are exact.

-- Subtracts up to `budget` drained members from the totals, dropping members whose total
-- is then exactly 0 (votes are positive, so 0 means no vote left in the window).
-- Returns how many it subtracted.
local function window_drain(o, n, budget)
  local done = 0
  for k = 0, 2 * n - 1 do
    if done >= budget then
      break
    end
    local v = math.floor(k / n)
    local drain = KEYS[o + 4 + (3 + v) * n + k % n]
    local total = KEYS[o + 2 + v]
    local entries = redis.call('ZRANGE', drain, 0, budget - done - 1, 'WITHSCORES')
    for j = 1, #entries, 2 do
      local left = redis.call('ZINCRBY', total, '-' .. entries[j + 1], entries[j])
      if tonumber(left) == 0 then
        redis.call('ZREM', total, entries[j])
      end
    end
    if #entries > 0 then
      redis.call('ZREMRANGEBYRANK', drain, 0, #entries / 2 - 1)
      done = done + #entries / 2
    end
  end
  return done
end

-- Brings the window at KEYS[o + 1 ..] forward to slot `cur` (the caller's clock): each
-- slot that has left the window becomes a drain, its voters are deleted, and then up to
-- `budget` drained members are subtracted. After n or more idle slots the whole window
-- is deleted at once. Idempotent; a clock behind the head moves nothing.
-- A window without state was never written, or was a family instance's that expired:
-- a read (`writing` false) finds it empty and writes nothing; a write deletes what an
-- expired instance's slots may have left (they outlive its state, see window_add).
-- Returns the head and how many members the drains still hold.
local function window_advance(o, n, cur, budget, writing)
  local state = redis.call('HMGET', KEYS[o + 1], 'head', 'pending')
  local head = state[1] and tonumber(state[1])
  local pending = tonumber(state[2] or '0')
  local moved = false
  if not head and not writing then
    return cur, 0
  end
  if not head or cur - head >= n then
    local keys = {}
    for k = o + 2, o + 3 + 5 * n do
      keys[#keys + 1] = KEYS[k]
    end
    redis.call('DEL', unpack(keys))
    head, pending, moved = cur, 0, true
  elseif head < cur then
    for s = head - n + 1, cur - n do
      local i = s % n
      for v = 0, 1 do
        local slot = KEYS[o + 4 + v * n + i]
        local drain = KEYS[o + 4 + (3 + v) * n + i]
        local left = redis.call('ZCARD', drain)
        if left > 0 then
          -- Still draining from n slots ago (no call in between did it): finish it now.
          local entries = redis.call('ZRANGE', drain, 0, -1, 'WITHSCORES')
          for j = 1, #entries, 2 do
            local rest = redis.call('ZINCRBY', KEYS[o + 2 + v], '-' .. entries[j + 1], entries[j])
            if tonumber(rest) == 0 then
              redis.call('ZREM', KEYS[o + 2 + v], entries[j])
            end
          end
          redis.call('DEL', drain)
          pending = pending - left
        end
        local size = redis.call('ZCARD', slot)
        if size > 0 then
          redis.call('RENAME', slot, drain)
          pending = pending + size
        end
      end
      redis.call('DEL', KEYS[o + 4 + 2 * n + i])
    end
    head, moved = cur, true
  end
  if pending > 0 then
    pending = pending - window_drain(o, n, budget)
    moved = true
  end
  if moved then
    redis.call('HSET', KEYS[o + 1], 'head', head, 'pending', pending)
  end
  return head, pending
end

-- What the drains of view v still hold of `member`.
local function window_drained(o, n, v, member)
  local held = 0
  for i = 0, n - 1 do
    held = held + tonumber(redis.call('ZSCORE', KEYS[o + 4 + (3 + v) * n + i], member) or '0')
  end
  return held
end

-- Counts a vote stamped in slot `at` into the window at KEYS[o + 1 ..] read at slot
-- `cur`: it lands in the newest slot (a late vote never goes into a slot that may
-- already have left), unless it is older than the whole window, which it skips.
-- `real` and `display` are the increments as decimal strings. On a family instance
-- (`ttl` not '0') the state and totals expire `ttl` ms after the vote and the slots it
-- writes `ring_ttl` ms after (at least the window's span: a slot must last until it has
-- left the window and been subtracted). Returns the member's window totals {real,
-- display} after the vote, as decimal strings.
local function window_add(o, n, cur, at, budget, member, real, display, voter, ttl,
    ring_ttl)
  local head, pending = window_advance(o, n, math.max(cur, at), budget, true)
  local totals = {}
  if at > cur - n then
    local i = head % n
    redis.call('ZINCRBY', KEYS[o + 4 + i], real, member)
    redis.call('ZINCRBY', KEYS[o + 4 + n + i], display, member)
    if voter ~= '' then
      redis.call('PFADD', KEYS[o + 4 + 2 * n + i], voter)
    end
    totals[1] = redis.call('ZINCRBY', KEYS[o + 2], real, member)
    totals[2] = redis.call('ZINCRBY', KEYS[o + 3], display, member)
    if ttl ~= '0' then
      for v = 0, 2 do
        redis.call('PEXPIRE', KEYS[o + 4 + v * n + i], ring_ttl)
      end
    end
  else
    totals[1] = redis.call('ZSCORE', KEYS[o + 2], member) or '0'
    totals[2] = redis.call('ZSCORE', KEYS[o + 3], member) or '0'
  end
  if ttl ~= '0' then
    for k = o + 1, o + 3 do
      redis.call('PEXPIRE', KEYS[k], ttl)
    end
  end
  if pending > 0 then
    for v = 0, 1 do
      totals[v + 1] = string.format('%d', tonumber(totals[v + 1]) - window_drained(o, n, v, member))
    end
  end
  return totals
end
