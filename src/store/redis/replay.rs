//! Rebuilding a board Redis lost from its ledger: the rebuild's progress in the board's
//! slot (`lg:rebuild`: the last `seq` to replay and how far it got, lost again with the
//! board's keys) and `replay.lua`, which applies one batch of entries exactly once.

use std::sync::LazyLock;

use redis::Script;

use super::keys::BoardKeys;
use super::reply::{as_int, reply_error};
use super::rules::{Counter, RuleCheck};
use super::trend::TrendChange;
use super::{RedisFailure, RedisStore};
use crate::domain::period::Bucket;
use crate::domain::score::View;

static RING_ADD: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        include_str!("ring.lua"),
        include_str!("ring_add.lua")
    ))
});

static REPLAY: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        include_str!("trend_apply.lua"),
        include_str!("replay.lua")
    ))
});

/// What one batch of entries adds back.
#[derive(Debug, Default)]
pub struct Replay {
    /// (bucket, view, member, units).
    pub scores: Vec<(Bucket, View, String, i64)>,
    /// (bucket, member for a member's own set, voters).
    pub voters: Vec<(Bucket, Option<String>, Vec<String>)>,
    /// (epoch hour, votes).
    pub hours: Vec<(i64, i64)>,
    /// (bucket, votes counted in it).
    pub counts: Vec<(Bucket, i64)>,
    /// What the entries add to the trending periods.
    pub trends: Vec<TrendChange>,
}

impl RedisStore {
    /// The board's rebuild: (last seq to replay, replayed so far), if one was started
    /// since Redis last lost the board.
    pub async fn rebuild_state(
        &self,
        board: &BoardKeys,
    ) -> Result<Option<(i64, i64)>, RedisFailure> {
        let mut pipe = redis::pipe();
        pipe.hget(board.ledger_rebuild(), "until")
            .hget(board.ledger_rebuild(), "done");
        let (until, done): (Option<i64>, Option<i64>) = self.query("rebuild_state", pipe).await?;
        Ok(until.zip(done))
    }

    /// Starts the board's rebuild up to `until` unless one was started already (by the
    /// drain, which records it before it stores an entry of Redis's new life, or by
    /// another instance): the first `until` stands.
    pub async fn start_rebuild(&self, board: &BoardKeys, until: i64) -> Result<(), RedisFailure> {
        let mut pipe = redis::pipe();
        pipe.hset_nx(board.ledger_rebuild(), "until", until)
            .ignore()
            .hset_nx(board.ledger_rebuild(), "done", 0)
            .ignore();
        self.query("start_rebuild", pipe).await
    }

    /// Applies `replay` as the entries after `from` up to `to`, when the rebuild is at
    /// `from`; answers whether it was.
    pub async fn replay(
        &self,
        board: &BoardKeys,
        from: i64,
        to: i64,
        replay: &Replay,
    ) -> Result<bool, RedisFailure> {
        let mut call = REPLAY.key(board.ledger_rebuild());
        call.key(board.vote_counts())
            .arg(from)
            .arg(to)
            .arg(replay.scores.len());
        for (bucket, view, member, units) in &replay.scores {
            call.key(board.scores(*view, bucket)).arg(member).arg(units);
        }
        call.arg(replay.voters.len());
        for (bucket, member, voters) in &replay.voters {
            call.key(match member {
                Some(m) => board.member_participants(bucket, m),
                None => board.participants(bucket),
            })
            .arg(voters.len())
            .arg(voters);
        }
        call.arg(replay.trends.len());
        for t in &replay.trends {
            t.push_keys(board, &mut call);
            t.push_args(&mut call);
        }
        for (hour, votes) in &replay.hours {
            call.arg(hour).arg(votes);
        }
        for (bucket, votes) in &replay.counts {
            call.arg(board.scores(View::Real, bucket)).arg(votes);
        }
        let reply = self.run_script_all("replay", &REPLAY, &[call]).await?;
        reply
            .first()
            .and_then(as_int)
            .map(|applied| applied == 1)
            .ok_or_else(|| reply_error("replay", &redis::Value::Array(reply)))
    }
}

/// A vote a watch counted before Redis lost its board, counted again by the rebuild (see
/// [`RedisStore::recount_watched`]).
#[derive(Debug)]
pub struct Watched {
    /// The watch's counter now (its window's now, the vote's subject).
    pub check: RuleCheck,
    /// The vote's member and voter: the shard it was written to, on a sharded board.
    pub member: String,
    pub voter: Option<String>,
    pub count: i64,
    pub at_ms: i64,
}

impl RedisStore {
    /// Claims counting the board's watched votes again after Redis lost `part` (the board,
    /// or one of its shards): true for the first to ask since the loss.
    pub async fn claim_watched(&self, part: &BoardKeys) -> Result<bool, RedisFailure> {
        let mut pipe = redis::pipe();
        pipe.hset_nx(part.ledger_rebuild(), "watched", 1);
        let (claimed,): (bool,) = self.query("claim_watched", pipe).await?;
        Ok(claimed)
    }

    /// Counts `watched` again in those of `board`'s watch counters that live in `part`: a
    /// count adds to its window's field, a slotted window's ring counts the vote in its
    /// slot (`ring_add.lua`, after the counts); each key gets its counter's TTL. Answers
    /// how many votes it counted.
    pub async fn recount_watched(
        &self,
        board: &BoardKeys,
        part: &BoardKeys,
        watched: &[Watched],
    ) -> Result<usize, RedisFailure> {
        let mut pipe = redis::pipe();
        let mut rings = RING_ADD.prepare_invoke();
        let (mut counted, mut slotted) = (0, 0);
        for w in watched {
            let write = board.write_shard(&w.member, w.voter.as_deref());
            if w.check.home(board, &write) != *part {
                continue;
            }
            let (first, _) = w.check.counter.keys(part);
            match &w.check.counter {
                Counter::Fixed { of, ttl_s, .. } => {
                    pipe.hincr(&first, &of.subject, w.count)
                        .ignore()
                        .expire(&first, *ttl_s)
                        .ignore();
                }
                Counter::Slotted {
                    of, slots, ttl_s, ..
                } => {
                    rings
                        .key(first)
                        .arg(&of.subject)
                        .arg(slots.slot_of(w.at_ms))
                        .arg(w.count)
                        .arg(*ttl_s);
                    slotted += 1;
                }
                // A watch keeps no log.
                Counter::Rolling { .. } => continue,
            }
            counted += 1;
        }
        if counted > slotted {
            self.query::<()>("recount_watched", pipe).await?;
        }
        if slotted > 0 {
            self.run_script_all("recount_watched", &RING_ADD, &[rings])
                .await?;
        }
        Ok(counted)
    }
}
