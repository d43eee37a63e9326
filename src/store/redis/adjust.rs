//! `adjust.lua`: one adjustment (`engine::adjustments`) of a member's score in one bucket,
//! in the member's shard (the board itself unless it is sharded).

use std::sync::LazyLock;
use std::time::Duration;

use redis::Script;

use super::keys::BoardKeys;
use super::reply::{as_array, as_text, parse_units, reply_error};
use super::{RedisFailure, RedisStore};
use crate::domain::ids::IdempotencyKey;
use crate::domain::period::{Bucket, Period};
use crate::domain::score::View;

static ADJUST: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("adjust.lua")));

/// One adjustment, as `adjust.lua` applies it.
#[derive(Debug)]
pub struct AdjustCall<'a> {
    pub board: &'a BoardKeys,
    pub member: &'a str,
    pub bucket: &'a Bucket,
    /// Units added to the real and the display view (0: left alone).
    pub real: i64,
    pub display: i64,
    /// (the admin, the key, how long it is remembered, the request's fingerprint).
    pub idempotency: Option<(&'a str, &'a IdempotencyKey, Duration, &'a str)>,
    /// The epoch hour of a closed bucket's start (counted as a late write); `None` for
    /// an open bucket.
    pub late_hour: Option<i64>,
    /// The ledger entry, when the board keeps a ledger.
    pub entry: Option<String>,
}

/// The member's scores in the bucket after an adjustment (units; `None` for a view it
/// left alone).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Adjusted {
    pub real: Option<i64>,
    pub display: Option<i64>,
}

/// How an adjustment went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AdjustReply {
    Adjusted(Adjusted),
    /// The key was used before: the first request's fingerprint and answer.
    Replayed {
        fingerprint: String,
        scores: Adjusted,
    },
    /// The bucket closed and Redis holds neither of its views any more.
    Gone,
    /// The view's score would pass the highest allowed.
    High(View),
    /// The view's score would go below the floor.
    Low(View),
}

/// The highest score an adjustment may leave in `bucket` of a board (or shard) whose
/// scores may reach `max_units` (M): all of it in the all-time bucket, else M - 2 * 10^d,
/// d being the headroom mark's digits (see `adjust.lua` and `vote.lua`).
fn highest(bucket: &Bucket, max_units: i64) -> i64 {
    if bucket.period == Period::All {
        return max_units;
    }
    let digits = (max_units / 2).to_string().len() as u32 - 1;
    max_units - 2 * 10_i64.pow(digits)
}

impl RedisStore {
    /// The member's part of each view (real, display) in `keys` and its total over the
    /// board's shards (a board whose scores are sums over shards), in one read.
    async fn parts_and_totals(
        &self,
        call: &AdjustCall<'_>,
        keys: &BoardKeys,
    ) -> Result<[(i64, i64); 2], RedisFailure> {
        let shards = call.board.shards();
        let views = [View::Real, View::Display];
        let at: Vec<String> = views
            .iter()
            .flat_map(|&view| shards.iter().map(move |s| s.scores(view, call.bucket)))
            .collect();
        let scores = self.scores_of(at.clone(), call.member.to_owned()).await?;
        let mut found = [(0, 0); 2];
        for (i, view) in views.into_iter().enumerate() {
            let part_key = keys.scores(view, call.bucket);
            let range = i * shards.len()..(i + 1) * shards.len();
            for (key, units) in at[range.clone()].iter().zip(&scores[range]) {
                if *key == part_key {
                    found[i].0 = *units;
                }
                found[i].1 += units;
            }
        }
        Ok(found)
    }

    /// The lowest score `call` may leave in each view (real, display) of the member's
    /// part in `keys`: 0 on a board that keeps whole scores; on one whose scores are
    /// sums over shards, where it lowers the view, the part less the member's total, read
    /// now, so that the total does not go below 0 (a revocation at the same moment may
    /// still take it lower).
    async fn floors(
        &self,
        call: &AdjustCall<'_>,
        keys: &BoardKeys,
    ) -> Result<[i64; 2], RedisFailure> {
        if !call.board.sums_shards() {
            return Ok([0, 0]);
        }
        // A part may be below 0 where the member's other parts make up for it.
        let mut floors = [-call.board.max_units(); 2];
        if call.real < 0 || call.display < 0 {
            let read = self.parts_and_totals(call, keys).await?;
            for (i, units) in [call.real, call.display].into_iter().enumerate() {
                if units < 0 {
                    floors[i] = read[i].0 - read[i].1;
                }
            }
        }
        Ok(floors)
    }

    /// On a board whose scores are sums over shards, `scores` (the member's parts in
    /// `keys`) as the member's totals, read now.
    async fn totals(
        &self,
        call: &AdjustCall<'_>,
        keys: &BoardKeys,
        scores: Adjusted,
    ) -> Result<Adjusted, RedisFailure> {
        if !call.board.sums_shards() {
            return Ok(scores);
        }
        let [(_, real), (_, display)] = self.parts_and_totals(call, keys).await?;
        Ok(Adjusted {
            real: scores.real.map(|_| real),
            display: scores.display.map(|_| display),
        })
    }

    /// Applies `call` in the member's shard. Answers the member's scores in the bucket
    /// after it: on a board whose scores are sums over shards, its totals read right
    /// after (a replay's: read now).
    pub async fn adjust(&self, call: &AdjustCall<'_>) -> Result<AdjustReply, RedisFailure> {
        let keys = call.board.write_shard(call.member, None);
        let (idem_key, ttl, fingerprint) = match call.idempotency {
            Some((actor, key, ttl, fingerprint)) => (
                keys.adjustment(actor, key),
                ttl.as_secs().max(1),
                fingerprint,
            ),
            None => (keys.late_writes(), 0, ""),
        };
        let floors = self.floors(call, &keys).await?;
        let mut inv = ADJUST.key(idem_key);
        inv.key(keys.scores(View::Real, call.bucket))
            .key(keys.scores(View::Display, call.bucket))
            .key(keys.late_writes())
            .key(keys.headroom())
            .key(keys.ledger())
            .key(keys.vote_counts())
            .arg(call.member)
            .arg(call.real)
            .arg(call.display)
            .arg(highest(call.bucket, call.board.max_units()))
            .arg(floors[0])
            .arg(floors[1])
            .arg(ttl)
            .arg(fingerprint)
            .arg(if call.bucket.period == Period::All {
                "1"
            } else {
                "0"
            })
            .arg(call.late_hour.map(|h| h.to_string()).unwrap_or_default())
            .arg(call.entry.as_deref().unwrap_or_default());
        let replies = self.run_script_all("adjust", &ADJUST, &[inv]).await?;
        let reply = replies
            .first()
            .ok_or_else(|| reply_error("adjust", &redis::Value::Array(replies.clone())))?;
        let bad = || reply_error("adjust", reply);
        let items = as_array(reply).ok_or_else(bad)?;
        let text = |i: usize| items.get(i).and_then(as_text);
        let units = |t: &str| match t {
            "" => Ok(None),
            t => parse_units(t).map(Some).ok_or_else(bad),
        };
        let view = |t: Option<String>| match t.as_deref() {
            Some("real") => Ok(View::Real),
            Some("display") => Ok(View::Display),
            _ => Err(bad()),
        };
        match text(0).as_deref() {
            Some("ok") => {
                let scores = Adjusted {
                    real: units(&text(1).ok_or_else(bad)?)?,
                    display: units(&text(2).ok_or_else(bad)?)?,
                };
                Ok(AdjustReply::Adjusted(
                    self.totals(call, &keys, scores).await?,
                ))
            }
            Some("dup") => {
                let record = text(1).ok_or_else(bad)?;
                let mut parts = record.splitn(3, '|');
                let (Some(fingerprint), Some(real), Some(display)) =
                    (parts.next(), parts.next(), parts.next())
                else {
                    return Err(bad());
                };
                let scores = Adjusted {
                    real: units(real)?,
                    display: units(display)?,
                };
                Ok(AdjustReply::Replayed {
                    fingerprint: fingerprint.to_owned(),
                    scores: self.totals(call, &keys, scores).await?,
                })
            }
            Some("gone") => Ok(AdjustReply::Gone),
            Some("high") => Ok(AdjustReply::High(view(text(1))?)),
            Some("low") => Ok(AdjustReply::Low(view(text(1))?)),
            _ => Err(bad()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::score::MAX_UNITS;

    #[test]
    fn a_bucket_other_than_all_time_keeps_room_for_what_the_headroom_mark_lets_through() {
        let day = Bucket {
            period: Period::Day,
            ..Bucket::all()
        };
        assert_eq!(highest(&Bucket::all(), MAX_UNITS), MAX_UNITS);
        assert_eq!(highest(&day, MAX_UNITS), MAX_UNITS - 2_000_000_000_000_000);
        assert_eq!(
            highest(&day, MAX_UNITS / 8),
            MAX_UNITS / 8 - 200_000_000_000_000
        );
    }
}
