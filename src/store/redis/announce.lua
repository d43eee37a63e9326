-- announce.lua: count a configuration change and tell every instance about it.
--
-- KEYS[1]  the configuration version (string counter)
-- ARGV[1]  the pub/sub channel
-- ARGV[2]  what changed: `board:<slug>` or `api-keys`
--
-- Publishes `<version> <what changed>` and returns the new version.
--
-- Invariant: the version moves with every notice, so an instance that missed a notice
-- (a silent connection, a failed publish retried later) sees the version move when it
-- next checks, and reloads.

local version = redis.call('INCR', KEYS[1])
redis.call('PUBLISH', ARGV[1], version .. ' ' .. ARGV[2])
return version
