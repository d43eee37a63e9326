//! Late-write marks (`<board>late`, written by `vote.lua` and `score.lua`): per epoch
//! hour, how many writes arrived after their time had passed a while. The counts only
//! grow; the archive compares a bucket's sum with the sum it archived.

use std::collections::BTreeMap;

use super::keys::BoardKeys;
use super::{RedisFailure, RedisStore};

impl RedisStore {
    /// The late-write marks of a board, summed over its slots (a sharded board marks in
    /// each shard): epoch hour -> late writes.
    pub async fn late_marks(&self, board: &BoardKeys) -> Result<BTreeMap<i64, i64>, RedisFailure> {
        let mut pipe = redis::pipe();
        for slot in board.slots() {
            pipe.hgetall(slot.late_writes());
        }
        let slots: Vec<BTreeMap<i64, i64>> = self.query("late_marks", pipe).await?;
        let mut marks = BTreeMap::new();
        for slot in slots {
            for (hour, writes) in slot {
                *marks.entry(hour).or_insert(0) += writes;
            }
        }
        Ok(marks)
    }
}
