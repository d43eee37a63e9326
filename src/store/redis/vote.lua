-- vote.lua: cast votes on one board, each atomically and in order: the rate-limit rules
-- are checked and consumed, and every enabled period's bucket in both views, carry-over
-- into each next bucket, every rolling window and trending period, participants, the
-- hourly counter and the idempotency record change together, or nothing changes. Each
-- vote passes or fails on its own and sees the votes before it in the call (group
-- commit: one call applies the votes that were in flight together, see
-- store/redis/group_commit.rs); what a call's votes add to each ranking is summed and
-- written once per key and member, each vote still answering the scores it would have
-- seen alone (see `sums`). window.lua, rules.lua, trend.lua and instance.lua come in
-- front of this file.
--
-- A call's votes share what they have in common: a header holds what the votes of one
-- board at one moment agree on (the buckets and their keys, the rules' settings, the
-- rolling windows), parsed once per call, and each vote carries only its own facts. The
-- engine makes a header per distinct such part (store/redis/vote.rs), so a call of 32
-- votes in one hour usually has one.
--
-- ARGV[1] H, the number of headers; ARGV[2] m, the number of votes; ARGV[3] the number of
-- KEYS the votes take (the headers' KEYS come after them). Then each header in turn: its
-- number of KEYS and of ARGV, then its ARGV (its KEYS follow the previous headers').
-- Then each vote's ARGV: 13 + r, or 4 + r in a reserve step (its KEYS follow the previous
-- votes').
--
-- A header's own KEYS[i] and ARGV[i]:
-- KEYS[1]  votes counter (hash: epoch hour -> votes, and real rankings key of a bucket ->
--          votes counted in the bucket)
-- KEYS[2]  refusals of the votes' hour (hash: rule id -> refused votes)
-- KEYS[3]  late votes (hash: epoch hour -> votes counted after their time had passed;
--          the archive task archives their closed buckets again; and 'g:<ranking key>'
--          -> '1' for a bucket whose rankings a late vote found gone, see below)
-- KEYS[4]  the board's headroom mark (string; see below; any key when `all` is off)
-- then three keys per enabled period p = 0 .. n-1, at 4 + 3p:
--   +1 real scores of the bucket        (zset)
--   +2 display scores of the bucket     (zset)
--   +3 display scores of the next bucket (zset; carry-over target, ignored for `all`)
-- then one key per voter bucket v = 1 .. h (the hour, day and all-time buckets votes
-- count voters in; a week's and a month's voters are their days'), at 4 + 3n + v: the
-- bucket's distinct voters (HyperLogLog)
-- then the board's ledger (list of entries, oldest first; see the vote's entry)
-- then 13 keys per rolling window, one after another, whatever its length: its state,
-- totals and the ring keys of two slots (see window.lua)
-- then 3 keys per trending period: its scores per view and its origin (see trend.lua)
-- then, when no rule keeps a rolling log, two keys per rule i (see rules.lua): a
--          counter's hashes are the same for every vote of the header, so its votes
--          carry none (a log's keys name the vote's subject: with one, every vote carries
--          every rule's)
--
-- ARGV[1]  n, the number of enabled periods
-- ARGV[2]  h, the number of voter buckets
-- ARGV[3]  r, the number of rules
-- ARGV[4]  w, the number of rolling windows
-- ARGV[5]  the largest allowed score M (2^53; less in a shard, see keys.rs `max_units`)
-- ARGV[6]  votes-per-hour field (hours since the epoch), or '' for a reserve step: a
--          sharded vote's rules that count in this slot, checked and consumed and nothing
--          else (the vote is counted in its shard: see vote.rs); its votes take the
--          reserve step's own KEYS and ARGV (see below) and `reserve`, not `cast`
-- ARGV[7]  TTL in seconds of the refusals hash
-- ARGV[8]  '1' when the votes are late (their time passed a while ago), else '0'. A late
--          vote may land in a closed bucket the archive has written and whose keys
--          expire: it holds every key it writes (PERSIST) until the archive writes the
--          bucket again and gives them their expiry anew, and it marks a periodic bucket
--          whose real rankings did not exist before it ('g:<key>' in KEYS[3]), so the
--          archive adds what such a bucket holds to what it archived before instead of
--          taking it for the whole bucket
-- ARGV[9]  the periods, one character each: 'a' for `all`, '1' for a period that carries
--          over into its next bucket, else '0'
-- ARGV[10] a family instance's TTL in ms: every key a vote writes expires that long
--          after it (see instance.lua and window_add); '0' on a plain board
-- ARGV[11] t, the number of trending periods
-- then six per rule i, at 11 + 6i (see rules.lua; a rule counts the real increment)
-- then five per rolling window k, at 11 + 6r + 5k:
--   +1 s, its slots
--   +2 the clock's slot c (now; never before the votes' slot): the window's first ring
--      keys are c's, its second c + 1's
--   +3 the votes' slot (their time)
--   +4 the most drained members this call subtracts from the window's totals
--   +5 a family instance's TTL in ms for the slots the vote writes (see window_add)
-- then two per trending period k, at 11 + 6r + 5w + 2k (see trend.lua)
--
-- A vote's own KEYS[i] (1 + h, and 2r more when its header holds no rule keys) and
-- ARGV[i] (13 + r):
-- KEYS[1]  idempotency record (string; any key of the board when its TTL is 0)
-- then one key per voter bucket v = 1 .. h, at 1 + v: the member's distinct voters in it
--          (HyperLogLog)
-- then, when its header holds none, two keys per rule i, at 1 + h + 2i (see rules.lua)
--
-- ARGV[1]  its header (1 .. H)
-- then one per rule i, at 1 + 1 + i: its counter's field (see rules.lua)
-- then twelve, at 1 + r + k:
--   +1  member id
--   +2  real increment (votes; also what each rule counts)
--   +3  display increment (millionths)
--   +4  carry-over increment (millionths; 0 = none)
--   +5  voter id, or '' when the vote names none
--   +6  idempotency record TTL in seconds, or 0 when the vote has no key
--   +7  receipt: text stored with the scores so a replay can answer the same ('' when
--       the vote has no key)
--   +8  the vote's time, ms since the epoch
--   +9  a tag unique to this vote, naming its entries in rolling rules' logs
--   +10 the vote's ledger entry (domain::ledger::Entry as JSON), or '' when the board
--       keeps no ledger: a counted vote appends it to the ledger (all of a call's
--       entries in one RPUSH per ledger, in the order of the votes), a refused vote or
--       a replay appends nothing; the drain (engine::ledger) moves them to SQL
--   +11 the watch that held the vote in a reserve step (a sharded board's, see vote.rs)
--       as '<watch id>:<1 when it flagged the subject, else 0>:<subject>', or '': the
--       vote is held (see `hold`) once its own rules admit it
--   +12 the member's scores in the other shards of a board whose scores are sums over
--       shards, read before the vote (see vote.rs), as 'real_0,display_0,...' for its
--       periods, or '': its answer and its idempotency record are its shard's scores,
--       then '+' and these (the engine adds them up), so a retry answers the same sum
--
-- A reserve step's vote's own KEYS[i] (none, or 2r when its header holds no rule keys)
-- and ARGV[i] (4 + r):
-- KEYS[2i + 1], KEYS[2i + 2]  rule i's keys, when its header holds none (see rules.lua)
-- ARGV[1]  its header (1 .. H)
-- then one per rule i, at 1 + 1 + i: its counter's field
-- then three, at 1 + r + k:
--   +1  real increment (what each rule counts)
--   +2  the vote's time, ms since the epoch
--   +3  its tag (as a vote's +9)
--
-- Returns 'advance', having changed nothing, when a rolling window is out of the reach of
-- the keys a header gives it (see window_ready in window.lua): the caller brings it to
-- its clock with window_advance.lua and calls again. Otherwise an array of each vote's
-- reply, in order; a vote's reply is one of (a reserve step's: '|', a 'held' with no
-- scores, or a refusal)
--   '<receipt>|real_0,display_0,real_1,display_1,...'  counted: the text its idempotency
--                              record keeps (ARGV +7, '' when it has none), the new
--                              scores as decimal strings: the n periods', then each
--                              rolling window's totals (a trending period's decayed
--                              scores are read, not answered), then '+' and ARGV +12
--                              when that is not ''. Text, not a table: Redis
--                              turns each table of a script's reply into RESP field by
--                              field, and a call's votes answer far more often than not
--   {'dup', receipt_and_scores}                        the first answer for this key
--   {'held', watch, flags, real_0, display_0, ...}  a watch (rules given kind 'wc' or
--                              'ws', see rules.lua) held the vote for review: its rules
--                              are consumed and its ledger entry is marked held; flags is
--                              1 when it took the subject past the threshold; the scores
--                              are the member's as they stand (see `hold`)
--   {'limited', i, retry_ms}   rule i (0-based) refused: of the rules that refuse, the
--                              one that keeps refusing longest; retry_ms is -1 for never
--   {'overflow'}                                        a score would pass the header's
--                                                       largest allowed score
--   an error, when a command of the vote failed (the others still run)
--
-- What a vote costs Redis is mostly what this script does per vote around its commands,
-- so it converts only the numbers it computes with (glibc's strtod, behind tonumber, is
-- a tenth of a microsecond each), passes increments to redis.call as the strings in ARGV
-- (a Lua number would be formatted with printf('%.14g') on every call), reads flags as
-- strings, and formats nothing on the usual path.
--
-- The headroom mark says whether the board's all-time scores, both views, are all below
-- 10^d units ('1'), or may not be ('0'), where d is the most digits with 2 * 10^d within
-- the largest allowed score M (d = 15 for 2^53; a shard of a board whose scores are sums
-- over shards has a smaller M, see keys.rs `max_units`); missing, the first vote that
-- needs it looks at the two all-time leaders and records what it saw. A vote whose
-- increments are each below 10^d cannot take a score from below 10^d past M, so on a
-- board marked '1' it skips the overflow check (two ZSCOREs and their parsing: a
-- sixteenth of its time); a vote that leaves an all-time score at 10^d or more marks the
-- board '0', and initial votes (initial.lua) and adjustments of the all-time bucket
-- (adjust.lua) remove the mark. Every other bucket and rolling total of the board is at
-- most the all-time score of its view plus what adjustments left in it, at most
-- M - 2 * 10^d (see adjust.lua), so the mark bounds them too. Boards without `all`, and
-- votes the mark does not let through, check every bucket the vote writes. Increments
-- and scores are compared by their digits: a positive whole number below 10^d has at
-- most d.
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

local H, m = tonumber(ARGV[1]), tonumber(ARGV[2])

-- Sum before you write: in a call of several votes, what the votes of one header add to
-- each member is summed and written with one ZINCRBY per period and view (`flush`), and
-- each vote's reply gets the score it would have seen alone: the new score less what the
-- later votes of the call added. The votes of headers with the same rankings keys (their
-- `sums_id`: headers that differ only in their rules, say) write the same keys, so a
-- member's running sums are the same in every period: `sums` holds that id, the header
-- they began with and per member {real, display, carry} (the call's totals so far), then
-- per vote the pair reply, real total after it, display total after it, with the members
-- in the order first voted for. A vote of a header with other rankings keys flushes them
-- first, so a score is never summed out of the votes' order; a vote of a header with no
-- periods (a board of trending periods only) writes no rankings and leaves them be, and
-- so does a reserve step (`reserve`), so a shard's call whose reserve steps and writes
-- interleave still sums each member's writes. `answers` holds the votes summed,
-- answered (and their idempotency records set) once their scores are known, and the
-- keys of those records. A call of one vote writes at once.
local sums, answers
-- Whether a write of the sums failed (see `flush`).
local sums_failed = false
if m > 1 then
  sums, answers = {members = {}, order = {}}, {}
end

-- What the call's votes of header `hd` have summed so far for `member`, not yet written:
-- the sums, or nil.
local function pending(hd, member)
  return sums and sums.id == hd.sums_id and sums.members[member]
end

-- Vote j (header `hd`) adds `real`, `display` and `carry` (units) to `member`; its reply
-- `reply` gets the scores after it.
local function sum_add(hd, member, real, display, carry, reply)
  if not sums.id then
    sums.id, sums.hd = hd.sums_id, hd
  end
  local sum = sums.members[member]
  if not sum then
    -- Made whole: a table grown key by key is resized at each power of two.
    sums.members[member] = {real, display, carry, reply, real, display}
    sums.order[#sums.order + 1] = member
    return
  end
  local real_total, display_total = sum[1] + real, sum[2] + display
  local k = #sum
  sum[1], sum[2], sum[3] = real_total, display_total, sum[3] + carry
  sum[k + 1], sum[k + 2], sum[k + 3] = reply, real_total, display_total
end

-- The headroom mark's value for the board whose all-time scores are at `real` and
-- `display`, from their leaders.
local function headroom(hd, real, display)
  for _, key in ipairs({real, display}) do
    local top = call('ZREVRANGE', key, 0, 0, 'WITHSCORES')
    if top[2] and tonumber(top[2]) >= hd.low then
      return '0'
    end
  end
  return '1'
end

-- Whether `member`'s score in `key`, with `summed` not yet written and `inc` more,
-- passes `max_units`.
local function exceeds(key, member, summed, inc, max_units)
  local current = call('ZSCORE', key, member)
  return (current and tonumber(current) or 0) + summed + inc > max_units
end

-- Whether any score the vote writes would pass the largest allowed score. Every bucket's
-- score is at most the all-time score of the same view (each unit of a bucket comes from
-- a vote that added at least as much to all-time), so when `all` is on checking it bounds
-- them all, rolling windows included; otherwise every target is checked, and rolling
-- totals as they stand (before expired slots leave them, so never too leniently).
local function overflows(hd, member, real_inc, display_text, carry_text)
  if hd.n == 0 and #hd.windows == 0 then
    -- Nothing to check (a board of trending periods only), so no number to parse.
    return false
  end
  local display_inc = tonumber(display_text)
  local max_units = hd.max_units
  local sum = pending(hd, member) or {0, 0, 0}
  local carry = carry_text ~= '0' and tonumber(carry_text)
  for p = 0, hd.n - 1 do
    local base = hd.period_key + 3 * p
    if exceeds(KEYS[base + 1], member, sum[1], real_inc, max_units)
        or exceeds(KEYS[base + 2], member, sum[2], display_inc, max_units)
        or (carry and exceeds(KEYS[base + 3], member, sum[3], carry, max_units)) then
      return true
    end
  end
  for _, win in ipairs(hd.windows) do
    if exceeds(KEYS[win.o + 2], member, 0, real_inc, max_units)
        or exceeds(KEYS[win.o + 3], member, 0, display_inc, max_units) then
      return true
    end
  end
  return false
end

-- The entries a call appends to each ledger, made once after its votes (one RPUSH per
-- ledger, in the order of the votes): per ledger key {the votes that wrote it, the
-- entries}, keys in the order first written.
local ledger = {keys = {}, writes = {}}

-- Vote j's entry `entry` in the ledger at `key`.
local function ledger_add(key, j, entry)
  local write = ledger.writes[key]
  if not write then
    write = {{}, {}}
    ledger.writes[key] = write
    ledger.keys[#ledger.keys + 1] = key
  end
  write[1][#write[1] + 1] = j
  write[2][#write[2] + 1] = entry
end

-- Each vote's replies, the expiries of family instances' keys it asks for, and its
-- rule counters' hashes (see counters_want).
local replies, expiries, rule_hashes = {}, {}, {}

-- The strings the votes read before their checks, read once per call with one MGET:
-- each keyed vote's idempotency record and each header's headroom mark, by key, as the
-- call's writes leave them (`put`; false for none). `stored_failed` is the MGET's error,
-- which fails every vote.
local stored, stored_failed = {}, nil

-- Sets the string `key` to `value` (expiring in `ttl` seconds when given) and keeps it
-- in `stored`.
local function put(key, value, ttl)
  if ttl then
    call('SET', key, value, 'EX', ttl)
  else
    call('SET', key, value)
  end
  stored[key] = value
end

-- What a vote's answer adds after its shard's scores: '+' and the other shards' (its ARGV
-- +12), or nothing.
local function others(parts)
  return parts ~= '' and '+' .. parts or ''
end

-- Writes `member`'s sums `sum` (of header `hd`, see `sums`) and gives each of its votes
-- its scores: a function of its own, so the call makes no closure per member.
local function write_member(hd, member, sum)
  -- The member's increments, the same in every period.
  local real_text, display_text = int_text(sum[1]), int_text(sum[2])
  local carry_text = sum[3] > 0 and int_text(sum[3])
  local last = sum[#sum - 2]
  -- Where the member's earlier votes in the call end, or false for none: only theirs
  -- are worked out from the reply (the last takes its text).
  local earlier = #sum > 6 and #sum - 5
  local carries, all_at, digits, mark_key = hd.carries, hd.all_at, hd.digits, hd.mark_key
  for p = 0, hd.n - 1 do
    local base, slot = hd.period_key + 3 * p, 2 * p + 2
    -- The all-time scores mark the board at once, before any later command can fail.
    local all = p + 1 == all_at
    local real = call('ZINCRBY', KEYS[base + 1], real_text, member)
    -- A whole number below 10^d has at most d digits.
    if all and #real > digits then
      put(mark_key, '0')
    end
    local display = call('ZINCRBY', KEYS[base + 2], display_text, member)
    if all and #display > digits then
      put(mark_key, '0')
    end
    if earlier then
      -- Whole numbers below 2^53: the reply carries them exactly as integers.
      local real_before, display_before = tonumber(real) - sum[1], tonumber(display) - sum[2]
      for k = 4, earlier, 3 do
        local reply = sum[k]
        reply[slot], reply[slot + 1] = real_before + sum[k + 1], display_before + sum[k + 2]
      end
    end
    last[slot], last[slot + 1] = real, display
    if carry_text and carries[p] then
      call('ZINCRBY', KEYS[base + 3], carry_text, member)
    end
  end
end

-- Writes what the call's votes have summed so far (see `sums`) and answers those votes
-- (their replies as text, and their idempotency records), then starts the sums afresh.
-- A ZINCRBY that fails answers its error for every vote of the member, as a command of
-- the vote's own would, and those votes get no idempotency record and no ledger entry (a
-- vote whose own command failed gets neither). The member's last vote in the call has
-- the scores Redis replied: its reply takes their text, as a vote of a call of one does,
-- and so does its record; the others' are formatted.
local function flush()
  local hd = sums.hd
  for _, member in ipairs(sums.order) do
    local sum = sums.members[member]
    local ok, err = pcall(write_member, hd, member, sum)
    if not ok then
      sums_failed = true
      local reply = as_error(err)
      for k = 4, #sum, 3 do
        for j, r in pairs(replies) do
          if r == sum[k] then
            replies[j] = reply
          end
        end
      end
    end
  end
  for _, answer in ipairs(answers) do
    local j, reply = answer[1], answer[2]
    if replies[j] == reply then
      local text = reply[1] .. '|' .. (type(reply[2]) == 'string'
        and table.concat(reply, ',', 2) or string.format(answer[5], unpack(reply, 2)))
        .. others(answer[6])
      if answer[3] then
        put(answer[3], text, answer[4])
      end
      replies[j] = text
    end
  end
  sums, answers = {members = {}, order = {}}, {}
end

-- Whether a summed vote may skip the overflow check on a board whose all-time scores are
-- all below 10^d (the headroom mark '1'): what the call adds to the member's all-time
-- scores with this vote stays below M - 10^d, so no score can pass M.
local function summed_headroom(hd, member, real_inc, display_inc)
  local sum = pending(hd, member)
  return not sum or (sum[1] + real_inc < hd.summed_max and sum[2] + display_inc < hd.summed_max)
end

-- A subject as JSON string text: quotes, backslashes and control characters escaped.
local function json_text(text)
  return (string.gsub(text, '[%c"\\]', function(c)
    return string.format('\\u%04x', string.byte(c))
  end))
end

-- Holds vote j (header `hd`, own KEYS from kb + 1, its twelve ARGV from fx + 1) for
-- review: the watch `watch` (its id) took `subject` past the threshold. Its rules and
-- watches are consumed (`used` and `stale` from write_checks), its ledger entry gets
-- `"held": {"watch": <id>, "subject": <the watch's subject>}`, and its idempotency
-- record keeps its answer (its scores after 'h,', so a replay knows it was held); no
-- score, participant, rolling window, trending period or count moves. Answers
-- {'held', watch id, 1 when this vote flags the subject (its count was within the
-- threshold before) else 0, real_0, display_0, ...}: the member's scores as they stand,
-- in the order a counted vote's reply gives them (what the call has summed but not
-- written yet included).
local function hold(j, hd, kb, fx, member, watch, flags, subject, used, stale, real_inc,
    real_text, at_ms)
  local rule_key, rules, r = hd.rule_key or kb + 1 + hd.h, hd.rules, hd.r
  rules_consume(rule_key, rules, r, used, stale, real_inc, real_text, at_ms, ARGV[fx + 9],
    rule_hashes[j], fx - r, j)
  local result = {'held', tonumber(watch), flags and 1 or 0}
  local sum = pending(hd, member) or {0, 0}
  for p = 0, hd.n - 1 do
    local base = hd.period_key + 3 * p
    for v = 1, 2 do
      local score = call('ZSCORE', KEYS[base + v], member)
      result[2 * p + v + 3] = string.format('%d', (score and tonumber(score) or 0) + sum[v])
    end
  end
  for k, win in ipairs(hd.windows) do
    for v = 1, 2 do
      result[2 * hd.n + 2 * k + v + 1] = call('ZSCORE', KEYS[win.o + 1 + v], member) or '0'
    end
  end
  local entry = ARGV[fx + 10]
  if entry ~= '' then
    ledger_add(KEYS[hd.ledger_key], j, string.sub(entry, 1, -2) .. ',"held":{"watch":'
      .. watch .. ',"subject":"' .. json_text(subject) .. '"}}')
  end
  if ARGV[fx + 6] ~= '0' then
    put(KEYS[kb + 1], ARGV[fx + 7] .. '|h,' .. table.concat(result, ',', 4)
      .. others(ARGV[fx + 12]), ARGV[fx + 6])
  end
  return result
end

-- Casts vote j of header `hd`, whose own KEYS[i] is KEYS[kb + i] and own ARGV[i] is
-- ARGV[ab + i] (the rules' fields, then its twelve). Answers its reply and, for a vote counted on a family instance, what
-- instance_expire needs to give its keys their expiry once the call's shared writes are
-- made.
local function cast(j, hd, kb, ab)
  local n, h, r = hd.n, hd.h, hd.r
  -- The rules' fields, then the vote's twelve.
  local fx = ab + 1 + r
  local member, real_text = ARGV[fx + 1], ARGV[fx + 2]
  local real_inc = num(real_text)
  local idem_key, idem_ttl = KEYS[kb + 1], ARGV[fx + 6]
  local keyed = idem_ttl ~= '0'
  local period_key = hd.period_key
  local rule_key = hd.rule_key or kb + 1 + h
  local display_text, carry_text = ARGV[fx + 3], ARGV[fx + 4]
  local all_at, all_key, mark_key = hd.all_at, hd.all_key, hd.mark_key
  local late = hd.late
  local at_ms = r > 0 and tonumber(ARGV[fx + 8])
  for _, win in ipairs(hd.windows) do
    -- Another header's vote moved the window out of this one's reach (their clocks are
    -- two slots apart): this vote fails before it changes anything.
    if not window_ready(win) then
      error('the rolling window moved past this vote\'s clock')
    end
  end
  if sums and sums.id and ((n > 0 and (late or sums.id ~= hd.sums_id))
      or (keyed and answers[idem_key])) then
    -- A late vote looks at which rankings exist, a key already used in this call reads
    -- its record, and a vote of a header with other rankings keys may write some of the
    -- same: each sees the call's earlier votes written first.
    flush()
  end
  -- This vote's trending scores are summed with the call's others (a late vote writes at
  -- once), and so are its rankings when it has any.
  local summed = sums and not late
  local ranked = summed and n > 0

  -- The idempotency record and the headroom mark as the call has left them (see
  -- `stored`), then the rate-limit rules: every counter is read first and consumed only
  -- when all of them admit.
  if stored_failed then
    error(stored_failed)
  end
  if keyed and stored[idem_key] then
    return {'dup', stored[idem_key]}
  end
  local early, used, stale, _, _, held, flags = write_checks(nil, false, rule_key, hd.rules,
    r, real_inc, KEYS[hd.kb + 2], hd.refusals_ttl, nil, at_ms, rule_hashes[j], ab + 1)
  if early then
    return early
  end
  local reserved = ARGV[fx + 11]
  if reserved ~= '' then
    local watch, flagged, subject = string.match(reserved, '^(%d+):(%d):(.*)$')
    return hold(j, hd, kb, fx, member, watch, flagged == '1', subject, used, stale,
      real_inc, real_text, at_ms)
  end
  if held then
    return hold(j, hd, kb, fx, member, hd.rules[held].id, flags, ARGV[fx - r + 1 + held],
      used, stale, real_inc, real_text, at_ms)
  end
  local mark = mark_key and stored[mark_key]
  local stored_mark = mark
  if mark_key and not mark then
    mark = headroom(hd, KEYS[all_key + 1], KEYS[all_key + 2])
  end
  local display_inc = ranked and num(display_text)
  local d = hd.digits
  if not (mark == '1' and #real_text <= d and #display_text <= d and #carry_text <= d
        and (not ranked or summed_headroom(hd, member, real_inc, display_inc)))
      and overflows(hd, member, real_inc, display_text, carry_text) then
    return {'overflow'}
  end

  rules_consume(rule_key, hd.rules, r, used, stale, real_inc, real_text, at_ms,
    ARGV[fx + 9], rule_hashes[j], ab + 1, j)

  local carries = carry_text ~= '0' and hd.carries
  if late then
    for p = 0, n - 1 do
      local ranking = KEYS[period_key + 3 * p + 1]
      if p + 1 ~= all_at and call('EXISTS', ranking) == 0 then
        call('HSET', KEYS[hd.kb + 3], 'g:' .. ranking, '1')
      end
    end
  end
  -- Its receipt, then its scores (see the reply of a counted vote), with room for five
  -- periods' made at once (see sum_add); any not written stay nil.
  local result = {ARGV[fx + 7], nil, nil, nil, nil, nil, nil, nil, nil, nil, nil}
  if ranked then
    if mark_key and mark ~= stored_mark then
      put(mark_key, mark)
    end
    sum_add(hd, member, real_inc, display_inc, carries and num(carry_text) or 0, result)
  end
  for p = 0, ranked and -1 or n - 1 do
    local base = period_key + 3 * p
    local real_score = call('ZINCRBY', KEYS[base + 1], real_text, member)
    local display_score = call('ZINCRBY', KEYS[base + 2], display_text, member)
    result[2 * p + 2], result[2 * p + 3] = real_score, display_score
    if p + 1 == all_at then
      -- Right after the all-time scores move, before any later command can fail.
      if #real_score > d or #display_score > d then
        mark = '0'
      end
      if mark ~= stored_mark then
        put(mark_key, mark)
      end
    end
    if carries and carries[p] then
      call('ZINCRBY', KEYS[base + 3], carry_text, member)
    end
  end
  local voter = ARGV[fx + 5]
  if voter ~= '' and h > 0 then
    -- The board's and the member's participants, written after the votes (`together`).
    local voters, voted = hd.voters, hd.voted
    voters[#voters + 1], voted[#voted + 1] = voter, j
    local of_member = hd.members[member]
    if not of_member then
      hd.members[member] = {kb = kb, voters = {voter}, votes = {j}}
      hd.member_order[#hd.member_order + 1] = member
    else
      voters, voted = of_member.voters, of_member.votes
      voters[#voters + 1], voted[#voted + 1] = voter, j
    end
  end
  for k, win in ipairs(hd.windows) do
    local totals = window_add(win, member, real_text, display_text, voter, hd.ttl)
    result[2 * n + 2 * k] = totals[1]
    result[2 * n + 2 * k + 1] = totals[2]
  end
  if #hd.trends > 0 then
    local t, display = tonumber(ARGV[fx + 8]), tonumber(display_text)
    for _, tr in ipairs(hd.trends) do
      trend_add(tr, j, member, real_inc, display, t, hd.ttl, summed)
    end
  end
  hd.counted = hd.counted + real_inc
  hd.counted_votes[#hd.counted_votes + 1] = j
  if late then
    call('HINCRBY', KEYS[hd.kb + 3], hd.hour, real_text)
    for p = 0, n - 1 do
      local base = period_key + 3 * p
      call('PERSIST', KEYS[base + 1])
      call('PERSIST', KEYS[base + 2])
      if carries and carries[p] then
        call('PERSIST', KEYS[base + 3])
      end
    end
    if voter ~= '' then
      for v = 1, h do
        call('PERSIST', KEYS[hd.voter_key + v])
        call('PERSIST', KEYS[kb + 1 + v])
      end
    end
  end

  local entry = ARGV[fx + 10]
  if entry ~= '' then
    ledger_add(KEYS[hd.ledger_key], j, entry)
  end
  if ranked then
    answers[#answers + 1] = {j, result, keyed and idem_key, idem_ttl, hd.record,
      ARGV[fx + 12]}
    if keyed then
      answers[idem_key] = true
    end
  else
    result = result[1] .. '|' .. table.concat(result, ',', 2) .. others(ARGV[fx + 12])
    if keyed then
      put(idem_key, result, idem_ttl)
    end
  end
  if hd.ttl ~= '0' then
    return result, {kb, keyed, rule_key, r, hd}
  end
  return result
end

-- Reserve step j of header `hd`, whose own KEYS[i] is KEYS[kb + i] and own ARGV[i] is
-- ARGV[ab + i] (see a reserve step's vote above): checks and consumes its rules and
-- nothing else. Answers '|' when they admit it (with what instance_expire needs on a
-- family instance), {'held', watch, flags} when a watch held it (see `hold`: the vote's
-- write step holds it, and answers its scores), or a refusal.
local function reserve(j, hd, kb, ab)
  local r = hd.r
  local rule_key = hd.rule_key or kb
  local fx = ab + 1 + r
  local real_text = ARGV[fx + 1]
  local real_inc = num(real_text)
  local at_ms = tonumber(ARGV[fx + 2])
  local early, used, stale, _, _, held, flags = write_checks(nil, false, rule_key, hd.rules,
    r, real_inc, KEYS[hd.kb + 2], hd.refusals_ttl, nil, at_ms, rule_hashes[j], ab + 1)
  if early then
    return early
  end
  rules_consume(rule_key, hd.rules, r, used, stale, real_inc, real_text, at_ms,
    ARGV[fx + 3], rule_hashes[j], ab + 1, j)
  if held then
    return {'held', tonumber(hd.rules[held].id), flags and 1 or 0}
  end
  if hd.ttl ~= '0' then
    return '|', {kb, false, rule_key, r, hd}
  end
  return '|'
end

-- Gives the keys of the votes counted on family instances their expiry: after the
-- shared writes, which may be the first to make a key. A vote's own keys (its record
-- among them) and its header's, but for the ledger, the rolling windows and the rule
-- counters (which expire by their own rules).
local function expire_instances(expiries)
  local seen = {}
  for _, e in ipairs(expiries) do
    local kb, keyed, rule_key, r, hd = e[1], e[2], e[3], e[4], e[5]
    instance_expire(kb + 1, kb + hd.own_keys, keyed, rule_key, r, hd.ttl, seen)
    instance_expire(hd.kb + 1, hd.voter_key + hd.h, false, 0, 0, hd.ttl, seen)
  end
end

-- Each header, parsed once: where its KEYS start and what its votes need of it.
local headers = {}
local at, hk = 4, tonumber(ARGV[3])
for i = 1, H do
  local keys, args = tonumber(ARGV[at]), tonumber(ARGV[at + 1])
  local ab = at + 1
  local n, h, r = tonumber(ARGV[ab + 1]), tonumber(ARGV[ab + 2]), tonumber(ARGV[ab + 3])
  local reserves = ARGV[ab + 6] == ''
  -- Where a vote's own rule keys start after its first KEYS, when the header holds none
  -- (see a vote's and a reserve step's vote).
  local own_rules = reserves and 0 or 1 + h
  local periods = ARGV[ab + 9]
  local all_at = string.find(periods, 'a', 1, true)
  -- Whether period p carries over into its next bucket, at p.
  local carries = {}
  for p = 0, n - 1 do
    carries[p] = string.sub(periods, p + 1, p + 1) == '1'
  end
  local period_key = hk + 4
  local voter_key = period_key + 3 * n
  local windows = {}
  local o, wa = voter_key + h + 1, ab + 11 + 6 * r
  for k = 1, tonumber(ARGV[ab + 4]) do
    local slots = tonumber(ARGV[wa + 1])
    windows[k] = {o = o, slots = slots, cur = tonumber(ARGV[wa + 2]),
      at = tonumber(ARGV[wa + 3]), budget = tonumber(ARGV[wa + 4]), ring_ttl = ARGV[wa + 5]}
    o, wa = o + 13, wa + 5
  end
  local trends = {}
  for k = 1, tonumber(ARGV[ab + 11]) do
    trends[k] = trend_parse(o, wa)
    o, wa = o + 3, wa + 2
  end
  local rules = rules_parse(ab + 11, r)
  -- Where the rules' keys are when the header holds them (see the header's KEYS): rule
  -- i's at KEYS[rule_key + 2i + 1] and KEYS[rule_key + 2i + 2], after its trending
  -- periods'.
  local rule_key = r > 0 and not rules.logs and o
  local max_units = tonumber(ARGV[ab + 5])
  -- The headroom mark's d, 10^d and M - 10^d (see the header).
  local digits = #string.format('%d', math.floor(max_units / 2)) - 1
  local low = 10 ^ digits
  -- Its rankings keys and how they carry over (see `sums`): equal for headers whose votes
  -- may sum together.
  local ranking = {periods}
  for k = period_key + 1, voter_key do
    ranking[#ranking + 1] = KEYS[k]
  end
  headers[i] = {sums_id = table.concat(ranking, ' '), kb = hk, n = n, h = h, r = r,
    period_key = period_key, voter_key = voter_key, ledger_key = voter_key + h + 1,
    max_units = max_units,
    digits = digits, low = low, summed_max = max_units - low,
    hour = ARGV[ab + 6], refusals_ttl = ARGV[ab + 7],
    late = ARGV[ab + 8] == '1', carries = carries, all_at = all_at,
    all_key = all_at and period_key + 3 * (all_at - 1), mark_key = all_at and KEYS[hk + 4],
    ttl = ARGV[ab + 10], rules = rules, windows = windows, trends = trends,
    rule_key = rule_key, reserves = reserves, own_rules = own_rules,
    -- A vote's own KEYS and ARGV.
    own_keys = own_rules + (rule_key and 0 or 2 * r), vote_args = (reserves and 4 or 13) + r,
    -- Its rules' counter hashes, found by its first vote (see counters_want), when it
    -- holds their keys.
    hashes = rule_key and {},
    -- The format of a summed vote's scores in its idempotency record, after its receipt
    -- and '|' (the periods' as integers, the windows' as Redis gave them), for a vote
    -- whose scores are not Redis's own text (see `flush`).
    record = string.sub(string.rep(',%d', 2 * n) .. string.rep(',%s', 2 * #windows), 2),
    -- What its counted votes write together (see `together`): their voters (the
    -- board's participants) and the votes that added them, per member the same (the
    -- member's participants) with the first vote's own keys, and their sum of votes
    -- (the hour's count) with the votes that added to it.
    voters = {}, voted = {}, members = {}, member_order = {}, counted = 0,
    counted_votes = {}}
  hk, at = hk + keys, at + 2 + args
end

-- Every rolling window within reach of its keys, or nothing happens.
for _, hd in ipairs(headers) do
  for _, win in ipairs(hd.windows) do
    if not window_ready(win) then
      return 'advance'
    end
  end
end

-- What the votes read before their checks, once per call: the counters (see rules.lua;
-- each vote's hashes), and in one MGET the strings in `stored` and, after them, the
-- trending periods' origins (trend_also and trend_found: trend.lua keeps them).
local strings, wanted = {}, {}
local function want(key)
  if not wanted[key] then
    wanted[key], strings[#strings + 1] = true, key
  end
end
for _, hd in ipairs(headers) do
  if hd.mark_key then
    want(hd.mark_key)
  end
end
local kb, ab = 0, at - 1
for j = 1, m do
  local hd = headers[num(ARGV[ab + 1])]
  rule_hashes[j] = counters_want(hd.rule_key or kb + hd.own_rules, hd.rules, hd.r, ab + 1,
    hd.hashes)
  -- The vote's idempotency record TTL (see `cast`).
  if not hd.reserves and ARGV[ab + 7 + hd.r] ~= '0' then
    want(KEYS[kb + 1])
  end
  kb, ab = kb + hd.own_keys, ab + hd.vote_args
end
counters_read()
local origins_at = #strings
for _, hd in ipairs(headers) do
  strings = trend_also(hd.trends, strings)
end
if #strings > 0 then
  local ok, got = pcall(call, 'MGET', unpack(strings))
  if ok then
    for i = 1, origins_at do
      stored[strings[i]] = got[i]
    end
    trend_found(strings, got, 0, origins_at)
  else
    stored_failed = got
  end
end

-- The votes, in order, from ARGV[at].
kb = 0
for j = 1, m do
  local hd = headers[num(ARGV[at])]
  local ok, reply, expiry = pcall(hd.reserves and reserve or cast, j, hd, kb, at - 1)
  if not ok then
    reply = as_error(reply)
  elseif expiry then
    expiries[#expiries + 1] = expiry
  end
  replies[j] = reply
  kb, at = kb + hd.own_keys, at + hd.vote_args
end

if sums then
  flush()
end
-- A write several votes share that fails answers its error for each of them, as a
-- command of the vote's own would.
local function failed_all(votes, err)
  local reply = as_error(err)
  for _, j in ipairs(votes) do
    replies[j] = reply
  end
end
-- What the summed votes add to the trending periods, one ZINCRBY per period, view and
-- member.
trend_flush(failed_all)
-- A counters hash that fails to write fails every vote that moved it.
counters_write(failed_all)

-- The writes the call's votes share, gathered per key from their headers (a key that
-- several headers write, the board's all-time participants say, is written once): per
-- key {the votes that wrote it, the items (voters) or the count per field}, keys in the
-- order first written.
local together = {keys = {}, writes = {}}

-- Gathers `items` (a list) and `votes` into the write on `key`; the first list given for
-- a key is kept as it is, a later one is copied after it.
local function gather(key, items, votes)
  local write = together.writes[key]
  if not write then
    together.writes[key] = {votes, items}
    together.keys[#together.keys + 1] = key
    return
  end
  local to_votes, to_items = {unpack(write[1])}, {unpack(write[2])}
  for _, j in ipairs(votes) do
    to_votes[#to_votes + 1] = j
  end
  for _, item in ipairs(items) do
    to_items[#to_items + 1] = item
  end
  together.writes[key] = {to_votes, to_items}
end

-- The shared writes. One that fails fails every vote that wrote to it (failed_all).
local function share(shared, write)
  for _, key in ipairs(shared.keys) do
    local votes, items = shared.writes[key][1], shared.writes[key][2]
    local ok, err = pcall(write, key, items)
    if not ok then
      failed_all(votes, err)
    end
  end
end
-- A summed vote whose scores failed to write answers an error (see `flush`), and its
-- entry stays out of the ledger, as a vote whose own command failed adds none.
if sums_failed then
  for _, key in ipairs(ledger.keys) do
    local write = ledger.writes[key]
    local votes, entries = {}, {}
    for i, j in ipairs(write[1]) do
      if type(replies[j]) ~= 'table' or not replies[j].err then
        votes[#votes + 1], entries[#entries + 1] = j, write[2][i]
      end
    end
    ledger.writes[key] = {votes, entries}
  end
end
share(ledger, function(key, entries)
  if #entries > 0 then
    call('RPUSH', key, unpack(entries))
  end
end)
for _, hd in ipairs(headers) do
  if #hd.voters > 0 then
    for v = 1, hd.h do
      gather(KEYS[hd.voter_key + v], hd.voters, hd.voted)
    end
  end
  for _, member in ipairs(hd.member_order) do
    local of_member = hd.members[member]
    for v = 1, hd.h do
      gather(KEYS[of_member.kb + 1 + v], of_member.voters, of_member.votes)
    end
  end
end
share(together, function(key, voters)
  call('PFADD', key, unpack(voters))
end)
-- Each header's count of votes in its hour and in each of its buckets (the field named
-- by the bucket's real rankings key), summed per hash and field.
local counts = {keys = {}, writes = {}}
for _, hd in ipairs(headers) do
  if hd.counted > 0 and hd.hour ~= '' then
    local key = KEYS[hd.kb + 1]
    local write = counts.writes[key]
    if not write then
      write = {{}, {}}
      counts.writes[key] = write
      counts.keys[#counts.keys + 1] = key
    end
    for _, j in ipairs(hd.counted_votes) do
      write[1][#write[1] + 1] = j
    end
    local fields = write[2]
    fields[hd.hour] = (fields[hd.hour] or 0) + hd.counted
    for p = 0, hd.n - 1 do
      local bucket = KEYS[hd.period_key + 3 * p + 1]
      fields[bucket] = (fields[bucket] or 0) + hd.counted
    end
  end
end
share(counts, function(key, fields)
  for field, count in pairs(fields) do
    call('HINCRBY', key, field, string.format('%d', count))
  end
end)
if #expiries > 0 then
  expire_instances(expiries)
end
return replies
