//! What a revocation (`engine::revocations`) does in Redis: `revoke.lua` takes the
//! struck-out votes out of the rankings and counts; `participants_rebuild.lua` swaps in
//! distinct-voter HyperLogLogs rebuilt from the ledger, whose voters the caller adds to
//! a scratch key first.

use std::collections::BTreeMap;
use std::sync::LazyLock;
use std::time::Duration;

use redis::Script;

use super::keys::BoardKeys;
use super::reply::{as_int, reply_error};
use super::trend::TrendChange;
use super::{RedisFailure, RedisStore};
use crate::domain::period::Bucket;
use crate::domain::score::View;

static REVOKE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        include_str!("trend_apply.lua"),
        include_str!("revoke.lua")
    ))
});
static REBUILD: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("participants_rebuild.lua")));

/// Changes per `revoke.lua` call: each call stays short.
const CHUNK: usize = 1000;

/// How long a scratch HyperLogLog lives if its rebuild stops half-way.
const SCRATCH_TTL: Duration = Duration::from_secs(600);

/// One score a revocation lowers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lowering {
    pub bucket: Bucket,
    pub view: View,
    pub member: String,
    /// Units taken off (positive).
    pub units: i64,
}

/// A distinct-voters HyperLogLog to rebuild: a bucket's, or one member's in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Voters {
    pub bucket: Bucket,
    pub member: Option<String>,
}

impl RedisStore {
    /// Lowers the given scores, the vote counts of their buckets, and the hours' vote
    /// counts by `hours` (epoch hour, votes), marking those hours for the archive: once
    /// for revocation `id`, however often it is called.
    pub async fn revoke(
        &self,
        board: &BoardKeys,
        id: i64,
        lowerings: &[Lowering],
        trends: &[TrendChange],
        hours: &[(i64, i64)],
    ) -> Result<(), RedisFailure> {
        let mut chunks: Vec<&[Lowering]> = lowerings.chunks(CHUNK).collect();
        if chunks.is_empty() && !(hours.is_empty() && trends.is_empty()) {
            chunks.push(&[]);
        }
        let mut calls = Vec::new();
        for (i, chunk) in chunks.into_iter().enumerate() {
            let mut call = REVOKE.key(board.vote_counts());
            call.key(board.late_writes())
                .key(board.revocations_done())
                .arg(format!("{id}:{i}"))
                .arg(chunk.len());
            // The buckets' vote counts: what the step takes out of their real view.
            let mut counts: BTreeMap<String, i64> = BTreeMap::new();
            for l in chunk {
                let key = board.scores(l.view, &l.bucket);
                call.key(&key).arg(&l.member).arg(-l.units);
                if l.view == View::Real {
                    *counts.entry(key).or_insert(0) += l.units;
                }
            }
            // The trending periods and the hours go with the first step.
            let (trends, hours) = if i == 0 {
                (trends, hours)
            } else {
                (&[][..], &[][..])
            };
            for t in trends {
                t.push_keys(board, &mut call);
            }
            call.arg(counts.len());
            for (field, votes) in &counts {
                call.arg(field).arg(votes);
            }
            call.arg(trends.len());
            for t in trends {
                t.push_args(&mut call);
            }
            for (hour, votes) in hours {
                call.arg(hour).arg(votes);
            }
            calls.push(call);
        }
        self.run_script_all("revoke", &REVOKE, &calls).await?;
        Ok(())
    }

    /// A scratch HyperLogLog of its own for one rebuild (expires if it is left).
    pub fn participants_scratch(&self, board: &BoardKeys) -> String {
        board.scratch_named(&format!("rv:{:016x}", rand::random::<u64>()))
    }

    /// Adds voters to a scratch HyperLogLog.
    pub async fn add_voters(&self, scratch: &str, voters: &[String]) -> Result<(), RedisFailure> {
        if voters.is_empty() {
            return Ok(());
        }
        let mut pipe = redis::pipe();
        pipe.cmd("PFADD")
            .arg(scratch)
            .arg(voters)
            .ignore()
            .pexpire(scratch, SCRATCH_TTL.as_millis() as i64)
            .ignore();
        self.query("add_voters", pipe).await
    }

    /// The id of the last entry the drain trimmed from the board's ledger.
    pub async fn ledger_trimmed(&self, board: &BoardKeys) -> Result<Option<i64>, RedisFailure> {
        let mut pipe = redis::pipe();
        pipe.get(board.ledger_trimmed());
        let (trimmed,): (Option<String>,) = self.query("ledger_trimmed", pipe).await?;
        Ok(trimmed.and_then(|t| t.parse().ok()))
    }

    /// Swaps `scratch` in as `voters`' HyperLogLog, with the voters of the ledger's
    /// waiting entries, when the last trimmed entry is still `trimmed`; answers whether
    /// it did.
    pub async fn swap_voters(
        &self,
        board: &BoardKeys,
        voters: &Voters,
        scratch: &str,
        trimmed: Option<i64>,
    ) -> Result<bool, RedisFailure> {
        let target = match &voters.member {
            Some(m) => board.member_participants(&voters.bucket, m),
            None => board.participants(&voters.bucket),
        };
        let mut call = REBUILD.key(scratch);
        call.key(target)
            .key(board.ledger())
            .key(board.ledger_trimmed())
            .arg(trimmed.map(|t| t.to_string()).unwrap_or_default())
            .arg(
                voters
                    .bucket
                    .start
                    .map_or(i64::MIN, |t| t.timestamp_millis()),
            )
            .arg(voters.bucket.end.map_or(i64::MAX, |t| t.timestamp_millis()))
            .arg(voters.member.as_deref().unwrap_or(""));
        let reply = self
            .run_script_all("participants_rebuild", &REBUILD, &[call])
            .await?;
        reply
            .first()
            .and_then(as_int)
            .map(|swapped| swapped == 1)
            .ok_or_else(|| reply_error("participants_rebuild", &redis::Value::Array(reply)))
    }
}
