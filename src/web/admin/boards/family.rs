//! A family's page: its live instances, most recently written first, searched by name
//! and paged, each opening its own live view.

use std::sync::Arc;

use actix_web::HttpResponse;
use askama::Template;
use chrono::Utc;
use serde::Deserialize;

use crate::engine::boards;
use crate::engine::config::BoardConfig;
use crate::engine::error::EngineError;
use crate::engine::state::AppState;
use crate::error::PageError;
use crate::i18n::Lang;
use crate::web::admin::{Chrome, html};

/// Instances a page of the family's list shows.
const PAGE_LEN: i64 = 50;

#[derive(Debug, Default, Deserialize)]
pub struct FamilyQuery {
    /// Only instances whose name contains this.
    search: Option<String>,
    /// Where the page starts: the listing's `next_cursor`.
    cursor: Option<String>,
}

struct InstanceRow {
    /// `<slug>:<instance>`, what its live view's path names.
    name: String,
    instance: String,
    last_write: String,
    members: i64,
}

#[derive(Template)]
#[template(path = "admin/boards/family.html")]
struct FamilyPage {
    l: Lang,
    user: String,
    csrf: String,
    flash: Option<String>,
    slug: String,
    title: String,
    public: bool,
    /// "one board per room, each gone after …".
    lifetime: String,
    search: String,
    /// How many instances are live, or match the search.
    total: String,
    /// What is wrong with the search, instead of rows.
    error: Option<String>,
    rows: Vec<InstanceRow>,
    /// The next page's cursor.
    next: Option<String>,
}

/// The page of `family` that `query` selects.
pub(super) async fn family_page(
    state: &AppState,
    chrome: Chrome,
    family: Arc<BoardConfig>,
    query: FamilyQuery,
) -> Result<HttpResponse, PageError> {
    let l = chrome.l;
    let settings = &family.board.settings;
    let tz = settings.timezone;
    let now = Utc::now();
    let search = query.search.filter(|s| !s.trim().is_empty());
    let cursor = query.cursor.filter(|c| !c.is_empty());
    let listed = boards::instances(
        state,
        &family,
        PAGE_LEN,
        cursor.as_deref(),
        search.as_deref().map(str::trim),
    )
    .await;
    let (page, error) = match listed {
        Ok(page) => (Some(page), None),
        Err(err @ EngineError::Invalid { .. }) => (None, Some(err.to_string())),
        Err(err) => return Err(err.into()),
    };
    let total = page.as_ref().map_or(0, |p| p.total);
    let slug = family.board.slug.to_string();
    html(&FamilyPage {
        l,
        user: chrome.user,
        csrf: chrome.csrf,
        flash: chrome.flash,
        title: settings.title.clone(),
        public: settings.public_page && settings.instances.is_some_and(|i| i.pages),
        lifetime: l.tr(
            "board-family-fixed",
            &[(
                "lifetime",
                l.lifetime(settings.instances.map_or(0, |i| i.ttl_s)).into(),
            )],
        ),
        total: l.tr(
            if search.is_some() {
                "family-matching"
            } else {
                "family-live"
            },
            &[
                ("count", total.into()),
                ("shown", l.number(total as f64, 0).into()),
                ("budget", l.number(boards::SEARCH_BUDGET as f64, 0).into()),
            ],
        ),
        search: search.unwrap_or_default(),
        error,
        rows: page
            .as_ref()
            .map(|p| {
                p.instances
                    .iter()
                    .map(|i| InstanceRow {
                        name: format!("{slug}:{}", i.instance),
                        instance: i.instance.clone(),
                        last_write: format!("{} {}", l.when(i.last_write_at, tz, now), l.zone(tz)),
                        members: i.total_members,
                    })
                    .collect()
            })
            .unwrap_or_default(),
        next: page.and_then(|p| p.next_cursor),
        slug,
    })
}
