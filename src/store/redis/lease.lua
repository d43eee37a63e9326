-- lease.lua: a lock with a lease, held by one instance at a time: taken when free,
-- renewed and released only by its holder, gone by itself when the holder stops
-- renewing it (a crash).
--
-- KEYS[1]  the lease (string: the holder's token; expires)
-- ARGV[1]  'take', 'renew' or 'release'
-- ARGV[2]  the caller's token
-- ARGV[3]  the lease's length in ms (take, renew)
--
-- Returns 1 when the caller holds the lease after the call (take, renew) or let it go
-- (release), else 0.

local op, token = ARGV[1], ARGV[2]
if op == 'take' then
  if redis.call('SET', KEYS[1], token, 'NX', 'PX', ARGV[3]) then
    return 1
  end
  if redis.call('GET', KEYS[1]) == token then
    redis.call('PEXPIRE', KEYS[1], ARGV[3])
    return 1
  end
  return 0
end
if redis.call('GET', KEYS[1]) ~= token then
  return 0
end
if op == 'renew' then
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
else
  redis.call('DEL', KEYS[1])
end
return 1
