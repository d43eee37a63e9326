-- recount_read.lua: one member's score in one ranking, every ledger entry still waiting
-- in Redis and the id of the last entry trimmed, at one instant. What the score counts
-- is then exactly the entries SQL holds up to the last one trimmed, plus those waiting:
-- entries leave the ledger from its head, in order, only once SQL has them.
--
-- KEYS[1]  the ranking (zset)
-- KEYS[2]  the board's ledger (list)
-- KEYS[3]  the id of the last entry trimmed from it (string)
-- ARGV[1]  member id
--
-- Returns {score or false, {entries…}, last trimmed id or false}.

return {redis.call('ZSCORE', KEYS[1], ARGV[1]), redis.call('LRANGE', KEYS[2], 0, -1),
  redis.call('GET', KEYS[3])}
