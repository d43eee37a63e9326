//! **Live rankings**: a board's top pushed to subscribers as it changes. One watcher per
//! (board, period, view, top size) per instance reads that top once per
//! `OVATION_EVENTS_INTERVAL_MS` while it has subscribers, compares it with the last one
//! and hands what changed to every subscriber at once (a bounded broadcast channel): the
//! Redis reads grow with the tops watched, not with the subscribers. A subscriber that
//! falls a whole channel behind is dropped (its stream ends), so a stalled client never
//! holds memory without bound. What changed between two consecutive tops is told as
//! `domain::live` says: `top` (the new top), `rank` events (a member entered or left the
//! top, or overtook another) and `bucket` (the period rolled over).

use std::sync::Arc;

use tokio::sync::broadcast;

use super::boards::find;
use super::error::EngineError;
use super::leaderboard::{Selection, select, tops};
use super::state::AppState;
use super::watchers::{StreamSlot, Watch, Watcher};
use crate::domain::code::Code;
use crate::domain::ids::BoardName;
use crate::domain::live::{Entry, Event, Snapshot, changes};

/// The most events a subscriber may be behind before it is dropped.
const BACKLOG: usize = 64;

/// The most entries a watched top holds.
pub const MAX_TOP: i64 = 100;

/// A subscriber's stream: the top now, then what changes; counted as open while held.
pub struct Subscription {
    pub first: Snapshot,
    pub events: broadcast::Receiver<Arc<Vec<Event>>>,
    pub slot: StreamSlot,
}

/// `top` if an API client may watch a top that size (1 to [`MAX_TOP`]).
pub fn checked_top(top: i64) -> Result<i64, EngineError> {
    if (1..=MAX_TOP).contains(&top) {
        Ok(top)
    } else {
        Err(EngineError::invalid_field(
            "top",
            format!("top must be between 1 and {MAX_TOP}"),
        ))
    }
}

/// Subscribes to the top `top` of `sel`'s board, period and view (always its current
/// bucket): refused while `OVATION_EVENTS_MAX_STREAMS` streams are open.
pub async fn subscribe(
    state: &AppState,
    sel: &Selection,
    top: i64,
) -> Result<Subscription, EngineError> {
    let slot = state
        .watchers
        .open_stream(state.settings.events_max_streams)
        .ok_or_else(|| EngineError::Busy {
            code: Code::TooManyStreams,
            message: format!(
                "this instance holds its most live streams ({}); try again later",
                state.settings.events_max_streams
            ),
        })?;
    let watch = Watch {
        board: sel.board.name(),
        period: sel.bucket.period,
        view: sel.view,
        top,
    };
    if let Some((first, events)) = join(state, &watch) {
        return Ok(Subscription {
            first,
            events,
            slot,
        });
    }
    let first = snapshot(state, sel, top).await?;
    let mut running = state.watchers.lock();
    // Another subscriber may have started it meanwhile.
    if let Some(watcher) = running.get(&watch) {
        return Ok(Subscription {
            first: watcher.last.clone(),
            events: watcher.events.subscribe(),
            slot,
        });
    }
    let (events, receiver) = broadcast::channel(BACKLOG);
    running.insert(
        watch.clone(),
        Watcher {
            events,
            last: first.clone(),
        },
    );
    tokio::spawn(run(state.clone(), watch));
    Ok(Subscription {
        first,
        events: receiver,
        slot,
    })
}

/// Joins the running watcher of `watch`, if there is one: its last top and its channel.
fn join(
    state: &AppState,
    watch: &Watch,
) -> Option<(Snapshot, broadcast::Receiver<Arc<Vec<Event>>>)> {
    let running = state.watchers.lock();
    let watcher = running.get(watch)?;
    Some((watcher.last.clone(), watcher.events.subscribe()))
}

/// The top of `sel` now.
pub(crate) async fn snapshot(
    state: &AppState,
    sel: &Selection,
    top: i64,
) -> Result<Snapshot, EngineError> {
    let page = tops(state, std::slice::from_ref(sel), 0, top)
        .await?
        .pop()
        .ok_or_else(|| anyhow::anyhow!("redis answered no page"))?;
    Ok(Snapshot {
        bucket: page.bucket,
        entries: page
            .entries
            .into_iter()
            .map(|e| Entry {
                rank: e.rank,
                member: e.member,
                name: e.name,
                score: e.score,
            })
            .collect(),
    })
}

/// Reads the watched top every interval while it has subscribers, and sends what changed.
/// Ends when the last subscriber left, or the board is gone (its subscribers' streams end).
async fn run(state: AppState, watch: Watch) {
    let mut tick = tokio::time::interval(state.settings.events_interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tick.tick().await;
    loop {
        tick.tick().await;
        {
            let mut running = state.watchers.lock();
            if running
                .get(&watch)
                .is_none_or(|w| w.events.receiver_count() == 0)
            {
                running.remove(&watch);
                return;
            }
        }
        let read = async {
            let name = BoardName::parse(&watch.board)?;
            let board = find(&state, &name)?;
            let sel = select(
                board,
                Some(&watch.period.to_string()),
                None,
                Some(watch.view.as_str()),
            )?;
            snapshot(&state, &sel, watch.top).await
        };
        let now = match read.await {
            Ok(now) => now,
            Err(EngineError::NotFound { .. }) => {
                state.watchers.lock().remove(&watch);
                return;
            }
            Err(err) => {
                tracing::warn!(board = %watch.board, error = %err, "a watched top could not be read");
                continue;
            }
        };
        let mut running = state.watchers.lock();
        let Some(watcher) = running.get_mut(&watch) else {
            return;
        };
        let changes = changes(&watcher.last, &now);
        watcher.last = now;
        if !changes.is_empty() {
            // No receiver left: the next tick ends the watcher.
            let _ = watcher.events.send(Arc::new(changes));
        }
    }
}
