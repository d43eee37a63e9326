-- instances_search.lua: one step of a search through a family's live instances, most
-- recently written first, from a place in the listing; a step looks at a bounded number
-- of names, so no step holds Redis long and a search stops where its budget ends.
--
-- KEYS[1]  the family's live instances (zset: instance -> its last write, ms)
-- ARGV[1]  now, ms since the epoch
-- ARGV[2]  the instances' TTL in ms (older entries are expired: trimmed first)
-- ARGV[3]  the text a name must contain (plain text, no pattern)
-- ARGV[4]  matches wanted at most
-- ARGV[5]  names to look at at most
-- ARGV[6]  the place's last write ms, or '' to start from the most recent
-- ARGV[7]  the place's instance: the step starts after it
--
-- Returns {total, looked, last_ms, last_instance, instance_1, ms_1, ...}: `total`
-- counts every live instance; `looked` the names looked at; the last of them (the
-- place the next step starts after; '' when none was); then the matches, in order.
-- Fewer names looked at than asked, and fewer matches than wanted, means the listing
-- ended.

local key = KEYS[1]
redis.call('ZREMRANGEBYSCORE', key, '-inf', tonumber(ARGV[1]) - tonumber(ARGV[2]))
local total = redis.call('ZCARD', key)
local text, want, budget = ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5])
local score, after = '+inf', nil
if ARGV[6] ~= '' then
  score, after = tonumber(ARGV[6]), ARGV[7]
end
local looked, last_ms, last_name = 0, '', ''
local found = {}
local offset = 0
while looked < budget and #found < 2 * want do
  local batch = redis.call('ZREVRANGEBYSCORE', key, score, '-inf', 'WITHSCORES', 'LIMIT',
    offset, math.min(budget - looked, 1000))
  if #batch == 0 then
    break
  end
  for i = 1, #batch, 2 do
    local name, ms = batch[i], batch[i + 1]
    -- After the place: a lower score, or the same score and a name before it.
    if not after or tonumber(ms) < score or name < after then
      looked = looked + 1
      last_ms, last_name = ms, name
      if string.find(name, text, 1, true) then
        found[#found + 1] = name
        found[#found + 1] = ms
        if #found >= 2 * want then
          break
        end
      end
    end
    if looked >= budget then
      break
    end
  end
  offset = offset + #batch / 2
end
local out = {total, looked, last_ms, last_name}
for i = 1, #found do
  out[#out + 1] = found[i]
end
return out
