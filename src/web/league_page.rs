//! The public page of a league bracket, `/l/{league}/{bracket}`: its players best first
//! with their nickname, score and zone, refreshed every few seconds with htmx (the
//! `/standings` block), on reload without it. No key is needed: a bracket's standings are
//! what its players are shown in the game.

use actix_web::http::Method;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;

use super::Router;
use super::admin::{html, is_htmx};
use crate::domain::ids::LeagueSlug;
use crate::engine::league_play::{self, BracketAnswer};
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
    b: BracketAnswer,
}

#[derive(Template)]
#[template(path = "public/league.html", block = "standings")]
struct StandingsBlock {
    l: Lang,
    b: BracketAnswer,
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
    let b = league_play::bracket(&state, &slug, &bracket, None).await?;
    if is_htmx(&req) || req.path().ends_with("/standings") {
        return html(&StandingsBlock { l, b });
    }
    html(&LeaguePage {
        l,
        csrf: String::new(),
        flash: None,
        title: config.league.settings.title.clone(),
        slug: slug.to_string(),
        langs: Lang::EVERY
            .iter()
            .map(|o| (o.tag(), o.name(), *o == l))
            .collect(),
        here: req.path().to_owned(),
        refresh_s: REFRESH_S,
        b,
    })
}
