//! A board's ledger in Redis: the entries its write scripts appended (`vote.lua`,
//! `score.lua`) and not yet moved to SQL, read from the head by the drain
//! (`engine::ledger`) and trimmed once SQL holds them (`ledger_trim.lua`). A sharded
//! board's shards keep one ledger each; every other board keeps one.

use std::sync::LazyLock;
use std::time::Duration;

use redis::Script;

use super::keys::BoardKeys;
use super::lease::Lease;
use super::reply::{as_int, reply_error};
use super::{RedisFailure, RedisStore};

static TRIM: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("ledger_trim.lua")));

/// The head of one ledger.
#[derive(Debug, Clone, Default)]
pub struct LedgerHead {
    /// Entries in Redis, not yet trimmed.
    pub length: u64,
    /// The first of them, as stored (JSON), at most as many as asked for.
    pub entries: Vec<String>,
    /// The id of the last entry trimmed, when Redis remembers one.
    pub trimmed: Option<i64>,
}

impl RedisStore {
    /// The lease that lets one instance at a time drain `board`'s ledgers, for the holder
    /// `token`.
    pub fn ledger_lease(&self, board: &BoardKeys, token: &str, length: Duration) -> Lease {
        Lease {
            key: board.ledger_lease(),
            token: token.to_owned(),
            length,
        }
    }

    /// The first `count` entries of `source`'s ledger (a board, or one shard of a
    /// sharded board), with its length and the last entry trimmed.
    pub async fn ledger_head(
        &self,
        source: &BoardKeys,
        count: usize,
    ) -> Result<LedgerHead, RedisFailure> {
        let mut pipe = redis::pipe();
        pipe.llen(source.ledger())
            .lrange(source.ledger(), 0, count as isize - 1)
            .get(source.ledger_trimmed());
        let (length, entries, trimmed): (u64, Vec<String>, Option<String>) =
            self.query("ledger_head", pipe).await?;
        Ok(LedgerHead {
            length,
            entries,
            trimmed: trimmed.and_then(|t| t.parse().ok()),
        })
    }

    /// Trims the first `n` entries of `source`'s ledger when the n-th is still `last`
    /// (whose id is `last_id`); answers whether it did.
    pub async fn ledger_trim(
        &self,
        source: &BoardKeys,
        n: usize,
        last: &str,
        last_id: i64,
    ) -> Result<bool, RedisFailure> {
        let mut call = TRIM.key(source.ledger());
        call.key(source.ledger_trimmed())
            .arg(n)
            .arg(last)
            .arg(last_id);
        let reply = self.run_script_all("ledger_trim", &TRIM, &[call]).await?;
        reply
            .first()
            .and_then(as_int)
            .map(|t| t == 1)
            .ok_or_else(|| reply_error("ledger_trim", &redis::Value::Array(reply)))
    }

    /// Entries of `board` not yet in SQL, over all its ledgers.
    pub async fn ledger_pending(&self, board: &BoardKeys) -> Result<u64, RedisFailure> {
        let mut pipe = redis::pipe();
        for source in board.shards() {
            pipe.llen(source.ledger());
        }
        let lengths: Vec<u64> = self.query("ledger_pending", pipe).await?;
        Ok(lengths.iter().sum())
    }
}
