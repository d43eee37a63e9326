-- paging.lua: one page of a sorted set, best first, with what it takes to rank it; put
-- in front of page.lua and window_page.lua.
--
-- page_of(scores, voters, offset, limit, anchor, exact): `voters` is a list of
-- HyperLogLogs whose union counts the participants; `offset` is, with an anchor, the
-- radius around it; `anchor` is '' for a plain page; `exact`, when given, is a top_n
-- board's hash of every member's score, which counts the members.
--
-- Returns {members_on_board, participants, offset, first_rank, {member, score, ...}}.
-- first_rank is the competition rank of the page's first entry (1 + members with a
-- strictly higher score), 0 for an empty page; offset is -1 when the anchor is absent.
-- Scores are decimal strings.
local function page_of(scores, voters, offset, limit, anchor, exact)
  local card
  if exact then
    card = redis.call('HLEN', exact)
  else
    card = redis.call('ZCARD', scores)
  end
  local participants = redis.call('PFCOUNT', unpack(voters))
  if anchor ~= '' then
    local position = redis.call('ZREVRANK', scores, anchor)
    if not position then
      return {card, participants, -1, 0, {}}
    end
    offset = math.max(0, position - offset)
  end
  local page = redis.call('ZREVRANGE', scores, offset, offset + limit - 1, 'WITHSCORES')
  local first_rank = 0
  if #page > 0 then
    first_rank = redis.call('ZCOUNT', scores, '(' .. page[2], '+inf') + 1
  end
  return {card, participants, offset, first_rank, page}
end
