//! What a write script (`vote.lua`, `score.lua`) answers, read into one shape.

use redis::Value;

use super::RedisFailure;
use super::reply::{as_array, as_int, as_text, as_units, parse_units, reply_error};

/// How a write went, with the scores it answers as `S` (a vote's pair of views per
/// period, a score write's units per bucket).
#[derive(Debug, Clone, PartialEq)]
pub enum WriteReply<S> {
    /// Written; the member's new scores, in the order of the call's buckets.
    Written(Vec<S>),
    /// The idempotency key was used before: the receipt and scores of the first answer.
    Replayed { receipt: String, scores: Vec<S> },
    /// The rule at this index of the call's rules refused the write; nothing changed.
    /// `retry_ms`: until that rule admits it, `None` for never.
    Limited {
        rule_index: usize,
        retry_ms: Option<i64>,
    },
    /// A score would pass 2^53 units; nothing was written.
    Overflow,
    /// A `top_n` board: the write would lower a score (score writes only).
    Lowers,
}

impl<S> WriteReply<S> {
    /// Reads the reply of the script `op`: `scores` makes the scores of the units it
    /// lists (told whether they are a replay's, stored with its receipt), `rule` turns
    /// the script's rule index into the call's.
    pub(super) fn parse(
        op: &'static str,
        value: &Value,
        scores: impl Fn(Vec<i64>, bool) -> Option<Vec<S>>,
        rule: impl Fn(usize) -> Option<usize>,
    ) -> Result<Self, RedisFailure> {
        let bad = || reply_error(op, value);
        let items = as_array(value).ok_or_else(bad)?;
        let tag = items.first().and_then(as_text).ok_or_else(bad)?;
        match tag.as_str() {
            "ok" => {
                let units = items[1..]
                    .iter()
                    .map(as_units)
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(bad)?;
                scores(units, false).map(Self::Written).ok_or_else(bad)
            }
            "dup" => {
                let stored = items.get(1).and_then(as_text).ok_or_else(bad)?;
                let (receipt, listed) = stored.rsplit_once('|').ok_or_else(bad)?;
                let units = listed
                    .split(',')
                    .filter(|s| !s.is_empty())
                    .map(parse_units)
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(bad)?;
                Ok(Self::Replayed {
                    receipt: receipt.to_owned(),
                    scores: scores(units, true).ok_or_else(bad)?,
                })
            }
            "limited" => {
                let (Some(index), Some(retry)) =
                    (items.get(1).and_then(as_int), items.get(2).and_then(as_int))
                else {
                    return Err(bad());
                };
                let index = usize::try_from(index).map_err(|_| bad())?;
                Ok(Self::Limited {
                    rule_index: rule(index).ok_or_else(bad)?,
                    retry_ms: (retry >= 0).then_some(retry),
                })
            }
            "overflow" => Ok(Self::Overflow),
            "lowers" => Ok(Self::Lowers),
            _ => Err(bad()),
        }
    }
}
