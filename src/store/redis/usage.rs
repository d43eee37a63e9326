//! `usage.lua`: how much of each rule's limit is used, from running totals.

use redis::{Script, Value};
use std::sync::LazyLock;

use super::keys::BoardKeys;
use super::reply::{as_array, as_int, reply_error};
use super::rules::Counter;
use super::{RedisFailure, RedisStore};

static USAGE: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("usage.lua")));

/// How much of a rule's limit is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Usage {
    pub used: i64,
    /// Rolling windows: the time (ms) of the oldest vote still in the window.
    pub oldest_ms: Option<i64>,
}

impl RedisStore {
    /// How much of each rule's limit is used, in one round trip. Rolling logs are read
    /// from their running totals (`usage.lua`), never whole.
    pub async fn rule_usage(
        &self,
        board: &BoardKeys,
        counters: &[Counter],
    ) -> Result<Vec<Usage>, RedisFailure> {
        let mut call = USAGE.prepare_invoke();
        for counter in counters {
            let (first, second) = counter.keys(board);
            call.key(first).key(second);
            match counter {
                Counter::Fixed { .. } => call.arg("c").arg(counter.field()),
                Counter::Rolling { horizon_ms, .. } => call.arg("l").arg(horizon_ms),
            };
        }
        let reply = self.run_script_all("usage", &USAGE, &[call]).await?;
        let value = reply
            .first()
            .ok_or_else(|| reply_error("usage", &Value::Nil))?;
        let numbers = as_array(value)
            .and_then(|items| items.iter().map(as_int).collect::<Option<Vec<i64>>>())
            .filter(|n| n.len() == 2 * counters.len())
            .ok_or_else(|| reply_error("usage", value))?;
        Ok(numbers
            .chunks(2)
            .map(|pair| Usage {
                used: pair[0],
                oldest_ms: (pair[1] >= 0).then_some(pair[1]),
            })
            .collect())
    }
}
