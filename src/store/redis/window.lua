-- window.lua: the rolling windows' library, put in front of the scripts that use it
-- (vote.lua, window_page.lua). A rolling window of n slots keeps, under the board's hash
-- tag, 3 + 3n keys from KEYS[o + 1]:
--   +1            head: the newest slot the window has been advanced to (string)
--   +2, +3        the window's total per member, real and display (zsets)
--   +4 .. +3+n    the real scores of each slot (zsets), slot s at ring index s mod n
--   +4+n .. +3+2n the display scores of each slot
--   +4+2n .. +3+3n the voters of each slot (HyperLogLogs)
-- The totals always equal the sum of the n slots from head - n + 1 to head: a slot
-- leaves the totals in the same script that stops counting it, so no read ever sees a
-- window that is partly expired.

-- Brings the window at KEYS[o + 1 ..] forward to slot `cur` (the caller's clock): every
-- slot that has left the window is subtracted from the totals and deleted, and members
-- whose total is then exactly 0 (they have no vote left in the window; votes are
-- positive) are dropped. Slots of at least `big` members are subtracted with one
-- ZUNIONSTORE, smaller ones member by member. After n or more idle slots the whole
-- window is deleted at once. Idempotent; a clock behind the head changes nothing.
-- Returns the head after the call.
local function window_advance(o, n, cur, big)
  local head = redis.call('GET', KEYS[o + 1])
  head = head and tonumber(head)
  if head and head >= cur then
    return head
  end
  if not head or cur - head >= n then
    local keys = {}
    for k = o + 2, o + 3 + 3 * n do
      keys[#keys + 1] = KEYS[k]
    end
    redis.call('DEL', unpack(keys))
  else
    for s = head - n + 1, cur - n do
      local i = s % n
      for v = 0, 1 do
        local total = KEYS[o + 2 + v]
        local slot = KEYS[o + 4 + v * n + i]
        local size = redis.call('ZCARD', slot)
        if size > 0 and size >= big then
          redis.call('ZUNIONSTORE', total, 2, total, slot, 'WEIGHTS', 1, -1)
          redis.call('ZREMRANGEBYSCORE', total, 0, 0)
        elseif size > 0 then
          local entries = redis.call('ZRANGE', slot, 0, -1, 'WITHSCORES')
          for j = 1, #entries, 2 do
            local left = redis.call('ZINCRBY', total, '-' .. entries[j + 1], entries[j])
            if tonumber(left) == 0 then
              redis.call('ZREM', total, entries[j])
            end
          end
        end
      end
      redis.call('DEL', KEYS[o + 4 + i], KEYS[o + 4 + n + i], KEYS[o + 4 + 2 * n + i])
    end
  end
  redis.call('SET', KEYS[o + 1], cur)
  return cur
end

-- Counts a vote stamped in slot `at` into the window at KEYS[o + 1 ..] read at slot
-- `cur`: it lands in the newest slot (a late vote never goes into a slot that may
-- already have left), unless it is older than the whole window, which it skips.
-- `real` and `display` are the increments as decimal strings. Returns the member's
-- window totals {real, display} after the vote.
local function window_add(o, n, cur, at, big, member, real, display, voter)
  local head = window_advance(o, n, math.max(cur, at), big)
  if at > cur - n then
    local i = head % n
    redis.call('ZINCRBY', KEYS[o + 4 + i], real, member)
    redis.call('ZINCRBY', KEYS[o + 4 + n + i], display, member)
    if voter ~= '' then
      redis.call('PFADD', KEYS[o + 4 + 2 * n + i], voter)
    end
    return {
      redis.call('ZINCRBY', KEYS[o + 2], real, member),
      redis.call('ZINCRBY', KEYS[o + 3], display, member),
    }
  end
  return {
    redis.call('ZSCORE', KEYS[o + 2], member) or '0',
    redis.call('ZSCORE', KEYS[o + 3], member) or '0',
  }
end
