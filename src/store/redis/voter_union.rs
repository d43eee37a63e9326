//! `voter_union.lua`: distinct voters of a sharded board, whose voters are counted per
//! shard. Each shard merges its own HyperLogLogs of the bucket and answers the union's
//! value; the board's own slot then merges those values and counts: two round trips,
//! the shards in parallel, no command over keys of several slots.

use std::sync::LazyLock;

use redis::{Script, Value};

use super::keys::BoardKeys;
use super::reply::{as_int, reply_error};
use super::{Invocation, RedisFailure, RedisStore};
use crate::domain::period::Bucket;

static UNION: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("voter_union.lua")));

fn call(slot: &BoardKeys, answer: &str, sources: &[String], values: &[Vec<u8>]) -> Invocation {
    let [union, copy] = slot.scratch();
    let mut inv = UNION.key(union);
    inv.key(copy).key(sources).arg(answer).arg(values);
    inv
}

/// Whose distinct voters in one bucket: the board's, or one member's.
#[derive(Debug, Clone, Copy)]
pub(super) enum Voters<'a> {
    Board(&'a Bucket),
    Member(&'a Bucket, &'a str),
}

impl Voters<'_> {
    /// The HyperLogLogs of one shard whose union counts them.
    fn keys(self, shard: &BoardKeys) -> Vec<String> {
        match self {
            Self::Board(bucket) => shard.voters(bucket),
            Self::Member(bucket, member) => shard.member_voters(bucket, member),
        }
    }
}

impl RedisStore {
    /// Distinct voters of each bucket of a sharded board.
    pub(super) async fn sharded_participants(
        &self,
        board: &BoardKeys,
        buckets: &[Bucket],
    ) -> Result<Vec<i64>, RedisFailure> {
        let sets: Vec<Voters<'_>> = buckets.iter().map(Voters::Board).collect();
        self.shard_unions(board, &sets).await
    }

    /// Distinct voters of each of `sets`, counted over every shard of a sharded board.
    pub(super) async fn shard_unions(
        &self,
        board: &BoardKeys,
        sets: &[Voters<'_>],
    ) -> Result<Vec<i64>, RedisFailure> {
        let shards = board.shards();
        let per_shard: Vec<Invocation> = sets
            .iter()
            .flat_map(|set| {
                shards
                    .iter()
                    .map(move |s| call(s, "value", &set.keys(s), &[]))
            })
            .collect();
        let values = self
            .run_script_all("voter_union", &UNION, &per_shard)
            .await?;
        let values = values
            .iter()
            .map(|v| match v {
                Value::BulkString(bytes) => Ok(bytes.clone()),
                other => Err(reply_error("voter_union", other)),
            })
            .collect::<Result<Vec<_>, _>>()?;
        let per_board: Vec<Invocation> = values
            .chunks(shards.len().max(1))
            .map(|of_bucket| call(board, "count", &[], of_bucket))
            .collect();
        self.run_script_all("voter_union", &UNION, &per_board)
            .await?
            .iter()
            .map(|v| as_int(v).ok_or_else(|| reply_error("voter_union", v)))
            .collect()
    }
}
