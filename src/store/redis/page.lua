-- page.lua: one page of a board, best first, with what it takes to rank it.
--
-- KEYS[1]  scores (zset)
-- KEYS[2]  participants (HyperLogLog)
-- ARGV[1]  offset, or with an anchor the radius around it
-- ARGV[2]  limit (entries at most)
-- ARGV[3]  anchor member, or '' for a plain page
--
-- Returns {members_on_board, participants, offset, first_rank, {member, score, ...}}.
-- first_rank is the competition rank of the page's first entry (1 + members with a
-- strictly higher score), 0 for an empty page; offset is -1 when the anchor is absent.
-- Scores are decimal strings.

local card = redis.call('ZCARD', KEYS[1])
local participants = redis.call('PFCOUNT', KEYS[2])
local offset = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
if ARGV[3] ~= '' then
  local position = redis.call('ZREVRANK', KEYS[1], ARGV[3])
  if not position then
    return {card, participants, -1, 0, {}}
  end
  offset = math.max(0, position - offset)
end
local page = redis.call('ZREVRANGE', KEYS[1], offset, offset + limit - 1, 'WITHSCORES')
local first_rank = 0
if #page > 0 then
  first_rank = redis.call('ZCOUNT', KEYS[1], '(' .. page[2], '+inf') + 1
end
return {card, participants, offset, first_rank, page}
