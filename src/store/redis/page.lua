-- page.lua: one page of a board's bucket (paging.lua comes in front of this file).
--
-- KEYS[1]  scores (zset)
-- KEYS[2]  top_n: every member's exact score (hash); else unused
-- KEYS[3..] the HyperLogLogs whose union counts the participants (a week's or a month's
--          days, else the bucket's own)
-- ARGV[1]  offset, or with an anchor the radius around it
-- ARGV[2]  limit (entries at most)
-- ARGV[3]  anchor member, or '' for a plain page
-- ARGV[4]  '1' when KEYS[2] counts the members (top_n), else '0'
--
-- Returns what page_of returns (see paging.lua).

local exact = false
if ARGV[4] == '1' then
  exact = KEYS[2]
end
local voters = {}
for i = 3, #KEYS do
  voters[#voters + 1] = KEYS[i]
end
return page_of(KEYS[1], voters, tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3], exact)
