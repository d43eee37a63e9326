//! The audit log: every admin change with who, when and what, filterable.

use actix_session::Session;
use actix_web::http::Method;
use actix_web::{HttpResponse, web};
use askama::Template;
use serde::Deserialize;

use super::{Chrome, html};
use crate::engine::audit::{self as engine, AuditEntry, AuditFilter};
use crate::engine::state::AppState;
use crate::error::PageError;
use crate::i18n::Lang;
use crate::web::Router;
use crate::web::session::AdminUser;

pub fn routes(r: &mut impl Router) {
    r.add(Method::GET, "/audit", list_audit);
}

#[derive(Template)]
#[template(path = "admin/audit/index.html")]
struct AuditPage {
    l: Lang,
    user: String,
    csrf: String,
    flash: Option<String>,
    entries: Vec<AuditEntry>,
    actor: String,
    action: String,
    target: String,
    filtered: bool,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct AuditQuery {
    actor: String,
    action: String,
    target: String,
}

async fn list_audit(
    state: web::Data<AppState>,
    session: Session,
    user: AdminUser,
    query: web::Query<AuditQuery>,
) -> Result<HttpResponse, PageError> {
    let q = query.into_inner();
    let some = |s: &str| (!s.trim().is_empty()).then(|| s.trim().to_owned());
    let filter = AuditFilter {
        actor: some(&q.actor),
        action: some(&q.action),
        target: some(&q.target),
    };
    let filtered = filter.actor.is_some() || filter.action.is_some() || filter.target.is_some();
    let entries = engine::newest(&state, &filter, 500).await?;
    let chrome = Chrome::of(&session, &user);
    html(&AuditPage {
        l: chrome.l,
        user: chrome.user,
        csrf: chrome.csrf,
        flash: chrome.flash,
        entries,
        actor: q.actor,
        action: q.action,
        target: q.target,
        filtered,
    })
}
