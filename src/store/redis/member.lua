-- member.lua: one member's standing in a bucket, the member just above, and the same
-- member in the bucket before.
--
-- KEYS[1]  ranking of the bucket (zset)
-- KEYS[2]  ranking of the previous bucket (zset; ignored when ARGV[2] is '0')
-- KEYS[3]  top_n: every member's exact score in the bucket (hash); else unused
-- KEYS[4]  top_n: the same in the previous bucket (hash); else unused
-- KEYS[5]  ranking of the bucket in the real view (the member's votes; KEYS[1] when that
--          is the real view)
-- KEYS[6]  a trending period's origin (see trend.lua); any key when ARGV[4] is '0'
-- KEYS[7..] the HyperLogLogs whose union counts the member's participants in the bucket
--          (a week's or a month's days, else the bucket's own)
-- ARGV[1]  member id
-- ARGV[2]  '1' when there is a previous bucket, else '0'
-- ARGV[3]  '1' on a top_n board (scores come from the hashes), else '0'
-- ARGV[4]  '1' when KEYS[1] holds a trending period's stored scores, else '0'
--
-- Returns {score, rank, above_member, above_score, above_rank, prev_score, prev_rank,
-- participants, lower, total, votes}; score and rank are nil when the member has no score in the bucket
-- (above is then the lowest member with a positive score), likewise for prev_*.
-- Ranks are competition ranks: 1 + members with a strictly higher score. On a top_n
-- board a member outside the kept ranking has its exact score but no rank, and no
-- member above (members outside the ranking may score higher). total: members with a
-- score in the bucket (a top_n board's exact scores); lower: of them, those with a
-- strictly lower score than a ranked member (nil without a rank). votes: the member's
-- score in the real view (votes cast for it in the bucket; '0' without). A trending
-- period's read ends with its origin (nil while it has none), read in the same call as
-- the scores it weighs.

local member = ARGV[1]
local top_n = ARGV[3] == '1'

-- (score, rank) of the member in a bucket.
local function standing(ranking, exact)
  local kept = redis.call('ZSCORE', ranking, member)
  local score = kept
  if top_n then
    score = redis.call('HGET', exact, member)
  end
  if not score then
    return false, false
  end
  if not kept then
    return score, false
  end
  return score, redis.call('ZCOUNT', ranking, '(' .. score, '+inf') + 1
end

local score, rank = standing(KEYS[1], KEYS[3])
local above_member, above_score, above_rank = false, false, false
if rank or not top_n then
  local above = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. (score or '0'), '+inf',
    'WITHSCORES', 'LIMIT', 0, 1)
  if #above > 0 then
    above_member, above_score = above[1], above[2]
    above_rank = redis.call('ZCOUNT', KEYS[1], '(' .. above_score, '+inf') + 1
  end
end
local prev_score, prev_rank = false, false
if ARGV[2] == '1' then
  prev_score, prev_rank = standing(KEYS[2], KEYS[4])
end
local participants = redis.call('PFCOUNT', unpack(KEYS, 7))
local votes = redis.call('ZSCORE', KEYS[5], member) or '0'
local total
if top_n then
  total = redis.call('HLEN', KEYS[3])
else
  total = redis.call('ZCARD', KEYS[1])
end
local lower = false
if rank then
  lower = total - redis.call('ZCOUNT', KEYS[1], score, '+inf')
end
local reply = {score, rank, above_member, above_score, above_rank, prev_score, prev_rank,
  participants, lower, total, votes}
if ARGV[4] == '1' then
  reply[12] = redis.call('GET', KEYS[6])
end
return reply
