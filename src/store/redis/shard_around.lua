-- shard_around.lua: one shard's part of an around-me page on a sharded board: where a
-- member with score s would stand in this shard, and the shard's entries around there.
-- Order is the sorted set's own for ZREVRANGE: score descending, then member descending.
--
-- KEYS[1]  the shard's ranking of the bucket (zset)
-- ARGV[1]  the member's score s (as ZSCORE printed it)
-- ARGV[2]  the member id m
-- ARGV[3]  radius
-- ARGV[4]  limit (the page's size, 2 × radius + 1)
--
-- Returns {position, {member, score, ...}}: position is how many of the shard's entries
-- come before (s, m); the entries are those from `radius` before it to `limit` after
-- (near the top a page fills its limit below the member).
-- Entries with score s and a member id after m come before it: they are counted by
-- binary search over the positions holding score s, so the work is logarithmic.

local s, m, radius = ARGV[1], ARGV[2], tonumber(ARGV[3])

-- Whether a sorts after b byte by byte (Lua's own comparison follows the locale).
local function after(a, b)
  local n = math.min(#a, #b)
  for i = 1, n do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then
      return x > y
    end
  end
  return #a > #b
end

local position = redis.call('ZREVRANK', KEYS[1], m)
if not position then
  local higher = redis.call('ZCOUNT', KEYS[1], '(' .. s, '+inf')
  local equal = redis.call('ZCOUNT', KEYS[1], s, s)
  local lo, hi = 0, equal
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    local at = redis.call('ZREVRANGE', KEYS[1], higher + mid, higher + mid)[1]
    if after(at, m) then
      lo = mid + 1
    else
      hi = mid
    end
  end
  position = higher + lo
end
local from = math.max(0, position - radius)
return {position, redis.call('ZREVRANGE', KEYS[1], from, position + tonumber(ARGV[4]),
  'WITHSCORES')}
