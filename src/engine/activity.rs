//! What the live view charts: votes and refusals per hour or day across the selected
//! bucket, and participants per bucket up to it.

use chrono::{DateTime, Duration, Utc};

use super::error::EngineError;
use super::state::AppState;
use crate::domain::period::{self, Bucket, Period};
use crate::engine::config::BoardConfig;
use crate::engine::leaderboard::Selection;
use crate::store::redis::REFUSALS_TTL_S;

/// How many days refusals are kept, so how far back a chart can show them.
pub const REFUSALS_KEPT_DAYS: i64 = REFUSALS_TTL_S / 86_400;

/// One step of the time axis. Counts are `None` where nothing can be known: a step that
/// has not begun, or refusals older than Redis keeps them.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub bucket: Bucket,
    pub votes: Option<i64>,
    /// Refused votes per rule, in the board's rule order.
    pub refused: Vec<Option<i64>>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Activity {
    /// Hours or days, oldest first (see [`period::chart_steps`]).
    pub steps: Vec<Step>,
    /// Distinct voters per bucket, oldest first, ending with the selected bucket (for
    /// `all`, with the current bucket of the board's shortest period).
    pub participants: Vec<(Bucket, i64)>,
}

/// Reads the activity around `sel` as of `now`: one HMGET for the votes, one pipeline of
/// the refusal hours still kept, one of PFCOUNTs.
pub async fn activity(
    state: &AppState,
    sel: &Selection,
    now: DateTime<Utc>,
) -> Result<Activity, EngineError> {
    let redis = &state.redis;
    let (config, keys) = (&*sel.board.config, &sel.board.keys);
    let tz = config.board.settings.timezone;
    let buckets = period::chart_steps(&sel.bucket, tz, now);
    let begun = |b: &Bucket| b.start.is_some_and(|s| s <= now);
    let hours: Vec<i64> = buckets.iter().flat_map(period::epoch_hours).collect();
    let votes = if hours.is_empty() {
        Vec::new()
    } else {
        redis.votes_per_hour(keys, &hours).await?
    };
    let kept_since = now - Duration::seconds(REFUSALS_TTL_S) + Duration::hours(1);
    let kept = |b: &Bucket| begun(b) && b.start.is_some_and(|s| s >= kept_since);
    let refusal_hours: Vec<i64> = buckets
        .iter()
        .filter(|b| kept(b))
        .flat_map(period::epoch_hours)
        .collect();
    let refusals = if refusal_hours.is_empty() {
        Vec::new()
    } else {
        redis.refusals(keys, &refusal_hours).await?
    };

    let mut steps = Vec::with_capacity(buckets.len());
    let (mut at, mut refusal_at) = (0, 0);
    for bucket in buckets {
        let n = period::epoch_hours(&bucket).count();
        let votes_here = &votes[at..at + n];
        at += n;
        let refused = if kept(&bucket) {
            let here = &refusals[refusal_at..refusal_at + n];
            refusal_at += n;
            config
                .rules
                .iter()
                .map(|rule| {
                    Some(
                        here.iter()
                            .flatten()
                            .filter(|(id, _)| *id == rule.id)
                            .map(|(_, v)| v)
                            .sum(),
                    )
                })
                .collect()
        } else {
            vec![None; config.rules.len()]
        };
        steps.push(Step {
            votes: begun(&bucket).then(|| votes_here.iter().sum()),
            refused,
            bucket,
        });
    }

    let last = if sel.bucket.period.is_periodic() {
        Some(sel.bucket.clone())
    } else {
        let shortest = Period::EVERY
            .into_iter()
            .find(|p| p.is_periodic() && config.board.settings.periods.contains(p));
        shortest.and_then(|p| Bucket::containing(p, tz, now).ok())
    };
    let trailing = last.map_or_else(Vec::new, |b| period::trailing_buckets(&b, tz));
    let counts = if trailing.is_empty() {
        Vec::new()
    } else {
        redis.participants(&config.keys, &trailing).await?
    };
    Ok(Activity {
        steps,
        participants: trailing.into_iter().zip(counts).collect(),
    })
}

/// Votes on `config`'s board so far today, in the board's timezone.
pub async fn votes_today(
    state: &AppState,
    config: &BoardConfig,
    now: DateTime<Utc>,
) -> Result<i64, EngineError> {
    let redis = &state.redis;
    let today = Bucket::containing(Period::Day, config.board.settings.timezone, now)?;
    let hours: Vec<i64> = period::epoch_hours(&today)
        .take_while(|&h| h <= period::epoch_hour(now))
        .collect();
    if hours.is_empty() {
        return Ok(0);
    }
    Ok(redis
        .votes_per_hour(&config.keys, &hours)
        .await?
        .into_iter()
        .sum())
}
