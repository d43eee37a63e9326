//! A board's review queue in the dashboard: each subject a watch flagged, with its held,
//! released and dropped votes, the members they went to and a sample of voters and
//! addresses; release or drop a subject's held votes, or one member's among them.

use actix_session::Session;
use actix_web::{HttpResponse, web};
use askama::Template;
use serde::Deserialize;

use super::board;
use crate::domain::held::{Flagged, ReviewAction, ReviewRequest};
use crate::domain::ids::MemberId;
use crate::domain::watch::Watch;
use crate::engine::held;
use crate::engine::state::AppState;
use crate::error::PageError;
use crate::i18n::Lang;
use crate::web::admin::{Chrome, html, see_other};
use crate::web::forms::CsrfForm;
use crate::web::session::{self, AdminUser};

/// A flagged subject as the page shows it.
struct Row {
    watch: i64,
    watch_name: String,
    subject: String,
    /// `dimension = value`, joined.
    values: String,
    f: Flagged,
    first: String,
    last: String,
}

impl Row {
    fn of((f, watch): (Flagged, Option<Watch>)) -> Self {
        let time = |ms: i64| {
            chrono::DateTime::from_timestamp_millis(ms)
                .unwrap_or_default()
                .format("%Y-%m-%d %H:%M:%S")
                .to_string()
        };
        let values = watch
            .as_ref()
            .and_then(|w| w.spec.values_of(&f.subject))
            .map(|values| {
                values
                    .iter()
                    .map(|(d, v)| format!("{d} = {v}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .unwrap_or_else(|| f.subject.clone());
        Self {
            watch: f.watch,
            watch_name: watch.map_or_else(|| f.watch.to_string(), |w| w.spec.name),
            subject: f.subject.clone(),
            values,
            first: time(f.first_ms),
            last: time(f.last_ms),
            f,
        }
    }
}

#[derive(Template)]
#[template(path = "admin/boards/held.html")]
struct HeldPage {
    l: Lang,
    user: String,
    csrf: String,
    flash: Option<String>,
    slug: String,
    title: String,
    rows: Vec<Row>,
}

pub async fn get_held(
    state: web::Data<AppState>,
    session: Session,
    user: AdminUser,
    path: web::Path<String>,
) -> Result<HttpResponse, PageError> {
    let config = board(&state, &path)?;
    let slug = config.board.slug.clone();
    let rows = held::queue(&state, &slug)
        .await?
        .into_iter()
        .map(Row::of)
        .collect();
    let chrome = Chrome::of(&session, &user);
    html(&HeldPage {
        l: chrome.l,
        user: chrome.user,
        csrf: chrome.csrf,
        flash: chrome.flash,
        slug: slug.to_string(),
        title: config.board.settings.title.clone(),
        rows,
    })
}

#[derive(Deserialize)]
pub struct ReviewForm {
    watch: i64,
    subject: String,
    /// '' for the whole subject.
    #[serde(default)]
    member: String,
    action: String,
}

pub async fn review_held(
    state: web::Data<AppState>,
    session: Session,
    user: AdminUser,
    path: web::Path<String>,
    CsrfForm(form): CsrfForm<ReviewForm>,
) -> Result<HttpResponse, PageError> {
    let config = board(&state, &path)?;
    let slug = config.board.slug.clone();
    let invalid = |e: crate::domain::Invalid| PageError::Invalid(e.message);
    let member = form.member.trim();
    let request = ReviewRequest {
        watch: form.watch,
        subject: form.subject,
        member: (!member.is_empty())
            .then(|| MemberId::parse(member).map(|m| m.to_string()))
            .transpose()
            .map_err(invalid)?,
        action: ReviewAction::parse(&form.action).map_err(invalid)?,
    };
    let done = held::review(&state, &user.actor(), &slug, request).await?;
    let key = match done.request.action {
        ReviewAction::Release => "flash-held-released",
        ReviewAction::Drop | ReviewAction::Expire => "flash-held-dropped",
    };
    session::flash(
        &session,
        &user.lang.tr(key, &[("votes", done.votes.into())]),
    );
    Ok(see_other(&format!("/admin/boards/{slug}/held")))
}
