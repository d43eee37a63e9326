//! `/`: where a newcomer who opens the server's address lands: the dashboard's sign-in,
//! the API's documentation, and the public voting pages.

use actix_web::{HttpResponse, web};
use askama::Template;

use super::admin::html;
use crate::engine::state::AppState;
use crate::error::PageError;
use crate::i18n::Lang;

#[derive(Template)]
#[template(path = "home.html")]
struct HomePage {
    l: Lang,
    /// The layout's; the page has no form.
    csrf: String,
    flash: Option<String>,
    /// (slug, title) of every board with a public page.
    boards: Vec<(String, String)>,
}

pub async fn home(state: web::Data<AppState>, l: Lang) -> Result<HttpResponse, PageError> {
    let boards = state
        .config
        .boards()
        .iter()
        .filter(|b| b.board.settings.public_page)
        .map(|b| (b.board.slug.to_string(), b.board.settings.title.clone()))
        .collect();
    html(&HomePage {
        l,
        csrf: String::new(),
        flash: None,
        boards,
    })
}
