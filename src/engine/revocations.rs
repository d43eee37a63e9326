//! **Revocations**: a voter's votes struck out of a board after the fact (a bot farm, a
//! bought batch). The ledger's entries are marked in SQL (one transaction with the
//! revocation's record); then every score they added leaves Redis — every bucket of
//! every calendar period, both views, the carry-over they gave the next bucket, the
//! hours' vote counts — and the distinct-voter HyperLogLogs of the buckets they counted
//! in are rebuilt from the ledger (a HyperLogLog cannot forget a voter). Rate-limit
//! counters keep what the votes used.

use std::collections::{BTreeMap, HashMap};

use chrono::DateTime;
use futures_util::StreamExt;
use serde_json::json;

use super::audit;
use super::config::BoardConfig;
use super::error::EngineError;
use super::ledger::{ledger_board, settle, trimmed_seq, votes_ledger_board};
use super::state::AppState;
use crate::domain::ids::BoardSlug;
use crate::domain::ledger::{Entry, Revocation, RevocationRequest};
use crate::domain::period::{Bucket, Period, epoch_hour_of_ms, voter_buckets};
use crate::domain::score::View;
use crate::store::redis::{BoardKeys, Lowering, TrendChange, Voters};
use crate::store::sql::ledger::{self as sql, LedgerOf};

/// How many revocations a list shows.
pub const LISTED: u64 = 200;

/// Voters added to a scratch HyperLogLog per call.
const VOTERS_STEP: usize = 1000;

/// How many times a rebuild catches up with the drain before it gives up.
const CATCH_UPS: usize = 20;

/// Strikes out `request`'s votes on `slug` for `actor` (audited): every vote of the
/// voter in the range accepted until now, once; a repeat strikes out nothing more.
pub async fn revoke(
    state: &AppState,
    actor: &str,
    slug: &BoardSlug,
    request: RevocationRequest,
) -> Result<Revocation, EngineError> {
    let board = votes_board(state, slug)?;
    let of = LedgerOf::board(board.board.id);
    settle(state, &board).await?;
    // A revocation whose Redis step failed before is finished first.
    for (id, struck) in sql::unapplied(&state.db, of).await? {
        take_out(state, &board, of, id, &struck).await?;
    }
    let (revocation, struck) = sql::revoke(&state.db, of, &request, actor).await?;
    take_out(state, &board, of, revocation.id, &struck).await?;
    audit::record(
        state,
        actor,
        "board.revoke",
        &format!("board {slug}"),
        json!({"id": revocation.id, "voter": revocation.voter, "votes": revocation.votes,
            "reason": revocation.reason}),
    )
    .await;
    Ok(revocation)
}

fn votes_board(
    state: &AppState,
    slug: &BoardSlug,
) -> Result<std::sync::Arc<BoardConfig>, EngineError> {
    votes_ledger_board(state, slug, "revocations strike out votes")
}

/// Takes revocation `id`'s struck-out entries out of Redis: scores, carry-over, hourly
/// counts (once, whatever is repeated: `revoke.lua` remembers the revocation), then the
/// distinct voters of every bucket they counted in; and records that it is done. A held
/// vote struck out counted nowhere: it takes nothing out.
async fn take_out(
    state: &AppState,
    board: &BoardConfig,
    of: LedgerOf<'_>,
    id: i64,
    struck: &[Entry],
) -> Result<(), EngineError> {
    let struck: Vec<Entry> = struck.iter().filter(|e| e.counts()).cloned().collect();
    let settings = &board.board.settings;
    let tz = settings.timezone;
    let calendar: Vec<Period> = settings
        .periods
        .iter()
        .copied()
        .filter(|p| p.is_bucketed())
        .collect();
    let mut lowered: BTreeMap<(String, View, String), (Bucket, i64)> = BTreeMap::new();
    let mut lower = |bucket: &Bucket, view: View, member: &str, units: i64| {
        if units != 0 {
            let key = (bucket_key(bucket), view, member.to_owned());
            lowered.entry(key).or_insert_with(|| (bucket.clone(), 0)).1 += units;
        }
    };
    let mut hours: HashMap<i64, i64> = HashMap::new();
    let mut voters: BTreeMap<(String, Option<String>), Voters> = BTreeMap::new();
    for e in &struck {
        let at = DateTime::from_timestamp_millis(e.at).unwrap_or_default();
        for &period in &calendar {
            let bucket = Bucket::containing(period, tz, at)?;
            lower(&bucket, View::Real, &e.member, e.count);
            lower(&bucket, View::Display, &e.member, e.display);
            if period.is_periodic()
                && let Some(next) = bucket.next(tz)
            {
                lower(&next, View::Display, &e.member, e.carry);
            }
        }
        *hours.entry(epoch_hour_of_ms(e.at)).or_insert(0) += e.count;
        for bucket in voter_buckets(&settings.periods, tz, at)? {
            for member in [None, Some(e.member.clone())] {
                voters
                    .entry((bucket_key(&bucket), member.clone()))
                    .or_insert_with(|| Voters {
                        bucket: bucket.clone(),
                        member,
                    });
            }
        }
    }
    let lowerings: Vec<Lowering> = lowered
        .into_iter()
        .map(|((_, view, member), (bucket, units))| Lowering {
            bucket,
            view,
            member,
            units,
        })
        .collect();
    let hours: Vec<(i64, i64)> = hours.into_iter().collect();
    // Weighted against the newest struck vote's time.
    let newest = struck.iter().map(|e| e.at).max().unwrap_or_default();
    let trends = TrendChange::of_votes(&settings.periods, struck.iter(), newest);
    // A revocation strikes out one voter's votes: on a board whose scores are sums over
    // shards they all live in the voter's shard.
    let (keys, source) = match struck.first() {
        Some(e) => {
            let voter = e.voter.as_deref();
            (
                board.keys.write_shard(&e.member, voter),
                board.keys.write_source(&e.member, voter),
            )
        }
        None => (board.keys.clone(), 0),
    };
    state
        .redis
        .revoke(&keys, id, &lowerings, &trends, &hours)
        .await?;
    for v in voters.values() {
        rebuild_voters(state, (&keys, source), of, v).await?;
    }
    sql::mark_applied(&state.db, id).await?;
    Ok(())
}

fn bucket_key(bucket: &Bucket) -> String {
    format!("{}:{}", bucket.period, bucket.label)
}

/// Rebuilds one distinct-voters HyperLogLog in `keys` (the board, or one shard and the
/// index of its ledger) from the ledger: the voters SQL holds up to the entry last
/// trimmed from that ledger, into a scratch key, then those still waiting in it and the
/// swap at one instant; when the drain trimmed more meanwhile, what SQL gained is added
/// and the swap tried again. A shard's HyperLogLog gets every voter of the board's
/// ledger: the board counts the union of its shards', which that leaves as it was.
async fn rebuild_voters(
    state: &AppState,
    (keys, source): (&BoardKeys, usize),
    of: LedgerOf<'_>,
    voters: &Voters,
) -> Result<(), EngineError> {
    let redis = &state.redis;
    let scratch = redis.participants_scratch(keys);
    let range = (
        voters
            .bucket
            .start
            .map_or(i64::MIN, |t| t.timestamp_millis()),
        voters.bucket.end.map_or(i64::MAX, |t| t.timestamp_millis()),
    );
    let mut read = 0;
    for _ in 0..CATCH_UPS {
        let trimmed = redis.ledger_trimmed(keys).await?;
        let upto = trimmed_seq(state, of, source, trimmed).await?;
        let found =
            sql::voters_of(&state.db, of, (read, upto), range, voters.member.as_deref()).await?;
        futures_util::pin_mut!(found);
        let mut step = Vec::with_capacity(VOTERS_STEP);
        while let Some(voter) = found.next().await {
            step.push(voter?);
            if step.len() == VOTERS_STEP {
                redis.add_voters(&scratch, &step).await?;
                step.clear();
            }
        }
        redis.add_voters(&scratch, &step).await?;
        read = upto;
        if redis.swap_voters(keys, voters, &scratch, trimmed).await? {
            return Ok(());
        }
    }
    Err(EngineError::Unavailable(
        "the ledger kept moving while participants were rebuilt; the next revocation on this board finishes it".to_owned(),
    ))
}

/// The board's revocations, newest first.
pub async fn list(state: &AppState, slug: &BoardSlug) -> Result<Vec<Revocation>, EngineError> {
    let board = ledger_board(state, slug)?;
    let of = LedgerOf::board(board.board.id);
    Ok(sql::revocations(&state.db, of, LISTED).await?)
}

/// A voter's votes on the board by member: (member, counted, struck out).
pub async fn voter_votes(
    state: &AppState,
    slug: &BoardSlug,
    voter: &str,
) -> Result<Vec<(String, i64, i64)>, EngineError> {
    let board = ledger_board(state, slug)?;
    let of = LedgerOf::board(board.board.id);
    Ok(sql::voter_votes(&state.db, of, voter).await?)
}
