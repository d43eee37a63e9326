//! A board's revocations in the dashboard: look a voter up, see their votes by member,
//! strike them out with a reason (confirmed first), and the revocations made before.

use actix_session::Session;
use actix_web::{HttpResponse, web};
use askama::Template;
use serde::Deserialize;

use super::board;
use crate::domain::ids::VoterId;
use crate::domain::ledger::{Revocation, RevocationRequest};
use crate::domain::period::parse_instant;
use crate::engine::revocations;
use crate::engine::state::AppState;
use crate::error::PageError;
use crate::i18n::Lang;
use crate::web::admin::{Chrome, html, see_other};
use crate::web::forms::CsrfForm;
use crate::web::session::{self, AdminUser};

#[derive(Template)]
#[template(path = "admin/boards/revocations.html")]
struct RevocationsPage {
    l: Lang,
    user: String,
    csrf: String,
    flash: Option<String>,
    slug: String,
    title: String,
    /// The voter looked up ('' before a search).
    voter: String,
    /// Their votes by member: (member, counted, struck out).
    votes: Vec<(String, i64, i64)>,
    /// Votes of theirs still counted.
    counted: i64,
    past: Vec<Revocation>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub struct VoterQuery {
    voter: String,
}

pub async fn get_revocations(
    state: web::Data<AppState>,
    session: Session,
    user: AdminUser,
    path: web::Path<String>,
    query: web::Query<VoterQuery>,
) -> Result<HttpResponse, PageError> {
    let config = board(&state, &path)?;
    let slug = config.board.slug.clone();
    let voter = query.into_inner().voter.trim().to_owned();
    let votes = if voter.is_empty() {
        Vec::new()
    } else {
        revocations::voter_votes(&state, &slug, &voter).await?
    };
    let past = revocations::list(&state, &slug).await?;
    let chrome = Chrome::of(&session, &user);
    html(&RevocationsPage {
        l: chrome.l,
        user: chrome.user,
        csrf: chrome.csrf,
        flash: chrome.flash,
        slug: slug.to_string(),
        title: config.board.settings.title.clone(),
        counted: votes.iter().map(|v| v.1).sum(),
        voter,
        votes,
        past,
    })
}

#[derive(Deserialize)]
pub struct RevokeForm {
    voter: String,
    #[serde(default)]
    from: String,
    #[serde(default)]
    to: String,
    reason: String,
}

pub async fn create_revocation(
    state: web::Data<AppState>,
    session: Session,
    user: AdminUser,
    path: web::Path<String>,
    CsrfForm(form): CsrfForm<RevokeForm>,
) -> Result<HttpResponse, PageError> {
    let config = board(&state, &path)?;
    let slug = config.board.slug.clone();
    let time = |raw: &str| {
        let raw = raw.trim();
        (!raw.is_empty()).then(|| parse_instant(raw)).transpose()
    };
    let invalid = |e: crate::domain::Invalid| PageError::Invalid(e.message);
    let request = RevocationRequest::new(
        VoterId::parse(form.voter.trim()).map_err(invalid)?,
        time(&form.from).map_err(invalid)?,
        time(&form.to).map_err(invalid)?,
        form.reason,
    )
    .map_err(invalid)?;
    let done = revocations::revoke(&state, &user.actor(), &slug, request).await?;
    session::flash(
        &session,
        &user.lang.tr(
            "flash-revoked",
            &[
                ("votes", done.votes.into()),
                ("voter", done.voter.as_str().into()),
            ],
        ),
    );
    Ok(see_other(&format!(
        "/admin/boards/{slug}/revocations?voter={}",
        urlencoding(&done.voter)
    )))
}

/// A voter id in a URL's query.
fn urlencoding(raw: &str) -> String {
    url::form_urlencoded::byte_serialize(raw.as_bytes()).collect()
}
