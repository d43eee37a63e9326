//! `member.lua`: members' standings in a bucket.

use redis::{Script, Value};
use std::sync::LazyLock;

use super::keys::BoardKeys;
use super::reply::{as_array, as_int, as_text, as_units, reply_error};
use super::{Invocation, RedisFailure, RedisStore};
use crate::domain::period::{Bucket, HalfLife};
use crate::domain::score::View;

static MEMBER: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("member.lua")));

/// Asks for one member's standing in a bucket in one view, with the bucket before.
#[derive(Debug, Clone)]
pub struct StandingQuery<'a> {
    pub board: &'a BoardKeys,
    pub bucket: &'a Bucket,
    pub previous: Option<&'a Bucket>,
    pub view: View,
    pub member: &'a str,
}

/// One member's standing, its scores as `S`: units, or a trending period's decayed
/// scores.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StandingReply<S = i64> {
    /// The member's score, when it has one in the bucket.
    pub score: Option<S>,
    /// Competition rank; `None` without a score, or outside a top_n board's ranking.
    pub rank: Option<i64>,
    /// (member, score, rank) of the nearest member with a strictly higher score.
    pub above: Option<(String, S, i64)>,
    /// Score and rank in the previous bucket, likewise.
    pub previous_score: Option<S>,
    pub previous_rank: Option<i64>,
    pub participants: i64,
    /// Members with a strictly lower score, when the member has a rank.
    pub lower: Option<i64>,
    /// Members with a score in the bucket.
    pub total: i64,
    /// The member's score in the real view, in units (on a votes board: its votes);
    /// `None` where it is not read (a sharded scores board's, a trending period's).
    pub votes: Option<i64>,
}

impl<S> StandingReply<S> {
    /// Reads `member.lua`'s reply: its first eleven items, each score read by `score`
    /// (`votes` is `None` when it is not whole units).
    fn parse_with(
        value: &Value,
        items: &[Value],
        score: impl Fn(&Value) -> Option<S>,
    ) -> Result<Self, RedisFailure> {
        let bad = || reply_error("member", value);
        let [
            score_of,
            rank,
            above_member,
            above_score,
            above_rank,
            prev_score,
            prev_rank,
            participants,
            lower,
            total,
            votes,
        ] = items
        else {
            return Err(bad());
        };
        Ok(Self {
            score: score(score_of),
            rank: as_int(rank),
            above: (|| {
                Some((
                    as_text(above_member)?,
                    score(above_score)?,
                    as_int(above_rank)?,
                ))
            })(),
            previous_score: score(prev_score),
            previous_rank: as_int(prev_rank),
            participants: as_int(participants).ok_or_else(bad)?,
            lower: as_int(lower),
            total: as_int(total).ok_or_else(bad)?,
            votes: as_units(votes),
        })
    }
}

impl StandingReply {
    fn parse(value: &Value) -> Result<Self, RedisFailure> {
        let bad = || reply_error("member", value);
        let items = as_array(value).ok_or_else(bad)?;
        let reply = Self::parse_with(value, items, as_units)?;
        reply.votes.ok_or_else(bad)?;
        Ok(reply)
    }
}

impl StandingReply<f64> {
    /// A trending period's standing: its stored scores decayed to `now_ms` from the
    /// origin the reply ends with; no votes (the real view is decayed too).
    fn parse_decayed(
        value: &Value,
        half_life: HalfLife,
        now_ms: i64,
    ) -> Result<Self, RedisFailure> {
        let bad = || reply_error("member", value);
        let items = as_array(value).ok_or_else(bad)?;
        let (origin, items) = match items {
            [first @ .., origin] if first.len() == 11 => (as_units(origin), first),
            _ => (None, items),
        };
        let reply = Self::parse_with(value, items, |v| {
            let stored: f64 = as_text(v)?.parse().ok()?;
            Some(origin.map_or(0.0, |t0| half_life.decay(stored, t0, now_ms)))
        })?;
        Ok(Self {
            votes: None,
            ..reply
        })
    }
}

impl RedisStore {
    /// Reads members' standings: one round trip for `full` and `top_n` boards; a
    /// sharded board's are read shard by shard (see `sharded` and `summed`).
    pub async fn standings(
        &self,
        queries: &[StandingQuery<'_>],
    ) -> Result<Vec<StandingReply>, RedisFailure> {
        let (sharded, single): (Vec<usize>, Vec<usize>) =
            (0..queries.len()).partition(|&i| queries[i].board.storage().is_sharded());
        let calls: Vec<Invocation> = single
            .iter()
            .map(|&i| {
                let q = &queries[i];
                let top_n = q.board.storage().is_top_n();
                // Without a bucket before, the script ignores its keys: the current
                // bucket's stand in.
                let previous = q.previous.unwrap_or(q.bucket);
                let mut inv = MEMBER.key(q.board.scores(q.view, q.bucket));
                inv.key(q.board.scores(q.view, previous))
                    .key(q.board.exact_scores(q.bucket))
                    .key(q.board.exact_scores(previous))
                    .key(q.board.scores(View::Real, q.bucket))
                    .key(q.board.vote_counts());
                for key in q.board.member_voters(q.bucket, q.member) {
                    inv.key(key);
                }
                inv.arg(q.member)
                    .arg(if q.previous.is_some() { "1" } else { "0" })
                    .arg(if top_n { "1" } else { "0" })
                    .arg("0");
                inv
            })
            .collect();
        let replies = self.run_script_all("member", &MEMBER, &calls).await?;
        let mut answers: Vec<StandingReply> = vec![StandingReply::default(); queries.len()];
        for (&i, reply) in single.iter().zip(&replies) {
            answers[i] = StandingReply::parse(reply)?;
        }
        for i in sharded {
            let q = &queries[i];
            answers[i] = if q.board.sums_shards() {
                self.summed_standing(q).await?
            } else {
                self.sharded_standing(q).await?
            };
        }
        Ok(answers)
    }

    /// Reads members' standings in trending periods, their scores decayed to `now_ms`,
    /// in one round trip.
    pub async fn trend_standings(
        &self,
        queries: &[StandingQuery<'_>],
        now_ms: i64,
    ) -> Result<Vec<StandingReply<f64>>, RedisFailure> {
        let mut half_lives = Vec::with_capacity(queries.len());
        let mut calls = Vec::with_capacity(queries.len());
        for q in queries {
            let half_life = q.bucket.period.trending().ok_or_else(|| {
                RedisFailure::Reply(format!("{} is not a trending period", q.bucket.period))
            })?;
            let keys = q.board.trend(half_life);
            let scores = keys.scores(q.view);
            let mut inv = MEMBER.key(&scores);
            inv.key(&scores)
                .key(&scores)
                .key(&scores)
                .key(&scores)
                .key(keys.origin());
            for key in q.board.member_voters(q.bucket, q.member) {
                inv.key(key);
            }
            inv.arg(q.member).arg("0").arg("0").arg("1");
            half_lives.push(half_life);
            calls.push(inv);
        }
        let replies = self.run_script_all("member", &MEMBER, &calls).await?;
        replies
            .iter()
            .zip(half_lives)
            .map(|(reply, half_life)| StandingReply::parse_decayed(reply, half_life, now_ms))
            .collect()
    }
}
