//! What a live top is and what changed between two of them: the events a board's
//! subscribers get (`engine::events` reads the tops and sends these), numbered so that a
//! stream that broke can resume where it stopped.

use std::collections::VecDeque;
use std::fmt;
use std::sync::Arc;

use serde::Serialize;

/// One entry of a top, as the stream shows it.
#[derive(Debug, Clone, PartialEq, Hash, Serialize)]
pub struct Entry {
    pub rank: i64,
    pub member: String,
    pub name: Option<String>,
    pub score: serde_json::Number,
}

/// A top at one moment: its bucket and entries, best first.
#[derive(Debug, Clone, PartialEq, Hash, Serialize)]
pub struct Snapshot {
    pub bucket: String,
    pub entries: Vec<Entry>,
}

impl Snapshot {
    /// The top of `size` this top holds: its first `size` entries (a top of `n` read at
    /// once holds every smaller top of the same moment).
    pub fn sliced(&self, size: i64) -> Self {
        let keep = usize::try_from(size).unwrap_or(0);
        Self {
            bucket: self.bucket.clone(),
            entries: self.entries.iter().take(keep).cloned().collect(),
        }
    }

    /// A hash of the whole top, so what is made from it can be shared by its subscribers
    /// (within this process).
    pub fn fingerprint(&self) -> u64 {
        use std::hash::{DefaultHasher, Hash, Hasher};
        let mut hasher = DefaultHasher::new();
        self.hash(&mut hasher);
        hasher.finish()
    }
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

/// Names a point of one top's sequence of changes: the sequence (`epoch`: a number drawn
/// when a watcher starts serving a top size, so a number of another sequence, of another
/// instance or of before a restart, never matches) and the last batch seen (`seq`; 0 is
/// the top before any change). A stream's `id:` fields and `Last-Event-ID` carry it as
/// `{epoch in hex}-{seq}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventId {
    pub epoch: u64,
    pub seq: u64,
}

impl fmt::Display for EventId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:x}-{}", self.epoch, self.seq)
    }
}

impl EventId {
    /// The id `text` names, if it is one (anything else names no point: the stream starts
    /// afresh).
    pub fn parse(text: &str) -> Option<Self> {
        let (epoch, seq) = text.trim().split_once('-')?;
        Some(Self {
            epoch: u64::from_str_radix(epoch, 16).ok()?,
            seq: seq.parse().ok()?,
        })
    }
}

/// The events of one change, as one batch: a stream sends them together, the id on the
/// last.
#[derive(Debug, PartialEq)]
pub struct Batch {
    pub id: EventId,
    pub events: Vec<Event>,
}

/// One top size's sequence of changes: its last id and the last `keep` batches, so a
/// stream resuming from an id it holds gets exactly the batches it missed.
#[derive(Debug)]
pub struct History {
    epoch: u64,
    seq: u64,
    keep: usize,
    recent: VecDeque<Arc<Batch>>,
}

/// Where a stream starts: the top as of an id, or the batches after the id it resumes
/// from (none when it missed nothing).
#[derive(Debug, PartialEq)]
pub enum Start {
    Top(EventId, Snapshot),
    Resumed(Vec<Arc<Batch>>),
}

impl History {
    /// A new sequence named `epoch`, holding `keep` batches.
    pub fn new(epoch: u64, keep: usize) -> Self {
        Self {
            epoch,
            seq: 0,
            keep,
            recent: VecDeque::with_capacity(keep),
        }
    }

    /// The id of the last change.
    pub fn last(&self) -> EventId {
        EventId {
            epoch: self.epoch,
            seq: self.seq,
        }
    }

    /// Numbers `events` as the next batch and keeps it (the oldest kept goes).
    pub fn record(&mut self, events: Vec<Event>) -> Arc<Batch> {
        self.seq += 1;
        let batch = Arc::new(Batch {
            id: self.last(),
            events,
        });
        if self.recent.len() == self.keep {
            self.recent.pop_front();
        }
        self.recent.push_back(batch.clone());
        batch
    }

    /// Where a stream starts whose last id was `resume`, the top now being `top`: the
    /// batches after it when this sequence still holds them all, else `top` afresh.
    pub fn start(&self, resume: Option<EventId>, top: &Snapshot) -> Start {
        if let Some(id) = resume
            && id.epoch == self.epoch
            && id.seq <= self.seq
            && let Ok(missed) = usize::try_from(self.seq - id.seq)
            && missed <= self.recent.len()
        {
            let skip = self.recent.len() - missed;
            return Start::Resumed(self.recent.iter().skip(skip).cloned().collect());
        }
        Start::Top(self.last(), top.clone())
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

        #[test]
        fn a_larger_top_sliced_is_the_smaller_top_and_changes_alike(
            scores in prop::collection::vec(0i64..6, 8),
            votes in prop::collection::vec((0usize..8, 1i64..4), 0..6),
            size in 1usize..6,
            more in 0usize..4,
        ) {
            let large = size + more;
            prop_assert_eq!(top(&scores, large).sliced(size as i64), top(&scores, size));
            let mut after_scores = scores.clone();
            for (m, n) in votes {
                after_scores[m] += n;
            }
            // What a watcher sends a size from its slices is what that size alone sees.
            prop_assert_eq!(
                changes(
                    &top(&scores, large).sliced(size as i64),
                    &top(&after_scores, large).sliced(size as i64)
                ),
                changes(&top(&scores, size), &top(&after_scores, size))
            );
        }

        #[test]
        fn a_resumed_stream_gets_exactly_the_batches_it_missed_or_the_top_afresh(
            rounds in prop::collection::vec(prop::collection::vec((0usize..8, 1i64..4), 0..3), 1..12),
            seen in 0usize..12,
            keep in 1usize..6,
            epoch in any::<u64>(),
        ) {
            let mut scores = vec![0i64; 8];
            let mut history = History::new(epoch, keep);
            let mut last = top(&scores, 3);
            // Everything a subscriber that never left got, in order.
            let mut all: Vec<Arc<Batch>> = Vec::new();
            for round in rounds {
                for (m, n) in round {
                    scores[m] += n;
                }
                let now = top(&scores, 3);
                let events = changes(&last, &now);
                last = now;
                if !events.is_empty() {
                    all.push(history.record(events));
                }
            }
            let seen = seen.min(all.len());
            let id = EventId { epoch, seq: seen as u64 };
            prop_assert_eq!(EventId::parse(&id.to_string()), Some(id));
            let missed = &all[seen..];
            match history.start(Some(id), &last) {
                Start::Resumed(batches) => {
                    prop_assert!(missed.len() <= keep);
                    prop_assert_eq!(batches, missed.to_vec());
                }
                Start::Top(at, top) => {
                    prop_assert!(missed.len() > keep);
                    prop_assert_eq!(at, history.last());
                    prop_assert_eq!(top, last.clone());
                }
            }
            // Another sequence's id, or none, starts afresh.
            let other = EventId { epoch: epoch.wrapping_add(1), seq: seen as u64 };
            prop_assert_eq!(history.start(Some(other), &last), Start::Top(history.last(), last.clone()));
            prop_assert_eq!(history.start(None, &last), Start::Top(history.last(), last.clone()));
            // An id past the sequence's end names nothing it sent.
            let ahead = EventId { epoch, seq: history.last().seq + 1 };
            prop_assert_eq!(history.start(Some(ahead), &last), Start::Top(history.last(), last));
        }
    }

    #[test]
    fn ids_that_are_not_ids_name_nothing() {
        for text in ["", "-", "zz-1", "1f", "1f-", "1f-x", "1f--1", "1f-1-2"] {
            assert_eq!(EventId::parse(text), None, "{text}");
        }
        assert_eq!(EventId::parse("1f-7"), Some(EventId { epoch: 31, seq: 7 }));
    }
}
