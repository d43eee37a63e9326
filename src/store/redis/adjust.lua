-- adjust.lua: change one member's score in one bucket of a votes board (an adjustment by
-- operations staff, see domain/adjustment.rs), in one or both views, atomically: checked,
-- then the scores, the ledger entry and the idempotency record together, or nothing.
--
-- KEYS[1]  idempotency record (string; any key of the board when ARGV[7] is 0)
-- KEYS[2]  real scores of the bucket (zset)
-- KEYS[3]  display scores of the bucket (zset)
-- KEYS[4]  late writes (hash: epoch hour -> writes; see vote.lua)
-- KEYS[5]  the board's headroom mark (see vote.lua): removed when an all-time score moves
-- KEYS[6]  the board's ledger (list; see vote.lua)
-- KEYS[7]  votes counter (hash; see vote.lua): the bucket's count (field KEYS[2]) moves
--          with its real view
-- ARGV[1]  member id
-- ARGV[2]  units added to the real view (0: the view is left alone)
-- ARGV[3]  units added to the display view (0: left alone)
-- ARGV[4]  the highest score the adjustment may leave: 2^53 units (less in a shard) in
--          the all-time bucket, else M - 2 * 10^d (see vote.lua's headroom mark), so that
--          a vote the mark lets through unchecked (increments below 10^d, all-time scores
--          below 10^d) still cannot take the bucket past M
-- ARGV[5]  the lowest real score it may leave: 0, or in a shard of a board whose scores
--          are sums over shards the shard's part less the member's total (read just
--          before), so that the total stays at 0 or more
-- ARGV[6]  the same for the display score
-- ARGV[7]  idempotency record TTL in seconds, or 0 when the adjustment has no key
-- ARGV[8]  its fingerprint (stored in the record, to tell a retry from a reuse)
-- ARGV[9]  '1' for the all-time bucket (the headroom mark is removed), else '0'
-- ARGV[10] for a bucket that has closed, the epoch hour of its start, counted as a late
--          write so the archive writes the bucket again (its keys are held until then);
--          '' for an open bucket
-- ARGV[11] its ledger entry (domain::ledger::Entry as JSON), or '' when the board keeps
--          no ledger
--
-- Returns one of
--   {'ok', real, display}      the member's new scores in the bucket (units; '' for a
--                              view left alone)
--   {'dup', record}            the first answer for this key: '<fingerprint>|<real>|<display>'
--   {'gone'}                   the bucket has closed and Redis holds neither of its
--                              views (they left for the archive, or it had no scores)
--   {'high', view}             a score would pass ARGV[4]
--   {'low', view}              a score would go below its floor (ARGV[5], ARGV[6])
--
-- Invariant: every check comes before the first write.

local ttl = ARGV[7]
if ttl ~= '0' then
  local record = redis.call('GET', KEYS[1])
  if record then
    return {'dup', record}
  end
end
local member, late_hour = ARGV[1], ARGV[10]
local high = tonumber(ARGV[4])
local views = {{'real', KEYS[2], ARGV[2], ARGV[5]}, {'display', KEYS[3], ARGV[3], ARGV[6]}}
if late_hour ~= '' and redis.call('EXISTS', KEYS[2], KEYS[3]) == 0 then
  return {'gone'}
end
for _, v in ipairs(views) do
  if v[3] ~= '0' then
    local score = tonumber(redis.call('ZSCORE', v[2], member) or '0') + tonumber(v[3])
    if score > high then
      return {'high', v[1]}
    end
    if score < tonumber(v[4]) then
      return {'low', v[1]}
    end
  end
end

local result = {'ok', '', ''}
for i, v in ipairs(views) do
  if v[3] ~= '0' then
    local score = redis.call('ZINCRBY', v[2], v[3], member)
    if tonumber(score) == 0 then
      redis.call('ZREM', v[2], member)
    end
    result[i + 1] = score
  end
end
if ARGV[2] ~= '0' then
  redis.call('HINCRBY', KEYS[7], KEYS[2], ARGV[2])
end
if ARGV[9] == '1' then
  redis.call('DEL', KEYS[5])
end
if late_hour ~= '' then
  -- Both views stay until the archive writes the bucket again and expires them anew.
  redis.call('PERSIST', KEYS[2])
  redis.call('PERSIST', KEYS[3])
  redis.call('HINCRBY', KEYS[4], late_hour, 1)
end
if ARGV[11] ~= '' then
  redis.call('RPUSH', KEYS[6], ARGV[11])
end
if ttl ~= '0' then
  redis.call('SET', KEYS[1], ARGV[8] .. '|' .. result[2] .. '|' .. result[3], 'EX', ttl)
end
return result
