-- Runs one captured write-script call in Lua 5.1 (the VM Redis embeds) with a stand-in
-- `redis.call` (a table per key; PFADD, RPUSH and the expiries do nothing) and says
-- where the script's own time goes: what Redis's INFO commandstats cannot tell.
--
-- usage: lua5.1 profile.lua CALL RUNS [lines] -- FILE...
--   CALL    a Lua file defining KEYS_IN and ARGV_IN (bench/profile/monitor_call.py)
--   RUNS    how many times to run the call, on an empty store each time
--   lines   count by line as well as by function
--   FILE... the script as Redis gets it, in parts (for vote.lua: window.lua, rules.lua,
--           trend.lua, instance.lua and vote.lua, as store/redis/vote.rs puts them)
-- Prints µs per call and per vote (ARGV[2] votes), the script's VM instructions per vote
-- (what does not drift with the machine's speed) and each function's share of them.
local call_path, runs, by_line = arg[1], tonumber(arg[2]), arg[3] == 'lines'
dofile(call_path)
local first_file = (by_line and 4 or 3) + 1
assert(arg[first_file - 1] == '--', 'usage: lua5.1 profile.lua CALL RUNS [lines] -- FILE...')
-- The parts joined, and where each starts, to name a line by its own file.
local source, parts, line = {}, {}, 1
for i = first_file, #arg do
  local text = assert(io.open(arg[i])):read('*a')
  source[#source + 1] = text
  parts[#parts + 1] = {name = arg[i]:match('[^/]*$'), from = line}
  local _, newlines = text:gsub('\n', '')
  line = line + newlines
end
local chunk = assert(loadstring(table.concat(source), '=script'))
local function where(at)
  for i = #parts, 1, -1 do
    if at >= parts[i].from then
      return parts[i].name .. ':' .. (at - parts[i].from + 1)
    end
  end
end

local store, calls
local function of(key)
  local t = store[key]
  if not t then
    t = {}
    store[key] = t
  end
  return t
end
local function number(v)
  return string.format('%.17g', v)
end
local function one()
  return 1
end
local commands = {
  GET = function(k) return type(store[k]) == 'string' and store[k] or false end,
  SET = function(k, v) store[k] = v; return {ok = 'OK'} end,
  MGET = function(...)
    local r = {}
    for i = 1, select('#', ...) do
      local v = store[select(i, ...)]
      r[i] = type(v) == 'string' and v or false
    end
    return r
  end,
  HMGET = function(k, ...)
    local h, r = of(k), {}
    for i = 1, select('#', ...) do
      r[i] = h[select(i, ...)] or false
    end
    return r
  end,
  HSET = function(k, ...)
    local h, n = of(k), select('#', ...)
    for i = 1, n, 2 do
      h[select(i, ...)] = tostring(select(i + 1, ...))
    end
    return n / 2
  end,
  HINCRBY = function(k, f, d)
    local h = of(k)
    h[f] = tostring((tonumber(h[f]) or 0) + tonumber(d))
    return tonumber(h[f])
  end,
  ZINCRBY = function(k, d, m)
    local z = of(k)
    z[m] = (z[m] or 0) + tonumber(d)
    return number(z[m])
  end,
  ZSCORE = function(k, m) local v = of(k)[m]; return v and number(v) or false end,
  ZREVRANGE = function() return {} end,
  ZRANGEBYSCORE = function() return {} end,
  EXISTS = function(k) return store[k] and 1 or 0 end,
  RPUSH = function(_, ...) return select('#', ...) end,
  PFADD = one, EXPIRE = one, PEXPIRE = one, PERSIST = one, ZADD = one, DEL = one,
}
redis = {
  call = function(name, ...)
    calls = calls + 1
    return assert(commands[name], 'the stand-in has no ' .. name)(...)
  end,
  error_reply = function(e) return {err = e} end,
  status_reply = function(s) return {ok = s} end,
}

local function run()
  store, calls = {}, 0
  KEYS, ARGV = KEYS_IN, ARGV_IN
  return chunk()
end

local replies, counted = run(), 0
assert(type(replies) == 'table', 'the call answered ' .. tostring(replies))
-- A counted vote answers text (its record's, see vote.lua); every other reply is a table.
for _, reply in ipairs(replies) do
  if type(reply) == 'string' then
    counted = counted + 1
  end
end
local votes = tonumber(ARGV_IN[2])
local started = os.clock()
for _ = 1, runs do
  run()
end
local usec = (os.clock() - started) / runs * 1e6
print(string.format('%d votes, %d counted, %d redis.call; %.1f µs a call, %.2f µs a vote',
  votes, counted, calls, usec, usec / votes))

-- Every VM instruction of a few runs, counted by function (and line): exact, and what
-- does not drift with the machine's speed. (A count hook every N instructions would
-- sample with a bias: the hook's own instructions count towards the next N.)
local counted_runs = math.max(1, math.floor(runs / 50))
local counts, total, own = {}, 0, 0
debug.sethook(function()
  local info = debug.getinfo(2, 'Snl')
  local name = 'profile'  -- the stand-in's
  if info.short_src == 'script' then
    own = own + 1
    name = info.linedefined == 0 and 'main chunk'
        or (info.name or 'function') .. ' (' .. where(info.linedefined) .. ')'
    if by_line then
      name = name .. ' ' .. where(info.currentline)
    end
  end
  counts[name] = (counts[name] or 0) + 1
  total = total + 1
end, '', 1)
for _ = 1, counted_runs do
  run()
end
debug.sethook()
print(string.format('%d VM instructions of the script a vote (and %d of the stand-in); '
  .. 'their shares:', own / counted_runs / votes, (total - own) / counted_runs / votes))
local list = {}
for name, n in pairs(counts) do
  if name ~= 'profile' then
    list[#list + 1] = {name, n}
  end
end
table.sort(list, function(a, b) return a[2] > b[2] end)
for i = 1, math.min(30, #list) do
  print(string.format('%5.1f %%  %s', 100 * list[i][2] / own, list[i][1]))
end
