//! Late-write marks (`<board>late`, written by `vote.lua` and `score.lua`) and
//! `late_ack.lua`, which takes off what the archive task has archived again.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use redis::Script;

use super::keys::BoardKeys;
use super::{Invocation, RedisFailure, RedisStore};

static LATE_ACK: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("late_ack.lua")));

/// Late writes per epoch hour, over a board's slots (a sharded board marks in each
/// shard); each slot's marks apart, for [`RedisStore::ack_late`].
pub type LateMarks = Vec<BTreeMap<i64, i64>>;

impl RedisStore {
    /// The late-write marks of a board, one map per slot in `BoardKeys::slots` order.
    pub async fn late_marks(&self, board: &BoardKeys) -> Result<LateMarks, RedisFailure> {
        let mut pipe = redis::pipe();
        for slot in board.slots() {
            pipe.hgetall(slot.late_writes());
        }
        self.query("late_marks", pipe).await
    }

    /// Takes `seen` (as [`Self::late_marks`] answered it) off the marks.
    pub async fn ack_late(&self, board: &BoardKeys, seen: &LateMarks) -> Result<(), RedisFailure> {
        let calls: Vec<Invocation> = board
            .slots()
            .iter()
            .zip(seen)
            .filter(|(_, marks)| !marks.is_empty())
            .map(|(slot, marks)| {
                let mut inv = LATE_ACK.key(slot.late_writes());
                for (hour, writes) in marks {
                    inv.arg(hour).arg(writes);
                }
                inv
            })
            .collect();
        self.run_script_all("late_ack", &LATE_ACK, &calls).await?;
        Ok(())
    }
}
