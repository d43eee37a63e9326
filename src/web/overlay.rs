//! The stream overlay `/overlay/b/{board}?period=day&top=5&theme=transparent`: a public
//! board's live top (a family's room too, `<family>:<room>`) for OBS and other stream
//! tools: no controls, large type, a transparent (or dark, or light) background. The page
//! shows the top as it is, then `static/js/overlay.js` follows the board's event stream,
//! moving rows to their new places; where the stream is refused it polls the top.

use actix_web::{HttpResponse, web};
use askama::Template;
use serde::Deserialize;

use super::admin::html;
use super::public::public_board;
use crate::engine::leaderboard;
use crate::engine::state::AppState;
use crate::error::PageError;
use crate::i18n::Lang;

/// The most entries an overlay shows.
pub const TOP_MAX: i64 = 50;
/// How many it shows unless asked.
const TOP_DEFAULT: i64 = 10;
/// How often it polls where the stream is refused, in ms.
const POLL_MS: u32 = 2000;

#[derive(Deserialize)]
pub struct OverlayQuery {
    period: Option<String>,
    top: Option<i64>,
    theme: Option<String>,
}

struct Row {
    rank: i64,
    member: String,
    name: String,
    score: String,
}

#[derive(Template)]
#[template(path = "overlay.html")]
struct Overlay {
    l: Lang,
    title: String,
    /// `transparent`, `dark` or `light`.
    theme: &'static str,
    /// The event stream and the top the script reads.
    stream: String,
    poll: String,
    poll_ms: u32,
    decimals: u32,
    rows: Vec<Row>,
}

pub async fn overlay(
    state: web::Data<AppState>,
    l: Lang,
    path: web::Path<String>,
    query: web::Query<OverlayQuery>,
) -> Result<HttpResponse, PageError> {
    let board = public_board(&state, &path, super::public::Surface::Page)?;
    let top = query.top.unwrap_or(TOP_DEFAULT);
    if !(1..=TOP_MAX).contains(&top) {
        return Err(PageError::Invalid(format!(
            "top must be a whole number from 1 to {TOP_MAX}"
        )));
    }
    let theme = match query.theme.as_deref().unwrap_or("transparent") {
        "transparent" => "transparent",
        "dark" => "dark",
        "light" => "light",
        other => {
            return Err(PageError::Invalid(format!(
                "theme must be transparent, dark or light, not {other:?}"
            )));
        }
    };
    let sel = leaderboard::select(board.clone(), query.period.as_deref(), None, None)?;
    let page = leaderboard::tops(&state, std::slice::from_ref(&sel), 0, top)
        .await?
        .remove(0);
    let settings = board.settings();
    let decimals = u32::from(settings.display_decimals.max(settings.scoring.decimals()));
    let name = board.name().to_string();
    let period = sel.bucket.period.as_str();
    html(&Overlay {
        l,
        title: settings.title.clone(),
        theme,
        stream: format!("/api/v1/boards/{name}/events?period={period}&top={top}"),
        poll: format!("/api/v1/boards/{name}/top?period={period}&limit={top}"),
        poll_ms: POLL_MS,
        decimals,
        rows: page
            .entries
            .into_iter()
            .map(|e| Row {
                rank: e.rank,
                name: e.name.unwrap_or_else(|| e.member.clone()),
                score: l.number(e.score.as_f64().unwrap_or_default(), decimals),
                member: e.member,
            })
            .collect(),
    })
}
