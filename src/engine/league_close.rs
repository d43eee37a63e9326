//! Seasons: their start and their close, exactly once.
//!
//! A season's life (the season record in Redis says where it is):
//! 1. **open**: takes joins and scores until its end (`ends`);
//! 2. **over**: its end has passed; scripts refuse its scores and joins (`closing`,
//!    `ended`) until some instance *advances* the league (`league_advance.lua`, a
//!    compare-and-set on the season's number: any instance may, once);
//! 3. **closing**: the next season is current and takes joins; it is `waiting` (no
//!    scores) until this one's close is done. The close runs under the league's lease:
//!    it reads the frozen brackets, computes every player's result
//!    (`domain::league::close_bracket`), records them in SQL in one transaction keyed by
//!    the season (a second attempt finds it closed and writes nothing), settles the
//!    players' next tiers in Redis, and opens the next season (`league_open.lua`, once);
//! 4. **closed**: its keys expire a day later; SQL keeps the results.
//!
//! Every step after the advance is idempotent and computed from frozen data, so a close
//! cut off anywhere is finished by whichever instance takes the lease next, with the
//! same result.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};
use serde::Serialize;

use super::config::LeagueConfig;
use super::error::EngineError;
use super::state::AppState;
use crate::domain::code::Code;
use crate::domain::league::{
    BracketRef, PlayerResult, SeasonRules, Zone, close_bracket, player_of, season_end,
};
use crate::store::redis::{Advance, Lease, SeasonRecord};
use crate::store::sql;

/// How long a close's lease lasts unless renewed (renewed between steps).
const LEASE: Duration = Duration::from_secs(60);
/// How long a closed season's keys stay in Redis.
const KEEP: TimeDelta = TimeDelta::days(1);

/// One player moved by a close.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Move {
    pub player: String,
    pub bracket: String,
    pub rank: i64,
    pub from: String,
    pub to: String,
}

/// One reward given by a close.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Given {
    pub player: String,
    pub bracket: String,
    pub rank: i64,
    pub reward: String,
}

/// What a season's close does (or, for a dry run, would do now): also the body of the
/// league's webhook delivery.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CloseReport {
    pub league: String,
    pub season: i64,
    pub dry_run: bool,
    /// Players in the season.
    pub players: usize,
    pub brackets: usize,
    /// By tier, bracket and rank.
    pub promotions: Vec<Move>,
    pub demotions: Vec<Move>,
    pub rewards: Vec<Given>,
}

fn report(
    league: &str,
    season: i64,
    dry_run: bool,
    rules: &SeasonRules,
    results: &[PlayerResult],
    brackets: usize,
) -> CloseReport {
    let moved = |zone: Zone| {
        results
            .iter()
            .filter(|r| r.outcome.zone == zone)
            .map(|r| Move {
                player: r.outcome.player.clone(),
                bracket: r.place.id(rules),
                rank: r.outcome.rank,
                from: rules.tier_name(r.place.tier).to_owned(),
                to: rules.tier_name(r.outcome.next_tier).to_owned(),
            })
            .collect()
    };
    CloseReport {
        league: league.to_owned(),
        season,
        dry_run,
        players: results.len(),
        brackets,
        promotions: moved(Zone::Promote),
        demotions: moved(Zone::Demote),
        rewards: results
            .iter()
            .flat_map(|r| {
                r.outcome.rewards.iter().map(|reward| Given {
                    player: r.outcome.player.clone(),
                    bracket: r.place.id(rules),
                    rank: r.outcome.rank,
                    reward: reward.clone(),
                })
            })
            .collect(),
    }
}

/// Every result of season `n` run with `rules`, from its brackets in Redis (frozen once
/// the season is over), by tier, bracket and rank; and how many brackets there were.
async fn results(
    state: &AppState,
    config: &LeagueConfig,
    n: i64,
    rules: &SeasonRules,
) -> Result<(Vec<PlayerResult>, usize), EngineError> {
    let counts: BTreeMap<usize, i64> = state
        .redis
        .league_counts(&config.keys, n)
        .await?
        .into_iter()
        .collect();
    let brackets: Vec<BracketRef> = counts
        .iter()
        .flat_map(|(&tier, &count)| rules.brackets(tier, count).map(|(b, _)| b))
        .collect();
    let ranked = state
        .redis
        .league_brackets(&config.keys, n, &brackets)
        .await?;
    let mut out = Vec::new();
    for (place, entries) in brackets.iter().zip(ranked) {
        let players: Vec<String> = entries
            .iter()
            .map(|(m, _)| player_of(m).to_owned())
            .collect();
        let outcomes = close_bracket(rules, place.tier, &players);
        out.extend(
            outcomes
                .into_iter()
                .zip(&entries)
                .map(|(outcome, (_, score))| PlayerResult {
                    place: *place,
                    score: *score,
                    outcome,
                }),
        );
    }
    Ok((out, brackets.len()))
}

/// Starts the league's season in Redis when Redis holds none (a new league, or a Redis
/// that lost its data): SQL's latest season, with the league's settings.
pub async fn restore_season(
    state: &AppState,
    config: &LeagueConfig,
) -> Result<SeasonRecord, EngineError> {
    let league = &config.league;
    if sql::leagues::find_league(&state.db, &league.slug)
        .await?
        .is_none_or(|l| l.id != league.id)
    {
        // Deleted meanwhile: its keys are being removed, not restored.
        return Err(EngineError::not_found(
            Code::LeagueNotFound,
            format!("no league {}", league.slug),
        ));
    }
    let latest = sql::leagues::latest_season(&state.db, league.id).await?;
    let now = Utc::now();
    let (number, ends) = match latest {
        Some(row) if !row.closed => (row.number, row.ends_at),
        Some(row) => (row.number + 1, season_end(&league.settings, now)?),
        None => (1, season_end(&league.settings, now)?),
    };
    let rules = league.settings.rules();
    state
        .redis
        .advance_season(
            &config.keys,
            &Advance {
                current: 0,
                first: number,
                ended_ms: now.timestamp_millis(),
                ends_ms: ends.timestamp_millis(),
                rules: &rules,
            },
        )
        .await?;
    tracing::info!(league = %league.slug, season = number, "season record restored in Redis");
    state
        .redis
        .league_season(&config.keys)
        .await?
        .ok_or_else(|| EngineError::Unavailable("the season record vanished".into()))
}

/// Starts the season after `record`'s, unless some instance already did: `record`'s
/// season stops at its end, or now when that is earlier (a close by hand). The new
/// season runs with the league's settings of now, to the end of the calendar period
/// holding now.
pub async fn advance(
    state: &AppState,
    config: &LeagueConfig,
    record: &SeasonRecord,
) -> Result<(), EngineError> {
    let now = Utc::now();
    let ended = DateTime::from_timestamp_millis(record.ends_ms)
        .unwrap_or(now)
        .min(now);
    let rules = config.league.settings.rules();
    let ends = season_end(&config.league.settings, now)?;
    state
        .redis
        .advance_season(
            &config.keys,
            &Advance {
                current: record.n,
                first: record.n,
                ended_ms: ended.timestamp_millis(),
                ends_ms: ends.timestamp_millis(),
                rules: &rules,
            },
        )
        .await?;
    Ok(())
}

/// Finishes the close of the season before `record`'s (which is `waiting`): records
/// it in SQL (once), settles tiers and rewards in Redis, opens the current season.
async fn finish(
    state: &AppState,
    config: &LeagueConfig,
    record: &SeasonRecord,
    lease: &Lease,
) -> Result<CloseReport, EngineError> {
    let Some(previous) = &record.previous else {
        return Err(EngineError::Internal(anyhow::anyhow!(
            "league {} season {} waits for a close but has no previous season",
            config.league.slug,
            record.n
        )));
    };
    let m = previous.n;
    let rules = &previous.rules;
    let (results, brackets) = results(state, config, m, rules).await?;
    let slug = config.league.slug.as_str();
    let report = report(slug, m, false, rules, &results, brackets);
    let webhook = config.league.settings.webhook_url.as_ref().map(|url| {
        let body = serde_json::to_string(&report).unwrap_or_default();
        (url.clone(), body)
    });
    let ended_at = DateTime::from_timestamp_millis(previous.ended_ms).unwrap_or_default();
    let recorded = sql::leagues::record_close(
        &state.db,
        &sql::leagues::CloseRecord {
            league_id: config.league.id,
            season: m,
            ended_at,
            rules,
            next_ends_at: DateTime::from_timestamp_millis(record.ends_ms).unwrap_or_default(),
            next_rules: &record.rules,
            results: &results,
            webhook,
        },
    )
    .await?;
    if !state.redis.renew_lease(lease).await? {
        return Err(EngineError::conflict(
            Code::AlreadyClosing,
            "the close's lease was lost; another instance finishes it",
        ));
    }
    let tiers: Vec<(String, usize)> = results
        .iter()
        .map(|r| (r.outcome.player.clone(), r.outcome.next_tier))
        .collect();
    state.redis.settle_tiers(&config.keys, &tiers).await?;
    let places: Vec<BracketRef> = {
        let mut places: Vec<BracketRef> = results.iter().map(|r| r.place).collect();
        places.dedup();
        places
    };
    state
        .redis
        .expire_season(
            &config.keys,
            m,
            &places,
            (Utc::now() + KEEP).timestamp_millis(),
        )
        .await?;
    let rewards: Vec<(String, Vec<String>)> = results
        .iter()
        .filter(|r| !r.outcome.rewards.is_empty())
        .map(|r| (r.outcome.player.clone(), r.outcome.rewards.clone()))
        .collect();
    state.redis.open_season(&config.keys, m, &rewards).await?;
    if recorded {
        crate::metrics::season_closed(slug);
        tracing::info!(
            league = slug,
            season = m,
            players = results.len(),
            "season closed"
        );
    }
    Ok(report)
}

/// Whatever is due, under the lease: a close left half-way is finished; a season that
/// is over (or every season, when `by_hand`) is advanced and closed. Answers the report
/// of the last season closed, if any.
async fn close_due(
    state: &AppState,
    config: &LeagueConfig,
    lease: &Lease,
    by_hand: bool,
) -> Result<Option<CloseReport>, EngineError> {
    let mut done = None;
    let mut record = current(state, config).await?;
    if !record.open {
        done = Some(finish(state, config, &record, lease).await?);
        record = current(state, config).await?;
    }
    if by_hand || Utc::now().timestamp_millis() >= record.ends_ms {
        advance(state, config, &record).await?;
        record = current(state, config).await?;
        done = Some(finish(state, config, &record, lease).await?);
    }
    Ok(done)
}

/// The league's season record, read now (restored when Redis holds none).
async fn current(state: &AppState, config: &LeagueConfig) -> Result<SeasonRecord, EngineError> {
    let record = match state.redis.league_season(&config.keys).await? {
        Some(record) => record,
        None => restore_season(state, config).await?,
    };
    config.remember_season(record.clone());
    Ok(record)
}

fn lease_of(state: &AppState, config: &LeagueConfig) -> Lease {
    let token = format!("{:016x}", rand::random::<u64>());
    state.redis.league_close_lease(&config.keys, &token, LEASE)
}

/// `POST …/close`: closes the current season now (finishing a close left half-way
/// first), or with `dry_run` answers what that close would do, changing nothing.
pub async fn close_now(
    state: &AppState,
    config: &Arc<LeagueConfig>,
    dry_run: bool,
) -> Result<CloseReport, EngineError> {
    if dry_run {
        let record = current(state, config).await?;
        let (results, brackets) = results(state, config, record.n, &record.rules).await?;
        return Ok(report(
            config.league.slug.as_str(),
            record.n,
            true,
            &record.rules,
            &results,
            brackets,
        ));
    }
    let lease = lease_of(state, config);
    if !state.redis.take_lease(&lease).await? {
        return Err(EngineError::conflict(
            Code::AlreadyClosing,
            format!("a close of {} is running", config.league.slug),
        ));
    }
    let result = close_due(state, config, &lease, true).await;
    if let Err(err) = state.redis.release_lease(&lease).await {
        tracing::debug!(error = %err, "could not let the close's lease go; it expires");
    }
    result?.ok_or_else(|| EngineError::Internal(anyhow::anyhow!("a close by hand closed nothing")))
}

/// One check of every league: closes what is due, when this instance gets its lease.
pub async fn check_all(state: &AppState) {
    for config in state.config.leagues() {
        let record = match current(state, &config).await {
            Ok(record) => record,
            Err(err) => {
                tracing::debug!(error = %err, league = %config.league.slug, "cannot read the season");
                continue;
            }
        };
        if record.open && Utc::now().timestamp_millis() < record.ends_ms {
            continue;
        }
        let lease = lease_of(state, &config);
        match state.redis.take_lease(&lease).await {
            Ok(true) => {}
            Ok(false) => continue,
            Err(err) => {
                tracing::debug!(error = %err, "cannot take the close's lease");
                continue;
            }
        }
        if let Err(err) = close_due(state, &config, &lease, false).await {
            tracing::warn!(error = %err, league = %config.league.slug, "season close failed; it resumes on the next check");
        }
        if let Err(err) = state.redis.release_lease(&lease).await {
            tracing::debug!(error = %err, "could not let the close's lease go; it expires");
        }
    }
}

/// Checks every league every `check` until the process ends (webhook deliveries go in
/// a task of their own, `engine::webhooks::run`, so none waits on a receiver).
pub async fn run(state: AppState, check: Duration) {
    let mut ticks = tokio::time::interval(check);
    loop {
        ticks.tick().await;
        check_all(&state).await;
    }
}
