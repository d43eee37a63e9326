-- ring_add.lua: counts votes again in watches' slotted windows (see ring.lua, which comes
-- in front), when a rebuild restores the watches' counts (replay.rs).
--
-- KEYS[i] vote i's window's hash of rings (subject -> ring) of the period now
-- ARGV: four per vote i, at 4(i - 1): +1 its subject (the field), +2 its slot, +3 its
-- count, +4 the hash's TTL in seconds
--
-- Returns the number of votes counted.

for i = 1, #KEYS do
  local key, a = KEYS[i], 4 * (i - 1)
  local field = ARGV[a + 1]
  local ring = redis.call('HGET', key, field)
  redis.call('HSET', key, field, ring_add(ring, tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3])))
  redis.call('EXPIRE', key, ARGV[a + 4])
end
return #KEYS
