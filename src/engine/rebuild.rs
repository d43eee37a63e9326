//! **Rebuilding a board Redis lost from its ledger.** When Redis comes back empty, a
//! board with entries in SQL has lost the scores they made. A board is found lost when
//! SQL holds a drain cursor for it but Redis remembers no trim and no longer holds the
//! cursor's entry (`lg:trimmed` and the list are the board's own keys, so this is per
//! board, also on a cluster that lost one master). Its rebuild replays, in `seq` order a
//! batch at a time, every entry SQL held when the loss was found (`lg:rebuild`'s
//! `until`, which the drain also records before it stores the first entry of Redis's new
//! life, so the new life's votes are never replayed on top of themselves): both views of
//! every calendar period, carry-over, distinct voters, hourly and per-bucket vote counts,
//! adjustments in the buckets they name, and the votes in each trending period (weighted
//! by their times against the origin the period has, or the rebuild's time for a period
//! Redis lost). Initial votes come back through `reconcile`; the board's watches count
//! again the votes in their windows (`recount_watched`); rule counters and rolling
//! windows start afresh, and `scores` boards are not rebuilt (a `set` or
//! `best` depends on what it found). A sharded `votes` board is found lost and rebuilt
//! shard by shard, each shard from the entries of its voters (an adjustment from its
//! member's shard).

use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use futures_util::StreamExt;

use super::boards::BoardRef;
use super::config::BoardConfig;
use super::error::EngineError;
use super::ledger::BATCH;
use super::limits;
use super::state::AppState;
use crate::domain::ledger::Entry;
use crate::domain::limit::{Span, VoteValues};
use crate::domain::period::Tenths;
use crate::domain::period::{Bucket, epoch_hour_of_ms, voter_buckets};
use crate::domain::score::View;
use crate::store::redis::{BoardKeys, Replay, TrendChange, Watched};
use crate::store::sql::ledger::{self as sql, LedgerOf};

/// Rebuilds every board Redis lost, and finishes rebuilds another instance started.
pub async fn rebuild_lost(state: &AppState) -> Result<(), EngineError> {
    let boards: Vec<_> = state
        .config
        .boards()
        .into_iter()
        .filter(|b| b.board.settings.instances.is_none())
        .collect();
    for board in boards {
        rebuild_board(state, &board).await?;
    }
    state.backlogs.rebuilt();
    Ok(())
}

async fn rebuild_board(state: &AppState, board: &Arc<BoardConfig>) -> Result<(), EngineError> {
    // A score write's set or best depends on what it found: only votes replay.
    if board.board.settings.scoring.is_scores() {
        return Ok(());
    }
    // A board whose scores are sums over shards is rebuilt shard by shard (a cluster may
    // lose the master of some of them): each shard with the entries its voters cast.
    let parts = if board.keys.sums_shards() {
        board.keys.shards()
    } else {
        vec![board.keys.clone()]
    };
    for (source, keys) in parts.iter().enumerate() {
        rebuild_part(state, board, keys, source).await?;
    }
    Ok(())
}

/// Rebuilds one part of a board (the board, or one shard and the index of its ledger)
/// when Redis lost it.
async fn rebuild_part(
    state: &AppState,
    board: &Arc<BoardConfig>,
    keys: &BoardKeys,
    source: usize,
) -> Result<(), EngineError> {
    let of = LedgerOf::board(board.board.id);
    let Some(cursor) = sql::cursor(&state.db, of, source as i32).await? else {
        return Ok(());
    };
    let (until, mut done) = match state.redis.rebuild_state(keys).await? {
        Some(progress) => progress,
        None => {
            let head = state.redis.ledger_head(keys, BATCH).await?;
            let holds_cursor = head
                .entries
                .iter()
                .filter_map(|t| Entry::decode(t))
                .any(|e| e.id == cursor);
            if head.trimmed.is_some() || holds_cursor {
                return Ok(());
            }
            tracing::error!(board = %board.board.slug, "Redis lost this board: rebuilding it from its ledger");
            state
                .redis
                .start_rebuild(keys, sql::last_seq(&state.db, of).await?)
                .await?;
            state
                .redis
                .rebuild_state(keys)
                .await?
                .ok_or_else(|| anyhow::anyhow!("a rebuild just started is not in Redis"))?
        }
    };
    if done < until {
        recount_watched(state, board, keys, until).await?;
    }
    while done < until {
        state.backlogs.rebuilding(board.board.id, done, until);
        let page = sql::page(&state.db, of, done, BATCH as u64).await?;
        let batch: Vec<&Entry> = page
            .iter()
            .filter(|r| r.seq <= until && r.revoked.is_none() && r.entry.counts())
            .map(|r| &r.entry)
            .filter(|e| {
                !board.keys.sums_shards()
                    || board.keys.write_source(&e.member, e.voter.as_deref()) == source
            })
            .collect();
        let to = page
            .iter()
            .map(|r| r.seq)
            .filter(|&s| s <= until)
            .max()
            .unwrap_or(until);
        let replay = replay_of(board, &batch)?;
        if !state.redis.replay(keys, done, to, &replay).await? {
            // Another instance moved the rebuild on: carry on from where it is.
            done = state
                .redis
                .rebuild_state(keys)
                .await?
                .map_or(until, |(_, d)| d);
            continue;
        }
        done = to;
    }
    Ok(())
}

/// Votes counted again per Redis call when a rebuild restores watches' counts.
const WATCHED_BATCH: usize = 1_000;

/// Counts again, in those of the board's watch counters that lived in `part` (the board,
/// or one of its shards), the votes they had counted when Redis lost it: every vote SQL
/// held then (`until`) in the window each watch is in now, held votes too (a release is
/// counted by no watch). The first instance to claim it counts, once per loss: so a
/// subject a vote farm took past a watch's threshold stays past it.
async fn recount_watched(
    state: &AppState,
    board: &Arc<BoardConfig>,
    part: &BoardKeys,
    until: i64,
) -> Result<(), EngineError> {
    let watches = &board.watches;
    if watches.is_empty() || !state.redis.claim_watched(part).await? {
        return Ok(());
    }
    let now = Utc::now();
    let tz = board.board.settings.timezone;
    // From when each watch's window holds votes now.
    let mut from: HashMap<i64, i64> = HashMap::new();
    for watch in watches {
        let since = match watch.spec.window.span(tz, now)? {
            Span::Calendar { start, .. } => start.timestamp_millis(),
            Span::Rolling { length, .. } => {
                Tenths::of_seconds(length.num_seconds()).window_start_ms(now.timestamp_millis())
            }
            Span::Campaign => i64::MIN,
        };
        from.insert(watch.id, since);
    }
    let oldest = from.values().copied().min().unwrap_or(i64::MAX);
    let target = BoardRef {
        config: Arc::clone(board),
        instance: None,
        keys: board.keys.clone(),
    };
    let scope = target.rule_scope();
    let of = LedgerOf::board(board.board.id);
    let mut rows = sql::stream_since(&state.db, of, oldest, until).await?;
    let mut batch: Vec<Watched> = Vec::new();
    let mut counted = 0;
    while let Some(row) = rows.next().await {
        let e = row?.entry;
        if e.releases.is_some() || e.adjusts.is_some() {
            continue;
        }
        let values = VoteValues {
            voter: e.voter.clone(),
            member: Some(e.member.clone()),
            channel: e.channel.clone(),
            terminal: e.terminal.clone(),
            ip: None,
            creator: None,
        };
        let ip: Option<IpAddr> = e.ip.as_deref().and_then(|ip| ip.parse().ok());
        // Each watch's counter now: the vote counts in the window the watch is in now.
        for check in limits::watch_checks(scope, watches, &values, ip, now, now)? {
            if from.get(&check.rule).is_some_and(|&since| e.at >= since) {
                batch.push(Watched {
                    check,
                    member: e.member.clone(),
                    voter: e.voter.clone(),
                    count: e.count,
                    at_ms: e.at,
                });
            }
        }
        if batch.len() >= WATCHED_BATCH {
            counted += state
                .redis
                .recount_watched(&board.keys, part, &batch)
                .await?;
            batch.clear();
        }
    }
    counted += state
        .redis
        .recount_watched(&board.keys, part, &batch)
        .await?;
    tracing::info!(board = %board.board.slug, votes = counted, "watches' counts restored after Redis lost the board");
    Ok(())
}

/// What `entries` add to the board's keys: scores by bucket, view and member, voters by
/// bucket (and member), votes by hour and by bucket.
fn replay_of(board: &BoardConfig, entries: &[&Entry]) -> Result<Replay, EngineError> {
    let settings = &board.board.settings;
    let tz = settings.timezone;
    let mut scores: BTreeMap<(String, View, String), (Bucket, i64)> = BTreeMap::new();
    let mut add = |bucket: &Bucket, view: View, member: &str, units: i64| {
        if units != 0 {
            let key = (
                format!("{}:{}", bucket.period, bucket.label),
                view,
                member.to_owned(),
            );
            scores.entry(key).or_insert_with(|| (bucket.clone(), 0)).1 += units;
        }
    };
    let mut voters: BTreeMap<(String, Option<String>), (Bucket, Vec<String>)> = BTreeMap::new();
    let mut hours: HashMap<i64, i64> = HashMap::new();
    for e in entries {
        let at = DateTime::from_timestamp_millis(e.at).unwrap_or_default();
        for &period in settings
            .periods
            .iter()
            .filter(|&&p| p.is_bucketed() && e.counts_in(p))
        {
            let bucket = Bucket::containing(period, tz, at)?;
            add(&bucket, View::Real, &e.member, e.count);
            add(&bucket, View::Display, &e.member, e.display);
            if period.is_periodic()
                && let Some(next) = bucket.next(tz)
            {
                add(&next, View::Display, &e.member, e.carry);
            }
        }
        if let Some(voter) = &e.voter {
            for bucket in voter_buckets(&settings.periods, tz, at)? {
                let label = format!("{}:{}", bucket.period, bucket.label);
                for member in [None, Some(e.member.clone())] {
                    voters
                        .entry((label.clone(), member))
                        .or_insert_with(|| (bucket.clone(), Vec::new()))
                        .1
                        .push(voter.clone());
                }
            }
        }
        // An adjustment is no vote cast in an hour.
        if e.adjusts.is_none() {
            *hours.entry(epoch_hour_of_ms(e.at)).or_insert(0) += e.count;
        }
    }
    // A bucket's vote count is what its real view gains.
    let mut counts: BTreeMap<String, (Bucket, i64)> = BTreeMap::new();
    for ((label, view, _), (bucket, units)) in &scores {
        if *view == View::Real {
            counts
                .entry(label.clone())
                .or_insert_with(|| (bucket.clone(), 0))
                .1 += units;
        }
    }
    let counts = counts.into_values().collect();
    Ok(Replay {
        scores: scores
            .into_iter()
            .map(|((_, view, member), (bucket, units))| (bucket, view, member, units))
            .collect(),
        voters: voters
            .into_iter()
            .map(|((_, member), (bucket, voters))| (bucket, member, voters))
            .collect(),
        hours: hours.into_iter().collect(),
        counts,
        // Adjustments never reach a trending period. The votes are weighted against now:
        // a period Redis lost takes it for its origin, so no weight grows past 1 however
        // far back the ledger reaches (see `trend_apply.lua`).
        trends: TrendChange::of_votes(
            &settings.periods,
            entries.iter().copied().filter(|e| e.adjusts.is_none()),
            chrono::Utc::now().timestamp_millis(),
        ),
    })
}
