//! **Live rankings**: a board's top pushed to subscribers as it changes. One watcher per
//! (board, period, view, top size) per instance reads that top once per
//! `OVATION_EVENTS_INTERVAL_MS` while it has subscribers, compares it with the last one
//! and hands what changed to every subscriber at once (a bounded broadcast channel): the
//! Redis reads grow with the tops watched, not with the subscribers. A subscriber that
//! falls a whole channel behind is dropped (its stream ends), so a stalled client never
//! holds memory without bound. What changed between two consecutive tops is told as
//! `top` (the new top), `rank` events (a member entered or left the top, or overtook
//! another) and `bucket` (the period rolled over).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use serde::Serialize;
use tokio::sync::broadcast;

use super::boards::{BoardRef, find};
use super::error::EngineError;
use super::leaderboard::{Selection, select, tops};
use super::state::AppState;
use crate::domain::ids::BoardName;
use crate::domain::period::Period;
use crate::domain::score::View;

/// The most events a subscriber may be behind before it is dropped.
const BACKLOG: usize = 64;

/// The most entries a watched top holds.
pub const MAX_TOP: i64 = 100;

/// One entry of a top, as the stream shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Entry {
    pub rank: i64,
    pub member: String,
    pub name: Option<String>,
    pub score: serde_json::Number,
}

/// A top at one moment: its bucket and entries, best first.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Snapshot {
    pub bucket: String,
    pub entries: Vec<Entry>,
}

/// What happened to one member between two tops.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RankChange {
    /// `entered_top`, `left_top` or `overtook`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub member: String,
    /// Its rank in the new top (`left_top`: its rank in the one before).
    pub rank: i64,
    /// `overtook`: the member it passed.
    pub other: Option<String>,
}

/// One event of a stream.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    Top(Snapshot),
    Rank(RankChange),
    /// The period rolled over into this bucket.
    Bucket(String),
}

/// What a watched top is: the board (by name), the period, the view and its size.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Watch {
    board: String,
    period: Period,
    view: View,
    top: i64,
}

/// A running watcher: its channel, and the last top it read (a new subscriber's first).
struct Watcher {
    events: broadcast::Sender<Arc<Vec<Event>>>,
    last: Snapshot,
}

/// Every watcher of this instance.
#[derive(Default)]
pub struct Watchers {
    running: Mutex<HashMap<Watch, Watcher>>,
}

impl Watchers {
    /// Stops every watcher: their subscribers' streams end (at shutdown).
    pub fn close_all(&self) {
        lock(&self.running).clear();
    }
}

/// A subscriber's stream: the top now, then what changes.
pub struct Subscription {
    pub first: Snapshot,
    pub events: broadcast::Receiver<Arc<Vec<Event>>>,
}

/// Subscribes to `board`'s top `top` of `period` in `view`: checked as a read of the
/// current bucket is (404, 422), before anything streams.
pub async fn subscribe(
    state: &AppState,
    board: BoardRef,
    period: Option<&str>,
    view: Option<&str>,
    top: i64,
) -> Result<Subscription, EngineError> {
    if !(1..=MAX_TOP).contains(&top) {
        return Err(EngineError::invalid_field(
            "top",
            format!("top must be between 1 and {MAX_TOP}"),
        ));
    }
    let sel = select(board, period, None, view)?;
    let watch = Watch {
        board: sel.board.name(),
        period: sel.bucket.period,
        view: sel.view,
        top,
    };
    if let Some(subscription) = join(state, &watch) {
        return Ok(subscription);
    }
    let first = snapshot(state, &sel, top).await?;
    let mut running = lock(&state.watchers.running);
    // Another subscriber may have started it meanwhile.
    if let Some(watcher) = running.get(&watch) {
        return Ok(Subscription {
            first: watcher.last.clone(),
            events: watcher.events.subscribe(),
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
    })
}

fn lock(
    running: &Mutex<HashMap<Watch, Watcher>>,
) -> std::sync::MutexGuard<'_, HashMap<Watch, Watcher>> {
    running.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Joins the running watcher of `watch`, if there is one.
fn join(state: &AppState, watch: &Watch) -> Option<Subscription> {
    let running = lock(&state.watchers.running);
    let watcher = running.get(watch)?;
    Some(Subscription {
        first: watcher.last.clone(),
        events: watcher.events.subscribe(),
    })
}

/// The top of `sel` now.
async fn snapshot(state: &AppState, sel: &Selection, top: i64) -> Result<Snapshot, EngineError> {
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
            let mut running = lock(&state.watchers.running);
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
                lock(&state.watchers.running).remove(&watch);
                return;
            }
            Err(err) => {
                tracing::warn!(board = %watch.board, error = %err, "a watched top could not be read");
                continue;
            }
        };
        let mut running = lock(&state.watchers.running);
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

/// What changed from the top `before` to the top `now`: nothing when they are equal;
/// else `bucket` when the bucket changed, the new `top`, and (within one bucket) each
/// member that entered or left the top and each pass of one member over another.
pub fn changes(before: &Snapshot, now: &Snapshot) -> Vec<Event> {
    if before == now {
        return Vec::new();
    }
    let mut events = Vec::new();
    if before.bucket != now.bucket {
        events.push(Event::Bucket(now.bucket.clone()));
        events.push(Event::Top(now.clone()));
        return events;
    }
    events.push(Event::Top(now.clone()));
    let rank_in = |s: &Snapshot, m: &str| s.entries.iter().find(|e| e.member == m).map(|e| e.rank);
    for e in &now.entries {
        let Some(was) = rank_in(before, &e.member) else {
            events.push(Event::Rank(RankChange {
                kind: "entered_top",
                member: e.member.clone(),
                rank: e.rank,
                other: None,
            }));
            continue;
        };
        // Every member it was below before and is above now.
        for other in &now.entries {
            if other.member == e.member || other.rank <= e.rank {
                continue;
            }
            if rank_in(before, &other.member).is_some_and(|other_was| other_was < was) {
                events.push(Event::Rank(RankChange {
                    kind: "overtook",
                    member: e.member.clone(),
                    rank: e.rank,
                    other: Some(other.member.clone()),
                }));
            }
        }
    }
    for e in &before.entries {
        if rank_in(now, &e.member).is_none() {
            events.push(Event::Rank(RankChange {
                kind: "left_top",
                member: e.member.clone(),
                rank: e.rank,
                other: None,
            }));
        }
    }
    events
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use proptest::prelude::*;

    use super::*;

    /// The top `size` of `scores` (member index → score, 0 for none), ranked as a board
    /// ranks: score descending, then member id descending, competition ranks.
    fn top(scores: &[i64], size: usize) -> Snapshot {
        let mut scored: Vec<(String, i64)> = scores
            .iter()
            .enumerate()
            .filter(|(_, s)| **s > 0)
            .map(|(i, s)| (format!("m{i}"), *s))
            .collect();
        scored.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| b.0.cmp(&a.0)));
        let entries = scored
            .iter()
            .take(size)
            .map(|(m, s)| Entry {
                rank: 1 + scored.iter().filter(|(_, o)| o > s).count() as i64,
                member: m.clone(),
                name: None,
                score: (*s).into(),
            })
            .collect();
        Snapshot {
            bucket: "b".into(),
            entries,
        }
    }

    /// The rank changes a model reads off two tops: who is new, who is gone, and each
    /// pair of members in both whose order turned.
    fn model(before: &Snapshot, now: &Snapshot) -> BTreeSet<(String, String, i64, Option<String>)> {
        let ranks = |s: &Snapshot| -> std::collections::BTreeMap<String, i64> {
            s.entries
                .iter()
                .map(|e| (e.member.clone(), e.rank))
                .collect()
        };
        let (old, new) = (ranks(before), ranks(now));
        let mut out = BTreeSet::new();
        for (m, r) in &new {
            if !old.contains_key(m) {
                out.insert(("entered_top".into(), m.clone(), *r, None));
            }
        }
        for (m, r) in &old {
            if !new.contains_key(m) {
                out.insert(("left_top".into(), m.clone(), *r, None));
            }
        }
        for (a, ra) in &new {
            for (b, rb) in &new {
                if let (Some(oa), Some(ob)) = (old.get(a), old.get(b))
                    && ra < rb
                    && oa > ob
                {
                    out.insert(("overtook".into(), a.clone(), *ra, Some(b.clone())));
                }
            }
        }
        out
    }

    proptest! {
        #[test]
        fn rank_events_are_what_changed_between_two_tops(
            scores in prop::collection::vec(0i64..6, 8),
            votes in prop::collection::vec((0usize..8, 1i64..4), 0..6),
            size in 1usize..6,
        ) {
            let before = top(&scores, size);
            let mut after_scores = scores.clone();
            for (m, n) in votes {
                after_scores[m] += n;
            }
            let now = top(&after_scores, size);
            let events = changes(&before, &now);
            let got: BTreeSet<_> = events
                .iter()
                .filter_map(|e| match e {
                    Event::Rank(c) => Some((c.kind.to_owned(), c.member.clone(), c.rank, c.other.clone())),
                    _ => None,
                })
                .collect();
            prop_assert_eq!(got, model(&before, &now));
            let tops: Vec<Event> = events
                .iter()
                .filter(|e| matches!(e, Event::Top(_)))
                .cloned()
                .collect();
            if before == now {
                prop_assert!(events.is_empty());
            } else {
                prop_assert_eq!(tops, vec![Event::Top(now.clone())]);
            }
        }
    }
}
