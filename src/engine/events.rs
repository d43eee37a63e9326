//! **Live rankings**: a board's top pushed to subscribers as it changes. One watcher per
//! (board, period, view) per instance reads the largest top its subscribers asked for
//! once per `OVATION_EVENTS_INTERVAL_MS` while it has subscribers, slices it for each
//! smaller size, compares each with its last one and hands what changed to every
//! subscriber of that size at once (a bounded broadcast channel): the Redis reads grow
//! with the boards watched, not with the subscribers nor the sizes they name. A family's
//! room is streamed only while it is live. A subscriber that
//! falls a whole channel behind is dropped (its stream ends), so a stalled client never
//! holds memory without bound. What changed between two consecutive tops is told as
//! `domain::live` says: `top` (the new top), `rank` events (a member entered or left the
//! top, or overtook another) and `bucket` (the period rolled over). Each batch of changes
//! is numbered; a size keeps its last batches and is still watched for
//! `watchers::RESUME_GRACE` after its last subscriber left, so a stream that broke resumes
//! from its last id with exactly what it missed.

use std::sync::Arc;

use tokio::sync::broadcast;

use super::boards::{self, find};
use super::error::EngineError;
use super::leaderboard::{Selection, select, tops};
use super::state::AppState;
use super::watchers::{Refusal, Sized, StreamLimits, StreamSlot, Viewer, Watch};
use crate::domain::code::Code;
use crate::domain::ids::BoardName;
use crate::domain::live::{Batch, Entry, EventId, Snapshot, Start, changes};

/// The most batches of changes a subscriber may be behind before it is dropped, and a
/// resumed stream may have missed.
const BACKLOG: usize = 64;

/// The most entries a watched top holds.
pub const MAX_TOP: i64 = 100;

/// A subscriber's stream: the top now (or, resumed, what it missed), then what changes;
/// counted as open while held.
pub struct Subscription {
    pub start: Start,
    pub events: broadcast::Receiver<Arc<Batch>>,
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

/// Subscribes `viewer` to the top `top` of `sel`'s board, period and view (always its
/// current bucket). Refused while the viewer may open no more streams (503
/// `too_many_streams`: `OVATION_EVENTS_MAX_STREAMS`, less the dashboard's reserve for a
/// client; 429 `too_many_streams_from_ip` at `OVATION_EVENTS_MAX_STREAMS_PER_IP` of one
/// address), and for a family's room that is not live (404 `instance_not_live`: never
/// written, or expired), which would cost a watcher for nothing anyone writes. A stream
/// whose last id was `resume` starts with the batches it missed when this instance still
/// holds them all, else with the top afresh.
pub async fn subscribe(
    state: &AppState,
    viewer: &Viewer,
    sel: &Selection,
    top: i64,
    resume: Option<EventId>,
) -> Result<Subscription, EngineError> {
    let s = &state.settings;
    let limits = StreamLimits {
        max: s.events_max_streams,
        reserve: s.events_dashboard_reserve,
        per_address: s.events_max_streams_per_ip,
    };
    let slot = state
        .watchers
        .open_stream(viewer, limits)
        .map_err(|refusal| match refusal {
            Refusal::Full => EngineError::Busy {
                code: Code::TooManyStreams,
                message: format!(
                    "this instance holds its most live streams ({}); try again later",
                    s.events_max_streams
                ),
            },
            Refusal::AddressFull => EngineError::TooMany {
                code: Code::TooManyStreamsFromIp,
                message: format!(
                    "this address holds its most live streams ({}): close one first",
                    s.events_max_streams_per_ip
                ),
            },
        })?;
    if !boards::is_live(state, &sel.board).await? {
        return Err(EngineError::not_found(
            Code::InstanceNotLive,
            format!(
                "{} has had no write within its family's ttl_s: a stream opens once it is written",
                sel.board.name()
            ),
        ));
    }
    let watch = Watch {
        board: sel.board.name(),
        period: sel.bucket.period,
        view: sel.view,
    };
    if let Some((start, events)) = join(state, &watch, top, resume) {
        return Ok(Subscription {
            start,
            events,
            slot,
        });
    }
    let first = snapshot(state, sel, top).await?;
    let mut running = state.watchers.lock();
    let started = !running.contains_key(&watch);
    let watcher = running.entry(watch.clone()).or_default();
    // Another subscriber may have asked for this size meanwhile.
    let sized = watcher
        .sizes
        .entry(top)
        .or_insert_with(|| Sized::new(first, BACKLOG));
    let subscription = Subscription {
        start: sized.history.start(resume, &sized.last),
        events: sized.events.subscribe(),
        slot,
    };
    if started {
        tokio::spawn(run(state.clone(), watch));
    }
    Ok(subscription)
}

/// Joins the running watcher of `watch` for a top of `top`: where a stream whose last id
/// was `resume` starts, and its channel; a size the watcher does not serve yet is sliced
/// from a larger one it serves. `None` when there is no such watcher, or only smaller
/// tops.
fn join(
    state: &AppState,
    watch: &Watch,
    top: i64,
    resume: Option<EventId>,
) -> Option<(Start, broadcast::Receiver<Arc<Batch>>)> {
    let mut running = state.watchers.lock();
    let watcher = running.get_mut(watch)?;
    if !watcher.sizes.contains_key(&top) {
        let larger = watcher
            .sizes
            .iter()
            .filter(|(size, _)| **size > top)
            .map(|(_, sized)| sized.last.sliced(top))
            .next()?;
        watcher.sizes.insert(top, Sized::new(larger, BACKLOG));
    }
    let sized = watcher.sizes.get(&top)?;
    // Subscribed under the lock the watcher sends under: no batch is both missed and
    // received, nor neither.
    Some((
        sized.history.start(resume, &sized.last),
        sized.events.subscribe(),
    ))
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

/// Reads the watched board, period and view every interval while it has subscribers (or
/// had, within `watchers::RESUME_GRACE`) — once, at the largest top size any of them
/// asked for — and sends each size's subscribers what changed in their top, numbered.
/// Ends when the last subscriber left, or the board is gone (its subscribers' streams
/// end).
async fn run(state: AppState, watch: Watch) {
    let mut tick = tokio::time::interval(state.settings.events_interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tick.tick().await;
    loop {
        tick.tick().await;
        let largest = {
            let mut running = state.watchers.lock();
            let Some(watcher) = running.get_mut(&watch) else {
                return;
            };
            let now = std::time::Instant::now();
            watcher.sizes.retain(|_, sized| sized.wanted(now));
            match watcher.sizes.keys().max() {
                Some(&largest) => largest,
                None => {
                    running.remove(&watch);
                    return;
                }
            }
        };
        let read = async {
            let name = BoardName::parse(&watch.board)?;
            let board = find(&state, &name)?;
            let sel = select(
                board,
                Some(&watch.period.to_string()),
                None,
                Some(watch.view.as_str()),
            )?;
            snapshot(&state, &sel, largest).await
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
        for (&size, sized) in &mut watcher.sizes {
            // A size asked for after this read started waits for the next.
            if size > largest {
                continue;
            }
            let top = now.sliced(size);
            let changes = changes(&sized.last, &top);
            sized.last = top;
            if !changes.is_empty() {
                let batch = sized.history.record(changes);
                // No receiver now: a stream may still resume, within the grace.
                let _ = sized.events.send(batch);
            }
        }
    }
}
