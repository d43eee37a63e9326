-- wrk script: one vote per request, a random voter (1..100,000) for a random member
-- (m1..m200), with a fresh idempotency key so no request is a cheap replay.
math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16))
local counter = 0
local prefix = tostring(math.random(1, 1e9))

request = function()
  counter = counter + 1
  local body = string.format(
    '{"member":"m%d","voter":"u%d","channel":"app","terminal":"ios","idempotency_key":"w%s-%d"}',
    math.random(1, 200), math.random(1, 100000), prefix, counter)
  return wrk.format("POST", nil, nil, body)
end
