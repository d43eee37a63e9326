//! Late-write bookkeeping (`<board>late`, written by `vote.lua` and `score.lua`): per
//! epoch hour, how many writes arrived after their time had passed a while (the archive
//! compares a bucket's sum with the sum it archived); and `g:<ranking key>` for a bucket
//! whose rankings a late write found gone, so the archive adds what the bucket holds now
//! to what it archived before. Both shrink: a gone mark once the bucket is archived
//! again, hour counts once every bucket they count for has left Redis.

use std::collections::{BTreeMap, HashSet};
use std::sync::LazyLock;

use redis::Script;

use super::keys::BoardKeys;
use super::{RedisFailure, RedisStore};
use crate::domain::period::Bucket;
use crate::domain::score::View;

static FORGET: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("late_forget.lua")));

/// A board's late-write bookkeeping.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LateMarks {
    /// Epoch hour -> late writes, summed over the board's slots (a sharded board marks
    /// in each shard).
    pub hours: BTreeMap<i64, i64>,
    /// Each slot's own counts, in the order of `BoardKeys::slots`.
    by_slot: Vec<BTreeMap<i64, i64>>,
    /// Rankings (keys) a late write found gone.
    gone: HashSet<String>,
}

impl LateMarks {
    /// Whether a late write found the bucket's rankings gone (in any of its shards).
    pub fn found_gone(&self, board: &BoardKeys, bucket: &Bucket) -> bool {
        board
            .shards()
            .iter()
            .any(|shard| self.gone.contains(&shard.scores(View::Real, bucket)))
    }
}

impl RedisStore {
    /// The late-write marks of a board.
    pub async fn late_marks(&self, board: &BoardKeys) -> Result<LateMarks, RedisFailure> {
        let mut pipe = redis::pipe();
        for slot in board.slots() {
            pipe.hgetall(slot.late_writes());
        }
        let slots: Vec<BTreeMap<String, i64>> = self.query("late_marks", pipe).await?;
        let mut marks = LateMarks::default();
        for slot in slots {
            let mut own = BTreeMap::new();
            for (field, count) in slot {
                if let Some(ranking) = field.strip_prefix("g:") {
                    marks.gone.insert(ranking.to_owned());
                } else if let Ok(hour) = field.parse::<i64>() {
                    *marks.hours.entry(hour).or_insert(0) += count;
                    own.insert(hour, count);
                }
            }
            marks.by_slot.push(own);
        }
        Ok(marks)
    }

    /// Forgets that late writes found the bucket's rankings gone (the archive added what
    /// they wrote).
    pub async fn forget_gone(
        &self,
        board: &BoardKeys,
        bucket: &Bucket,
    ) -> Result<(), RedisFailure> {
        let mut pipe = redis::pipe();
        for shard in board.shards() {
            let field = format!("g:{}", shard.scores(View::Real, bucket));
            pipe.hdel(shard.late_writes(), field).ignore();
        }
        self.query("late_forget", pipe).await
    }

    /// Forgets the late counts of `hours` (epoch hours) in every slot of the board, each
    /// only while it still holds what `seen` read there: a late write counted meanwhile
    /// keeps its hour.
    pub async fn forget_hours(
        &self,
        board: &BoardKeys,
        hours: &[i64],
        seen: &LateMarks,
    ) -> Result<(), RedisFailure> {
        let calls: Vec<_> = board
            .slots()
            .iter()
            .zip(&seen.by_slot)
            .filter_map(|(slot, counts)| {
                let pairs: Vec<(i64, i64)> = hours
                    .iter()
                    .filter_map(|h| counts.get(h).map(|c| (*h, *c)))
                    .collect();
                (!pairs.is_empty()).then(|| {
                    let mut call = FORGET.key(slot.late_writes());
                    for (hour, count) in pairs {
                        call.arg(hour).arg(count);
                    }
                    call
                })
            })
            .collect();
        if calls.is_empty() {
            return Ok(());
        }
        self.run_script_all("late_forget", &FORGET, &calls)
            .await
            .map(|_| ())
    }
}
