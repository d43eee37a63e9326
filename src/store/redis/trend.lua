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
-- below a double's range. A write before t0 (a backfill) weighs less than 1. The writes
-- of one call are summed per period, view and member and written once (trend_flush),
-- each weighted by its own time.
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

-- Sum before you write (see vote.lua): what a call's summed writes add to each trending
-- period, not written yet. Per period (by its origin key, in the order first written)
-- {tr, ttl, members (member -> {real, display, the writes}), order}; `keys` in order.
local trend_sums = {keys = {}, of = {}}

-- Adds `real` and `display` (weighted units, numbers: Redis formats a number argument
-- with 17 significant digits, exact for a double) to `member` in period `tr`'s two sets.
local function trend_put(tr, member, real, display)
  call('ZINCRBY', KEYS[tr.o + 1], real, member)
  call('ZINCRBY', KEYS[tr.o + 2], display, member)
end

-- On a family instance (`ttl` ms, not '0') period `tr`'s keys expire that long after a
-- write.
local function trend_expire(tr, ttl)
  if ttl ~= '0' then
    for k = 1, 3 do
      call('PEXPIRE', KEYS[tr.o + k], ttl)
    end
  end
end

-- Writes what the call's writes have summed for the period whose origin key is `key`
-- and forgets it. A ZINCRBY that fails answers its error through `failed(writes, err)`
-- for the writes it carried.
local function trend_write(key, failed)
  local sum = trend_sums.of[key]
  if not sum then
    return
  end
  trend_sums.of[key] = nil
  local tr = sum.tr
  for _, member in ipairs(sum.order) do
    local add = sum.members[member]
    local ok, err = pcall(trend_put, tr, member, add[1], add[2])
    if not ok then
      failed(add[3], err)
    end
  end
  trend_expire(tr, sum.ttl)
end

-- Writes every period's sums (see trend_write).
local function trend_flush(failed)
  for _, key in ipairs(trend_sums.keys) do
    trend_write(key, failed)
  end
  trend_sums.keys = {}
end

-- Sums whose write fails before a rescale raise their error in the write that rescales.
local function trend_raise(_, err)
  error(err)
end

-- The origin a write at `t` (ms) weighs against: set by the first write, moved to `t`
-- (rescaling what is stored, after writing what the call summed against the old one)
-- when `t` is more than `rescale` past it.
local function trend_origin(tr, t)
  local key = KEYS[tr.o + 3]
  local origin = trend_origins[key]
  if origin == nil then
    origin = call('GET', key)
    origin = origin and tonumber(origin)
  end
  if origin and t - origin > tr.rescale then
    trend_write(key, trend_raise)
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

-- `also` (a list of string keys a write reads in one MGET, see write_checks; or nil)
-- with the origins of `trends` that this call has not read yet after it: a new list
-- when there are such origins, else `also` itself.
local function trend_also(trends, also)
  local more
  for _, tr in ipairs(trends) do
    local key = KEYS[tr.o + 3]
    if trend_origins[key] == nil then
      more = more or {unpack(also or {})}
      more[#more + 1] = key
    end
  end
  return more or also
end

-- Keeps the origins that an MGET of `also` found, past its first `skip` keys (also[i]'s
-- value is stored[from + i]).
local function trend_found(also, stored, from, skip)
  if not also then
    return
  end
  for i = skip + 1, #also do
    local origin = stored[from + i]
    trend_origins[also[i]] = origin and tonumber(origin) or false
  end
end

-- Write j at `t` (ms) adds `real` and `display` (units, numbers) to `member`: summed with
-- the call's other writes to be written by trend_flush, or at once when not `summed`.
-- On a family instance (`ttl` ms, not '0') the period's keys expire that long after the
-- write.
local function trend_add(tr, j, member, real, display, t, ttl, summed)
  local weight = 2 ^ ((t - trend_origin(tr, t)) / tr.half_life)
  if not summed then
    trend_put(tr, member, real * weight, display * weight)
    trend_expire(tr, ttl)
    return
  end
  local key = KEYS[tr.o + 3]
  local sum = trend_sums.of[key]
  if not sum then
    sum = {tr = tr, ttl = ttl, members = {}, order = {}}
    trend_sums.of[key] = sum
    trend_sums.keys[#trend_sums.keys + 1] = key
  end
  local add = sum.members[member]
  if not add then
    add = {0, 0, {}}
    sum.members[member] = add
    sum.order[#sum.order + 1] = member
  end
  add[1], add[2] = add[1] + real * weight, add[2] + display * weight
  add[3][#add[3] + 1] = j
end
