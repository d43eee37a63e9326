//! League rows: settings, with tiers and rewards as JSON.

use chrono::Utc;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, Set,
};
use serde::{Deserialize, Serialize};

use super::entities::league;
use super::{SqlError, to_naive};
use crate::domain::ids::LeagueSlug;
use crate::domain::league::{League, LeagueSettings, Reward, Tier, parse_season};
use crate::domain::period::parse_timezone;
use crate::domain::score::Milli;

#[derive(Serialize, Deserialize)]
struct TierRow {
    name: String,
    promote: i64,
    demote: i64,
}

#[derive(Serialize, Deserialize)]
struct RewardRow {
    tier: String,
    first: i64,
    last: i64,
    reward: String,
}

fn to_domain(row: league::Model) -> Result<League, SqlError> {
    let corrupt = |what: &str, e: String| {
        SqlError::Corrupt(format!("league {} has a bad {what}: {e}", row.id))
    };
    let tiers: Vec<TierRow> =
        serde_json::from_str(&row.tiers).map_err(|e| corrupt("tiers", e.to_string()))?;
    let rewards: Vec<RewardRow> =
        serde_json::from_str(&row.rewards).map_err(|e| corrupt("rewards", e.to_string()))?;
    Ok(League {
        id: row.id,
        slug: LeagueSlug::parse(&row.slug).map_err(|e| corrupt("slug", e.message))?,
        settings: LeagueSettings {
            title: row.title,
            tiers: tiers
                .into_iter()
                .map(|t| Tier {
                    name: t.name,
                    promote: Milli::from_thousandths(t.promote),
                    demote: Milli::from_thousandths(t.demote),
                })
                .collect(),
            bracket_size: row.bracket_size,
            season: parse_season(&row.season).map_err(|e| corrupt("season", e.message))?,
            timezone: parse_timezone(&row.timezone).map_err(|e| corrupt("timezone", e.message))?,
            rewards: rewards
                .into_iter()
                .map(|r| Reward {
                    tier: r.tier,
                    first: r.first,
                    last: r.last,
                    reward: r.reward,
                })
                .collect(),
            webhook_url: row.webhook_url,
        },
        webhook_secret: row.webhook_secret,
    })
}

fn settings_columns(model: &mut league::ActiveModel, s: &LeagueSettings) {
    let tiers: Vec<TierRow> = s
        .tiers
        .iter()
        .map(|t| TierRow {
            name: t.name.clone(),
            promote: t.promote.thousandths(),
            demote: t.demote.thousandths(),
        })
        .collect();
    let rewards: Vec<RewardRow> = s
        .rewards
        .iter()
        .map(|r| RewardRow {
            tier: r.tier.clone(),
            first: r.first,
            last: r.last,
            reward: r.reward.clone(),
        })
        .collect();
    model.title = Set(s.title.clone());
    model.tiers = Set(serde_json::to_string(&tiers).unwrap_or_default());
    model.bracket_size = Set(s.bracket_size);
    model.season = Set(s.season.as_str().to_owned());
    model.timezone = Set(s.timezone.name().to_owned());
    model.rewards = Set(serde_json::to_string(&rewards).unwrap_or_default());
    model.webhook_url = Set(s.webhook_url.clone());
    model.updated_at = Set(to_naive(Utc::now()));
}

/// Every league, by slug.
pub async fn list_leagues(db: &impl ConnectionTrait) -> Result<Vec<League>, SqlError> {
    league::Entity::find()
        .order_by_asc(league::Column::Slug)
        .all(db)
        .await?
        .into_iter()
        .map(to_domain)
        .collect()
}

/// The league with this slug, if any.
pub async fn find_league(
    db: &impl ConnectionTrait,
    slug: &LeagueSlug,
) -> Result<Option<League>, SqlError> {
    league::Entity::find()
        .filter(league::Column::Slug.eq(slug.as_str()))
        .one(db)
        .await?
        .map(to_domain)
        .transpose()
}

/// Creates a league with its webhook secret; a taken slug is a `Conflict`.
pub async fn insert_league(
    db: &impl ConnectionTrait,
    slug: &LeagueSlug,
    settings: &LeagueSettings,
    webhook_secret: &str,
) -> Result<League, SqlError> {
    let now = to_naive(Utc::now());
    let mut model = league::ActiveModel {
        slug: Set(slug.as_str().to_owned()),
        webhook_secret: Set(webhook_secret.to_owned()),
        created_at: Set(now),
        ..Default::default()
    };
    settings_columns(&mut model, settings);
    let row = model.insert(db).await.map_err(SqlError::from_write)?;
    to_domain(row)
}

/// Saves a league's settings.
pub async fn update_league(db: &impl ConnectionTrait, league: &League) -> Result<(), SqlError> {
    let mut model = league::ActiveModel {
        id: Set(league.id),
        ..Default::default()
    };
    settings_columns(&mut model, &league.settings);
    model.update(db).await.map_err(SqlError::from_write)?;
    Ok(())
}

/// Deletes a league.
pub async fn delete_league(db: &impl ConnectionTrait, id: i64) -> Result<(), SqlError> {
    league::Entity::delete_by_id(id).exec(db).await?;
    Ok(())
}
