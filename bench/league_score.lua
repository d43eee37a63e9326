-- wrk script: one league score write per request: a random joined player
-- (u1..u<BENCH_LEAGUE_PLAYERS>, default 100,000) gains 1 to 100 points.
math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16))
local players = tonumber(os.getenv("BENCH_LEAGUE_PLAYERS") or "100000")

request = function()
  local body = string.format('{"player":"u%d","delta":%d}', math.random(1, players), math.random(1, 100))
  return wrk.format("POST", nil, nil, body)
end
