//! A closed bucket's keys after it is archived: an expiry (EXPIREAT), or gone now
//! (UNLINK) when an operator frees memory. Its rankings (both views, a top_n board's
//! exact scores, on every shard), and the voter HyperLogLogs the caller names, the
//! board's and each member's: the members are read from the bucket's rankings a
//! thousand at a time (no keyspace scan), before the rankings go.

use chrono::{DateTime, Utc};
use redis::Value;

use super::keys::BoardKeys;
use super::reply::as_int;
use super::{RedisFailure, RedisStore};
use crate::domain::period::Bucket;
use crate::domain::score::View;

/// When a key goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Release {
    At(DateTime<Utc>),
    Now,
}

/// Members read from a ranking per step.
const STEP: i64 = 1_000;

impl Release {
    fn add(self, pipe: &mut redis::Pipeline, key: String) {
        match self {
            Self::At(at) => pipe.cmd("EXPIREAT").arg(key).arg(at.timestamp()),
            Self::Now => pipe.cmd("UNLINK").arg(key),
        };
    }
}

impl RedisStore {
    /// Gives a closed bucket's keys their expiry, or unlinks them: `rankings` for its
    /// rankings, and each `(voter bucket, release)` for the voter HyperLogLogs of that
    /// bucket (the bucket's own, or a week's or month's days).
    pub async fn release_bucket(
        &self,
        board: &BoardKeys,
        bucket: &Bucket,
        rankings: Release,
        voters: &[(Bucket, Release)],
    ) -> Result<(), RedisFailure> {
        if !voters.is_empty() {
            for shard in board.shards() {
                let mut pipe = redis::pipe();
                for (vb, release) in voters {
                    release.add(&mut pipe, shard.participants(vb));
                }
                self.query::<Vec<Value>>("release", pipe).await?;
                let mut from = 0;
                loop {
                    let members = self.members_step(&shard, bucket, &mut from).await?;
                    if members.is_empty() {
                        break;
                    }
                    let mut pipe = redis::pipe();
                    for member in &members {
                        for (vb, release) in voters {
                            release.add(&mut pipe, shard.member_participants(vb, member));
                        }
                    }
                    self.query::<Vec<Value>>("release", pipe).await?;
                }
            }
        }
        let mut pipe = redis::pipe();
        for shard in board.shards() {
            for view in [View::Real, View::Display] {
                rankings.add(&mut pipe, shard.scores(view, bucket));
            }
        }
        if board.storage().is_top_n() {
            rankings.add(&mut pipe, board.exact_scores(bucket));
        }
        self.query::<Vec<Value>>("release", pipe).await?;
        Ok(())
    }

    /// The next members with a score in one shard's bucket: a top_n board's from its
    /// exact scores (HSCAN, `from` is the cursor, 0 when done), else from the ranking
    /// by position. Empty when there are no more.
    async fn members_step(
        &self,
        shard: &BoardKeys,
        bucket: &Bucket,
        from: &mut i64,
    ) -> Result<Vec<String>, RedisFailure> {
        let bad = || RedisFailure::Reply("release members".into());
        let mut pipe = redis::pipe();
        if shard.storage().is_top_n() {
            if *from < 0 {
                return Ok(Vec::new());
            }
            pipe.cmd("HSCAN")
                .arg(shard.exact_scores(bucket))
                .arg(*from)
                .arg("COUNT")
                .arg(STEP);
            let reply: Vec<(String, Vec<String>)> = self.query("release", pipe).await?;
            let (cursor, fields) = reply.into_iter().next().ok_or_else(bad)?;
            let next: i64 = cursor.parse().map_err(|_| bad())?;
            *from = if next == 0 { -1 } else { next };
            let members: Vec<String> = fields.chunks(2).map(|p| p[0].clone()).collect();
            // HSCAN may answer an empty step before it is done.
            if members.is_empty() && *from >= 0 {
                return Box::pin(self.members_step(shard, bucket, from)).await;
            }
            Ok(members)
        } else {
            pipe.cmd("ZRANGE")
                .arg(shard.scores(View::Real, bucket))
                .arg(*from)
                .arg(*from + STEP - 1);
            let reply: Vec<Vec<String>> = self.query("release", pipe).await?;
            let members = reply.into_iter().next().unwrap_or_default();
            *from += members.len() as i64;
            Ok(members)
        }
    }

    /// Distinct voters of each member in a bucket (a week's and a month's: the union of
    /// their days'), in the member's shard, or over every shard of a board whose scores
    /// are sums over shards.
    pub async fn member_participants(
        &self,
        board: &BoardKeys,
        bucket: &Bucket,
        members: &[String],
    ) -> Result<Vec<i64>, RedisFailure> {
        if board.sums_shards() {
            return self
                .summed_member_participants(board, bucket, members)
                .await;
        }
        let mut pipe = redis::pipe();
        for member in members {
            pipe.pfcount(board.member_shard(member).member_voters(bucket, member));
        }
        let counts: Vec<Value> = self.query("member_participants", pipe).await?;
        counts
            .iter()
            .map(|c| as_int(c).ok_or_else(|| RedisFailure::Reply("member participants".into())))
            .collect()
    }
}
