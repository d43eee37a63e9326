//! `usage.lua`: how much of each rule's limit is used, from running totals.

use redis::Script;
use std::sync::LazyLock;

use super::keys::BoardKeys;
use super::reply::{as_array, as_int, reply_error};
use super::rules::{Counter, RuleCheck};
use super::{Invocation, RedisFailure, RedisStore};

static USAGE: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("usage.lua")));

/// How much of a rule's limit is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Usage {
    pub used: i64,
    /// Rolling windows: the time (ms) of the oldest vote still in the window.
    pub oldest_ms: Option<i64>,
}

impl RedisStore {
    /// How much of each rule's limit `member` and `voter` have used (a rule's counter
    /// lives in their shard on a sharded board when it counts per what picks the
    /// shard), in one round trip. Rolling logs are read from their running totals
    /// (`usage.lua`), never whole.
    pub async fn rule_usage(
        &self,
        board: &BoardKeys,
        member: Option<&str>,
        voter: Option<&str>,
        rules: &[RuleCheck],
    ) -> Result<Vec<Usage>, RedisFailure> {
        let shard = board.write_shard(member.unwrap_or(""), voter);
        // One call per slot: the board's own, and the shard's.
        let (in_shard, own): (Vec<usize>, Vec<usize>) = (0..rules.len())
            .partition(|&i| board.storage().is_sharded() && rules[i].in_shard(board));
        let slots: Vec<(&BoardKeys, Vec<usize>)> = [(board, own), (&shard, in_shard)]
            .into_iter()
            .filter(|(_, at)| !at.is_empty())
            .collect();
        let calls: Vec<Invocation> = slots
            .iter()
            .map(|(keys, at)| {
                let mut call = USAGE.prepare_invoke();
                for &i in at {
                    let counter = &rules[i].counter;
                    let (first, second) = counter.keys(*keys);
                    call.key(first).key(second);
                    match counter {
                        Counter::Fixed { .. } => call.arg("c").arg(counter.field()),
                        Counter::Rolling { horizon_ms, .. } => call.arg("l").arg(horizon_ms),
                    };
                }
                call
            })
            .collect();
        let replies = self.run_script_all("usage", &USAGE, &calls).await?;
        let mut usage = vec![Usage::default(); rules.len()];
        for ((_, at), value) in slots.iter().zip(&replies) {
            let numbers = as_array(value)
                .and_then(|items| items.iter().map(as_int).collect::<Option<Vec<i64>>>())
                .filter(|n| n.len() == 2 * at.len())
                .ok_or_else(|| reply_error("usage", value))?;
            for (&i, pair) in at.iter().zip(numbers.chunks(2)) {
                usage[i] = Usage {
                    used: pair[0],
                    oldest_ms: (pair[1] >= 0).then_some(pair[1]),
                };
            }
        }
        Ok(usage)
    }
}
