-- ledger_trim.lua: take the entries SQL now holds off the head of a ledger, only when
-- the head is still what the drain read (compare, then trim), and remember the last
-- entry trimmed and the `seq` SQL gave it. A drain that stalled past its lease, or one
-- whose SQL commit another drain superseded, trims nothing it did not store: entries are
-- unique (each has its own id), so the comparison cannot match a different entry.
--
-- KEYS[1]  the ledger (list of entries, oldest first)
-- KEYS[2]  the id of the last entry trimmed (string)
-- KEYS[3]  the seq of the last entry trimmed (string)
-- ARGV[1]  n, how many entries SQL holds from the head
-- ARGV[2]  the n-th entry, as the drain read it
-- ARGV[3]  its id
-- ARGV[4]  how long KEYS[2] and KEYS[3] last, in ms (a family instance's TTL: its
--          ledger is gone with it), or 0 to keep them
-- ARGV[5]  its seq
--
-- Returns 1 when the n entries were trimmed, 0 when the head had changed (nothing is).

local n = tonumber(ARGV[1])
if redis.call('LINDEX', KEYS[1], n - 1) ~= ARGV[2] then
  return 0
end
redis.call('LTRIM', KEYS[1], n, -1)
if ARGV[4] == '0' then
  redis.call('SET', KEYS[2], ARGV[3])
  redis.call('SET', KEYS[3], ARGV[5])
else
  redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[4])
  redis.call('SET', KEYS[3], ARGV[5], 'PX', ARGV[4])
end
return 1
