//! Boards in the dashboard: the list (here), the create/edit form and deletion
//! (`form`), the live view with its charts (`live`), a family's live instances
//! (`family`), CSV export of a ranking (`export`), revocations of a voter's votes
//! (`revocations`), the review queue of held votes (`held`), and the board's webhooks (`webhooks`).

mod export;
mod family;
mod form;
mod held;
mod live;
mod revocations;
mod webhooks;

use actix_session::Session;
use actix_web::http::Method;
use actix_web::{HttpResponse, web};
use askama::Template;
use chrono::Utc;

use crate::domain::code::Code;
use crate::domain::ids::BoardSlug;
use crate::engine::activity;
use crate::engine::admin as engine;
use crate::engine::boards::{self, BoardRef};
use crate::engine::config::BoardConfig;
use crate::engine::state::AppState;
use crate::error::PageError;
use crate::i18n::Lang;
use crate::web::Router;
use crate::web::admin::{Chrome, html};
use crate::web::session::AdminUser;

pub fn routes(r: &mut impl Router) {
    r.add(Method::GET, "/boards", list_boards);
    r.add(Method::GET, "/boards/new", form::new_board);
    r.add(Method::POST, "/boards", form::create_board);
    r.add(Method::GET, "/boards/{board}", live::get_board);
    r.add(Method::GET, "/boards/{board}/live", live::get_live);
    r.add(Method::GET, "/boards/{board}/stream", live::stream_live);
    r.add(
        Method::GET,
        "/boards/{board}/export.csv",
        export::export_ranking,
    );
    r.add(Method::GET, "/boards/{board}/edit", form::edit_board);
    r.add(Method::POST, "/boards/{board}", form::update_board);
    r.add(Method::POST, "/boards/{board}/delete", form::delete_board);
    r.add(Method::POST, "/boards/{board}/archive", form::archive_board);
    r.add(Method::GET, "/boards/{board}/held", held::get_held);
    r.add(Method::POST, "/boards/{board}/held", held::review_held);
    r.add(
        Method::GET,
        "/boards/{board}/revocations",
        revocations::get_revocations,
    );
    r.add(
        Method::POST,
        "/boards/{board}/revocations",
        revocations::create_revocation,
    );
    r.add(
        Method::GET,
        "/boards/{board}/webhooks",
        webhooks::get_webhooks,
    );
    r.add(
        Method::POST,
        "/boards/{board}/webhooks",
        webhooks::create_webhook,
    );
    r.add(
        Method::POST,
        "/boards/{board}/webhooks/{id}/test",
        webhooks::test_webhook,
    );
    r.add(
        Method::POST,
        "/boards/{board}/webhooks/{id}/delete",
        webhooks::delete_webhook,
    );
}

/// The board named in a dashboard path, as a whole (a family's own settings, members
/// and rules too).
pub fn board(state: &AppState, raw: &str) -> Result<std::sync::Arc<BoardConfig>, PageError> {
    let slug = BoardSlug::parse(raw).map_err(|e| PageError::NotFound(e.message))?;
    Ok(engine::board_of(state, &slug)?)
}

/// The board whose rankings a dashboard path names: a plain board, or an instance of a
/// family (`<slug>:<instance>`).
pub fn ranked_board(state: &AppState, raw: &str) -> Result<BoardRef, PageError> {
    Ok(boards::find(state, &boards::parse_name(raw)?)?)
}

struct BoardRow {
    slug: String,
    title: String,
    status: &'static str,
    public: bool,
    votes_today: i64,
    periods: String,
}

#[derive(Template)]
#[template(path = "admin/boards/index.html")]
struct BoardsPage {
    l: Lang,
    user: String,
    csrf: String,
    flash: Option<String>,
    boards: Vec<BoardRow>,
}

async fn list_boards(
    state: web::Data<AppState>,
    session: Session,
    user: AdminUser,
) -> Result<HttpResponse, PageError> {
    let Chrome {
        l,
        user,
        csrf,
        flash,
    } = Chrome::of(&session, &user);
    let now = Utc::now();
    let mut boards = Vec::new();
    for config in state.config.boards() {
        let s = &config.board.settings;
        let votes_today = activity::votes_today(&state, &config, now).await?;
        boards.push(BoardRow {
            slug: config.board.slug.to_string(),
            title: s.title.clone(),
            status: match s.window_admits(now) {
                Ok(()) => "boards-status-live",
                Err(e) if e.code == Code::CampaignNotStarted => "boards-status-not-started",
                Err(_) => "boards-status-closed",
            },
            public: s.public_page,
            votes_today,
            periods: s
                .periods
                .iter()
                .map(|p| l.period("live-period", p.as_str()))
                .collect::<Vec<_>>()
                .join(l.t("list-separator").as_str()),
        });
    }
    html(&BoardsPage {
        l,
        user,
        csrf,
        flash,
        boards,
    })
}

pub(super) fn days(days: Option<i64>) -> String {
    days.map(|d| d.to_string()).unwrap_or_default()
}
