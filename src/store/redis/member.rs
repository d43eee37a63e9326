//! `member.lua`: members' standings in a bucket.

use redis::{Script, Value};
use std::sync::LazyLock;

use super::keys::BoardKeys;
use super::reply::{as_array, as_int, as_text, as_units, reply_error};
use super::{Invocation, RedisFailure, RedisStore};
use crate::domain::period::Bucket;
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
        queries: &[StandingQuery<'_>],
    ) -> Result<Vec<StandingReply>, RedisFailure> {
        let calls: Vec<Invocation> = queries
            .iter()
            .map(|q| {
                let scores = q.board.scores(q.view, q.bucket);
                let previous = q.previous.map(|b| q.board.scores(q.view, b));
                let mut inv = MEMBER.key(&scores);
                inv.key(previous.as_deref().unwrap_or(&scores))
                    .key(q.board.member_participants(q.bucket, q.member))
                    .arg(q.member)
                    .arg(if q.previous.is_some() { "1" } else { "0" });
                inv
            })
            .collect();
        let replies = self.run_script_all("member", &MEMBER, &calls).await?;
        replies.iter().map(StandingReply::parse).collect()
    }
}
