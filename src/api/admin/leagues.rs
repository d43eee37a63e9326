//! League administration.

use actix_web::{HttpResponse, delete, get, patch, post, web};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::engine::league_close;

use super::nullable;
use crate::api::auth::Admin;
use crate::api::leagues::league_slug;
use crate::domain::code::Code;
use crate::domain::ids::LeagueSlug;
use crate::domain::league::{
    League, LeagueSettings, Reward, Season, Tier, limit_pers, parse_limit, parse_ratio,
    parse_season,
};
use crate::domain::period::{Period, parse_timezone};
use crate::domain::webhook::PREVIOUS_SECRET_GRACE;
use crate::engine::leagues as engine;
use crate::engine::state::AppState;
use crate::error::ApiError;

/// One tier: the share of a bracket promoted and demoted at each close (0 to 1, up to
/// three decimals).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TierSettings {
    pub name: String,
    pub promote: f64,
    pub demote: f64,
}

/// What players of `tier` win for final ranks `ranks[0]..=ranks[1]` of their bracket.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RewardSettings {
    pub tier: String,
    pub ranks: [i64; 2],
    pub reward: String,
}

/// A score limit: at most `limit` score writes per `per` (`player`, `ip`, or both) in
/// each `window` (`second` … `month`, in the league's timezone, or `rolling:<n><unit>`).
/// Limits take effect at once; a refused write is a 429 `rate_limited`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"name": "ten a minute", "per": ["player"], "window": "minute", "limit": 10}))]
pub struct ScoreLimit {
    /// Default `limit <n>`.
    #[serde(default)]
    pub name: String,
    pub per: Vec<String>,
    pub window: String,
    pub limit: i64,
}

/// A league's settings; on create every field but `slug`, `title` and `tiers` has a
/// default, on update every field is optional.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"slug": "arena", "title": "Arena",
    "tiers": [{"name": "bronze", "promote": 0.2, "demote": 0},
        {"name": "silver", "promote": 0.15, "demote": 0.15},
        {"name": "gold", "promote": 0, "demote": 0.2}],
    "bracket_size": 50, "season": "week", "timezone": "UTC",
    "rewards": [{"tier": "gold", "ranks": [1, 3], "reward": "crown"}], "webhook_url": null}))]
pub struct LeagueRequest {
    /// Create only.
    pub slug: Option<String>,
    pub title: Option<String>,
    /// Lowest first; the lowest demotes nobody, the highest promotes nobody.
    pub tiers: Option<Vec<TierSettings>>,
    /// Players per bracket, 2 to 10,000; default 50.
    pub bracket_size: Option<i64>,
    /// `day`, `week` (default) or `month`.
    pub season: Option<String>,
    /// IANA name, default UTC: seasons are cut in it.
    pub timezone: Option<String>,
    pub rewards: Option<Vec<RewardSettings>>,
    /// Receives one signed POST per season close; `null` for none.
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    pub webhook_url: Option<Option<String>>,
    /// At most 5; replaces the list.
    pub score_limits: Option<Vec<ScoreLimit>>,
}

impl LeagueRequest {
    fn apply(&self, s: &mut LeagueSettings) -> Result<(), ApiError> {
        if let Some(title) = &self.title {
            s.title = title.clone();
        }
        if let Some(tiers) = &self.tiers {
            s.tiers = tiers
                .iter()
                .map(|t| {
                    Ok(Tier {
                        name: t.name.clone(),
                        promote: parse_ratio(t.promote, "promote")?,
                        demote: parse_ratio(t.demote, "demote")?,
                    })
                })
                .collect::<Result<_, ApiError>>()?;
        }
        if let Some(n) = self.bracket_size {
            s.bracket_size = n;
        }
        if let Some(season) = &self.season {
            s.season = parse_season(season)?;
        }
        if let Some(tz) = &self.timezone {
            s.timezone = parse_timezone(tz)?;
        }
        if let Some(rewards) = &self.rewards {
            s.rewards = rewards
                .iter()
                .map(|r| Reward {
                    tier: r.tier.clone(),
                    first: r.ranks[0],
                    last: r.ranks[1],
                    reward: r.reward.clone(),
                })
                .collect();
        }
        if let Some(url) = &self.webhook_url {
            s.webhook_url = url.clone();
        }
        if let Some(limits) = &self.score_limits {
            s.limits = limits
                .iter()
                .enumerate()
                .map(|(i, l)| {
                    let id = i as i64 + 1;
                    let name = if l.name.is_empty() {
                        format!("limit {id}")
                    } else {
                        l.name.clone()
                    };
                    parse_limit(id, &name, &l.per, &l.window, l.limit)
                })
                .collect::<Result<_, _>>()?;
        }
        Ok(())
    }
}

/// The league's latest season, as SQL records it.
#[derive(Debug, Serialize, ToSchema)]
pub struct SeasonInfo {
    /// 1, 2, …
    pub season: i64,
    pub starts_at: DateTime<Utc>,
    /// When it ends (or ended, when closed by hand).
    pub ends_at: DateTime<Utc>,
    pub closed: bool,
}

/// A league.
#[derive(Debug, Serialize, ToSchema)]
pub struct LeagueResponse {
    pub slug: String,
    pub title: String,
    pub tiers: Vec<TierSettings>,
    pub bracket_size: i64,
    pub season: String,
    pub timezone: String,
    pub rewards: Vec<RewardSettings>,
    pub webhook_url: Option<String>,
    /// Key of the HMAC-SHA256 signatures of webhook deliveries.
    pub webhook_secret: String,
    /// Until when deliveries also carry a signature with the secret the last rotation
    /// replaced (a day after it); null when none does.
    pub previous_secret_until: Option<DateTime<Utc>>,
    pub score_limits: Vec<ScoreLimit>,
    /// Null until the league's first season is recorded.
    pub current_season: Option<SeasonInfo>,
}

impl LeagueResponse {
    fn of(league: &League, season: Option<Season>) -> Result<Self, ApiError> {
        let s = &league.settings;
        Ok(Self {
            slug: league.slug.to_string(),
            title: s.title.clone(),
            tiers: s
                .tiers
                .iter()
                .map(|t| TierSettings {
                    name: t.name.clone(),
                    promote: t.promote.as_f64(),
                    demote: t.demote.as_f64(),
                })
                .collect(),
            bracket_size: s.bracket_size,
            season: s.season.as_str().to_owned(),
            timezone: s.timezone.name().to_owned(),
            rewards: s
                .rewards
                .iter()
                .map(|r| RewardSettings {
                    tier: r.tier.clone(),
                    ranks: [r.first, r.last],
                    reward: r.reward.clone(),
                })
                .collect(),
            webhook_url: s.webhook_url.clone(),
            webhook_secret: league.webhook_secret.clone(),
            previous_secret_until: league
                .previous_secret
                .as_ref()
                .map(|(_, at)| *at + PREVIOUS_SECRET_GRACE)
                .filter(|until| *until > Utc::now()),
            score_limits: s
                .limits
                .iter()
                .map(|r| ScoreLimit {
                    name: r.spec.name.clone(),
                    per: limit_pers(r).into_iter().map(str::to_owned).collect(),
                    window: r.spec.window.code(),
                    limit: r.spec.limit,
                })
                .collect(),
            current_season: season.map(|row| SeasonInfo {
                season: row.number,
                starts_at: row.starts_at,
                ends_at: row.ends_at,
                closed: row.closed,
            }),
        })
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct LeaguesResponse {
    pub leagues: Vec<LeagueResponse>,
}

/// Creates a league.
#[utoipa::path(post, path = "/api/v1/admin/leagues", tag = "leagues", request_body = LeagueRequest,
    responses(
        (status = 201, body = LeagueResponse),
        (status = 409, description = "league_exists", body = crate::api::ErrorBody),
        (status = 422, description = "invalid_league_slug, invalid_title, invalid_tiers, invalid_ratio (outside [0, 1], promote + demote > 1, the lowest tier demoting or the highest promoting), invalid_bracket_size (below 2), invalid_season, invalid_timezone, invalid_reward, unknown_tier (a reward's), invalid_webhook (also a literal loopback, private, link-local or unspecified address unless OVATION_WEBHOOK_ALLOW_PRIVATE); a score limit's invalid_dimension, invalid_window, invalid_limit, invalid_name, empty_dimensions, too_many_rules", body = crate::api::ErrorBody),
    ))]
#[post("/leagues")]
pub async fn create_league(
    state: web::Data<AppState>,
    Admin(caller): Admin,
    body: web::Json<LeagueRequest>,
) -> Result<HttpResponse, ApiError> {
    let slug = LeagueSlug::parse(body.slug.as_deref().unwrap_or(""))?;
    caller.reach_league(&slug)?;
    let title = body
        .title
        .clone()
        .ok_or_else(|| ApiError::invalid(Code::InvalidTitle, "title is required"))?;
    if body.tiers.is_none() {
        return Err(ApiError::invalid(Code::InvalidTiers, "tiers are required"));
    }
    let mut settings = LeagueSettings {
        title,
        tiers: Vec::new(),
        bracket_size: 50,
        season: Period::Week,
        timezone: chrono_tz::Tz::UTC,
        rewards: Vec::new(),
        webhook_url: None,
        limits: Vec::new(),
    };
    body.apply(&mut settings)?;
    let league = engine::create_league(&state, &caller.actor, slug, settings).await?;
    let season = engine::latest_season(&state, &league).await?;
    Ok(HttpResponse::Created().json(LeagueResponse::of(&league, season)?))
}

/// Every league the key may reach.
#[utoipa::path(get, path = "/api/v1/admin/leagues", tag = "leagues", responses((status = 200, body = LeaguesResponse)))]
#[get("/leagues")]
pub async fn list_leagues(
    state: web::Data<AppState>,
    Admin(caller): Admin,
) -> Result<HttpResponse, ApiError> {
    let mut leagues = Vec::new();
    for league in engine::leagues(&state).await? {
        if !caller.reach.league(&league.slug) {
            continue;
        }
        let season = engine::latest_season(&state, &league).await?;
        leagues.push(LeagueResponse::of(&league, season)?);
    }
    Ok(HttpResponse::Ok().json(LeaguesResponse { leagues }))
}

/// One league.
#[utoipa::path(get, path = "/api/v1/admin/leagues/{league}", tag = "leagues", params(("league" = String, Path)),
    responses((status = 200, body = LeagueResponse), (status = 404, description = "league_not_found", body = crate::api::ErrorBody)))]
#[get("/leagues/{league}")]
pub async fn get_league(
    state: web::Data<AppState>,
    _admin: Admin,
    league: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let league = engine::league_of(&state, &league_slug(&league)?).await?;
    let season = engine::latest_season(&state, &league).await?;
    Ok(HttpResponse::Ok().json(LeagueResponse::of(&league, season)?))
}

/// Changes a league's settings.
#[utoipa::path(patch, path = "/api/v1/admin/leagues/{league}", tag = "leagues", params(("league" = String, Path)),
    request_body = LeagueRequest,
    responses(
        (status = 200, body = LeagueResponse),
        (status = 404, description = "league_not_found", body = crate::api::ErrorBody),
        (status = 422, description = "as on create; slug_immutable", body = crate::api::ErrorBody),
    ))]
#[patch("/leagues/{league}")]
pub async fn update_league(
    state: web::Data<AppState>,
    Admin(caller): Admin,
    league: web::Path<String>,
    body: web::Json<LeagueRequest>,
) -> Result<HttpResponse, ApiError> {
    let slug = league_slug(&league)?;
    if body.slug.as_deref().is_some_and(|s| s != slug.as_str()) {
        return Err(ApiError::invalid(
            Code::SlugImmutable,
            "a league's slug cannot change",
        ));
    }
    let mut settings = engine::league_of(&state, &slug).await?.settings;
    body.apply(&mut settings)?;
    let league = engine::update_league(&state, &caller.actor, &slug, settings).await?;
    let season = engine::latest_season(&state, &league).await?;
    Ok(HttpResponse::Ok().json(LeagueResponse::of(&league, season)?))
}

/// Deletes a league.
#[utoipa::path(delete, path = "/api/v1/admin/leagues/{league}", tag = "leagues", params(("league" = String, Path)),
    responses((status = 204), (status = 404, description = "league_not_found", body = crate::api::ErrorBody)))]
#[delete("/leagues/{league}")]
pub async fn delete_league(
    state: web::Data<AppState>,
    Admin(caller): Admin,
    league: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    engine::delete_league(&state, &caller.actor, &league_slug(&league)?).await?;
    Ok(HttpResponse::NoContent().finish())
}

/// Replaces the league's webhook secret with a new one, in the answer. For a day,
/// deliveries carry a signature with the old secret too (`t=…,v1=<new>,v1=<old>`), so a
/// receiver can switch without refusing any.
#[utoipa::path(post, path = "/api/v1/admin/leagues/{league}/webhook-secret", tag = "leagues",
    params(("league" = String, Path)),
    responses(
        (status = 200, body = LeagueResponse),
        (status = 404, description = "league_not_found", body = crate::api::ErrorBody),
    ))]
#[post("/leagues/{league}/webhook-secret")]
pub async fn rotate_webhook_secret(
    state: web::Data<AppState>,
    Admin(caller): Admin,
    league: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let slug = league_slug(&league)?;
    let league = engine::rotate_webhook_secret(&state, &caller.actor, &slug).await?;
    let season = engine::latest_season(&state, &league).await?;
    Ok(HttpResponse::Ok().json(LeagueResponse::of(&league, season)?))
}

/// `?dry_run=true` previews.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
pub struct CloseQuery {
    pub dry_run: Option<bool>,
}

/// Closes the league's current season now (the next one starts at once), or with
/// `dry_run=true` answers what that close would do, changing nothing. A close left
/// half-way by a crash is finished first.
#[utoipa::path(post, path = "/api/v1/admin/leagues/{league}/close", tag = "leagues",
    params(("league" = String, Path), CloseQuery),
    responses(
        (status = 200, body = CloseReport),
        (status = 404, description = "league_not_found", body = crate::api::ErrorBody),
        (status = 409, description = "already_closing: another close of the league is running", body = crate::api::ErrorBody),
    ))]
#[post("/leagues/{league}/close")]
pub async fn close_league(
    state: web::Data<AppState>,
    Admin(caller): Admin,
    league: web::Path<String>,
    query: web::Query<CloseQuery>,
) -> Result<HttpResponse, ApiError> {
    let slug = league_slug(&league)?;
    let report =
        engine::close_league(&state, &caller.actor, &slug, query.dry_run.unwrap_or(false)).await?;
    Ok(HttpResponse::Ok().json(CloseReport::from(report)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::score::Milli;

    #[test]
    fn ratios_arrive_as_exact_thousandths() {
        let body: LeagueRequest = serde_json::from_value(serde_json::json!({
            "tiers": [{"name": "a", "promote": 0.155, "demote": 0}],
        }))
        .unwrap();
        let mut s = LeagueSettings {
            title: "t".into(),
            tiers: Vec::new(),
            bracket_size: 2,
            season: Period::Day,
            timezone: chrono_tz::Tz::UTC,
            rewards: Vec::new(),
            webhook_url: None,
            limits: Vec::new(),
        };
        body.apply(&mut s).unwrap();
        assert_eq!(s.tiers[0].promote, Milli::from_thousandths(155));
    }
}

/// One player moved by a close.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct Move {
    pub player: String,
    pub bracket: String,
    pub rank: i64,
    pub from: String,
    pub to: String,
}

impl From<league_close::Move> for Move {
    fn from(v: league_close::Move) -> Self {
        Self {
            player: v.player,
            bracket: v.bracket,
            rank: v.rank,
            from: v.from,
            to: v.to,
        }
    }
}

/// One reward given by a close.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct Given {
    pub player: String,
    pub bracket: String,
    pub rank: i64,
    pub reward: String,
}

impl From<league_close::Given> for Given {
    fn from(v: league_close::Given) -> Self {
        Self {
            player: v.player,
            bracket: v.bracket,
            rank: v.rank,
            reward: v.reward,
        }
    }
}

/// What a season's close does (or, for a dry run, would do now).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
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

impl From<league_close::CloseReport> for CloseReport {
    fn from(v: league_close::CloseReport) -> Self {
        Self {
            league: v.league,
            season: v.season,
            dry_run: v.dry_run,
            players: v.players,
            brackets: v.brackets,
            promotions: v.promotions.into_iter().map(Into::into).collect(),
            demotions: v.demotions.into_iter().map(Into::into).collect(),
            rewards: v.rewards.into_iter().map(Into::into).collect(),
        }
    }
}
