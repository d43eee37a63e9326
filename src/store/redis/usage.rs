//! `usage.lua`: how much of each rule's limit is used, from running totals.

use redis::Script;
use std::sync::LazyLock;

use super::keys::BoardKeys;
use super::reply::{as_array, as_int, reply_error};
use super::rules::{Counter, RuleCheck};
use super::{Invocation, RedisFailure, RedisStore};

static USAGE: LazyLock<Script> =
    LazyLock::new(|| Script::new(concat!(include_str!("ring.lua"), include_str!("usage.lua"))));

/// How much of a rule's limit is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Usage {
    pub used: i64,
    /// Rolling windows: the time (ms) of the oldest vote still in the window.
    pub oldest_ms: Option<i64>,
}

impl RedisStore {
    /// How much of each rule's limit `member` and `voter` have used, each counter read
    /// where it lives (`RuleCheck::home`: their shard on a sharded board when the rule
    /// counts per what picks the shard, else the board's own slot or the shard its
    /// subject picks), in one round trip. Rolling logs are read from their running
    /// totals (`usage.lua`), never whole.
    pub async fn rule_usage(
        &self,
        board: &BoardKeys,
        member: Option<&str>,
        voter: Option<&str>,
        rules: &[RuleCheck],
    ) -> Result<Vec<Usage>, RedisFailure> {
        let shard = board.write_shard(member.unwrap_or(""), voter);
        // One call per slot that keeps some of the counters.
        let mut slots: Vec<(BoardKeys, Vec<usize>)> = Vec::new();
        for (i, rule) in rules.iter().enumerate() {
            let home = rule.home(board, &shard);
            match slots.iter_mut().find(|(keys, _)| *keys == home) {
                Some((_, at)) => at.push(i),
                None => slots.push((home, vec![i])),
            }
        }
        let calls: Vec<Invocation> = slots
            .iter()
            .map(|(keys, at)| {
                let mut call = USAGE.prepare_invoke();
                for &i in at {
                    let counter = &rules[i].counter;
                    let (first, second) = counter.keys(keys);
                    call.key(first).key(second);
                    let (kind, slot) = counter.kind();
                    match counter {
                        Counter::Rolling { horizon_ms, .. } => call.arg(kind).arg(horizon_ms),
                        Counter::Fixed { .. } | Counter::Slotted { .. } => {
                            call.arg(kind).arg(counter.field())
                        }
                    }
                    .arg(slot.map_or_else(String::new, |s| s.to_string()));
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
