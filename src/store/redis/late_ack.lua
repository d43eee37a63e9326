-- late_ack.lua: takes off a board's late-write marks what the archive task saw and has
-- archived, keeping what came since: a late write after the task read the marks leaves
-- its hour marked for the next run.
--
-- KEYS[1]  late writes (hash: epoch hour -> writes)
-- ARGV     pairs: hour, writes seen
--
-- Returns the hours still marked.

for i = 1, #ARGV, 2 do
  local left = redis.call('HINCRBY', KEYS[1], ARGV[i], -tonumber(ARGV[i + 1]))
  if left <= 0 then
    redis.call('HDEL', KEYS[1], ARGV[i])
  end
end
return redis.call('HLEN', KEYS[1])
