-- trend_apply.lua: a change to a trending period made outside the write scripts (a
-- revocation takes votes out, a rebuild from the ledger puts them back); put in front of
-- revoke.lua and replay.lua.
--
-- A change comes as units already weighted by 2^((at − ref)/H) over its votes' times
-- `at`, against a reference time ref (ms) and the half-life H (ms); against the period's
-- origin t0 (see trend.lua) they are worth × 2^((ref − t0)/H), whatever rescales came
-- between. The period's keys start after KEYS[o]: +1 real scores, +2 display scores,
-- +3 origin.
--
-- Adds `real` and `display` so weighted to `member`. A period without an origin takes
-- ref for its own when `start` (a rebuild); else nothing changes (what a revocation
-- would take out is not there). Answers the member's new scores and the amounts added,
-- per view (numbers), or nil when nothing changed.
local function trend_apply(o, member, real, display, ref, half_life, start)
  local origin = redis.call('GET', KEYS[o + 3])
  local factor = 1
  if origin then
    factor = 2 ^ ((ref - tonumber(origin)) / half_life)
  elseif start then
    redis.call('SET', KEYS[o + 3], string.format('%d', ref))
  else
    return nil
  end
  local added = {real * factor, display * factor}
  local scores = {}
  for v = 1, 2 do
    scores[v] = tonumber(redis.call('ZINCRBY', KEYS[o + v], added[v], member))
  end
  return scores, added
end
