-- participants_rebuild.lua: replace a distinct-voters HyperLogLog (which cannot forget a
-- voter) with one rebuilt from the ledger. The caller has added to the scratch key the
-- voters of the entries SQL holds up to the last one trimmed from the ledger when it
-- read; this adds the voters of the entries still waiting in the ledger and swaps it in,
-- at one instant, unless the drain trimmed more since (then the caller adds what SQL
-- gained and calls again).
--
-- KEYS[1]  the scratch HyperLogLog (renamed away or deleted here)
-- KEYS[2]  the HyperLogLog rebuilt
-- KEYS[3]  the board's ledger (list of entries, JSON)
-- KEYS[4]  the id of the last entry trimmed from it (string)
-- ARGV[1]  the trimmed id the caller read SQL up to ('' for none)
-- ARGV[2]  the bucket's start, ms (inclusive)
-- ARGV[3]  its end, ms (exclusive)
-- ARGV[4]  a member: only its voters; '' for every voter
--
-- Returns 1 when swapped in, 0 when the drain moved on (nothing changed).

if (redis.call('GET', KEYS[4]) or '') ~= ARGV[1] then
  return 0
end
local from, to, member = tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
for _, text in ipairs(redis.call('LRANGE', KEYS[3], 0, -1)) do
  local e = cjson.decode(text)
  if e.voter and e.at >= from and e.at < to and (member == '' or e.member == member) then
    redis.call('PFADD', KEYS[1], e.voter)
  end
end
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('RENAME', KEYS[1], KEYS[2])
else
  redis.call('DEL', KEYS[2])
end
return 1
