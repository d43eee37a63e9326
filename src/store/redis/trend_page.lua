-- trend_page.lua: one page of a trending period's stored scores, with the origin they
-- are weighted against (paging.lua comes in front of this file; see trend.lua).
--
-- KEYS[1]  stored scores of one view (zset)
-- KEYS[2]  origin (string: ms since the epoch)
-- KEYS[3..] the HyperLogLogs whose union counts the participants (the all-time bucket's)
-- ARGV[1]  offset, or with an anchor the radius around it
-- ARGV[2]  limit (entries at most)
-- ARGV[3]  anchor member, or '' for a plain page
--
-- Returns what page_of returns (see paging.lua), then the origin (nil while the period
-- has none): read in the same call, so a rescale never falls between the two.

local voters = {}
for i = 3, #KEYS do
  voters[#voters + 1] = KEYS[i]
end
local page = page_of(KEYS[1], voters, tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3])
page[6] = redis.call('GET', KEYS[2])
return page
