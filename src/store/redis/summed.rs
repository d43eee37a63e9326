//! Reads of a board whose scores are sums over shards (a `votes` board sharded by voter:
//! see [`Spread`](super::keys::Spread)). Every shard holds part of each member's score,
//! so a bucket is read whole from every shard in one pipelined round trip, summed per
//! member and put in the order of one sorted set (score descending, then member id
//! descending); pages, ranks, standings and counts come from that list, exactly as a
//! `full` board fed the same votes answers them. Distinct voters are the union of the
//! shards' HyperLogLogs (see `voter_union`). A read costs in proportion to the bucket's
//! members times the shards: such a board is for few members and many votes (a TV
//! final's ten contestants), not for millions of members (a `sharded` scores board).

use std::collections::HashMap;

use redis::Value;

use super::keys::BoardKeys;
use super::member::{StandingQuery, StandingReply};
use super::page::{PageQuery, PageReply};
use super::reply::{as_array, as_text, as_units};
use super::voter_union::Voters;
use super::{RedisFailure, RedisStore};
use crate::domain::period::Bucket;
use crate::domain::score::View;

/// Members and their summed scores (units), in ranking order.
type Summed = Vec<(String, i64)>;

/// Competition rank of `units`: 1 + the members with a strictly higher score.
fn rank_of(summed: &Summed, units: i64) -> i64 {
    1 + summed.iter().take_while(|(_, u)| *u > units).count() as i64
}

impl RedisStore {
    /// Each (view, bucket)'s summed scores over the board's shards, in one round trip.
    async fn summed(
        &self,
        board: &BoardKeys,
        reads: &[(View, &Bucket)],
    ) -> Result<Vec<Summed>, RedisFailure> {
        let shards = board.shards();
        let mut pipe = redis::pipe();
        for (view, bucket) in reads {
            for shard in &shards {
                pipe.cmd("ZRANGE")
                    .arg(shard.scores(*view, bucket))
                    .arg(0)
                    .arg(-1)
                    .arg("WITHSCORES");
            }
        }
        let replies: Vec<Value> = self.query("summed", pipe).await?;
        let bad = || RedisFailure::Reply("summed scores".into());
        replies
            .chunks(shards.len().max(1))
            .map(|of_read| {
                let mut sums: HashMap<String, i64> = HashMap::new();
                for reply in of_read {
                    for pair in as_array(reply).ok_or_else(bad)?.chunks(2) {
                        let [member, score] = pair else {
                            return Err(bad());
                        };
                        let member = as_text(member).ok_or_else(bad)?;
                        *sums.entry(member).or_insert(0) += as_units(score).ok_or_else(bad)?;
                    }
                }
                // A member whose parts add up to 0 (an adjustment took its score back
                // in another shard) holds no score, as on a board that keeps one set.
                let mut summed: Summed = sums.into_iter().filter(|(_, u)| *u != 0).collect();
                summed.sort_by(|a, b| {
                    b.1.cmp(&a.1)
                        .then_with(|| b.0.as_bytes().cmp(a.0.as_bytes()))
                });
                Ok(summed)
            })
            .collect()
    }

    /// Members with a score in the bucket (real view) and its distinct voters.
    pub(super) async fn summed_counts(
        &self,
        board: &BoardKeys,
        bucket: &Bucket,
    ) -> Result<(i64, i64), RedisFailure> {
        let (reads, voters) = ([(View::Real, bucket)], [Voters::Board(bucket)]);
        let (summed, participants) = tokio::try_join!(
            self.summed(board, &reads),
            self.shard_unions(board, &voters)
        )?;
        let members = summed.first().map_or(0, Vec::len) as i64;
        Ok((members, participants.first().copied().unwrap_or(0)))
    }

    /// A page by offset, or around an anchor member, as `page.lua` answers one.
    pub(super) async fn summed_page(&self, q: &PageQuery<'_>) -> Result<PageReply, RedisFailure> {
        let (reads, voters) = ([(q.view, q.bucket)], [Voters::Board(q.bucket)]);
        let (summed, participants) = tokio::try_join!(
            self.summed(q.board, &reads),
            self.shard_unions(q.board, &voters)
        )?;
        let summed = summed.into_iter().next().unwrap_or_default();
        let total_members = summed.len() as i64;
        let participants = participants.first().copied().unwrap_or(0);
        let from = match &q.anchor {
            None => q.offset as usize,
            Some(anchor) => match summed.iter().position(|(m, _)| m == anchor) {
                Some(at) => at.saturating_sub(q.offset as usize),
                None => {
                    return Ok(PageReply {
                        total_members,
                        participants,
                        offset: None,
                        first_rank: 0,
                        entries: Vec::new(),
                    });
                }
            },
        };
        let to = (from + q.limit as usize).min(summed.len());
        let entries = summed[from.min(to)..to].to_vec();
        let first_rank = entries.first().map_or(0, |(_, u)| rank_of(&summed, *u));
        Ok(PageReply {
            total_members,
            participants,
            offset: Some(from as i64),
            first_rank,
            entries,
        })
    }

    /// One member's standing, as `member.lua` answers it.
    pub(super) async fn summed_standing(
        &self,
        q: &StandingQuery<'_>,
    ) -> Result<StandingReply, RedisFailure> {
        let mut reads = vec![(q.view, q.bucket)];
        reads.extend(q.previous.map(|p| (q.view, p)));
        // The real view's bucket, for the member's votes, unless that is the view read.
        if q.view != View::Real {
            reads.push((View::Real, q.bucket));
        }
        let voters = [Voters::Member(q.bucket, q.member)];
        let (summed, participants) = tokio::try_join!(
            self.summed(q.board, &reads),
            self.shard_unions(q.board, &voters)
        )?;
        let score_in = |s: &Summed| s.iter().find(|(m, _)| m == q.member).map(|(_, u)| *u);
        let current = &summed[0];
        let score = score_in(current);
        // The nearest member above: the lowest score above this one (above 0 without a
        // score), the smallest id among equal scores, as ZRANGEBYSCORE finds it.
        let floor = score.unwrap_or(0);
        let above = current
            .iter()
            .filter(|(_, u)| *u > floor)
            .min_by(|a, b| {
                a.1.cmp(&b.1)
                    .then_with(|| a.0.as_bytes().cmp(b.0.as_bytes()))
            })
            .map(|(m, u)| (m.clone(), *u, rank_of(current, *u)));
        let real = match q.view {
            View::Real => score,
            View::Display => summed.last().and_then(score_in),
        };
        let previous = q.previous.and_then(|_| summed.get(1));
        let previous_score = previous.and_then(score_in);
        Ok(StandingReply {
            score,
            rank: score.map(|u| rank_of(current, u)),
            above,
            previous_score,
            previous_rank: previous.zip(previous_score).map(|(p, u)| rank_of(p, u)),
            participants: participants.first().copied().unwrap_or(0),
            lower: score.map(|s| current.iter().filter(|(_, u)| *u < s).count() as i64),
            total: current.len() as i64,
            votes: Some(real.unwrap_or(0)),
        })
    }

    /// Members with a score in `bucket` (real view), over every shard.
    pub(super) async fn summed_members(
        &self,
        board: &BoardKeys,
        bucket: &Bucket,
    ) -> Result<i64, RedisFailure> {
        let summed = self.summed(board, &[(View::Real, bucket)]).await?;
        Ok(summed.first().map_or(0, Vec::len) as i64)
    }

    /// Distinct voters of each member in a bucket, over every shard.
    pub(super) async fn summed_member_participants(
        &self,
        board: &BoardKeys,
        bucket: &Bucket,
        members: &[String],
    ) -> Result<Vec<i64>, RedisFailure> {
        let sets: Vec<Voters<'_>> = members.iter().map(|m| Voters::Member(bucket, m)).collect();
        self.shard_unions(board, &sets).await
    }
}
