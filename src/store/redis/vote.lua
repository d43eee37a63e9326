-- vote.lua: cast votes on one board, each atomically and in order: the rate-limit rules
-- are checked and consumed, and every enabled period's bucket in both views, carry-over
-- into each next bucket, every rolling window, participants, the hourly counter and the
-- idempotency record change together, or nothing changes. Each vote passes or fails on
-- its own and sees the votes before it in the call (group commit: one call applies the
-- votes that were in flight together, see store/redis/group_commit.rs); what a call's
-- votes add to each ranking is summed and written once per key and member, each vote
-- still answering the scores it would have seen alone (see `sums`). window.lua,
-- rules.lua and instance.lua come in front of this file.
--
-- ARGV[1] m, the number of votes. Then each vote in turn: its number of KEYS and of ARGV,
-- then its ARGV; its KEYS follow the previous votes' KEYS. Within a vote, its own KEYS[i]
-- and ARGV[i] are these:
--
-- KEYS[1]  idempotency record (string; any key of the board when ARGV[10] is 0)
-- KEYS[2]  votes-per-hour counter (hash: epoch hour -> votes)
-- KEYS[3]  refusals of the vote's hour (hash: rule id -> refused votes)
-- KEYS[4]  late votes (hash: epoch hour -> votes counted after their time had passed;
--          the archive task archives their closed buckets again; and 'g:<ranking key>'
--          -> '1' for a bucket whose rankings a late vote found gone, see below)
-- KEYS[5]  the board's headroom mark (string; see below; any key when `all` is off)
-- then three keys per enabled period p = 0 .. n-1, at 5 + 3p:
--   +1 real scores of the vote's bucket        (zset)
--   +2 display scores of the vote's bucket     (zset)
--   +3 display scores of the next bucket       (zset; carry-over target, ignored for `all`)
-- then two keys per voter bucket v = 0 .. h-1 (the hour, day and all-time buckets the
-- vote counts voters in; a week's and a month's voters are their days'), at 5 + 3n + 2v:
--   +1 the bucket's distinct voters             (HyperLogLog)
--   +2 the member's distinct voters in it       (HyperLogLog)
-- then two keys per rule i = 0 .. r-1, at 5 + 3n + 2h + 2i (see rules.lua)
-- then 3 + 5s keys per rolling window of s slots (see window.lua), one after another
-- and last the board's ledger (list of entries, oldest first; see ARGV[20])
--
-- ARGV[1]  n, the number of enabled periods
-- ARGV[2]  h, the number of voter buckets
-- ARGV[3]  r, the number of rules
-- ARGV[4]  w, the number of rolling windows
-- ARGV[5]  member id
-- ARGV[6]  real increment (votes; also what each rule counts)
-- ARGV[7]  display increment (millionths)
-- ARGV[8]  carry-over increment (millionths; 0 = none)
-- ARGV[9]  voter id, or '' when the vote names none
-- ARGV[10] idempotency record TTL in seconds, or 0 when the vote has no key
-- ARGV[11] receipt: text stored with the scores so a replay can answer the same ('' when
--          the vote has no key)
-- ARGV[12] votes-per-hour field (hours since the epoch)
-- ARGV[13] the largest allowed score (2^53)
-- ARGV[14] the vote's time, ms since the epoch
-- ARGV[15] a tag unique to this vote, naming its entries in rolling rules' logs
-- ARGV[16] TTL in seconds of the refusals hash
-- ARGV[17] '1' when the vote is late (its time passed a while ago), else '0'. A late vote
--          may land in a closed bucket the archive has written and whose keys expire: it
--          holds every key it writes (PERSIST) until the archive writes the bucket again
--          and gives them their expiry anew, and it marks a periodic bucket whose real
--          rankings did not exist before it ('g:<key>' in KEYS[4]), so the archive adds
--          what such a bucket holds to what it archived before instead of taking it for
--          the whole bucket
-- ARGV[18] the periods, one character each: 'a' for `all`, '1' for a period that carries
--          over into its next bucket, else '0'
-- ARGV[19] a family instance's TTL in ms: every key the vote writes expires that long
--          after it (see instance.lua and window_add); '0' on a plain board
-- ARGV[20] the vote's ledger entry (domain::ledger::Entry as JSON), or '' when the board
--          keeps no ledger: a counted vote appends it to the ledger (all of a call's
--          entries in one RPUSH per ledger, in the order of the votes), a refused vote or
--          a replay appends nothing; the drain (engine::ledger) moves them to SQL
-- then six per rule i, at 20 + 6i (see rules.lua; a rule counts the real increment)
-- then five per rolling window k, at 20 + 6r + 5k:
--   +1 s, its slots
--   +2 the clock's slot (now)
--   +3 the vote's slot (its time)
--   +4 the most drained members this call subtracts from the window's totals
--   +5 a family instance's TTL in ms for the slots the vote writes (see window_add)
--
-- Returns an array of each vote's reply, in order; a vote's reply is one of
--   {'ok', real_0, display_0, real_1, display_1, ...}  new scores, as decimal strings
--                              (a summed vote's periods' as integers): the n periods',
--                              then each rolling window's totals
--   {'dup', receipt_and_scores}                        the first answer for this key
--   {'limited', i, retry_ms}   rule i (0-based) refused: of the rules that refuse, the
--                              one that keeps refusing longest; retry_ms is -1 for never
--   {'overflow'}                                        a score would pass ARGV[13]
--   an error, when a command of the vote failed (the others still run)
--
-- What a vote costs Redis is mostly what this script does per vote around its commands,
-- so it converts only the numbers it computes with (glibc's strtod, behind tonumber, is
-- a tenth of a microsecond each), passes increments to redis.call as the strings in ARGV
-- (a Lua number would be formatted with printf('%.14g') on every call), reads flags as
-- strings, and formats nothing on the usual path.
--
-- The headroom mark says whether the board's all-time scores, both views, are all below
-- 10^15 units ('1'), or may not be ('0'); missing, the first vote that needs it looks at
-- the two all-time leaders and records what it saw. A vote whose increments are each
-- below 10^15 cannot take a score from below 10^15 past 2^53, so on a board marked '1' it
-- skips the overflow check (two ZSCOREs and their parsing: a sixteenth of its time); a
-- vote that leaves an all-time score at 10^15 or more marks the board '0', and initial
-- votes (initial.lua) remove the mark. Every other bucket and rolling total of the board
-- is at most the all-time score of its view, so the mark bounds them too. Boards without
-- `all` always check. Increments and scores are compared by their digits: a positive
-- whole number below 10^15 has at most 15.
--
-- Invariant: every check comes before the first write, so a refused vote changes no
-- score, no rule counter and no mark; a rate-limit refusal writes only its refusals
-- counter.

-- KEYS, ARGV, tonumber and call (redis.call) are rules.lua's locals.

-- A command's error as a vote's reply: a command's comes as a table with its message,
-- Lua's own as a string.
local function as_error(err)
  return redis.error_reply(type(err) == 'table' and err.err or tostring(err))
end

-- Writes the votes of a call of several share, made once after them all: the voters each
-- participants HyperLogLog gains, the board's and each member's (one PFADD takes them
-- all) and each hour's count in the votes-per-hour hash. A vote refused, or failed
-- before it got there, adds nothing. Each holds its keys in the order first written, and
-- per key {the votes that wrote it, what is written}: voters, or field -> count. A call
-- of one vote writes them at once (the tables would cost it more than they save).
local m = tonumber(ARGV[1])
local board_voters, member_voters, hour_votes
if m > 1 then
  board_voters, member_voters = {keys = {}, writes = {}}, {keys = {}, writes = {}}
  hour_votes = {keys = {}, writes = {}}
end

-- Sum before you write: in a call of several votes, what the votes add to each ranking
-- key and member is summed and written with one ZINCRBY (`flush`), and each vote's reply
-- gets the score it would have seen alone: the new score less what the later votes of
-- the call added. Per key: {votes = the votes that wrote it, mark = the headroom mark
-- key when it is an all-time ranking, members = member -> sum, order = members as first
-- written}, where a sum is a flat array (no table per vote): the call's total so far,
-- then for each vote that wants its score the triple reply, slot, total after it.
-- `idem` holds the idempotency records of the votes summed, set once their scores are
-- known. A call of one vote writes at once.
local sums, idem
if m > 1 then
  sums, idem = {keys = {}, writes = {}}, {}
end

-- What the call's votes have summed so far for `member` in `key`, not yet written.
local function pending(key, member)
  local write = sums and sums.writes[key]
  local sum = write and write.members[member]
  return sum and sum[1] or 0
end

-- Vote j adds `inc` (units) to `member` in `key`; its reply `reply` gets the score after
-- it in `slot` (none for carry-over).
local function sum_add(key, member, inc, j, reply, slot, mark)
  local write = sums.writes[key]
  if not write then
    write = {votes = {j}, mark = mark, members = {}, order = {}}
    sums.writes[key] = write
    sums.keys[#sums.keys + 1] = key
  elseif write.votes[#write.votes] ~= j then
    write.votes[#write.votes + 1] = j
  end
  local sum = write.members[member]
  if not sum then
    sum = {0}
    write.members[member] = sum
    write.order[#write.order + 1] = member
  end
  local total = sum[1] + inc
  sum[1] = total
  if slot then
    local k = #sum
    sum[k + 1], sum[k + 2], sum[k + 3] = reply, slot, total
  end
end

-- The headroom mark's value for the board whose all-time scores are at `real` and
-- `display`, from their leaders.
local function headroom(real, display)
  for _, key in ipairs({real, display}) do
    local top = call('ZREVRANGE', key, 0, 0, 'WITHSCORES')
    if top[2] and tonumber(top[2]) >= 1e15 then
      return '0'
    end
  end
  return '1'
end

local function exceeds(key, member, inc, max_units)
  local current = call('ZSCORE', key, member)
  return (current and tonumber(current) or 0) + pending(key, member) + inc > max_units
end

-- Whether any score the vote writes would pass the largest allowed score. Every bucket's
-- score is at most the all-time score of the same view (each unit of a bucket comes from
-- a vote that added at least as much to all-time), so when `all` is on checking it bounds
-- them all, rolling windows included; otherwise every target is checked, and rolling
-- totals as they stand (before expired slots leave them, so never too leniently).
-- `all_key` is where the `all` period's keys start, or nil when it is off.
local function overflows(kb, ab, n, h, r, w, member, real_inc, all_key)
  local display_inc = tonumber(ARGV[ab + 7])
  local max_units = tonumber(ARGV[ab + 13])
  local period_key = kb + 5
  if all_key then
    return exceeds(KEYS[all_key + 1], member, real_inc, max_units)
      or exceeds(KEYS[all_key + 2], member, display_inc, max_units)
  end
  local carry = ARGV[ab + 8] ~= '0' and tonumber(ARGV[ab + 8])
  for p = 0, n - 1 do
    local base = period_key + 3 * p
    if exceeds(KEYS[base + 1], member, real_inc, max_units)
        or exceeds(KEYS[base + 2], member, display_inc, max_units)
        or (carry and exceeds(KEYS[base + 3], member, carry, max_units)) then
      return true
    end
  end
  local o = period_key + 3 * n + 2 * h + 2 * r
  local slots_arg = ab + 20 + 6 * r + 1
  for i = 0, w - 1 do
    if exceeds(KEYS[o + 2], member, real_inc, max_units)
        or exceeds(KEYS[o + 3], member, display_inc, max_units) then
      return true
    end
    o = o + 3 + 5 * tonumber(ARGV[slots_arg + 5 * i])
  end
  return false
end

-- The entries a call appends to each ledger (one RPUSH per ledger, after the votes).
local ledger = {keys = {}, writes = {}}

-- Vote j's part of the shared write on `key`, which gets `item` (`shared` is
-- board_voters) or `inc` more in the field `item` (hour_votes).
local function shared_add(shared, key, j, item, inc)
  local write = shared.writes[key]
  if not write then
    write = {{}, {}}
    shared.writes[key] = write
    shared.keys[#shared.keys + 1] = key
  end
  local votes, items = write[1], write[2]
  votes[#votes + 1] = j
  if inc then
    items[item] = (items[item] or 0) + inc
  else
    items[#items + 1] = item
  end
end

local replies, expiries = {}, {}

-- Writes what the call's votes have summed so far (see `sums`) and the idempotency
-- records of those votes, then starts the sums afresh. A ZINCRBY that fails answers its
-- error for every vote that wrote to its key, as a command of the vote's own would, and
-- those votes get no idempotency record (a vote whose own command failed gets none).
local function flush()
  for _, key in ipairs(sums.keys) do
    local write = sums.writes[key]
    local ok, err = pcall(function()
      for _, member in ipairs(write.order) do
        local sum = write.members[member]
        local total = sum[1]
        local score = tonumber(call('ZINCRBY', key, string.format('%d', total), member))
        -- Whole numbers below 2^53: the reply carries them exactly as integers.
        local before = score - total
        for k = 2, #sum, 3 do
          sum[k][sum[k + 1]] = before + sum[k + 2]
        end
        if write.mark and score >= 1e15 then
          call('SET', write.mark, '0')
        end
      end
    end)
    if not ok then
      local reply = as_error(err)
      for _, j in ipairs(write.votes) do
        replies[j] = reply
      end
    end
  end
  for _, record in ipairs(idem) do
    local j, reply = record[1], record[2]
    if replies[j] == reply then
      local scores = {}
      for i = 2, #reply do
        local score = reply[i]
        scores[i - 1] = type(score) == 'number' and string.format('%d', score) or score
      end
      call('SET', record[3], record[4] .. '|' .. table.concat(scores, ','), 'EX', record[5])
    end
  end
  sums, idem = {keys = {}, writes = {}}, {}
end

-- Whether a summed vote may skip the 2^53 check on a board whose all-time scores are all
-- below 10^15 (the headroom mark '1'): what the call adds to the member's all-time scores
-- with this vote stays below 8 * 10^15, so no score can pass 2^53 (about 9.007 * 10^15).
local function summed_headroom(all_key, member, real_inc, display_inc)
  return pending(KEYS[all_key + 1], member) + real_inc < 8e15
    and pending(KEYS[all_key + 2], member) + display_inc < 8e15
end

-- Casts vote j, whose own KEYS[i] is KEYS[kb + i] (i up to `keys`) and own ARGV[i] is
-- ARGV[ab + i]. Answers its reply and, for a vote counted on a family instance, what
-- instance_expire needs to give its keys their expiry once the call's shared writes are
-- made.
local function cast(j, kb, ab, keys)
  local n, h, r = tonumber(ARGV[ab + 1]), tonumber(ARGV[ab + 2]), tonumber(ARGV[ab + 3])
  local w = tonumber(ARGV[ab + 4])
  local member, real_text = ARGV[ab + 5], ARGV[ab + 6]
  local real_inc = tonumber(real_text)
  local idem_ttl = ARGV[ab + 10]
  local keyed = idem_ttl ~= '0'
  local period_key = kb + 5
  local voter_key = period_key + 3 * n
  local rule_key = voter_key + 2 * h
  local rule_arg = ab + 20
  local display_text, carry_text = ARGV[ab + 7], ARGV[ab + 8]
  local all_at = string.find(ARGV[ab + 18], 'a', 1, true)
  local all_key = all_at and period_key + 3 * (all_at - 1)
  local mark_key = all_at and KEYS[kb + 5]
  local late = ARGV[ab + 17] == '1'
  if sums and (late or (keyed and idem[KEYS[kb + 1]])) then
    -- A late vote looks at which rankings exist, and a key already used in this call
    -- reads its record: both see the call's earlier votes written first.
    flush()
  end
  -- This vote's scores are summed with the call's others (a late vote writes at once).
  local summed = sums and not late

  -- The idempotency record, the rate-limit rules and the headroom mark: every counter is
  -- read first and consumed only when all of them admit.
  local early, used, stale, mark = write_checks(KEYS[kb + 1], keyed, rule_key, rule_arg, r,
    real_inc, KEYS[kb + 3], ARGV[ab + 16], mark_key)
  if early then
    return early
  end
  local stored_mark = mark
  if mark_key and not mark then
    mark = headroom(KEYS[all_key + 1], KEYS[all_key + 2])
  end
  local display_inc = summed and tonumber(display_text)
  if not (mark == '1' and #real_text <= 15 and #display_text <= 15 and #carry_text <= 15
        and (not summed or summed_headroom(all_key, member, real_inc, display_inc)))
      and overflows(kb, ab, n, h, r, w, member, real_inc, all_key) then
    return {'overflow'}
  end

  rules_consume(rule_key, rule_arg, r, used, stale, real_inc, real_text, ARGV[ab + 14],
    ARGV[ab + 15])

  local carries = carry_text ~= '0' and ARGV[ab + 18]
  if late then
    for p = 0, n - 1 do
      local ranking = KEYS[period_key + 3 * p + 1]
      if p + 1 ~= all_at and call('EXISTS', ranking) == 0 then
        call('HSET', KEYS[kb + 4], 'g:' .. ranking, '1')
      end
    end
  end
  local result = {'ok'}
  if summed then
    local carry_inc = carries and tonumber(carry_text)
    if mark_key and mark ~= stored_mark then
      call('SET', mark_key, mark)
    end
    for p = 0, n - 1 do
      local base = period_key + 3 * p
      local all = p + 1 == all_at and mark_key
      sum_add(KEYS[base + 1], member, real_inc, j, result, 2 * p + 2, all)
      sum_add(KEYS[base + 2], member, display_inc, j, result, 2 * p + 3, all)
      -- 49 is '1'.
      if carries and string.byte(carries, p + 1) == 49 then
        sum_add(KEYS[base + 3], member, carry_inc, j)
      end
    end
  end
  for p = 0, summed and -1 or n - 1 do
    local base = period_key + 3 * p
    local real_score = call('ZINCRBY', KEYS[base + 1], real_text, member)
    local display_score = call('ZINCRBY', KEYS[base + 2], display_text, member)
    result[2 * p + 2], result[2 * p + 3] = real_score, display_score
    if p + 1 == all_at then
      -- Right after the all-time scores move, before any later command can fail.
      if #real_score > 15 or #display_score > 15 then
        mark = '0'
      end
      if mark ~= stored_mark then
        call('SET', mark_key, mark)
      end
    end
    -- 49 is '1'.
    if carries and string.byte(carries, p + 1) == 49 then
      call('ZINCRBY', KEYS[base + 3], carry_text, member)
    end
  end
  local voter = ARGV[ab + 9]
  if voter ~= '' then
    for k = voter_key + 1, voter_key + 2 * h, 2 do
      if board_voters then
        shared_add(board_voters, KEYS[k], j, voter)
      else
        call('PFADD', KEYS[k], voter)
      end
      if summed then
        shared_add(member_voters, KEYS[k + 1], j, voter)
      else
        call('PFADD', KEYS[k + 1], voter)
      end
    end
  end
  if w > 0 then
    local o = rule_key + 2 * r
    local at = rule_arg + 6 * r
    for k = 1, w do
      local slots = tonumber(ARGV[at + 1])
      local totals = window_add(o, slots, tonumber(ARGV[at + 2]), tonumber(ARGV[at + 3]),
        tonumber(ARGV[at + 4]), member, real_text, display_text, voter, ARGV[ab + 19],
        ARGV[at + 5])
      result[2 * n + 2 * k] = totals[1]
      result[2 * n + 2 * k + 1] = totals[2]
      o = o + 3 + 5 * slots
      at = at + 5
    end
  end
  if hour_votes then
    shared_add(hour_votes, KEYS[kb + 2], j, ARGV[ab + 12], real_inc)
  else
    call('HINCRBY', KEYS[kb + 2], ARGV[ab + 12], real_text)
  end
  if late then
    call('HINCRBY', KEYS[kb + 4], ARGV[ab + 12], real_text)
    for p = 0, n - 1 do
      local base = period_key + 3 * p
      call('PERSIST', KEYS[base + 1])
      call('PERSIST', KEYS[base + 2])
      if carries and string.byte(carries, p + 1) == 49 then
        call('PERSIST', KEYS[base + 3])
      end
    end
    if voter ~= '' then
      for k = voter_key + 1, voter_key + 2 * h do
        call('PERSIST', KEYS[k])
      end
    end
  end

  local entry = ARGV[ab + 20]
  if entry ~= '' then
    shared_add(ledger, KEYS[kb + keys], j, entry)
  end
  if keyed and summed then
    idem[#idem + 1] = {j, result, KEYS[kb + 1], ARGV[ab + 11], idem_ttl}
    idem[KEYS[kb + 1]] = true
  elseif keyed then
    call('SET', KEYS[kb + 1], ARGV[ab + 11] .. '|' .. table.concat(result, ',', 2), 'EX',
      idem_ttl)
  end
  if ARGV[ab + 19] ~= '0' then
    return result, {kb + 1, rule_key + 2 * r, keyed, rule_key, r, ARGV[ab + 19]}
  end
  return result
end

-- Gives the keys of the votes counted on family instances their expiry: after the
-- shared writes, which may be the first to make a key.
local function expire_instances(expiries)
  local seen = {}
  for _, e in ipairs(expiries) do
    instance_expire(e[1], e[2], e[3], e[4], e[5], e[6], seen)
  end
end

local kb, at = 0, 1
for j = 1, m do
  local keys, args = tonumber(ARGV[at + 1]), tonumber(ARGV[at + 2])
  local ok, reply, expiry = pcall(cast, j, kb, at + 2, keys)
  if not ok then
    reply = as_error(reply)
  elseif expiry then
    expiries[#expiries + 1] = expiry
  end
  replies[j] = reply
  kb, at = kb + keys, at + 2 + args
end

if sums then
  flush()
end

-- The shared writes. One that fails answers its error for every vote that wrote to it,
-- as a command of the vote's own would.
local function share(shared, write)
  for _, key in ipairs(shared.keys) do
    local votes, items = shared.writes[key][1], shared.writes[key][2]
    local ok, err = pcall(write, key, items)
    if not ok then
      local reply = as_error(err)
      for _, j in ipairs(votes) do
        replies[j] = reply
      end
    end
  end
end
share(ledger, function(key, entries)
  call('RPUSH', key, unpack(entries))
end)
if m > 1 then
  for _, voters in ipairs({board_voters, member_voters}) do
    share(voters, function(key, items)
      call('PFADD', key, unpack(items))
    end)
  end
  share(hour_votes, function(key, counts)
    for field, count in pairs(counts) do
      call('HINCRBY', key, field, string.format('%d', count))
    end
  end)
end
if #expiries > 0 then
  expire_instances(expiries)
end
return replies
