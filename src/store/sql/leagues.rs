//! League rows: settings (tiers and rewards as JSON), seasons, and what each close
//! recorded (results, rewards, players' next tiers, the webhook delivery).

use chrono::{DateTime, Utc};
use sea_orm::sea_query::{Expr, OnConflict};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter,
    QueryOrder, QuerySelect, Set,
};

use super::entities::{
    league, league_player, league_result, league_reward, league_season, webhook_delivery,
};
use super::outbox::{self, Columns};
use super::{SqlError, from_naive, to_naive};
use crate::domain::ids::LeagueSlug;
use crate::domain::league::{
    BracketRef, Delivery, League, LeagueSettings, PlayerResult, RecordedResult, RecordedReward,
    Season, SeasonRules, limits_from_json, limits_to_json, parse_season, rewards_from_json,
    rewards_to_json, tiers_from_json, tiers_to_json,
};
use crate::domain::period::parse_timezone;
use crate::domain::webhook::Outcome;

fn to_domain(row: league::Model) -> Result<League, SqlError> {
    let corrupt = |what: &str, e: String| {
        SqlError::Corrupt(format!("league {} has a bad {what}: {e}", row.id))
    };
    let tiers = tiers_from_json(&row.tiers).map_err(|e| corrupt("tiers", e))?;
    let rewards = rewards_from_json(&row.rewards).map_err(|e| corrupt("rewards", e))?;
    let limits = match row.limits.as_deref() {
        Some(text) => limits_from_json(text).map_err(|e| corrupt("limits", e))?,
        None => Vec::new(),
    };
    Ok(League {
        id: row.id,
        slug: LeagueSlug::parse(&row.slug).map_err(|e| corrupt("slug", e.message))?,
        settings: LeagueSettings {
            title: row.title,
            tiers,
            bracket_size: row.bracket_size,
            season: parse_season(&row.season).map_err(|e| corrupt("season", e.message))?,
            timezone: parse_timezone(&row.timezone).map_err(|e| corrupt("timezone", e.message))?,
            rewards,
            webhook_url: row.webhook_url,
            limits,
        },
        webhook_secret: row.webhook_secret,
        previous_secret: row
            .webhook_secret_previous
            .zip(row.webhook_secret_rotated_at.map(from_naive)),
    })
}

fn settings_columns(model: &mut league::ActiveModel, s: &LeagueSettings) {
    model.title = Set(s.title.clone());
    model.tiers = Set(tiers_to_json(&s.tiers));
    model.bracket_size = Set(s.bracket_size);
    model.season = Set(s.season.as_str().to_owned());
    model.timezone = Set(s.timezone.name().to_owned());
    model.rewards = Set(rewards_to_json(&s.rewards));
    model.webhook_url = Set(s.webhook_url.clone());
    model.limits = Set(Some(limits_to_json(&s.limits)));
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

/// Creates a league with its webhook secret and its first season (ending at
/// `first_ends_at`), in one transaction; a taken slug is a `Conflict`.
pub async fn insert_league(
    db: &DatabaseConnection,
    slug: &LeagueSlug,
    settings: &LeagueSettings,
    webhook_secret: &str,
    first_ends_at: DateTime<Utc>,
) -> Result<League, SqlError> {
    let txn = super::begin_write(db).await?;
    let started = Utc::now();
    let now = to_naive(started);
    let mut model = league::ActiveModel {
        slug: Set(slug.as_str().to_owned()),
        webhook_secret: Set(webhook_secret.to_owned()),
        created_at: Set(now),
        ..Default::default()
    };
    settings_columns(&mut model, settings);
    let row = model.insert(&txn).await.map_err(SqlError::from_write)?;
    new_season(row.id, 1, (started, first_ends_at), &settings.rules())
        .insert(&txn)
        .await?;
    txn.commit().await?;
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

/// Replaces a league's webhook secret with `secret`, keeping the one it replaces as the
/// previous secret (deliveries carry both signatures for a day).
pub async fn rotate_webhook_secret(
    db: &impl ConnectionTrait,
    league: &League,
    secret: &str,
) -> Result<(), SqlError> {
    league::ActiveModel {
        id: Set(league.id),
        webhook_secret: Set(secret.to_owned()),
        webhook_secret_previous: Set(Some(league.webhook_secret.clone())),
        webhook_secret_rotated_at: Set(Some(to_naive(Utc::now()))),
        updated_at: Set(to_naive(Utc::now())),
        ..Default::default()
    }
    .update(db)
    .await?;
    Ok(())
}

/// Deletes a league with its seasons, results, rewards, players and deliveries, in one
/// transaction.
pub async fn delete_league(db: &DatabaseConnection, id: i64) -> Result<(), SqlError> {
    let txn = super::begin_write(db).await?;
    let seasons: Vec<i64> = league_season::Entity::find()
        .filter(league_season::Column::LeagueId.eq(id))
        .all(&txn)
        .await?
        .into_iter()
        .map(|s| s.id)
        .collect();
    league_result::Entity::delete_many()
        .filter(league_result::Column::SeasonId.is_in(seasons))
        .exec(&txn)
        .await?;
    league_reward::Entity::delete_many()
        .filter(league_reward::Column::LeagueId.eq(id))
        .exec(&txn)
        .await?;
    league_player::Entity::delete_many()
        .filter(league_player::Column::LeagueId.eq(id))
        .exec(&txn)
        .await?;
    webhook_delivery::Entity::delete_many()
        .filter(webhook_delivery::Column::LeagueId.eq(id))
        .exec(&txn)
        .await?;
    league_season::Entity::delete_many()
        .filter(league_season::Column::LeagueId.eq(id))
        .exec(&txn)
        .await?;
    league::Entity::delete_by_id(id).exec(&txn).await?;
    txn.commit().await?;
    Ok(())
}

fn season_row(row: league_season::Model) -> Result<Season, SqlError> {
    Ok(Season {
        number: row.label.parse().map_err(|_| {
            SqlError::Corrupt(format!(
                "league season {} has label {:?}",
                row.id, row.label
            ))
        })?,
        id: row.id,
        starts_at: from_naive(row.starts_at),
        ends_at: from_naive(row.ends_at),
        closed: row.state == CLOSED,
        rules: row
            .rules
            .as_deref()
            .map(SeasonRules::from_json)
            .transpose()
            .map_err(|e| SqlError::Corrupt(format!("league season {} rules: {e}", row.id)))?,
    })
}

const OPEN: &str = "open";
const CLOSED: &str = "closed";

fn new_season(
    league_id: i64,
    number: i64,
    (starts_at, ends_at): (DateTime<Utc>, DateTime<Utc>),
    rules: &SeasonRules,
) -> league_season::ActiveModel {
    league_season::ActiveModel {
        rules: Set(Some(rules.to_json())),
        league_id: Set(league_id),
        label: Set(number.to_string()),
        starts_at: Set(to_naive(starts_at)),
        ends_at: Set(to_naive(ends_at)),
        state: Set(OPEN.to_owned()),
        closed_at: Set(None),
        ..Default::default()
    }
}

fn season_query(league_id: i64, number: i64) -> sea_orm::Select<league_season::Entity> {
    league_season::Entity::find()
        .filter(league_season::Column::LeagueId.eq(league_id))
        .filter(league_season::Column::Label.eq(number.to_string()))
}

/// The league's seasons, newest first (a season's row is written after its
/// predecessor's, so ids follow numbers).
pub async fn seasons(db: &impl ConnectionTrait, league_id: i64) -> Result<Vec<Season>, SqlError> {
    league_season::Entity::find()
        .filter(league_season::Column::LeagueId.eq(league_id))
        .order_by_desc(league_season::Column::Id)
        .all(db)
        .await?
        .into_iter()
        .map(season_row)
        .collect()
}

/// The league's newest season, if any.
pub async fn latest_season(
    db: &impl ConnectionTrait,
    league_id: i64,
) -> Result<Option<Season>, SqlError> {
    league_season::Entity::find()
        .filter(league_season::Column::LeagueId.eq(league_id))
        .order_by_desc(league_season::Column::Id)
        .one(db)
        .await?
        .map(season_row)
        .transpose()
}

/// Season `number` of the league, if it was recorded.
pub async fn season(
    db: &impl ConnectionTrait,
    league_id: i64,
    number: i64,
) -> Result<Option<Season>, SqlError> {
    season_query(league_id, number)
        .one(db)
        .await?
        .map(season_row)
        .transpose()
}

/// Everything a season's close records, in one transaction.
#[derive(Debug)]
pub struct CloseRecord<'a> {
    pub league_id: i64,
    pub season: i64,
    /// When the season stopped taking scores.
    pub ended_at: DateTime<Utc>,
    /// What the season ran with.
    pub rules: &'a SeasonRules,
    /// The next season's number is `season + 1`; it ends then, and runs with these.
    pub next_ends_at: DateTime<Utc>,
    pub next_rules: &'a SeasonRules,
    pub results: &'a [PlayerResult],
    /// The webhook delivery to send: URL and body.
    pub webhook: Option<(String, String)>,
}

/// Rows per multi-row insert.
const CHUNK: usize = 500;

/// Records a season's close, once: results, rewards, every player's next tier, the
/// webhook delivery, the season closed and the next one open — in one transaction keyed
/// by the season. Answers `false` (and writes nothing) when the season was closed
/// before.
pub async fn record_close(
    db: &DatabaseConnection,
    close: &CloseRecord<'_>,
) -> Result<bool, SqlError> {
    let txn = super::begin_write(db).await?;
    let now = Utc::now();
    let season_id = match season_query(close.league_id, close.season)
        .one(&txn)
        .await?
    {
        Some(row) if row.state == CLOSED => return Ok(false),
        Some(row) => row.id,
        None => {
            new_season(
                close.league_id,
                close.season,
                (close.ended_at, close.ended_at),
                close.rules,
            )
            .insert(&txn)
            .await?
            .id
        }
    };
    league_season::ActiveModel {
        id: Set(season_id),
        ends_at: Set(to_naive(close.ended_at)),
        state: Set(CLOSED.to_owned()),
        closed_at: Set(Some(to_naive(now))),
        ..Default::default()
    }
    .update(&txn)
    .await?;
    for chunk in close.results.chunks(CHUNK) {
        let results = chunk.iter().map(|r| league_result::ActiveModel {
            season_id: Set(season_id),
            player: Set(r.outcome.player.clone()),
            tier: Set(r.place.tier as i32),
            bracket: Set(r.place.number),
            rank: Set(r.outcome.rank),
            score: Set(r.score),
            zone: Set(r.outcome.zone.as_str().to_owned()),
            next_tier: Set(r.outcome.next_tier as i32),
            ..Default::default()
        });
        league_result::Entity::insert_many(results)
            .exec_without_returning(&txn)
            .await?;
        let tiers = chunk.iter().map(|r| league_player::ActiveModel {
            league_id: Set(close.league_id),
            player: Set(r.outcome.player.clone()),
            tier: Set(r.outcome.next_tier as i32),
            updated_at: Set(to_naive(now)),
            ..Default::default()
        });
        league_player::Entity::insert_many(tiers)
            .on_conflict(
                OnConflict::columns([
                    league_player::Column::LeagueId,
                    league_player::Column::Player,
                ])
                .update_columns([
                    league_player::Column::Tier,
                    league_player::Column::UpdatedAt,
                ])
                .to_owned(),
            )
            .exec_without_returning(&txn)
            .await?;
    }
    let rewards: Vec<league_reward::ActiveModel> = close
        .results
        .iter()
        .flat_map(|r| {
            r.outcome
                .rewards
                .iter()
                .map(|reward| league_reward::ActiveModel {
                    league_id: Set(close.league_id),
                    season_id: Set(season_id),
                    player: Set(r.outcome.player.clone()),
                    reward: Set(reward.clone()),
                    delivered_at: Set(None),
                    ..Default::default()
                })
        })
        .collect();
    for chunk in rewards.chunks(CHUNK) {
        league_reward::Entity::insert_many(chunk.to_vec())
            .exec_without_returning(&txn)
            .await?;
    }
    if let Some((url, body)) = &close.webhook {
        webhook_delivery::ActiveModel {
            league_id: Set(close.league_id),
            season_id: Set(season_id),
            url: Set(url.clone()),
            body: Set(body.clone()),
            attempts: Set(0),
            next_attempt_at: Set(to_naive(now)),
            delivered_at: Set(None),
            gave_up_at: Set(None),
            last_status: Set(None),
            last_error: Set(None),
            created_at: Set(to_naive(now)),
            ..Default::default()
        }
        .insert(&txn)
        .await?;
    }
    if season_query(close.league_id, close.season + 1)
        .one(&txn)
        .await?
        .is_none()
    {
        new_season(
            close.league_id,
            close.season + 1,
            (close.ended_at, close.next_ends_at),
            close.next_rules,
        )
        .insert(&txn)
        .await?;
    }
    txn.commit().await?;
    Ok(true)
}

fn recorded(row: league_result::Model) -> RecordedResult {
    RecordedResult {
        player: row.player,
        place: BracketRef {
            tier: usize::try_from(row.tier).unwrap_or(0),
            number: row.bracket,
        },
        rank: row.rank,
        score: row.score,
        zone: row.zone,
        next_tier: usize::try_from(row.next_tier).unwrap_or(0),
    }
}

/// The recorded results of one bracket of a closed season, by rank.
pub async fn bracket_results(
    db: &impl ConnectionTrait,
    season_id: i64,
    place: BracketRef,
) -> Result<Vec<RecordedResult>, SqlError> {
    Ok(league_result::Entity::find()
        .filter(league_result::Column::SeasonId.eq(season_id))
        .filter(league_result::Column::Tier.eq(i32::try_from(place.tier).unwrap_or(i32::MAX)))
        .filter(league_result::Column::Bracket.eq(place.number))
        .order_by_asc(league_result::Column::Rank)
        .all(db)
        .await?
        .into_iter()
        .map(recorded)
        .collect())
}

/// How many players each bracket of a closed season had, by tier and bracket.
pub async fn bracket_sizes(
    db: &impl ConnectionTrait,
    season_id: i64,
) -> Result<Vec<(BracketRef, i64)>, SqlError> {
    let rows: Vec<(i32, i64, i64)> = league_result::Entity::find()
        .select_only()
        .column(league_result::Column::Tier)
        .column(league_result::Column::Bracket)
        .column_as(league_result::Column::Id.count(), "players")
        .filter(league_result::Column::SeasonId.eq(season_id))
        .group_by(league_result::Column::Tier)
        .group_by(league_result::Column::Bracket)
        .order_by_asc(league_result::Column::Tier)
        .order_by_asc(league_result::Column::Bracket)
        .into_tuple()
        .all(db)
        .await?;
    Ok(rows
        .into_iter()
        .map(|(tier, number, players)| {
            let tier = usize::try_from(tier).unwrap_or(0);
            (BracketRef { tier, number }, players)
        })
        .collect())
}

/// Marks a player's rewards of the league from `seasons` (numbers) as handed over to
/// the caller `by` (a join listed them).
pub async fn rewards_delivered(
    db: &impl ConnectionTrait,
    league_id: i64,
    player: &str,
    seasons: &[i64],
    by: &str,
) -> Result<(), SqlError> {
    let labels: Vec<String> = seasons.iter().map(i64::to_string).collect();
    let season_ids: Vec<i64> = league_season::Entity::find()
        .filter(league_season::Column::LeagueId.eq(league_id))
        .filter(league_season::Column::Label.is_in(labels))
        .all(db)
        .await?
        .into_iter()
        .map(|s| s.id)
        .collect();
    league_reward::Entity::update_many()
        .col_expr(
            league_reward::Column::DeliveredAt,
            Expr::value(to_naive(Utc::now())),
        )
        .col_expr(league_reward::Column::DeliveredTo, Expr::value(by))
        .filter(league_reward::Column::LeagueId.eq(league_id))
        .filter(league_reward::Column::Player.eq(player))
        .filter(league_reward::Column::SeasonId.is_in(season_ids))
        .filter(league_reward::Column::DeliveredAt.is_null())
        .exec(db)
        .await?;
    Ok(())
}

/// Every reward of a season, in the order the close gave them.
pub async fn season_rewards(
    db: &impl ConnectionTrait,
    season_id: i64,
) -> Result<Vec<RecordedReward>, SqlError> {
    Ok(league_reward::Entity::find()
        .filter(league_reward::Column::SeasonId.eq(season_id))
        .order_by_asc(league_reward::Column::Id)
        .all(db)
        .await?
        .into_iter()
        .map(|row| RecordedReward {
            player: row.player,
            reward: row.reward,
            delivered_at: row.delivered_at.map(from_naive),
            delivered_to: row.delivered_to,
        })
        .collect())
}

fn delivery(row: webhook_delivery::Model) -> Delivery {
    Delivery {
        id: row.id,
        league_id: row.league_id,
        season_id: row.season_id,
        url: row.url,
        body: row.body,
        attempts: row.attempts,
        next_attempt_at: from_naive(row.next_attempt_at),
        created_at: from_naive(row.created_at),
        delivered_at: row.delivered_at.map(from_naive),
        gave_up_at: row.gave_up_at.map(from_naive),
        last_status: row.last_status,
        last_error: row.last_error,
    }
}

/// The outbox's columns.
const COLUMNS: Columns<webhook_delivery::Entity> = Columns {
    id: webhook_delivery::Column::Id,
    attempts: webhook_delivery::Column::Attempts,
    next_attempt_at: webhook_delivery::Column::NextAttemptAt,
    delivered_at: webhook_delivery::Column::DeliveredAt,
    gave_up_at: webhook_delivery::Column::GaveUpAt,
    last_status: webhook_delivery::Column::LastStatus,
    last_error: webhook_delivery::Column::LastError,
};

/// Deliveries neither delivered nor given up whose next attempt is due by `now`, oldest
/// first.
pub async fn due_deliveries(
    db: &impl ConnectionTrait,
    now: DateTime<Utc>,
    limit: u64,
) -> Result<Vec<Delivery>, SqlError> {
    Ok(outbox::due(db, &COLUMNS, now, limit)
        .await?
        .into_iter()
        .map(delivery)
        .collect())
}

/// Claims a due delivery for one attempt (see [`outbox::claim`]).
pub async fn claim_delivery(
    db: &impl ConnectionTrait,
    delivery: &Delivery,
    until: DateTime<Utc>,
) -> Result<bool, SqlError> {
    outbox::claim(db, &COLUMNS, delivery.id, delivery.next_attempt_at, until).await
}

/// Records one attempt and what it leaves the delivery in.
pub async fn record_attempt(
    db: &impl ConnectionTrait,
    delivery: &Delivery,
    status: Option<i32>,
    error: Option<String>,
    outcome: Outcome,
) -> Result<(), SqlError> {
    let attempt = delivery.attempts + 1;
    outbox::record(db, &COLUMNS, delivery.id, attempt, status, error, outcome).await
}

/// Makes a league's given-up delivery due now again (sent by hand from the dashboard);
/// answers whether there was one to revive.
pub async fn retry_delivery(
    db: &impl ConnectionTrait,
    league_id: i64,
    id: i64,
) -> Result<bool, SqlError> {
    let done = webhook_delivery::Entity::update_many()
        .col_expr(
            webhook_delivery::Column::GaveUpAt,
            Expr::value(Option::<sea_orm::prelude::DateTime>::None),
        )
        .col_expr(
            webhook_delivery::Column::NextAttemptAt,
            Expr::value(to_naive(Utc::now())),
        )
        .filter(webhook_delivery::Column::Id.eq(id))
        .filter(webhook_delivery::Column::LeagueId.eq(league_id))
        .filter(webhook_delivery::Column::GaveUpAt.is_not_null())
        .exec(db)
        .await?;
    Ok(done.rows_affected == 1)
}

/// A league's deliveries, newest first.
pub async fn deliveries(
    db: &impl ConnectionTrait,
    league_id: i64,
) -> Result<Vec<Delivery>, SqlError> {
    Ok(webhook_delivery::Entity::find()
        .filter(webhook_delivery::Column::LeagueId.eq(league_id))
        .order_by_desc(webhook_delivery::Column::Id)
        .all(db)
        .await?
        .into_iter()
        .map(delivery)
        .collect())
}
