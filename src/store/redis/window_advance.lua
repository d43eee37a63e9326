-- window_advance.lua: brings a rolling window to the caller's clock with every key (see
-- window.lua), for a vote that found it out of its reach; window.lua comes in front of
-- this file. The caller calls again until the head is at the clock and nothing is
-- pending: each call does a bounded share of the work.
--
-- KEYS[1 .. 3 + 5n]  the window's keys (see window.lua)
-- ARGV[1]  n, the window's slots
-- ARGV[2]  the caller's clock as a slot number
-- ARGV[3]  the most drained members this call subtracts
-- ARGV[4]  a family instance's TTL in ms, which a state this call makes gets; '0' on a
--          plain board
--
-- Returns {head, pending}.

local head, pending = window_advance(0, tonumber(ARGV[1]), tonumber(ARGV[2]),
  tonumber(ARGV[3]), true)
if ARGV[4] ~= '0' then
  redis.call('PEXPIRE', KEYS[1], ARGV[4])
end
return {head, pending}
