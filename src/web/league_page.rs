//! The public page of a league bracket, `/l/{league}/{bracket}`: its players best first
//! with their nickname, score and zone, refreshed every few seconds with htmx (the
//! `/standings` block), on reload without it. No key is needed: a bracket's standings are
//! what its players are shown in the game. What an anonymous visitor costs is bounded:
//! the page and the block come from the read cache (one rendering per bracket and
//! language for every visitor), and it shows at most [`NICKNAME_MAX`] characters of a
//! nickname and an avatar only when its URL is at most [`AVATAR_SHOWN_MAX`] bytes.

use actix_web::http::Method;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;

use super::Router;
use super::admin::is_htmx;
use crate::domain::ids::LeagueSlug;
use crate::engine::league_play::{self, BracketStandings, NICKNAME_MAX};
use crate::engine::state::AppState;
use crate::error::PageError;
use crate::i18n::Lang;

/// Seconds between two refreshes of the standings.
pub const REFRESH_S: u32 = 5;

/// The page's routes, relative to `/l`.
pub fn routes(r: &mut impl Router) {
    r.add(Method::GET, "/{league}/{bracket}", get_page);
    r.add(Method::GET, "/{league}/{bracket}/standings", get_page);
}

#[derive(Template)]
#[template(path = "public/league.html")]
struct LeaguePage {
    l: Lang,
    /// The layout's; the page has no form.
    csrf: String,
    flash: Option<String>,
    title: String,
    slug: String,
    /// (tag, name, selected)
    langs: Vec<(&'static str, &'static str, bool)>,
    here: String,
    refresh_s: u32,
    b: BracketStandings,
}

#[derive(Template)]
#[template(path = "public/league.html", block = "standings")]
struct StandingsBlock {
    l: Lang,
    b: BracketStandings,
}

/// The longest avatar URL the page shows, in bytes; a longer one is left out.
pub const AVATAR_SHOWN_MAX: usize = 512;

/// The profile fields the page shows of an entry: the nickname cut to
/// [`NICKNAME_MAX`] characters (profiles kept from before that bound), the avatar only
/// when its URL is short.
fn shown(mut b: BracketStandings) -> BracketStandings {
    for e in &mut b.entries {
        if let Some(n) = &mut e.nickname
            && let Some((cut, _)) = n.char_indices().nth(NICKNAME_MAX)
        {
            n.truncate(cut);
        }
        e.avatar = e.avatar.take().filter(|a| a.len() <= AVATAR_SHOWN_MAX);
    }
    b
}

async fn get_page(
    state: web::Data<AppState>,
    req: HttpRequest,
    l: Lang,
    path: web::Path<(String, String)>,
) -> Result<HttpResponse, PageError> {
    let (league, bracket) = path.into_inner();
    let slug = LeagueSlug::parse(&league)
        .map_err(|_| PageError::NotFound(format!("no league {league:?}")))?;
    let config = league_play::league(&state, &slug)?;
    let block = is_htmx(&req) || req.path().ends_with("/standings");
    let here = req.path().to_owned();
    // The league id (not the slug) keys the cache, so a re-created league starts afresh.
    let key = format!(
        "league:{}:{bracket}:{}:{}",
        config.league.id,
        l.tag(),
        if block { "block" } else { "page" }
    );
    let body = state
        .reads
        .get_or_make(key, || async {
            let b = shown(league_play::bracket(&state, &slug, &bracket, None).await?);
            let rendered = if block {
                StandingsBlock { l, b }.render()
            } else {
                LeaguePage {
                    l,
                    csrf: String::new(),
                    flash: None,
                    title: config.league.settings.title.clone(),
                    slug: slug.to_string(),
                    langs: Lang::EVERY
                        .iter()
                        .map(|o| (o.tag(), o.name(), *o == l))
                        .collect(),
                    here,
                    refresh_s: REFRESH_S,
                    b,
                }
                .render()
            };
            Ok(rendered
                .map_err(|e| anyhow::anyhow!("failed to render a league page: {e}"))?
                .into())
        })
        .await?;
    Ok(HttpResponse::Ok()
        .content_type("text/html; charset=utf-8")
        .body(body))
}
