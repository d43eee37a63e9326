//! Leagues in the dashboard: the list and a form to create one; a league's page with its
//! standings by season, tier and bracket (zones marked), its settings form, its webhook
//! deliveries; the close preview, and the close itself (after a confirmation).

use std::collections::HashMap;

use actix_session::Session;
use actix_web::http::{Method, StatusCode};
use actix_web::{HttpResponse, web};
use askama::Template;
use serde::Deserialize;

use super::{Chrome, html, html_with, see_other};
use crate::domain::code::Code;
use crate::domain::ids::LeagueSlug;
use crate::domain::league::{
    League, LeagueSettings, Reward, Tier, limit_pers, parse_limit, parse_ratio, parse_season,
};
use crate::domain::period::parse_timezone;
use crate::domain::webhook::PREVIOUS_SECRET_GRACE;
use crate::engine::error::EngineError;
use crate::engine::league_close::CloseReport;
use crate::engine::league_play::{self, BracketStandings, SeasonBrackets};
use crate::engine::leagues as engine;
use crate::engine::state::AppState;
use crate::error::PageError;
use crate::i18n::Lang;
use crate::web::Router;
use crate::web::forms::CsrfForm;
use crate::web::session::{self, AdminUser};

pub fn routes(r: &mut impl Router) {
    r.add(Method::GET, "/leagues", list_leagues);
    r.add(Method::POST, "/leagues", create_league);
    r.add(Method::GET, "/leagues/{league}", league_page);
    r.add(Method::POST, "/leagues/{league}", update_league);
    r.add(Method::GET, "/leagues/{league}/preview", close_preview);
    r.add(Method::POST, "/leagues/{league}/close", close_league);
    r.add(
        Method::POST,
        "/leagues/{league}/webhook-secret",
        rotate_secret,
    );
    r.add(
        Method::POST,
        "/leagues/{league}/deliveries/{id}/resend",
        resend_delivery,
    );
}

async fn rotate_secret(
    state: web::Data<AppState>,
    session: Session,
    user: AdminUser,
    path: web::Path<String>,
    _form: CsrfForm<HashMap<String, String>>,
) -> Result<HttpResponse, PageError> {
    let slug = slug_of(&path)?;
    engine::rotate_webhook_secret(&state, &user.actor(), &slug).await?;
    session::flash(&session, &user.lang.t("flash-secret-rotated"));
    Ok(see_other(&format!("/admin/leagues/{slug}#webhook-secret")))
}

async fn resend_delivery(
    state: web::Data<AppState>,
    session: Session,
    user: AdminUser,
    path: web::Path<(String, String)>,
    _form: CsrfForm<HashMap<String, String>>,
) -> Result<HttpResponse, PageError> {
    let (league, id) = path.into_inner();
    let slug = slug_of(&league)?;
    let id: i64 = id
        .parse()
        .map_err(|_| PageError::NotFound(format!("no delivery {id:?}")))?;
    engine::resend_delivery(&state, &user.actor(), &slug, id).await?;
    session::flash(
        &session,
        &user.lang.tr("flash-delivery-resent", &[("id", id.into())]),
    );
    Ok(see_other(&format!("/admin/leagues/{slug}#deliveries")))
}

/// The settings form: tiers one per line (`name promote demote`), rewards one per line
/// (`tier first-last reward`).
#[derive(Default, Deserialize)]
struct LeagueForm {
    #[serde(default)]
    slug: String,
    title: String,
    tiers: String,
    bracket_size: String,
    season: String,
    timezone: String,
    #[serde(default)]
    rewards: String,
    #[serde(default)]
    webhook_url: String,
    /// One per line: `player 10 minute`, `player+ip 100 day`.
    #[serde(default)]
    score_limits: String,
}

impl LeagueForm {
    fn of(league: &League) -> Self {
        let s = &league.settings;
        Self {
            slug: league.slug.to_string(),
            title: s.title.clone(),
            tiers: s
                .tiers
                .iter()
                .map(|t| format!("{} {} {}", t.name, t.promote.as_f64(), t.demote.as_f64()))
                .collect::<Vec<_>>()
                .join("\n"),
            bracket_size: s.bracket_size.to_string(),
            season: s.season.as_str().to_owned(),
            timezone: s.timezone.name().to_owned(),
            rewards: s
                .rewards
                .iter()
                .map(|r| format!("{} {}-{} {}", r.tier, r.first, r.last, r.reward))
                .collect::<Vec<_>>()
                .join("\n"),
            webhook_url: s.webhook_url.clone().unwrap_or_default(),
            score_limits: s
                .limits
                .iter()
                .map(|r| {
                    let per = limit_pers(r);
                    format!(
                        "{} {} {} {}",
                        per.join("+"),
                        r.spec.limit,
                        r.spec.window.code(),
                        r.spec.name
                    )
                })
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }

    fn blank() -> Self {
        Self {
            tiers: "bronze 0.2 0\nsilver 0.15 0.15\ngold 0 0.2".to_owned(),
            bracket_size: "50".to_owned(),
            season: "week".to_owned(),
            timezone: "UTC".to_owned(),
            ..Self::default()
        }
    }

    fn settings(&self) -> Result<LeagueSettings, EngineError> {
        let bad = |code: Code, message: String| EngineError::invalid(code, message);
        let tiers = self
            .tiers
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|line| {
                let parts: Vec<&str> = line.split_whitespace().collect();
                let [name, promote, demote] = parts.as_slice() else {
                    return Err(bad(
                        Code::InvalidTiers,
                        format!("a tier is `name promote demote`, not {line:?}"),
                    ));
                };
                let ratio = |raw: &str, field: &str| {
                    raw.parse::<f64>()
                        .map_err(|_| {
                            bad(
                                Code::InvalidRatio,
                                format!("{field} {raw:?} is not a number"),
                            )
                        })
                        .and_then(|v| Ok(parse_ratio(v, field)?))
                };
                Ok(Tier {
                    name: (*name).to_owned(),
                    promote: ratio(promote, "promote")?,
                    demote: ratio(demote, "demote")?,
                })
            })
            .collect::<Result<Vec<_>, EngineError>>()?;
        let rewards = self
            .rewards
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|line| {
                let mut parts = line.split_whitespace();
                let shape = || {
                    bad(
                        Code::InvalidReward,
                        format!("a reward is `tier first-last reward`, not {line:?}"),
                    )
                };
                let tier = parts.next().ok_or_else(shape)?;
                let (first, last) = parts
                    .next()
                    .and_then(|r| r.split_once('-'))
                    .ok_or_else(shape)?;
                let reward = parts.collect::<Vec<_>>().join(" ");
                Ok(Reward {
                    tier: tier.to_owned(),
                    first: first.parse().map_err(|_| shape())?,
                    last: last.parse().map_err(|_| shape())?,
                    reward,
                })
            })
            .collect::<Result<Vec<_>, EngineError>>()?;
        let limits = self
            .score_limits
            .lines()
            .filter(|l| !l.trim().is_empty())
            .enumerate()
            .map(|(i, line)| {
                let parts: Vec<&str> = line.split_whitespace().collect();
                let shape = || {
                    bad(
                        Code::InvalidLimit,
                        format!("a score limit is `per limit window [name]`, like `player 10 minute ten a minute`, not {line:?}"),
                    )
                };
                let [per, limit, window, name @ ..] = parts.as_slice() else {
                    return Err(shape());
                };
                let per: Vec<String> = per.split('+').map(str::to_owned).collect();
                let id = i as i64 + 1;
                let name = if name.is_empty() {
                    format!("limit {id}")
                } else {
                    name.join(" ")
                };
                Ok(parse_limit(id, &name, &per, window, limit.parse().map_err(|_| shape())?)?)
            })
            .collect::<Result<Vec<_>, EngineError>>()?;
        Ok(LeagueSettings {
            limits,
            title: self.title.trim().to_owned(),
            tiers,
            bracket_size: self.bracket_size.trim().parse().map_err(|_| {
                bad(
                    Code::InvalidBracketSize,
                    "bracket size must be a whole number".into(),
                )
            })?,
            season: parse_season(self.season.trim())?,
            timezone: parse_timezone(self.timezone.trim())?,
            rewards,
            webhook_url: Some(self.webhook_url.trim().to_owned()).filter(|u| !u.is_empty()),
        })
    }
}

struct LeagueRow {
    slug: String,
    title: String,
    tiers: String,
    season: String,
    bracket_size: i64,
}

#[derive(Template)]
#[template(path = "admin/leagues/index.html")]
struct LeaguesPage {
    l: Lang,
    user: String,
    csrf: String,
    flash: Option<String>,
    leagues: Vec<LeagueRow>,
    error: Option<String>,
    form: LeagueForm,
}

async fn leagues_page(
    state: &AppState,
    chrome: Chrome,
    error: Option<String>,
    form: LeagueForm,
) -> Result<LeaguesPage, PageError> {
    let leagues = engine::leagues(state)
        .await?
        .into_iter()
        .map(|league| LeagueRow {
            tiers: league
                .settings
                .tiers
                .iter()
                .map(|t| t.name.as_str())
                .collect::<Vec<_>>()
                .join(" < "),
            season: league.settings.season.as_str().to_owned(),
            bracket_size: league.settings.bracket_size,
            title: league.settings.title,
            slug: league.slug.to_string(),
        })
        .collect();
    Ok(LeaguesPage {
        l: chrome.l,
        user: chrome.user,
        csrf: chrome.csrf,
        flash: chrome.flash,
        leagues,
        error,
        form,
    })
}

async fn list_leagues(
    state: web::Data<AppState>,
    session: Session,
    user: AdminUser,
) -> Result<HttpResponse, PageError> {
    let chrome = Chrome::of(&session, &user);
    html(&leagues_page(&state, chrome, None, LeagueForm::blank()).await?)
}

async fn create_league(
    state: web::Data<AppState>,
    session: Session,
    user: AdminUser,
    form: CsrfForm<LeagueForm>,
) -> Result<HttpResponse, PageError> {
    let form = form.0;
    let result = async {
        let slug = LeagueSlug::parse(form.slug.trim())?;
        engine::create_league(&state, &user.actor(), slug, form.settings()?).await
    }
    .await;
    match result {
        Ok(league) => Ok(see_other(&format!("/admin/leagues/{}", league.slug))),
        Err(err @ (EngineError::Invalid { .. } | EngineError::Conflict { .. })) => {
            let chrome = Chrome::of(&session, &user);
            let page = leagues_page(&state, chrome, Some(err.to_string()), form).await?;
            html_with(&page, StatusCode::UNPROCESSABLE_ENTITY)
        }
        Err(other) => Err(other.into()),
    }
}

struct SeasonLink {
    number: i64,
    closed: bool,
    ends: String,
}

struct DeliveryRow {
    id: i64,
    season: i64,
    attempts: i32,
    status: String,
    delivered: Option<String>,
    gave_up: Option<String>,
    next: String,
    error: String,
}

/// `?season=3&bracket=gold-2`.
#[derive(Deserialize)]
struct LeagueQuery {
    season: Option<i64>,
    bracket: Option<String>,
}

#[derive(Template)]
#[template(path = "admin/leagues/show.html")]
struct LeaguePage {
    l: Lang,
    user: String,
    csrf: String,
    flash: Option<String>,
    slug: String,
    title: String,
    seasons: Vec<SeasonLink>,
    standings: SeasonBrackets,
    bracket: Option<BracketStandings>,
    deliveries: Vec<DeliveryRow>,
    /// A closed season's rewards: (player, reward, handed over when, to whom).
    rewards: Vec<(String, String, Option<String>, Option<String>)>,
    webhook: Option<String>,
    /// The signing secret, and until when the one it replaced still signs too.
    secret: String,
    previous_until: Option<String>,
    error: Option<String>,
    form: LeagueForm,
}

fn slug_of(raw: &str) -> Result<LeagueSlug, PageError> {
    LeagueSlug::parse(raw).map_err(|_| PageError::NotFound(format!("no league {raw:?}")))
}

async fn show(
    state: &AppState,
    chrome: Chrome,
    slug: &LeagueSlug,
    query: &LeagueQuery,
    error: Option<String>,
    form: Option<LeagueForm>,
) -> Result<LeaguePage, PageError> {
    let league = engine::league_of(state, slug).await?;
    let standings = league_play::season_brackets(state, slug, query.season).await?;
    let time = |t: chrono::DateTime<chrono::Utc>| t.format("%Y-%m-%d %H:%M UTC").to_string();
    let rewards = engine::season_rewards(state, &league, standings.season)
        .await?
        .into_iter()
        .map(|r| (r.player, r.reward, r.delivered_at.map(time), r.delivered_to))
        .collect();
    let chosen = query.bracket.clone().or_else(|| {
        standings
            .tiers
            .first()
            .and_then(|(_, brackets)| brackets.first())
            .map(|(id, _)| id.clone())
    });
    let bracket = match chosen {
        Some(id) => Some(league_play::bracket(state, slug, &id, Some(standings.season)).await?),
        None => None,
    };
    let seasons = engine::seasons(state, &league)
        .await?
        .into_iter()
        .map(|s| SeasonLink {
            number: s.number,
            closed: s.closed,
            ends: time(s.ends_at),
        })
        .collect();
    let deliveries = engine::deliveries(state, &league)
        .await?
        .into_iter()
        .map(|(season, d)| DeliveryRow {
            id: d.id,
            season,
            attempts: d.attempts,
            status: d.last_status.map(|s| s.to_string()).unwrap_or_default(),
            delivered: d.delivered_at.map(time),
            gave_up: d.gave_up_at.map(time),
            next: time(d.next_attempt_at),
            error: d.last_error.unwrap_or_default(),
        })
        .collect();
    Ok(LeaguePage {
        l: chrome.l,
        user: chrome.user,
        csrf: chrome.csrf,
        flash: chrome.flash,
        slug: slug.to_string(),
        title: league.settings.title.clone(),
        seasons,
        standings,
        bracket,
        deliveries,
        rewards,
        webhook: league.settings.webhook_url.clone(),
        secret: league.webhook_secret.clone(),
        previous_until: league
            .previous_secret
            .as_ref()
            .map(|(_, at)| *at + PREVIOUS_SECRET_GRACE)
            .filter(|until| *until > chrono::Utc::now())
            .map(time),
        error,
        form: form.unwrap_or_else(|| LeagueForm::of(&league)),
    })
}

async fn league_page(
    state: web::Data<AppState>,
    session: Session,
    user: AdminUser,
    path: web::Path<String>,
    query: web::Query<LeagueQuery>,
) -> Result<HttpResponse, PageError> {
    let slug = slug_of(&path)?;
    let chrome = Chrome::of(&session, &user);
    html(&show(&state, chrome, &slug, &query, None, None).await?)
}

async fn update_league(
    state: web::Data<AppState>,
    session: Session,
    user: AdminUser,
    path: web::Path<String>,
    form: CsrfForm<LeagueForm>,
) -> Result<HttpResponse, PageError> {
    let slug = slug_of(&path)?;
    let form = form.0;
    let result =
        async { engine::update_league(&state, &user.actor(), &slug, form.settings()?).await }.await;
    match result {
        Ok(_) => {
            session::flash(&session, &user.lang.t("flash-league-saved"));
            Ok(see_other(&format!("/admin/leagues/{slug}")))
        }
        Err(err @ EngineError::Invalid { .. }) => {
            let chrome = Chrome::of(&session, &user);
            let query = LeagueQuery {
                season: None,
                bracket: None,
            };
            let page = show(
                &state,
                chrome,
                &slug,
                &query,
                Some(err.to_string()),
                Some(form),
            )
            .await?;
            html_with(&page, StatusCode::UNPROCESSABLE_ENTITY)
        }
        Err(other) => Err(other.into()),
    }
}

#[derive(Template)]
#[template(path = "admin/leagues/preview.html")]
struct PreviewPage {
    l: Lang,
    user: String,
    csrf: String,
    flash: Option<String>,
    title: String,
    report: CloseReport,
}

async fn close_preview(
    state: web::Data<AppState>,
    session: Session,
    user: AdminUser,
    path: web::Path<String>,
) -> Result<HttpResponse, PageError> {
    let slug = slug_of(&path)?;
    let league = engine::league_of(&state, &slug).await?;
    let report = engine::close_league(&state, &user.actor(), &slug, true).await?;
    let chrome = Chrome::of(&session, &user);
    html(&PreviewPage {
        l: chrome.l,
        user: chrome.user,
        csrf: chrome.csrf,
        flash: chrome.flash,
        title: league.settings.title,
        report,
    })
}

async fn close_league(
    state: web::Data<AppState>,
    session: Session,
    user: AdminUser,
    path: web::Path<String>,
    _form: CsrfForm<HashMap<String, String>>,
) -> Result<HttpResponse, PageError> {
    let slug = slug_of(&path)?;
    let report = engine::close_league(&state, &user.actor(), &slug, false).await?;
    session::flash(
        &session,
        &user.lang.tr(
            "flash-season-closed",
            &[
                ("season", report.season.into()),
                ("players", (report.players as i64).into()),
            ],
        ),
    );
    Ok(see_other(&format!("/admin/leagues/{slug}")))
}
