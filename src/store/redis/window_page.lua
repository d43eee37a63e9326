-- window_page.lua: one page of a rolling window after bringing the window to the
-- caller's clock (window.lua and paging.lua come in front of this file).
--
-- KEYS[1 .. 3 + 5n]  the window's keys (see window.lua)
-- ARGV[1]  n, the window's slots
-- ARGV[2]  the caller's clock as a slot number
-- ARGV[3]  the most drained members this call subtracts
-- ARGV[4]  view: 0 real, 1 display
-- ARGV[5]  offset, or with an anchor the radius around it
-- ARGV[6]  limit (entries at most)
-- ARGV[7]  anchor member, or '' for a plain page
--
-- Returns what page_of returns (see paging.lua), participants being the distinct voters
-- over the window's slots; or {'pending', members} while the window is not yet at the
-- clock or its drains still hold members: the caller calls again (each call does a
-- bounded share of the work).

local n, cur = tonumber(ARGV[1]), tonumber(ARGV[2])
local head, pending = window_advance(0, n, cur, tonumber(ARGV[3]), false)
if pending > 0 or head < cur then
  return {'pending', pending}
end
local voters = {}
for i = 0, n - 1 do
  voters[#voters + 1] = KEYS[4 + 2 * n + i]
end
return page_of(KEYS[2 + tonumber(ARGV[4])], voters, tonumber(ARGV[5]), tonumber(ARGV[6]), ARGV[7])
