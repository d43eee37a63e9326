//! `member.lua`: members' standings in a bucket.

use redis::{Script, Value};
use std::sync::LazyLock;

use super::reply::{as_array, as_int, as_text, as_units, reply_error};
use super::{Invocation, RedisFailure, RedisStore};

static MEMBER: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("member.lua")));

/// Asks for one member's standing in a bucket.
#[derive(Debug, Clone)]
pub struct StandingQuery {
    pub scores: String,
    pub previous: Option<String>,
    pub participants: String,
    pub member: String,
}

/// One member's standing.
#[derive(Debug, Clone, PartialEq)]
pub struct StandingReply {
    /// (units, rank) when the member has a score in the bucket.
    pub current: Option<(i64, i64)>,
    /// (member, units, rank) of the nearest member with a strictly higher score.
    pub above: Option<(String, i64, i64)>,
    /// (units, rank) in the previous bucket.
    pub previous: Option<(i64, i64)>,
    pub participants: i64,
}

impl StandingReply {
    fn parse(value: &Value) -> Result<Self, RedisFailure> {
        let bad = || reply_error("member", value);
        let items = as_array(value).ok_or_else(bad)?;
        let [
            score,
            rank,
            above_member,
            above_score,
            above_rank,
            prev_score,
            prev_rank,
            participants,
        ] = items
        else {
            return Err(bad());
        };
        let both = |s: &Value, r: &Value| Some((as_units(s)?, as_int(r)?));
        Ok(Self {
            current: both(score, rank),
            above: (|| {
                Some((
                    as_text(above_member)?,
                    as_units(above_score)?,
                    as_int(above_rank)?,
                ))
            })(),
            previous: both(prev_score, prev_rank),
            participants: as_int(participants).ok_or_else(bad)?,
        })
    }
}

impl RedisStore {
    /// Reads members' standings in one round trip.
    pub async fn standings(
        &self,
        queries: &[StandingQuery],
    ) -> Result<Vec<StandingReply>, RedisFailure> {
        let calls: Vec<Invocation> = queries
            .iter()
            .map(|q| {
                let mut inv = MEMBER.key(&q.scores);
                inv.key(q.previous.as_deref().unwrap_or(&q.scores))
                    .key(&q.participants)
                    .arg(&q.member)
                    .arg(if q.previous.is_some() { "1" } else { "0" });
                inv
            })
            .collect();
        let replies = self.run_script_all("member", &MEMBER, &calls).await?;
        replies.iter().map(StandingReply::parse).collect()
    }
}
