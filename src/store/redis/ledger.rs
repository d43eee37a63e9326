//! A board's ledger in Redis: the entries its write scripts appended (`vote.lua`,
//! `score.lua`) and not yet moved to SQL, read from the head by the drain
//! (`engine::ledger`) and trimmed once SQL holds them (`ledger_trim.lua`). A sharded
//! board's shards keep one ledger each; every other board keeps one. A family's
//! instances keep one each (in their own slots), and the family notes in its own slot
//! which of them hold entries (`ledger_dirty`), so the drain finds them without a scan.

use std::sync::LazyLock;
use std::time::Duration;

use redis::Script;

use super::keys::BoardKeys;
use super::lease::Lease;
use super::reply::{as_int, reply_error};
use super::{RedisFailure, RedisStore};

static TRIM: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("ledger_trim.lua")));

/// Entries one call of [`RedisStore::ledger_head`] reads at most. A drain's batch (up to
/// 4,000 entries) read in one `LRANGE` held Redis for about 0.2 ms and sent a reply of
/// about 1 MB through the connection the votes share; read 250 a call, votes are served
/// between the calls, and the p99 of votes beside a busy drain was 0.5–0.9 ms lower on
/// the 2-core VM (bench/notes/2026-11-30-ledger-p99-parts.md).
pub const HEAD_CALL: usize = 250;

/// The head of one ledger.
#[derive(Debug, Clone, Default)]
pub struct LedgerHead {
    /// Entries in Redis, not yet trimmed.
    pub length: u64,
    /// The first of them, as stored (JSON), at most as many as asked for.
    pub entries: Vec<String>,
    /// The id of the last entry trimmed, when Redis remembers one.
    pub trimmed: Option<i64>,
    /// The `seq` SQL gave that entry, when Redis remembers it.
    pub trimmed_seq: Option<i64>,
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
    /// sharded board), with its length and the last entry trimmed: read [`HEAD_CALL`]
    /// entries a call, one call after another (see [`Self::ledger_head_continued`]).
    pub async fn ledger_head(
        &self,
        source: &BoardKeys,
        count: usize,
    ) -> Result<LedgerHead, RedisFailure> {
        let head = self
            .ledger_head_at_once(source, count.min(HEAD_CALL))
            .await?;
        self.ledger_head_continued(source, head, count).await
    }

    /// `head` (the first entries of `source`'s ledger, as [`Self::ledger_head`] read them
    /// in its first call) read on up to `count` entries, [`HEAD_CALL`] a call, each call
    /// also reading the ledger's first entry. A drain trims the ledger from its head
    /// only, and every entry is unique, so the same first entry means nothing was
    /// trimmed since `head` was read; another first entry (another drain trimmed
    /// meanwhile) and the head is read anew, whole, in one call.
    pub async fn ledger_head_continued(
        &self,
        source: &BoardKeys,
        mut head: LedgerHead,
        count: usize,
    ) -> Result<LedgerHead, RedisFailure> {
        // A first call short of a whole call's worth found the ledger's end.
        if head.entries.len() < HEAD_CALL {
            return Ok(head);
        }
        let first = head.entries[0].clone();
        while head.entries.len() < count {
            let from = head.entries.len();
            let n = HEAD_CALL.min(count - from);
            let mut pipe = redis::pipe();
            pipe.lindex(source.ledger(), 0).lrange(
                source.ledger(),
                from as isize,
                (from + n) as isize - 1,
            );
            let (front, more): (Option<String>, Vec<String>) =
                self.query("ledger_head", pipe).await?;
            if front.as_deref() != Some(first.as_str()) {
                return self.ledger_head_at_once(source, count).await;
            }
            let end = more.len() < n;
            head.entries.extend(more);
            if end {
                break;
            }
        }
        Ok(head)
    }

    /// The first `count` entries of `source`'s ledger, its length and the last entry
    /// trimmed, in one call.
    async fn ledger_head_at_once(
        &self,
        source: &BoardKeys,
        count: usize,
    ) -> Result<LedgerHead, RedisFailure> {
        let mut pipe = redis::pipe();
        pipe.llen(source.ledger())
            .lrange(source.ledger(), 0, count as isize - 1)
            .get(source.ledger_trimmed())
            .get(source.ledger_trimmed_seq());
        let (length, entries, trimmed, trimmed_seq): (
            u64,
            Vec<String>,
            Option<String>,
            Option<String>,
        ) = self.query("ledger_head", pipe).await?;
        Ok(LedgerHead {
            length,
            entries,
            trimmed: trimmed.and_then(|t| t.parse().ok()),
            trimmed_seq: trimmed_seq.and_then(|t| t.parse().ok()),
        })
    }

    /// Trims the first `n` entries of `source`'s ledger when the n-th is still `last`
    /// (whose id is `last_id`, and whose `seq` in SQL `last_seq`); answers whether it did.
    pub async fn ledger_trim(
        &self,
        source: &BoardKeys,
        n: usize,
        last: &str,
        (last_id, last_seq): (i64, i64),
    ) -> Result<bool, RedisFailure> {
        let mut call = TRIM.key(source.ledger());
        call.key(source.ledger_trimmed())
            .key(source.ledger_trimmed_seq())
            .arg(n)
            .arg(last)
            .arg(last_id)
            .arg(source.ttl_ms())
            .arg(last_seq);
        let reply = self.run_script_all("ledger_trim", &TRIM, &[call]).await?;
        reply
            .first()
            .and_then(as_int)
            .map(|t| t == 1)
            .ok_or_else(|| reply_error("ledger_trim", &redis::Value::Array(reply)))
    }

    /// Entries of `boards` not yet in SQL, over all their ledgers.
    pub async fn ledger_pending(&self, boards: &[BoardKeys]) -> Result<u64, RedisFailure> {
        if boards.is_empty() {
            return Ok(0);
        }
        let mut pipe = redis::pipe();
        for source in boards.iter().flat_map(BoardKeys::shards) {
            pipe.llen(source.ledger());
        }
        let lengths: Vec<u64> = self.query("ledger_pending", pipe).await?;
        Ok(lengths.iter().sum())
    }

    /// How many instances of `family` have ledger entries waiting for SQL: the size of
    /// the set the drain walks, so the backlog counts every room, not one pass's worth.
    pub async fn ledger_waiting(&self, family: &BoardKeys) -> Result<u64, RedisFailure> {
        let mut pipe = redis::pipe();
        pipe.zcard(family.ledger_dirty());
        let (waiting,): (u64,) = self.query("ledger_waiting", pipe).await?;
        Ok(waiting)
    }

    /// Up to `limit` instances of `family` whose ledgers hold entries, with when the
    /// oldest was noted (ms), oldest first.
    pub async fn ledger_dirty(
        &self,
        family: &BoardKeys,
        limit: usize,
    ) -> Result<Vec<(String, i64)>, RedisFailure> {
        let mut pipe = redis::pipe();
        pipe.cmd("ZRANGE")
            .arg(family.ledger_dirty())
            .arg(0)
            .arg(limit as isize - 1)
            .arg("WITHSCORES");
        let (dirty,): (Vec<(String, f64)>,) = self.query("ledger_dirty", pipe).await?;
        Ok(dirty.into_iter().map(|(i, ms)| (i, ms as i64)).collect())
    }

    /// Notes that `instances` of `family` hold ledger entries, the oldest noted at the
    /// ms given (an instance noted earlier keeps its earlier time).
    pub async fn ledger_note(
        &self,
        family: &BoardKeys,
        instances: &[(String, i64)],
    ) -> Result<(), RedisFailure> {
        if instances.is_empty() {
            return Ok(());
        }
        let mut pipe = redis::pipe();
        let zadd = pipe.cmd("ZADD").arg(family.ledger_dirty()).arg("LT");
        for (instance, ms) in instances {
            zadd.arg(*ms).arg(instance);
        }
        pipe.ignore();
        self.query("ledger_note", pipe).await
    }

    /// Takes `instance` out of `family`'s instances whose ledgers hold entries (the
    /// drain, which then looks again and notes it anew if a write came meanwhile).
    pub async fn ledger_clean(
        &self,
        family: &BoardKeys,
        instance: &str,
    ) -> Result<(), RedisFailure> {
        let mut pipe = redis::pipe();
        pipe.zrem(family.ledger_dirty(), instance).ignore();
        self.query("ledger_clean", pipe).await
    }
}
