//! The public voting page `/b/{board}`: members with their rank and score, a vote button
//! each, period tabs, the visitor's remaining votes and refusals shown inline.
//!
//! The visitor is a random id in the signed session cookie; the IP is the connection's
//! (or a trusted proxy's); the channel is `web`; the terminal is `mobile` or `pc` from the
//! User-Agent, so rules per channel or device apply to the page too. Without JavaScript a
//! vote is a form POST answered with a 303 back to the page; with htmx the ranking block
//! is swapped in place.

use std::collections::HashMap;
use std::sync::Arc;

use actix_session::Session;
use actix_web::http::Method;
use actix_web::http::header::USER_AGENT;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use chrono::{Duration, Utc};
use serde::Deserialize;

use super::Router;
use super::admin::{html, is_htmx, see_other};
use super::forms::CsrfForm;
use super::session::{self, csrf_token};
use crate::api::client_ip::ClientIp;
use crate::domain::auth::Scope;
use crate::domain::board::Membership;
use crate::domain::ids::{BoardSlug, Channel, MemberId, Terminal, VoterId};
use crate::domain::limit::{VoteValues, ip_subject};
use crate::engine::auth::Caller;
use crate::engine::config::BoardConfig;
use crate::engine::leaderboard::{self, MAX_LIMIT};
use crate::engine::{limits, votes};
use crate::error::{ApiError, PageError};
use crate::state::AppState;

/// The channel votes from this page count for.
pub const WEB_CHANNEL: &str = "web";

/// The voting page's routes, relative to `/b`.
pub fn routes(r: &mut impl Router) {
    r.add(Method::GET, "/{board}", get_page);
    r.add(Method::POST, "/{board}/vote", cast_vote);
}

struct MemberCard {
    id: String,
    name: String,
    image_url: Option<String>,
    rank: Option<i64>,
    score: String,
}

#[derive(Template)]
#[template(path = "public/board.html", blocks = ["board"])]
struct BoardPage {
    csrf: String,
    flash: Option<String>,
    slug: String,
    title: String,
    description: String,
    /// (period, selected)
    periods: Vec<(&'static str, bool)>,
    period: String,
    members: Vec<MemberCard>,
    quota: Vec<String>,
    notice: Option<String>,
    refused: bool,
    open: bool,
}

fn public_board(state: &AppState, raw: &str) -> Result<Arc<BoardConfig>, PageError> {
    let missing = || PageError::NotFound("there is no such voting page".into());
    let slug = BoardSlug::parse(raw).map_err(|_| missing())?;
    match state.config.board(&slug) {
        Some(board) if board.board.settings.public_page => Ok(board),
        _ => Err(missing()),
    }
}

fn terminal(req: &HttpRequest) -> &'static str {
    let ua = req
        .headers()
        .get(USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if ua.contains("Mobi") || ua.contains("Android") {
        "mobile"
    } else {
        "pc"
    }
}

#[derive(Deserialize)]
struct PageQuery {
    period: Option<String>,
}

async fn page(
    state: &AppState,
    req: &HttpRequest,
    session: &Session,
    config: Arc<BoardConfig>,
    period: Option<&str>,
    notice: Option<(String, bool)>,
) -> Result<BoardPage, PageError> {
    let settings = &config.board.settings;
    let sel = leaderboard::select(config.clone(), period.filter(|p| !p.is_empty()), None, None)?;
    let top = leaderboard::tops(&state.redis, std::slice::from_ref(&sel), 0, MAX_LIMIT)
        .await?
        .remove(0);
    let standings: HashMap<&str, (i64, String)> = top
        .entries
        .iter()
        .map(|e| (e.member.as_str(), (e.rank, e.score.to_string())))
        .collect();
    let mut members: Vec<MemberCard> = match settings.membership {
        // A closed board lists every member that takes votes, ranked ones first.
        Membership::Closed => config
            .members
            .values()
            .filter(|m| m.enabled)
            .map(|m| {
                let standing = standings.get(m.id.as_str());
                MemberCard {
                    id: m.id.to_string(),
                    name: m.name.clone(),
                    image_url: m.image_url.clone(),
                    rank: standing.map(|s| s.0),
                    score: standing.map_or_else(|| "0".to_owned(), |s| s.1.clone()),
                }
            })
            .collect(),
        Membership::Open => top
            .entries
            .iter()
            .take(100)
            .map(|e| MemberCard {
                id: e.member.clone(),
                name: e.name.clone().unwrap_or_else(|| e.member.clone()),
                image_url: e.image_url.clone(),
                rank: Some(e.rank),
                score: e.score.to_string(),
            })
            .collect(),
    };
    members.sort_by(|a, b| {
        (a.rank.unwrap_or(i64::MAX), &a.name).cmp(&(b.rank.unwrap_or(i64::MAX), &b.name))
    });

    let visitor = session::visitor_id(session);
    let values = VoteValues {
        voter: Some(visitor),
        member: None,
        channel: Some(WEB_CHANNEL.to_owned()),
        terminal: Some(terminal(req).to_owned()),
        ip: ClientIp::of(req).map(ip_subject),
    };
    let quota = limits::quota(&state.redis, &config, &values, Utc::now())
        .await?
        .into_iter()
        .filter_map(|q| {
            let remaining = q.remaining?;
            Some(format!(
                "{remaining} of {} vote(s) left {}",
                q.limit,
                match q.window.as_str() {
                    "campaign" => "in this campaign".to_owned(),
                    w if w.starts_with("rolling:") => format!("in any {}", &w[8..]),
                    w => format!("this {w}"),
                }
            ))
        })
        .collect();
    let (notice, refused) = match notice {
        Some((text, refused)) => (Some(text), refused),
        None => (None, false),
    };
    Ok(BoardPage {
        csrf: csrf_token(session),
        flash: session::take_flash(session),
        slug: config.board.slug.to_string(),
        title: settings.title.clone(),
        description: settings.description.clone(),
        periods: settings
            .periods
            .iter()
            .map(|p| (p.as_str(), *p == sel.bucket.period))
            .collect(),
        period: sel.bucket.period.as_str().to_owned(),
        members,
        quota,
        notice,
        refused,
        open: settings.window_admits(Utc::now()).is_ok(),
    })
}

async fn get_page(
    state: web::Data<AppState>,
    req: HttpRequest,
    session: Session,
    path: web::Path<String>,
    query: web::Query<PageQuery>,
) -> Result<HttpResponse, PageError> {
    let config = public_board(&state, &path)?;
    html(
        &page(
            &state,
            &req,
            &session,
            config,
            query.period.as_deref(),
            None,
        )
        .await?,
    )
}

#[derive(Deserialize)]
struct VoteForm {
    member: String,
    #[serde(default)]
    period: String,
}

/// Whether an unregistered member of an open board is already ranked (in the board's
/// default ranking, which the page shows first). The page lists such members, so a
/// visitor may vote for them; anything else would let an anonymous visitor add members.
async fn on_the_ranking(
    state: &AppState,
    config: &Arc<BoardConfig>,
    member: &MemberId,
) -> Result<bool, PageError> {
    if config.board.settings.membership == Membership::Closed {
        return Ok(false);
    }
    let sel = leaderboard::select(config.clone(), None, None, None)?;
    let standing = leaderboard::standings(&state.redis, &sel, std::slice::from_ref(member)).await?;
    Ok(standing.first().is_some_and(|s| s.rank.is_some()))
}

/// What a refused vote tells the visitor, with the local time the next vote opens.
fn refusal_text(err: &ApiError, config: &BoardConfig) -> String {
    match err {
        ApiError::RateLimited {
            retry_after_s: Some(s),
            ..
        } => {
            let opens = (Utc::now() + Duration::seconds(*s))
                .with_timezone(&config.board.settings.timezone)
                .format("%Y-%m-%d %H:%M:%S %Z");
            format!("No votes left for now: the next vote opens at {opens}.")
        }
        ApiError::RateLimited { .. } => "You have used every vote of this campaign.".to_owned(),
        other => other.to_string(),
    }
}

async fn cast_vote(
    state: web::Data<AppState>,
    req: HttpRequest,
    session: Session,
    path: web::Path<String>,
    form: CsrfForm<VoteForm>,
) -> Result<HttpResponse, PageError> {
    let config = public_board(&state, &path)?;
    let form = form.0;
    let member = MemberId::parse(&form.member).map_err(|e| PageError::Invalid(e.message))?;
    // The tab to come back to is checked before the vote counts.
    let period = leaderboard::select(
        config.clone(),
        Some(form.period.as_str()).filter(|p| !p.is_empty()),
        None,
        None,
    )?
    .bucket
    .period;
    if !config.members.contains_key(&member) && !on_the_ranking(&state, &config, &member).await? {
        return Err(PageError::NotFound(format!(
            "{member} is not on this board; vote for a member listed on the page"
        )));
    }
    let visitor = session::visitor_id(&session);
    let caller = Caller {
        scopes: vec![Scope::Vote],
        channel: Channel::parse(WEB_CHANNEL).ok(),
        actor: "public page".to_owned(),
        id: format!("visitor:{visitor}"),
    };
    let vote = votes::Vote {
        board: config.board.slug.clone(),
        member,
        voter: VoterId::parse(&visitor).ok(),
        count: 1,
        channel: None,
        terminal: Terminal::parse(terminal(&req)).ok(),
        idempotency: None,
        at: None,
        ip: ClientIp::of(&req),
        skip_limits: false,
    };
    let result = votes::cast(
        &state.config,
        &state.redis,
        state.settings.idempotency_ttl,
        &caller,
        vec![Ok(vote)],
    )
    .await?
    .pop()
    .ok_or_else(|| anyhow::anyhow!("no vote result"))?;
    let notice = match result {
        Ok(_) => ("Thanks, your vote counts.".to_owned(), false),
        // Our failures keep their own page (503, 500); the visitor's are shown inline.
        Err(
            err @ (ApiError::StoreUnavailable(_)
            | ApiError::OutcomeUnknown(_)
            | ApiError::Internal(_)),
        ) => {
            return Err(err.into());
        }
        Err(err) => (refusal_text(&err, &config), true),
    };
    if is_htmx(&req) {
        let page = page(
            &state,
            &req,
            &session,
            config,
            Some(period.as_str()),
            Some(notice),
        )
        .await?;
        return html(&page.as_board());
    }
    session::flash(&session, &notice.0);
    Ok(see_other(&format!(
        "/b/{}?period={period}",
        config.board.slug
    )))
}
