-- instances_page.lua: one page of a family's live instances, most recently written
-- first (ties: instance names in reverse order), after trimming those that expired.
--
-- KEYS[1]  the family's live instances (zset: instance -> its last write, ms)
-- ARGV[1]  now, ms since the epoch
-- ARGV[2]  the instances' TTL in ms
-- ARGV[3]  limit (entries at most)
-- ARGV[4]  the cursor's last write ms, or '' for the first page
-- ARGV[5]  the cursor's instance: the page starts after it
--
-- Returns {total, instance_1, ms_1, instance_2, ms_2, ...}: `total` counts every live
-- instance.

local key = KEYS[1]
redis.call('ZREMRANGEBYSCORE', key, '-inf', tonumber(ARGV[1]) - tonumber(ARGV[2]))
local total = redis.call('ZCARD', key)
local limit = tonumber(ARGV[3])
local out = {total}
if ARGV[4] == '' then
  local page = redis.call('ZREVRANGE', key, 0, limit - 1, 'WITHSCORES')
  for i = 1, #page do
    out[#out + 1] = page[i]
  end
  return out
end
-- After the cursor: a lower score, or the same score and a name before it.
local score, after = tonumber(ARGV[4]), ARGV[5]
local offset = 0
while #out - 1 < 2 * limit do
  local batch = redis.call('ZREVRANGEBYSCORE', key, score, '-inf', 'WITHSCORES', 'LIMIT',
    offset, limit + 1)
  if #batch == 0 then
    break
  end
  for i = 1, #batch, 2 do
    if tonumber(batch[i + 1]) < score or batch[i] < after then
      out[#out + 1] = batch[i]
      out[#out + 1] = batch[i + 1]
      if #out - 1 >= 2 * limit then
        break
      end
    end
  end
  offset = offset + #batch / 2
end
return out
