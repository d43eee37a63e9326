//! The archive of closed buckets, and their keys' retention in Redis.
//!
//! Every instance runs [`run`]; a lease in Redis lets one at a time work, and another
//! take over when it stops renewing (a crash). A run goes board by board:
//! 1. late writes (counted per hour by `vote.lua` and `score.lua` when a write's time had
//!    passed a while before it arrived): a closed bucket before the in-order walk whose
//!    hours' count differs from the count it was archived with is archived (again);
//! 2. in order, every bucket of each calendar period that closed
//!    [`ARCHIVE_AFTER`] ago, from where the last run stopped (a cursor in SQL, moved in
//!    the transaction that writes each bucket).
//!
//! Each bucket is written in one transaction with the late count it saw, so a run
//! stopped half-way (a crash, a lost lease, its budget) resumes after the last whole
//! bucket and writes none twice.
//!
//! Archiving a bucket writes its best `archive_top` entries of each view, with counts,
//! to SQL in one transaction; only then do its Redis keys get an expiry, `retention`
//! days after it closed (at least [`RELEASE_GRACE`] from now), so no key expires before
//! its bucket is archived. Reads of a bucket no longer in Redis answer from the archive.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Duration;

use chrono::{DateTime, Utc};

use super::config::BoardConfig;
use super::error::EngineError;
use super::held;
use super::leaderboard::ranks;
use super::ledger;
use super::state::AppState;
use crate::domain::code::Code;
use crate::domain::period::{self, Bucket, Period};
use crate::domain::retention::ARCHIVE_AFTER;
use crate::domain::score::View;
use crate::store::redis::{Lease, PageQuery, Release};
use crate::store::sql::archive::{self as sql, ArchivedEntry, Standings};

/// How long a lease lasts unless renewed; a run renews it before each bucket.
pub const LEASE: Duration = Duration::from_secs(60);
/// The least time a bucket's keys stay after it is archived: a bucket archived past its
/// retention (a backfill) is readable from Redis a while longer.
pub const RELEASE_GRACE: chrono::Duration = chrono::Duration::hours(1);
/// How long the archive endpoint waits for the background task's lease.
const LEASE_WAIT: Duration = Duration::from_secs(10);

/// One bucket the archive wrote or released.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BucketRef {
    pub period: String,
    pub bucket: String,
}

impl BucketRef {
    fn of(bucket: &Bucket) -> Self {
        Self {
            period: bucket.period.to_string(),
            bucket: bucket.label.clone(),
        }
    }
}

/// What archiving a board did.
#[derive(Debug, Clone, Default)]
pub struct ArchiveReport {
    /// Buckets written to the archive, oldest first per period.
    pub archived: Vec<BucketRef>,
    /// Buckets whose Redis keys were released (the endpoint only).
    pub released: Vec<BucketRef>,
}

/// Archives on every instance, every `every`, while the process runs; one instance at
/// a time does the work.
pub async fn run(state: AppState, every: Duration) {
    let token = format!("{:016x}", rand::random::<u64>());
    let lease = state.redis.archive_lease(&token, LEASE);
    let mut ticks = tokio::time::interval(every);
    ticks.tick().await;
    loop {
        ticks.tick().await;
        match archive_all(&state, &lease).await {
            Ok(0) => {}
            Ok(n) => tracing::info!(buckets = n, "archived closed buckets"),
            Err(err) => tracing::warn!(error = %err, "archiving stopped; the next run resumes"),
        }
    }
}

/// One run over every board, when this instance gets the lease; answers the buckets it
/// wrote. A family's expired rooms' ledgers leave SQL in the same run
/// (`ledger::prune_rooms`), and held votes left unreviewed past their retention are
/// dropped (`held::expire`).
pub async fn archive_all(state: &AppState, lease: &Lease) -> Result<usize, EngineError> {
    if !state.redis.take_lease(lease).await? {
        return Ok(0);
    }
    let mut written = 0;
    let result = async {
        for board in state.config.boards() {
            written += archive_board(state, &board, lease, Utc::now(), BUDGET)
                .await?
                .len();
            let pruned = ledger::prune_rooms(state, &board).await?;
            if pruned > 0 {
                tracing::info!(family = %board.board.slug, rooms = pruned, "removed expired rooms' ledgers from SQL");
            }
        }
        let dropped = held::expire(state, Utc::now()).await?;
        if dropped > 0 {
            tracing::info!(votes = dropped, "dropped held votes left unreviewed");
        }
        Ok::<_, EngineError>(())
    }
    .await;
    if let Err(err) = state.redis.release_lease(lease).await {
        tracing::debug!(error = %err, "could not let the archive lease go; it expires");
    }
    crate::metrics::archived(written);
    result.map(|()| written)
}

/// Buckets one run archives per board at most: a run, and the lease it holds, stay
/// short; the next run goes on.
pub const BUDGET: usize = 500;

/// Archives a board's late-written and newly closed buckets (see the module's header),
/// at most `budget` of them; answers the buckets written. Stops when the lease is lost.
pub async fn archive_board(
    state: &AppState,
    board: &BoardConfig,
    lease: &Lease,
    now: DateTime<Utc>,
    budget: usize,
) -> Result<Vec<BucketRef>, EngineError> {
    let settings = &board.board.settings;
    let tz = settings.timezone;
    let id = board.board.id;
    let periods: Vec<Period> = settings
        .periods
        .iter()
        .copied()
        .filter(|p| p.is_periodic())
        .collect();
    let mut written = Vec::new();
    // A family's instances are not archived: their keys expire with them.
    if periods.is_empty() || settings.instances.is_some() {
        return Ok(written);
    }
    let closed = |b: &Bucket| b.end.is_some_and(|end| end + ARCHIVE_AFTER <= now);
    let marks = state.redis.late_marks(&board.keys).await?;
    for &period in &periods {
        // Where the in-order walk starts: buckets ending by then are archived already,
        // or lie before the board existed; late writes bring them here.
        let walk_from = match sql::cursor(&state.db, id, period).await? {
            Some(done) => done,
            None => match sql::board_created_at(&state.db, id).await? {
                Some(created) => created,
                None => return Ok(written),
            },
        };

        // 1. Closed buckets before the walk whose hours got late writes since.
        let mut late: Vec<Bucket> = Vec::new();
        for &hour in marks.hours.keys() {
            let Some((first, last)) = period::hour_span(hour) else {
                continue;
            };
            for at in [first, last] {
                let Ok(bucket) = Bucket::containing(period, tz, at) else {
                    continue;
                };
                if closed(&bucket)
                    && bucket.end.is_some_and(|end| end <= walk_from)
                    && !late.contains(&bucket)
                {
                    late.push(bucket);
                }
            }
        }
        let labels: Vec<String> = late.iter().map(|b| b.label.clone()).collect();
        let seen = if labels.is_empty() {
            Default::default()
        } else {
            sql::late_seen(&state.db, id, period, &labels).await?
        };
        for bucket in late {
            let marked = late_in(&marks.hours, &bucket);
            if seen.get(&bucket.label) == Some(&marked) {
                continue;
            }
            if written.len() >= budget || !state.redis.renew_lease(lease).await? {
                return Ok(written);
            }
            let gone = marks.found_gone(&board.keys, &bucket);
            if archive_bucket(state, board, &bucket, false, marked, gone, now).await? {
                written.push(BucketRef::of(&bucket));
            }
        }

        // 2. Newly closed buckets, in order from the cursor.
        let mut bucket = Bucket::containing(period, tz, walk_from)?;
        let mut empty_until = None;
        while closed(&bucket) {
            if written.len() >= budget || !state.redis.renew_lease(lease).await? {
                break;
            }
            let marked = late_in(&marks.hours, &bucket);
            let gone = marks.found_gone(&board.keys, &bucket);
            if archive_bucket(state, board, &bucket, true, marked, gone, now).await? {
                written.push(BucketRef::of(&bucket));
                empty_until = None;
            } else {
                empty_until = bucket.end;
            }
            match bucket.next(tz) {
                Some(next) => bucket = next,
                None => break,
            }
        }
        // Empty buckets move the cursor once, after the last of them.
        if let Some(until) = empty_until {
            sql::advance(&state.db, id, period, until).await?;
        }
    }
    // Late counts of hours whose every bucket is past its retention are no longer
    // needed: those buckets' keys are gone, and a late write into one marks it anew.
    let spent: Vec<i64> = marks
        .hours
        .keys()
        .copied()
        .filter(|&hour| {
            let Some((at, _)) = period::hour_span(hour) else {
                return false;
            };
            periods.iter().all(|&period| {
                Bucket::containing(period, tz, at).is_ok_and(|bucket| {
                    settings
                        .retention
                        .release_at(&bucket)
                        .is_some_and(|release| release + RELEASE_GRACE <= now)
                })
            })
        })
        .collect();
    state
        .redis
        .forget_hours(&board.keys, &spent, &marks)
        .await?;
    Ok(written)
}

/// Late writes marked in the epoch hours a bucket overlaps.
fn late_in(marks: &BTreeMap<i64, i64>, bucket: &Bucket) -> i64 {
    period::overlapping_hours(bucket).map_or(0, |hours| marks.range(hours).map(|(_, n)| n).sum())
}

/// The views a board keeps: a scores board has one.
fn views(board: &BoardConfig) -> &'static [View] {
    if board.board.settings.scoring.is_scores() {
        &[View::Real]
    } else {
        &[View::Real, View::Display]
    }
}

/// Archives one closed bucket and gives its keys their expiry; answers `false` when
/// Redis holds nothing of it (nothing written). A bucket whose rankings a late write
/// found gone (`gone`: its keys had left Redis, released or expired) is archived as the
/// sum of what was archived before and what late writes put in Redis since, and its
/// keys are let go at once. Any other bucket is archived from Redis, which holds all of
/// it: a late write holds the keys it writes until this archives them again (distinct
/// voters that left with keys no late write touched are taken from the earlier archive).
async fn archive_bucket(
    state: &AppState,
    board: &BoardConfig,
    bucket: &Bucket,
    in_order: bool,
    late_seen: i64,
    gone: bool,
    now: DateTime<Utc>,
) -> Result<bool, EngineError> {
    let settings = &board.board.settings;
    let queries: Vec<PageQuery<'_>> = views(board)
        .iter()
        .map(|&view| PageQuery {
            board: &board.keys,
            bucket,
            view,
            offset: 0,
            limit: settings.archive_top,
            anchor: None,
        })
        .collect();
    let pages = state.redis.pages(&queries).await?;
    let Some(first) = pages.first() else {
        return Ok(false);
    };
    if first.total_members == 0 {
        // Its keys left Redis with nothing late in them: nothing to add, and nothing to
        // look at again until another late write.
        if !in_order {
            sql::note_late_seen(&state.db, board.board.id, bucket, late_seen).await?;
        }
        if gone {
            state.redis.forget_gone(&board.keys, bucket).await?;
        }
        return Ok(false);
    }
    let members: Vec<String> = pages
        .iter()
        .flat_map(|p| p.entries.iter().map(|(m, _)| m.clone()))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let voters: HashMap<String, i64> = members
        .iter()
        .cloned()
        .zip(
            state
                .redis
                .member_participants(&board.keys, bucket, &members)
                .await?,
        )
        .collect();
    let mut standings = Standings {
        total_members: first.total_members,
        participants: first.participants,
        late_seen,
        views: views(board)
            .iter()
            .zip(&pages)
            .map(|(&view, page)| {
                let entries = page
                    .entries
                    .iter()
                    .zip(ranks(page))
                    .map(|((member, units), rank)| ArchivedEntry {
                        member: member.clone(),
                        units: *units,
                        rank,
                        voters: voters.get(member).copied().unwrap_or(0),
                    })
                    .collect();
                (view, entries)
            })
            .collect(),
    };
    let archived_before =
        (gone || !in_order) && sql::is_archived(&state.db, board.board.id, bucket).await?;
    let release_now = gone && archived_before;
    if release_now {
        standings = merged(state, board, bucket, standings).await?;
    } else if archived_before {
        standings = with_earlier_voters(state, board, bucket, standings).await?;
    }

    let retention = settings.retention;
    let expires_at = retention
        .release_at(bucket)
        .map(|at| at.max(now + RELEASE_GRACE));
    sql::write_bucket(
        &state.db,
        board.board.id,
        bucket,
        &standings,
        in_order,
        expires_at,
    )
    .await?;
    let Some(at) = expires_at else {
        if gone {
            state.redis.forget_gone(&board.keys, bucket).await?;
        }
        return Ok(true);
    };
    let when = |at: DateTime<Utc>| {
        if release_now {
            Release::Now
        } else {
            Release::At(at.max(now + RELEASE_GRACE))
        }
    };
    let voter_keys: Vec<(Bucket, Release)> = retention
        .voter_releases(bucket, &settings.periods, settings.timezone)
        .into_iter()
        .map(|(voters, at)| (voters, when(at)))
        .collect();
    state
        .redis
        .release_bucket(&board.keys, bucket, when(at), &voter_keys)
        .await?;
    if gone {
        state.redis.forget_gone(&board.keys, bucket).await?;
    }
    Ok(true)
}

/// A re-archived bucket's standings with each count of distinct voters at least what
/// the earlier archive recorded: a voters' HyperLogLog no late write touched may have
/// expired since (only the keys a late write writes are held), and counts of distinct
/// voters never go down.
async fn with_earlier_voters(
    state: &AppState,
    board: &BoardConfig,
    bucket: &Bucket,
    mut standings: Standings,
) -> Result<Standings, EngineError> {
    for (view, entries) in &mut standings.views {
        let Some(earlier) = sql::read_bucket(&state.db, board.board.id, bucket, *view).await?
        else {
            continue;
        };
        if *view == View::Real {
            standings.participants = standings.participants.max(earlier.participants);
        }
        let voters: HashMap<&str, i64> = earlier
            .entries
            .iter()
            .map(|e| (e.member.as_str(), e.voters))
            .collect();
        for entry in entries {
            if let Some(&before) = voters.get(entry.member.as_str()) {
                entry.voters = entry.voters.max(before);
            }
        }
    }
    Ok(standings)
}

/// The standings of a bucket whose keys had left Redis (`earlier`, from the archive)
/// with what late writes put in Redis since: each member's scores add up; the counts
/// of members and voters add up too, an upper bound (a member or voter in both is
/// counted twice).
async fn merged(
    state: &AppState,
    board: &BoardConfig,
    bucket: &Bucket,
    late: Standings,
) -> Result<Standings, EngineError> {
    let (mut total_members, mut participants) = (late.total_members, late.participants);
    let mut views_out = Vec::new();
    for (view, entries) in late.views {
        let earlier = sql::read_bucket(&state.db, board.board.id, bucket, view).await?;
        if view == View::Real
            && let Some(earlier) = &earlier
        {
            total_members += earlier.total_members;
            participants += earlier.participants;
        }
        let earlier = earlier.map(|b| b.entries).unwrap_or_default();
        let mut sums: HashMap<String, (i64, i64)> = HashMap::new();
        for e in earlier.into_iter().chain(entries) {
            let sum = sums.entry(e.member).or_default();
            sum.0 += e.units;
            sum.1 += e.voters;
        }
        let mut all: Vec<(String, (i64, i64))> = sums.into_iter().collect();
        // The order of one sorted set read best first: score, then member id, descending.
        all.sort_by(|a, b| b.1.0.cmp(&a.1.0).then_with(|| b.0.cmp(&a.0)));
        all.truncate(board.board.settings.archive_top as usize);
        let page = crate::store::redis::PageReply {
            total_members: 0,
            participants: 0,
            offset: Some(0),
            first_rank: 1,
            entries: all.iter().map(|(m, (u, _))| (m.clone(), *u)).collect(),
        };
        let entries = all
            .into_iter()
            .zip(ranks(&page))
            .map(|((member, (units, voters)), rank)| ArchivedEntry {
                member,
                units,
                rank,
                voters,
            })
            .collect();
        views_out.push((view, entries));
    }
    Ok(Standings {
        total_members,
        participants,
        late_seen: late.late_seen,
        views: views_out,
    })
}

/// `POST /admin/boards/{board}/archive`: archives every closed bucket of the board now
/// (waiting for the background task's lease if it is busy), then releases the Redis
/// keys of the board's archived buckets past their retention.
pub async fn archive_now(
    state: &AppState,
    board: &BoardConfig,
) -> Result<ArchiveReport, EngineError> {
    let token = format!("{:016x}", rand::random::<u64>());
    let lease = state.redis.archive_lease(&token, LEASE);
    let started = std::time::Instant::now();
    while !state.redis.take_lease(&lease).await? {
        if started.elapsed() > LEASE_WAIT {
            return Err(EngineError::conflict(
                Code::ArchiveBusy,
                "another instance is archiving; try again in a minute",
            ));
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let result = async {
        let now = Utc::now();
        let archived = archive_board(state, board, &lease, now, usize::MAX).await?;
        let mut released = Vec::new();
        let settings = &board.board.settings;
        for (period, label) in sql::unreleased(&state.db, board.board.id).await? {
            let bucket = Bucket::parse(Period::parse(&period)?, settings.timezone, &label)?;
            if settings
                .retention
                .release_at(&bucket)
                .is_none_or(|at| at > now)
            {
                continue;
            }
            let voters: Vec<(Bucket, Release)> = settings
                .retention
                .voter_releases(&bucket, &settings.periods, settings.timezone)
                .into_iter()
                .filter(|(_, at)| *at <= now)
                .map(|(voters, _)| (voters, Release::Now))
                .collect();
            state
                .redis
                .release_bucket(&board.keys, &bucket, Release::Now, &voters)
                .await?;
            sql::mark_released(&state.db, board.board.id, &bucket).await?;
            released.push(BucketRef::of(&bucket));
        }
        Ok::<_, EngineError>(ArchiveReport { archived, released })
    }
    .await;
    if let Err(err) = state.redis.release_lease(&lease).await {
        tracing::debug!(error = %err, "could not let the archive lease go; it expires");
    }
    result
}
