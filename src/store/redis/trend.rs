//! Trending periods: a write's part of `trend.lua` (its keys and arguments, as
//! `vote.lua` and `score.lua` take them) and `trend_page.lua`, a page of stored scores
//! with the origin a read decays them from (`domain::period::HalfLife`).

use redis::{Script, Value};
use std::collections::BTreeMap;
use std::sync::LazyLock;

use super::keys::BoardKeys;
use super::page::PageReply;
use super::reply::{as_array, as_text, as_units, reply_error};
use super::{Invocation, RedisFailure, RedisStore, ScriptArgs};
use crate::domain::ledger::Entry;
use crate::domain::period::{Bucket, HalfLife, Period};
use crate::domain::score::View;

/// Appends the keys of `board`'s trending periods `trends` to a write's call, in
/// `trend.lua`'s order.
pub(super) fn push_keys(board: &BoardKeys, trends: &[HalfLife], part: &mut impl ScriptArgs) {
    for &half_life in trends {
        push_period_keys(board, half_life, part);
    }
}

/// Appends one trending period's three keys: its scores per view and its origin.
fn push_period_keys(board: &BoardKeys, half_life: HalfLife, part: &mut impl ScriptArgs) {
    for key in board.trend(half_life).every() {
        part.key(key);
    }
}

/// Appends the arguments of the trending periods `trends` to a write's call.
pub(super) fn push_args(trends: &[HalfLife], part: &mut impl ScriptArgs) {
    for half_life in trends {
        part.arg(half_life.ms())
            .arg(HalfLife::RESCALE_AFTER * half_life.ms());
    }
}

/// What some votes added to one member in one trending period: their units, each
/// weighted by 2^((at − reference)/half-life) over the votes' times `at`. A revocation
/// takes it out (`revoke.lua`), a rebuild from the ledger puts it back (`replay.lua`);
/// `trend_apply.lua` weighs it against the period's origin.
#[derive(Debug, Clone, PartialEq)]
pub struct TrendChange {
    pub half_life: HalfLife,
    pub member: String,
    pub real: f64,
    pub display: f64,
    pub reference_ms: i64,
}

impl TrendChange {
    /// What `votes` (ledger entries of votes, not adjustments) added to each member in
    /// each trending period of `periods`, weighted against `reference_ms`.
    pub fn of_votes<'a>(
        periods: &[Period],
        votes: impl Iterator<Item = &'a Entry> + Clone,
        reference_ms: i64,
    ) -> Vec<TrendChange> {
        let mut changes: BTreeMap<(HalfLife, String), TrendChange> = BTreeMap::new();
        for half_life in periods.iter().filter_map(|p| p.trending()) {
            for e in votes.clone() {
                let weight = half_life.decay(1.0, e.at, reference_ms);
                let c = changes
                    .entry((half_life, e.member.clone()))
                    .or_insert_with(|| TrendChange {
                        half_life,
                        member: e.member.clone(),
                        real: 0.0,
                        display: 0.0,
                        reference_ms,
                    });
                c.real += e.count as f64 * weight;
                c.display += e.display as f64 * weight;
            }
        }
        changes.into_values().collect()
    }

    /// Appends the change's keys on `board` to a call, in `trend_apply.lua`'s order.
    pub(super) fn push_keys(&self, board: &BoardKeys, part: &mut impl ScriptArgs) {
        push_period_keys(board, self.half_life, part);
    }

    /// Appends the change's five arguments to a call.
    pub(super) fn push_args(&self, part: &mut impl ScriptArgs) {
        part.arg(&self.member)
            .arg(format!("{:e}", self.real))
            .arg(format!("{:e}", self.display))
            .arg(self.reference_ms)
            .arg(self.half_life.ms());
    }
}

static TREND_PAGE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        include_str!("paging.lua"),
        include_str!("trend_page.lua")
    ))
});

/// Asks for a page of a trending period in one view: by offset, or around an anchor.
#[derive(Debug, Clone)]
pub struct TrendPageQuery<'a> {
    pub board: &'a BoardKeys,
    pub half_life: HalfLife,
    pub view: View,
    /// Offset, or the radius when `anchor` is set.
    pub offset: i64,
    pub limit: i64,
    pub anchor: Option<String>,
    /// The moment the scores are decayed to, ms since the epoch.
    pub now_ms: i64,
}

/// Reads a page reply whose scores are stored trending scores, decayed to `now_ms` from
/// the origin the reply ends with.
fn decayed_page(
    value: &Value,
    half_life: HalfLife,
    now_ms: i64,
) -> Result<PageReply<f64>, RedisFailure> {
    let bad = || reply_error("trend page", value);
    let [page @ .., origin] = as_array(value).ok_or_else(bad)? else {
        return Err(bad());
    };
    let origin = as_units(origin);
    PageReply::from_items(value, page, |score| {
        let stored: f64 = as_text(score)?.parse().ok()?;
        Some(origin.map_or(0.0, |t0| half_life.decay(stored, t0, now_ms)))
    })
}

impl RedisStore {
    /// Reads pages of trending periods, their scores decayed to each query's moment, in
    /// one round trip.
    pub async fn trend_pages(
        &self,
        queries: &[TrendPageQuery<'_>],
    ) -> Result<Vec<PageReply<f64>>, RedisFailure> {
        let calls: Vec<Invocation> = queries
            .iter()
            .map(|q| {
                let keys = q.board.trend(q.half_life);
                let mut inv = TREND_PAGE.key(keys.scores(q.view));
                inv.key(keys.origin());
                for key in q.board.voters(&Bucket::trending(q.half_life)) {
                    inv.key(key);
                }
                inv.arg(q.offset)
                    .arg(q.limit)
                    .arg(q.anchor.as_deref().unwrap_or(""));
                inv
            })
            .collect();
        let replies = self
            .run_script_all("trend page", &TREND_PAGE, &calls)
            .await?;
        queries
            .iter()
            .zip(&replies)
            .map(|(q, reply)| decayed_page(reply, q.half_life, q.now_ms))
            .collect()
    }
}
