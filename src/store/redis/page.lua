-- page.lua: one page of a board's bucket (paging.lua comes in front of this file).
--
-- KEYS[1]  scores (zset)
-- KEYS[2]  participants (HyperLogLog)
-- ARGV[1]  offset, or with an anchor the radius around it
-- ARGV[2]  limit (entries at most)
-- ARGV[3]  anchor member, or '' for a plain page
--
-- Returns what page_of returns (see paging.lua).

return page_of(KEYS[1], {KEYS[2]}, tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3])
