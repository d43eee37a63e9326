-- wrk script for the TV final (benches/tv_final.rs): one vote per request on the board
-- `final`, a random voter (1..100,000) for a random contestant (m1..m10), the voter's
-- address (two voters per address; the master key may name it) and a fresh idempotency
-- key, so no request is a cheap replay.
math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16))
local counter = 0
local prefix = tostring(math.random(1, 1e9))

request = function()
  counter = counter + 1
  local voter = math.random(1, 100000)
  local address = 167772160 + math.floor(voter / 2)
  local body = string.format(
    '{"member":"m%d","voter":"viewer-%d","ip":"%d.%d.%d.%d","channel":"app","terminal":"ios","idempotency_key":"tv%s-%d"}',
    math.random(1, 10), voter, math.floor(address / 16777216) % 256,
    math.floor(address / 65536) % 256, math.floor(address / 256) % 256, address % 256,
    prefix, counter)
  return wrk.format("POST", nil, nil, body)
end
