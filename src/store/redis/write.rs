//! What the two write scripts (`vote.lua`, `score.lua`) share: the facts every write
//! carries into its call (`WriteFacts`) and the shape of their replies (`WriteReply`).

use std::time::Duration;

use redis::Value;

use super::keys::BoardKeys;
use super::reply::{as_array, as_int, as_text, as_units, parse_units, reply_error};
use super::rules::RuleCheck;
use super::{RedisFailure, RedisStore};
use crate::domain::ids::IdempotencyKey;
use crate::domain::period::{Bucket, epoch_hour_of_ms};

/// Who writes, when, under which idempotency key and against which rules: the same for a
/// vote and a score write.
#[derive(Debug, Clone, Copy)]
pub struct WriteFacts<'a> {
    pub member: &'a str,
    pub voter: Option<&'a str>,
    /// The caller's idempotency key (the record is the caller's own) and how long the
    /// record lives.
    pub idempotency: Option<(&'a str, &'a IdempotencyKey, Duration)>,
    /// Stored with the scores so a replay answers the same.
    pub receipt: &'a str,
    /// Hours since the epoch, for the writes-per-hour counter.
    pub hour: i64,
    /// The write's time, ms since the epoch.
    pub at_ms: i64,
    /// Whether the write's time had passed a while before it arrived
    /// (`retention::is_late`): its hour is marked for the archive, and what it writes is
    /// held in Redis until the archive has it.
    pub late: bool,
    /// The rules the write must pass; empty when it skips them.
    pub rules: &'a [RuleCheck],
    /// The buckets whose distinct voters the write adds to (`period::voter_buckets`).
    pub voters: &'a [Bucket],
    /// The write's ledger entry (`domain::ledger::Entry`, encoded), when the board
    /// keeps a ledger: the script appends it when the write counts.
    pub ledger: Option<&'a str>,
}

impl<'a> WriteFacts<'a> {
    /// A write of `member` at `at_ms` with no idempotency key, no rules and no distinct
    /// voters counted, on time.
    pub fn at(member: &'a str, voter: Option<&'a str>, at_ms: i64) -> Self {
        Self {
            member,
            voter,
            idempotency: None,
            receipt: "",
            hour: epoch_hour_of_ms(at_ms),
            at_ms,
            late: false,
            rules: &[],
            voters: &[],
            ledger: None,
        }
    }

    /// The idempotency record's key among `keys` and its TTL in seconds; with no record to
    /// keep (no key, or `records` false) a key of the board the script ignores and 0.
    pub(super) fn idempotency_record(&self, keys: &BoardKeys, records: bool) -> (String, u64) {
        match self.idempotency {
            Some((caller, key, ttl)) if records => {
                (keys.idempotency(caller, key), ttl.as_secs().max(1))
            }
            _ => (keys.vote_counts(), 0),
        }
    }
}

/// How a write went, with the scores it answers as `S` (a vote's pair of views per
/// period, a score write's units per bucket).
#[derive(Debug, Clone, PartialEq)]
pub enum WriteReply<S> {
    /// Written; the member's new scores, in the order of the call's buckets.
    Written(Vec<S>),
    /// The idempotency key was used before: the receipt and scores of the first answer,
    /// and whether a watch held that write.
    Replayed {
        receipt: String,
        scores: Vec<S>,
        held: bool,
    },
    /// The rule at this index of the call's rules refused the write; nothing changed.
    /// `retry_ms`: until that rule admits it, `None` for never.
    Limited {
        rule_index: usize,
        retry_ms: Option<i64>,
    },
    /// Held for review by the watch with this id (see `domain::watch`): counted nowhere,
    /// recorded in the ledger as held; `flags` when it took its subject past the
    /// threshold. The member's scores as they stand.
    Held {
        watch: i64,
        flags: bool,
        scores: Vec<S>,
    },
    /// A score would pass 2^53 units; nothing was written.
    Overflow,
    /// A `top_n` board: the write would lower a score (score writes only).
    Lowers,
}

impl<S> WriteReply<S> {
    /// Reads the reply of the script `op`: `scores` makes the scores of the units it
    /// lists (told whether they are a replay's, stored with its receipt), `rule` turns
    /// the script's rule index into the call's. A counted vote answers as text what its
    /// idempotency record keeps, `<receipt>|<scores>` (`vote.lua`); every other reply is
    /// an array whose first item names it.
    pub(super) fn parse(
        op: &'static str,
        value: &Value,
        scores: impl Fn(Vec<i64>, bool) -> Option<Vec<S>>,
        rule: impl Fn(usize) -> Option<usize>,
    ) -> Result<Self, RedisFailure> {
        let bad = || reply_error(op, value);
        if let Value::BulkString(text) = value {
            let text = std::str::from_utf8(text).map_err(|_| bad())?;
            let Some((_, false, units)) = record(text) else {
                return Err(bad());
            };
            return scores(units, false).map(Self::Written).ok_or_else(bad);
        }
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
                let (receipt, held, units) = record(&stored).ok_or_else(bad)?;
                Ok(Self::Replayed {
                    receipt: receipt.to_owned(),
                    scores: scores(units, true).ok_or_else(bad)?,
                    held,
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
            "held" => {
                let (Some(watch), Some(flags)) =
                    (items.get(1).and_then(as_int), items.get(2).and_then(as_int))
                else {
                    return Err(bad());
                };
                let units = items[3..]
                    .iter()
                    .map(as_units)
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(bad)?;
                Ok(Self::Held {
                    watch,
                    flags: flags == 1,
                    scores: scores(units, false).ok_or_else(bad)?,
                })
            }
            "overflow" => Ok(Self::Overflow),
            "lowers" => Ok(Self::Lowers),
            _ => Err(bad()),
        }
    }
}

/// An idempotency record's text, `<receipt>|<scores>` (`5000,15000,...`; none for a
/// write of no period), its scores after `h,` when a watch held the write: the receipt,
/// whether it was held, and the scores' units. A vote on a board whose scores are sums
/// over shards lists its shard's scores, then after `+` the other shards' (`vote.lua`'s
/// twelfth vote argument): its scores are their sums.
fn record(text: &str) -> Option<(&str, bool, Vec<i64>)> {
    let (receipt, listed) = text.rsplit_once('|')?;
    let (held, listed) = match listed.strip_prefix("h,") {
        Some(scores) => (true, scores),
        None => (false, listed),
    };
    let units = |listed: &str| -> Option<Vec<i64>> {
        listed
            .split(',')
            .filter(|s| !s.is_empty())
            .map(parse_units)
            .collect()
    };
    let Some((own, others)) = listed.split_once('+') else {
        return Some((receipt, held, units(listed)?));
    };
    let (own, others) = (units(own)?, units(others)?);
    if own.len() != others.len() {
        return None;
    }
    let summed = own
        .into_iter()
        .zip(others)
        .map(|(own, other)| own.checked_add(other))
        .collect::<Option<_>>()?;
    Some((receipt, held, summed))
}

impl RedisStore {
    /// The idempotency records already stored of `writes` ((write index, the keys it
    /// writes, its facts)), each as the `dup` reply its write script would give: a
    /// sharded write whose first step is a reservation looks for its record before it
    /// reserves anything.
    pub(super) async fn recorded<'w>(
        &self,
        writes: impl Iterator<Item = (usize, &'w BoardKeys, &'w WriteFacts<'w>)>,
    ) -> Result<Vec<(usize, Value)>, RedisFailure> {
        let records: Vec<(usize, String)> = writes
            .filter_map(|(i, keys, w)| {
                let (caller, key, _) = w.idempotency?;
                Some((i, keys.idempotency(caller, key)))
            })
            .collect();
        if records.is_empty() {
            return Ok(Vec::new());
        }
        let mut pipe = redis::pipe();
        for (_, key) in &records {
            pipe.get(key);
        }
        let found: Vec<Option<String>> = self.query("idempotency", pipe).await?;
        Ok(records
            .into_iter()
            .zip(found)
            .filter_map(|((i, _), record)| {
                let record = record?;
                Some((
                    i,
                    Value::Array(vec![
                        Value::SimpleString("dup".into()),
                        Value::BulkString(record.into_bytes()),
                    ]),
                ))
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn units(listed: Vec<i64>, _replayed: bool) -> Option<Vec<i64>> {
        Some(listed)
    }

    fn parse(value: Value) -> Result<WriteReply<i64>, RedisFailure> {
        WriteReply::parse("vote", &value, units, Some)
    }

    #[test]
    fn a_counted_vote_answers_the_text_of_its_record() {
        let text = |s: &str| Value::BulkString(s.as_bytes().to_vec());
        assert_eq!(
            parse(text("r-7|1,3000000,12,36000000")).unwrap(),
            WriteReply::Written(vec![1, 3_000_000, 12, 36_000_000])
        );
        // No receipt and no periods: a sharded board's reserve step.
        assert_eq!(parse(text("|")).unwrap(), WriteReply::Written(vec![]));
        // A shard's scores and the other shards': their sums.
        assert_eq!(
            parse(text("r-7|1,3000000+4,12000000")).unwrap(),
            WriteReply::Written(vec![5, 15_000_000])
        );
        assert!(
            parse(text("r|1,2+3")).is_err(),
            "the other shards' part is short"
        );
        assert!(parse(text("r|1,2+3,x")).is_err(), "not a score");
        assert!(parse(text("1,2")).is_err(), "no receipt separator");
        assert!(parse(text("r|1,x")).is_err(), "not a score");
    }

    #[test]
    fn a_replay_answers_its_record_from_an_array() {
        let value = Value::Array(vec![
            Value::BulkString(b"dup".to_vec()),
            Value::BulkString(b"r-7|h,1,3".to_vec()),
        ]);
        assert_eq!(
            parse(value).unwrap(),
            WriteReply::Replayed {
                receipt: "r-7".to_owned(),
                scores: vec![1, 3],
                held: true
            }
        );
        let summed = Value::Array(vec![
            Value::BulkString(b"dup".to_vec()),
            Value::BulkString(b"r-7|h,1,3+2,4".to_vec()),
        ]);
        assert_eq!(
            parse(summed).unwrap(),
            WriteReply::Replayed {
                receipt: "r-7".to_owned(),
                scores: vec![3, 7],
                held: true
            }
        );
    }
}
