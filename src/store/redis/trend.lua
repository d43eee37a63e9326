-- trend.lua: trending periods (forward decay), written inside a write script; put in
-- front of vote.lua and score.lua, after rules.lua (whose locals it uses).
--
-- A trending period of half-life H keeps per view a sorted set of stored scores and an
-- origin t0 (ms since the epoch). A write at time t adds its increment × 2^((t − t0)/H)
-- to its member in both sets; a read at `now` multiplies what is stored by
-- 2^((t0 − now)/H) (see domain::period::HalfLife), so a vote H old weighs half of one
-- now, and the stored order is the decayed order. The first write sets t0 to its time;
-- a write more than `rescale` ms past t0 first multiplies both sets by 2^((t0 − t)/H)
-- (one ZUNIONSTORE with WEIGHTS each) and moves t0 to its time, so weights stay far
-- below a double's range. A write before t0 (a backfill) weighs less than 1.
--
-- A script passes where a trending period's keys and arguments start:
-- three KEYS at o: +1 real scores (zset), +2 display scores (zset), +3 origin (string)
-- two ARGV at a: +1 the half-life in ms, +2 how far past t0 a write rescales, in ms
-- trend_parse reads them into {o, half_life, rescale}.

local function trend_parse(o, a)
  return {o = o, half_life = tonumber(ARGV[a + 1]), rescale = tonumber(ARGV[a + 2])}
end

-- Each origin key's t0, read once per call when the first write needs it (false while
-- the period has none): the writes of several headers may share a period.
local trend_origins = {}

-- The origin a write at `t` (ms) weighs against: set by the first write, moved to `t`
-- (rescaling what is stored) when `t` is more than `rescale` past it.
local function trend_origin(tr, t)
  local key = KEYS[tr.o + 3]
  local origin = trend_origins[key]
  if origin == nil then
    origin = call('GET', key)
    origin = origin and tonumber(origin)
  end
  if origin and t - origin > tr.rescale then
    local factor = string.format('%.17g', 2 ^ ((origin - t) / tr.half_life))
    for v = 1, 2 do
      call('ZUNIONSTORE', KEYS[tr.o + v], 1, KEYS[tr.o + v], 'WEIGHTS', factor)
    end
    origin = false
  end
  if not origin then
    origin = t
    call('SET', key, string.format('%d', t))
  end
  trend_origins[key] = origin
  return origin
end

-- A write at `t` (ms) adds `real` and `display` (units, numbers) to `member`. On a
-- family instance (`ttl` ms, not '0') the period's keys expire that long after it.
local function trend_add(tr, member, real, display, t, ttl)
  local weight = 2 ^ ((t - trend_origin(tr, t)) / tr.half_life)
  call('ZINCRBY', KEYS[tr.o + 1], string.format('%.17g', real * weight), member)
  call('ZINCRBY', KEYS[tr.o + 2], string.format('%.17g', display * weight), member)
  if ttl ~= '0' then
    for k = 1, 3 do
      call('PEXPIRE', KEYS[tr.o + k], ttl)
    end
  end
end
