//! Leagues: their settings (SQL first, audited, then the configuration cache of every
//! instance). A new league's first season is recorded with it and started in Redis.

use serde_json::{Value, json};

use chrono::Utc;

use super::admin::random_text;
use super::audit;
use super::config::Change;
use super::config_sync;
use super::error::EngineError;
use super::league_close::{self, CloseReport};
use super::league_play;
use super::state::AppState;
use crate::domain::code::Code;
use crate::domain::ids::LeagueSlug;
use crate::domain::league::{Delivery, League, LeagueSettings, RecordedReward, Season, season_end};
use crate::domain::webhook::check_url_host;
use crate::store::sql;

/// A league's settings as the audit log shows them (never the webhook secret).
fn settings_json(s: &LeagueSettings) -> Value {
    json!({
        "title": s.title,
        "tiers": s.tiers.iter().map(|t| json!({
            "name": t.name, "promote": t.promote.as_f64(), "demote": t.demote.as_f64(),
        })).collect::<Vec<_>>(),
        "bracket_size": s.bracket_size,
        "season": s.season.as_str(),
        "timezone": s.timezone.name(),
        "rewards": s.rewards.iter().map(|r| json!({
            "tier": r.tier, "ranks": [r.first, r.last], "reward": r.reward,
        })).collect::<Vec<_>>(),
        "webhook_url": s.webhook_url,
    })
}

async fn changed(state: &AppState, slug: &LeagueSlug) -> Result<(), EngineError> {
    config_sync::changed(state, Change::League(slug.clone())).await
}

/// The league with this slug.
pub async fn league_of(state: &AppState, slug: &LeagueSlug) -> Result<League, EngineError> {
    sql::leagues::find_league(&state.db, slug)
        .await?
        .ok_or_else(|| EngineError::not_found(Code::LeagueNotFound, format!("no league {slug}")))
}

/// The league's seasons in SQL, newest first.
pub async fn seasons(state: &AppState, league: &League) -> Result<Vec<Season>, EngineError> {
    Ok(sql::leagues::seasons(&state.db, league.id).await?)
}

/// The league's webhook deliveries, newest first, each with its season's number.
pub async fn deliveries(
    state: &AppState,
    league: &League,
) -> Result<Vec<(i64, Delivery)>, EngineError> {
    let seasons = sql::leagues::seasons(&state.db, league.id).await?;
    Ok(sql::leagues::deliveries(&state.db, league.id)
        .await?
        .into_iter()
        .map(|d| {
            let number = seasons
                .iter()
                .find(|s| s.id == d.season_id)
                .map_or(0, |s| s.number);
            (number, d)
        })
        .collect())
}

/// The rewards season `n` gave, with whether (and to whom) they were handed over; none
/// while it is not closed.
pub async fn season_rewards(
    state: &AppState,
    league: &League,
    n: i64,
) -> Result<Vec<RecordedReward>, EngineError> {
    match sql::leagues::season(&state.db, league.id, n).await? {
        Some(season) if season.closed => {
            Ok(sql::leagues::season_rewards(&state.db, season.id).await?)
        }
        _ => Ok(Vec::new()),
    }
}

/// The league's latest season in SQL.
pub async fn latest_season(
    state: &AppState,
    league: &League,
) -> Result<Option<Season>, EngineError> {
    Ok(sql::leagues::latest_season(&state.db, league.id).await?)
}

/// Closes the league's current season now, or previews it (`dry_run`); a real close is
/// audited.
pub async fn close_league(
    state: &AppState,
    actor: &str,
    slug: &LeagueSlug,
    dry_run: bool,
) -> Result<CloseReport, EngineError> {
    let config = league_play::league(state, slug)?;
    let report = league_close::close_now(state, &config, dry_run).await?;
    if !dry_run {
        audit::record(
            state,
            actor,
            "league.close",
            &format!("league {slug}"),
            json!({"season": report.season, "players": report.players}),
        )
        .await;
    }
    Ok(report)
}

/// Every league.
pub async fn leagues(state: &AppState) -> Result<Vec<League>, EngineError> {
    Ok(sql::leagues::list_leagues(&state.db).await?)
}

/// Checks a league's settings, and that its webhook URL names no address deliveries
/// may not reach (unless private addresses are allowed).
fn checked(state: &AppState, settings: &LeagueSettings) -> Result<(), EngineError> {
    settings.check()?;
    if let Some(url) = &settings.webhook_url {
        check_url_host(url, state.settings.webhook_allow_private)?;
    }
    Ok(())
}

/// Creates a league with a fresh webhook secret.
pub async fn create_league(
    state: &AppState,
    actor: &str,
    slug: LeagueSlug,
    settings: LeagueSettings,
) -> Result<League, EngineError> {
    checked(state, &settings)?;
    let ends = season_end(&settings, Utc::now())?;
    let league = sql::leagues::insert_league(&state.db, &slug, &settings, &random_text(40), ends)
        .await
        .map_err(|e| match e {
            sql::SqlError::Conflict => {
                EngineError::conflict(Code::LeagueExists, format!("league {slug} already exists"))
            }
            other => other.into(),
        })?;
    changed(state, &slug).await?;
    audit::record(
        state,
        actor,
        "league.create",
        &format!("league {slug}"),
        settings_json(&league.settings),
    )
    .await;
    Ok(league)
}

/// Saves a league's settings.
pub async fn update_league(
    state: &AppState,
    actor: &str,
    slug: &LeagueSlug,
    settings: LeagueSettings,
) -> Result<League, EngineError> {
    checked(state, &settings)?;
    let league = League {
        settings,
        ..league_of(state, slug).await?
    };
    sql::leagues::update_league(&state.db, &league).await?;
    changed(state, slug).await?;
    audit::record(
        state,
        actor,
        "league.update",
        &format!("league {slug}"),
        settings_json(&league.settings),
    )
    .await;
    Ok(league)
}

/// Replaces the league's webhook secret with a new one (answered): deliveries are
/// signed with both for a day, so a receiver can switch without missing one.
pub async fn rotate_webhook_secret(
    state: &AppState,
    actor: &str,
    slug: &LeagueSlug,
) -> Result<League, EngineError> {
    let league = league_of(state, slug).await?;
    let secret = random_text(40);
    sql::leagues::rotate_webhook_secret(&state.db, &league, &secret).await?;
    changed(state, slug).await?;
    audit::record(
        state,
        actor,
        "league.webhook_secret.rotate",
        &format!("league {slug}"),
        json!({}),
    )
    .await;
    league_of(state, slug).await
}

/// Sends a given-up delivery of the league again: one more attempt at once (failing,
/// it is given up again).
pub async fn resend_delivery(
    state: &AppState,
    actor: &str,
    slug: &LeagueSlug,
    id: i64,
) -> Result<(), EngineError> {
    let league = league_of(state, slug).await?;
    if !sql::leagues::retry_delivery(&state.db, league.id, id).await? {
        return Err(EngineError::not_found(
            Code::DeliveryNotFound,
            format!("league {slug} has no given-up delivery {id}"),
        ));
    }
    audit::record(
        state,
        actor,
        "league.delivery.resend",
        &format!("league {slug}"),
        json!({"delivery": id}),
    )
    .await;
    Ok(())
}

/// Deletes a league.
pub async fn delete_league(
    state: &AppState,
    actor: &str,
    slug: &LeagueSlug,
) -> Result<(), EngineError> {
    let league = league_of(state, slug).await?;
    sql::leagues::delete_league(&state.db, league.id).await?;
    changed(state, slug).await?;
    let (redis, keys) = (state.redis.clone(), state.redis.keys().league(league.id));
    tokio::spawn(async move {
        if let Err(err) = redis.unlink_league(&keys).await {
            tracing::warn!(error = %err, "failed to delete a deleted league's Redis keys");
        }
    });
    audit::record(
        state,
        actor,
        "league.delete",
        &format!("league {slug}"),
        json!({}),
    )
    .await;
    Ok(())
}
