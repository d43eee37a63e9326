//! Finishing what a failure left undone between SQL and Redis.
//!
//! Admin changes commit SQL first and then run a Redis step that can be repeated: a
//! member's initial votes are applied by target value, and a deleted member's removal
//! from Redis waits in SQL (`member_removals`) until it is done. Reconciling runs those
//! steps again from what SQL holds, and rebuilds boards Redis lost from their ledgers. It runs at start-up, after a Redis that came back
//! empty (`watch` looks for the marker key that `engine::durability` describes), and in
//! the background after a failed step.

use std::time::Duration;

use chrono::{DateTime, Utc};

use super::error::EngineError;
use crate::domain::period::Bucket;
use crate::engine::config::BoardConfig;
use crate::engine::state::AppState;
use crate::store::sql;

/// Longest pause between two tries of a background reconcile.
const MAX_DELAY: Duration = Duration::from_secs(5);

/// Finishes pending member removals, rebuilds the boards Redis lost from their ledgers
/// (`engine::rebuild`), and brings every board's initial votes to what SQL holds.
pub async fn reconcile(state: &AppState) -> Result<(), EngineError> {
    finish_removals(state).await?;
    super::rebuild::rebuild_lost(state).await?;
    // A family's members have no initial votes (`BoardSettings::admits_member`).
    for board in state
        .config
        .boards()
        .into_iter()
        .filter(|b| b.board.settings.instances.is_none())
    {
        let targets: Vec<(&str, i64)> = board
            .members
            .values()
            .map(|m| (m.id.as_str(), m.initial_votes))
            .collect();
        if let Some(member) = state
            .redis
            .apply_initial_votes(&board.keys, &targets)
            .await?
        {
            tracing::error!(%member, board = %board.board.slug, "initial votes left unapplied: past 2^53 units");
        }
    }
    Ok(())
}

/// Removes deleted members' scores from Redis, for every removal SQL still holds;
/// answers how many were done.
pub async fn finish_removals(state: &AppState) -> Result<usize, EngineError> {
    let pending = sql::members::pending_removals(&state.db).await?;
    for removal in &pending {
        let board = state
            .config
            .boards()
            .into_iter()
            .find(|b| b.board.id == removal.board_id);
        // A deleted board's keys go with it; a member added again since keeps its scores.
        if let Some(board) = board.filter(|b| !b.members.contains_key(&removal.member)) {
            let buckets = left_buckets(&board, removal.removed_at)?;
            let windows: Vec<_> = board
                .board
                .settings
                .periods
                .iter()
                .filter_map(|p| p.rolling())
                .collect();
            state
                .redis
                .remove_member(&board.keys, &buckets, &windows, removal.member.as_str())
                .await?;
        }
        sql::members::removal_done(&state.db, removal.id).await?;
    }
    Ok(pending.len())
}

/// The buckets a member leaves when deleted at `at`: the current and next bucket of
/// every calendar period, the all-time board and every trending period; older buckets
/// keep their history.
fn left_buckets(board: &BoardConfig, at: DateTime<Utc>) -> Result<Vec<Bucket>, EngineError> {
    let settings = &board.board.settings;
    let mut buckets = vec![Bucket::all()];
    for &period in &settings.periods {
        if let Some(half_life) = period.trending() {
            buckets.push(Bucket::trending(half_life));
            continue;
        }
        if period.rolling().is_some() {
            continue;
        }
        let current = Bucket::containing(period, settings.timezone, at)?;
        let next = current.next(settings.timezone);
        buckets.extend(std::iter::once(current).chain(next));
    }
    Ok(buckets)
}

/// Reconciles until it succeeds, backing off while Redis or SQL does not answer.
pub async fn until_done(state: AppState) {
    let mut delay = Duration::from_millis(200);
    loop {
        match reconcile(&state).await {
            Ok(()) => return,
            Err(err) => tracing::debug!(error = %err, "reconcile failed; retrying"),
        }
        tokio::time::sleep(delay).await;
        delay = (delay * 2).min(MAX_DELAY);
    }
}

/// Keeps the marker key in Redis and reconciles: at start-up, then every `check` looks
/// for the marker and, when Redis came back empty, counts it and applies what SQL holds
/// again.
pub async fn watch(state: AppState, check: Duration) {
    // Start-up: finish whatever an earlier failure left undone. A marker gone between two
    // tries means Redis came back empty meanwhile: that is a reset too.
    let mut marked = false;
    loop {
        if marked && matches!(state.redis.marker_present().await, Ok(false)) {
            noticed_reset(&state);
        }
        match state.redis.set_marker().await {
            Ok(()) => {
                marked = true;
                match reconcile(&state).await {
                    Ok(()) => break,
                    Err(err) => {
                        tracing::debug!(error = %err, "start-up reconcile failed; retrying")
                    }
                }
            }
            Err(err) => tracing::debug!(error = %err, "cannot set the redis marker; retrying"),
        }
        tokio::time::sleep(check).await;
    }
    let mut ticks = tokio::time::interval(check);
    ticks.tick().await;
    loop {
        ticks.tick().await;
        match state.redis.marker_present().await {
            Ok(true) => {}
            Ok(false) => {
                noticed_reset(&state);
                until_done(state.clone()).await;
                if let Err(err) = state.redis.set_marker().await {
                    tracing::warn!(error = %err, "cannot set the redis marker");
                }
            }
            Err(err) => tracing::debug!(error = %err, "cannot look for the redis marker"),
        }
    }
}

/// Logs, counts and records that Redis came back empty.
fn noticed_reset(state: &AppState) {
    tracing::error!(
        "Redis came back empty: its votes and scores are lost; applying initial votes and pending removals again"
    );
    crate::metrics::redis_reset();
    // Not ready until the boards with a ledger are rebuilt (`engine::rebuild`).
    state.backlogs.rebuild_due();
    state.durability.record_reset();
}
