-- member.lua: one member's standing in a bucket, the member just above, and the same
-- member in the bucket before.
--
-- KEYS[1]  scores of the bucket (zset)
-- KEYS[2]  scores of the previous bucket (zset; ignored when ARGV[2] is '0')
-- KEYS[3]  the member's participants in the bucket (HyperLogLog)
-- ARGV[1]  member id
-- ARGV[2]  '1' when there is a previous bucket, else '0'
--
-- Returns {score, rank, above_member, above_score, above_rank, prev_score, prev_rank,
-- participants}; score and rank are nil when the member has no score in the bucket
-- (above is then the lowest member with a positive score), likewise for prev_*.
-- Ranks are competition ranks: 1 + members with a strictly higher score.

local member = ARGV[1]
local score = redis.call('ZSCORE', KEYS[1], member)
local rank = false
if score then
  rank = redis.call('ZCOUNT', KEYS[1], '(' .. score, '+inf') + 1
end
local above = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. (score or '0'), '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
local above_member, above_score, above_rank = false, false, false
if #above > 0 then
  above_member, above_score = above[1], above[2]
  above_rank = redis.call('ZCOUNT', KEYS[1], '(' .. above_score, '+inf') + 1
end
local prev_score, prev_rank = false, false
if ARGV[2] == '1' then
  prev_score = redis.call('ZSCORE', KEYS[2], member)
  if prev_score then
    prev_rank = redis.call('ZCOUNT', KEYS[2], '(' .. prev_score, '+inf') + 1
  else
    prev_score = false
  end
end
local participants = redis.call('PFCOUNT', KEYS[3])
return {score or false, rank, above_member, above_score, above_rank, prev_score, prev_rank, participants}
