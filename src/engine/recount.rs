//! **Recounting a board from its ledger**: every bucket of every calendar period, both
//! views, carry-over, initial votes and adjustments (each in its own bucket), replayed from SQL in time order through
//! `domain::recount` (one bucket per period in memory at a time) and compared with what
//! Redis holds; with `repair`, what differs is set to the recount.
//!
//! Votes go on while a recount runs. In a bucket that can still take votes (`all`, or one
//! that ended less than a minute ago), each member that differs is looked at again
//! exactly: its score and the ledger entries still in Redis read at one instant
//! (`recount_read.lua`), the member recounted from SQL plus those entries; only a
//! difference then is reported, and set only if the score did not move since
//! (`recount_set.lua`). A closed bucket is compared as read.

use std::collections::{BTreeSet, HashSet};

use chrono::{DateTime, Duration, Utc};
use futures_util::StreamExt;

use serde_json::json;

use super::audit;
use super::config::BoardConfig;
use super::error::EngineError;
use super::ledger::{ledger_board, settle, trimmed_seq};
use super::state::AppState;
use crate::domain::code::Code;
use crate::domain::ids::BoardSlug;
use crate::domain::ledger::Entry;
use crate::domain::period::{Bucket, Period};
use crate::domain::recount::{BucketWalk, Counted, Counting, Scores};
use crate::domain::score::View;
use crate::store::redis::BoardKeys;
use crate::store::sql::ledger::{self as sql, LedgerOf};

/// At most this many mismatches are listed (all are repaired).
pub const MISMATCHES_LISTED: usize = 10_000;

/// A bucket that ended less than this long ago may still take on-time votes.
const LIVE_SLACK: Duration = Duration::minutes(1);

/// One score that differs from the ledger.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    pub period: Period,
    pub bucket: String,
    pub view: View,
    pub member: String,
    /// Units in Redis (0: absent).
    pub live: i64,
    /// Units the ledger adds up to.
    pub recounted: i64,
    /// Set to the recount (with `repair`).
    pub repaired: bool,
    /// On a board whose scores are sums over shards, the shard whose part differs (its
    /// `live` and `recounted` are that shard's part of the member's score).
    pub shard: Option<usize>,
}

/// What a recount found.
#[derive(Debug, Clone, Default)]
pub struct Recount {
    /// Buckets compared.
    pub buckets: u64,
    /// Ledger entries replayed (revoked ones apart).
    pub entries: u64,
    /// Closed buckets Redis no longer holds (archived and released): not compared.
    pub skipped: u64,
    /// The first [`MISMATCHES_LISTED`] differences.
    pub mismatches: Vec<Mismatch>,
    /// Every difference found, listed or not.
    pub mismatched: u64,
    /// Differences set to the recount.
    pub repaired: u64,
    /// Ranges of `seq` SQL lost after Redis had trimmed them: their entries are in
    /// neither store, so the recount cannot count them (first, last).
    pub gaps: Vec<(i64, i64)>,
}

/// Recounts `slug`'s ledger for `actor` (a repair is audited); `progress` hears (entries
/// replayed, entries in all) as it goes.
pub async fn recount(
    state: &AppState,
    actor: &str,
    slug: &BoardSlug,
    repair: bool,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> Result<Recount, EngineError> {
    let board = ledger_board(state, slug)?;
    let settings = &board.board.settings;
    if settings.scoring.is_scores() {
        return Err(EngineError::conflict(
            Code::WrongScoring,
            format!(
                "board {slug} keeps scores: a set or best depends on the order the writes arrived in, so only votes boards are recounted"
            ),
        ));
    }
    let of = LedgerOf::board(board.board.id);
    settle(state, &board).await?;
    let total = sql::counted(&state.db, of).await?;
    let tz = settings.timezone;
    let walks = || -> Vec<BucketWalk> {
        settings
            .periods
            .iter()
            .filter(|p| p.is_bucketed())
            .map(|&p| BucketWalk::new(p, tz))
            .collect()
    };
    // A board whose scores are sums over shards is recounted shard by shard: each
    // entry counts in its voter's shard, initial votes in the first.
    let parts: Vec<BoardKeys> = if board.keys.sums_shards() {
        board.keys.shards()
    } else {
        vec![board.keys.clone()]
    };
    let now = Utc::now();
    let mut parts: Vec<(Checker<'_>, Vec<BucketWalk>)> = parts
        .into_iter()
        .enumerate()
        .map(|(source, keys)| {
            let checker = Checker {
                state,
                board: &board,
                keys,
                source,
                of,
                repair,
                now,
                found: Recount::default(),
                seen: HashSet::new(),
                compared: HashSet::new(),
            };
            (checker, walks())
        })
        .collect();
    let mut entries_read = 0;
    let entries = sql::stream_in_time(&state.db, of).await?;
    futures_util::pin_mut!(entries);
    while let Some(entry) = entries.next().await {
        let e = entry?.entry;
        let at = DateTime::from_timestamp_millis(e.at).unwrap_or_default();
        let vote = Counting {
            at,
            member: &e.member,
            real: e.count,
            display: e.display,
            carry: e.carry,
        };
        let source = match parts.len() {
            1 => 0,
            _ => board.keys.write_source(&e.member, e.voter.as_deref()),
        };
        let (checker, walks) = &mut parts[source];
        for walk in walks.iter_mut().filter(|w| e.counts_in(w.period())) {
            for counted in walk.add(vote)? {
                checker.check(counted).await?;
            }
        }
        entries_read += 1;
        if entries_read % 10_000 == 0 {
            progress(entries_read, total);
        }
    }
    for (checker, walks) in &mut parts {
        let initial = checker.source == 0;
        let mut all_seen = false;
        for walk in std::mem::take(walks) {
            for mut counted in walk.finish() {
                if counted.bucket.period == Period::All {
                    if initial {
                        add_initial(&board, &mut counted.display);
                    }
                    all_seen = true;
                }
                checker.check(counted).await?;
            }
        }
        if !all_seen && settings.periods.contains(&Period::All) {
            let mut counted = Counted {
                bucket: Bucket::all(),
                real: Scores::new(),
                display: Scores::new(),
            };
            if initial {
                add_initial(&board, &mut counted.display);
            }
            checker.check(counted).await?;
        }
        // Buckets Redis holds that no entry counts in (its ledger started later, or
        // someone wrote them by hand).
        for (_, period, label) in state.redis.rankings(&checker.keys).await? {
            let Ok(period) = Period::parse(&period) else {
                continue;
            };
            if !settings.periods.contains(&period)
                || checker.seen.contains(&(period, label.clone()))
            {
                continue;
            }
            let bucket = Bucket::parse(period, tz, &label)?;
            checker
                .check(Counted {
                    bucket,
                    real: Scores::new(),
                    display: Scores::new(),
                })
                .await?;
        }
    }
    progress(entries_read, total);
    let mut found = merged(parts.into_iter().map(|(c, _)| c), entries_read);
    found.gaps = sql::gaps(&state.db, Some(board.board.id), 10_000)
        .await?
        .into_iter()
        .filter(|g| g.instance.is_empty())
        .map(|g| (g.from, g.to))
        .collect();
    found.gaps.sort_unstable();
    if repair {
        audit::record(
            state,
            actor,
            "board.recount",
            &format!("board {slug}"),
            json!({"entries": found.entries, "mismatched": found.mismatched, "repaired": found.repaired}),
        )
        .await;
    }
    Ok(found)
}

/// Members' initial votes, on the all-time display board.
fn add_initial(board: &BoardConfig, display: &mut Scores) {
    for m in board.members.values().filter(|m| m.initial_votes != 0) {
        *display.entry(m.id.to_string()).or_insert(0) +=
            m.initial_votes * View::Display.units_per_vote();
    }
}

/// Compares the recount with one part of the board: the board, or one shard of a board
/// whose scores are sums over shards (with the entries its voters cast).
struct Checker<'a> {
    state: &'a AppState,
    board: &'a BoardConfig,
    /// The part's keys, and its index among the board's ledgers.
    keys: BoardKeys,
    source: usize,
    of: LedgerOf<'a>,
    repair: bool,
    now: DateTime<Utc>,
    found: Recount,
    /// (period, label) of every bucket checked, and of those compared.
    seen: HashSet<(Period, String)>,
    compared: HashSet<(Period, String)>,
}

/// What the parts of a recount found, together: a bucket compared in several shards
/// counts once.
fn merged<'a>(parts: impl Iterator<Item = Checker<'a>>, entries: u64) -> Recount {
    let mut found = Recount {
        entries,
        ..Recount::default()
    };
    let (mut compared, mut skipped) = (HashSet::new(), HashSet::new());
    for part in parts {
        skipped.extend(part.seen.difference(&part.compared).cloned());
        compared.extend(part.compared);
        let mut listed = part.found.mismatches;
        listed.truncate(MISMATCHES_LISTED - found.mismatches.len());
        found.mismatches.extend(listed);
        found.mismatched += part.found.mismatched;
        found.repaired += part.found.repaired;
    }
    found.buckets = compared.len() as u64;
    found.skipped = skipped.difference(&compared).count() as u64;
    found
}

impl Checker<'_> {
    /// Whether a vote of `member` by `voter` counts in this part.
    fn counts_here(&self, member: &str, voter: Option<&str>) -> bool {
        !self.board.keys.sums_shards() || self.board.keys.write_source(member, voter) == self.source
    }

    /// Compares one recounted bucket with Redis, both views.
    async fn check(&mut self, counted: Counted) -> Result<(), EngineError> {
        if !self
            .seen
            .insert((counted.bucket.period, counted.bucket.label.clone()))
        {
            return Ok(());
        }
        let live_bucket = counted
            .bucket
            .end
            .is_none_or(|end| end + LIVE_SLACK > self.now);
        let keys = self.keys.clone();
        let mut compared = false;
        for (view, recounted) in [
            (View::Real, &counted.real),
            (View::Display, &counted.display),
        ] {
            let Some(live) = self
                .state
                .redis
                .bucket_scores(&keys, &counted.bucket, view)
                .await?
            else {
                if !live_bucket {
                    continue;
                }
                self.differences(&counted.bucket, view, &Scores::new(), recounted, true)
                    .await?;
                compared = true;
                continue;
            };
            compared = true;
            self.differences(&counted.bucket, view, &live, recounted, live_bucket)
                .await?;
        }
        if compared {
            self.compared
                .insert((counted.bucket.period, counted.bucket.label.clone()));
        }
        Ok(())
    }

    /// Records (and repairs) the members whose `live` score is not `recounted`; in a
    /// bucket that may still take votes, only differences that hold still.
    async fn differences(
        &mut self,
        bucket: &Bucket,
        view: View,
        live: &Scores,
        recounted: &Scores,
        moving: bool,
    ) -> Result<(), EngineError> {
        let members: BTreeSet<&String> = live
            .iter()
            .chain(recounted.iter())
            .filter(|(m, _)| {
                live.get(*m).copied().unwrap_or(0) != recounted.get(*m).copied().unwrap_or(0)
            })
            .map(|(m, _)| m)
            .collect();
        for member in members {
            let found = if moving {
                self.exact(bucket, view, member).await?
            } else {
                Some((
                    live.get(member).copied(),
                    recounted.get(member).copied().unwrap_or(0),
                ))
            };
            if let Some((read, units)) = found {
                self.mismatch(bucket, view, member, read, units).await?;
            }
        }
        Ok(())
    }

    /// `member`'s score read at one instant with the ledger entries still in Redis and
    /// the last one trimmed, and the member recounted from the entries SQL held then (up
    /// to the last trimmed) and those waiting: (the score read, the recount) when they
    /// differ, `None` when they agree. Votes may go on: every vote counted by that
    /// instant is in exactly one of the two.
    async fn exact(
        &self,
        bucket: &Bucket,
        view: View,
        member: &str,
    ) -> Result<Option<(Option<i64>, i64)>, EngineError> {
        let (live, waiting, trimmed) = self
            .state
            .redis
            .score_with_pending(&self.keys, bucket, view, member)
            .await?;
        let upto = trimmed_seq(self.state, self.of, self.source, trimmed).await?;
        let tz = self.board.board.settings.timezone;
        let before = bucket.previous(tz);
        let within = |b: &Bucket, e: &Entry| {
            e.counts_in(b.period)
                && b.start.is_none_or(|s| s.timestamp_millis() <= e.at)
                && b.end.is_none_or(|t| e.at < t.timestamp_millis())
        };
        let db = &self.state.db;
        let here = |voter: Option<&str>| self.counts_here(member, voter);
        let (real, display, _) = sql::member_sums(db, self.of, member, upto, bucket, &here).await?;
        let mut units = if view == View::Real { real } else { display };
        if view == View::Display {
            if let Some(b) = &before {
                units += sql::member_sums(db, self.of, member, upto, b, &here)
                    .await?
                    .2;
            }
            if bucket.period == Period::All && self.source == 0 {
                let mut initial = Scores::new();
                add_initial(self.board, &mut initial);
                units += initial.get(member).copied().unwrap_or(0);
            }
        }
        for e in waiting
            .iter()
            .filter_map(|t| Entry::decode(t))
            .filter(|e| e.member == member)
        {
            if within(bucket, &e) {
                units += if view == View::Real {
                    e.count
                } else {
                    e.display
                };
            } else if view == View::Display && before.as_ref().is_some_and(|b| within(b, &e)) {
                units += e.carry;
            }
        }
        Ok((live.unwrap_or(0) != units).then_some((live, units)))
    }

    async fn mismatch(
        &mut self,
        bucket: &Bucket,
        view: View,
        member: &str,
        read: Option<i64>,
        units: i64,
    ) -> Result<(), EngineError> {
        let repaired = self.repair
            && self
                .state
                .redis
                .set_recounted(&self.keys, bucket, view, member, read, units)
                .await?;
        self.found.mismatched += 1;
        self.found.repaired += u64::from(repaired);
        if self.found.mismatches.len() < MISMATCHES_LISTED {
            self.found.mismatches.push(Mismatch {
                period: bucket.period,
                bucket: bucket.label.clone(),
                view,
                member: member.to_owned(),
                live: read.unwrap_or(0),
                recounted: units,
                repaired,
                shard: self.board.keys.sums_shards().then_some(self.source),
            });
        }
        Ok(())
    }
}
