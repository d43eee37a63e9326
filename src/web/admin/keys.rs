//! API keys in the dashboard: create (the secret is shown once, after a redirect, so a
//! reload cannot create a second key), list, revoke (after a confirmation).

use std::collections::HashMap;

use actix_session::Session;
use actix_web::http::Method;
use actix_web::{HttpResponse, web};
use askama::Template;
use serde::Deserialize;

use super::{Chrome, html, html_with, see_other};
use crate::domain::auth::{KeySpec, Scope};
use crate::engine::admin as engine;
use crate::engine::error::EngineError;
use crate::engine::state::AppState;
use crate::error::PageError;
use crate::i18n::Lang;
use crate::web::Router;
use crate::web::forms::CsrfForm;
use crate::web::session::{self, AdminUser};

pub fn routes(r: &mut impl Router) {
    r.add(Method::GET, "/keys", list_keys);
    r.add(Method::POST, "/keys", create_key);
    r.add(Method::POST, "/keys/{id}/revoke", revoke_key);
}

struct KeyRow {
    id: i64,
    name: String,
    prefix: String,
    scopes: String,
    channel: String,
    /// The boards and leagues it reaches, or `None` for every one.
    boards: Option<String>,
    leagues: Option<String>,
    created: String,
    revoked: Option<String>,
}

#[derive(Template)]
#[template(path = "admin/keys/index.html")]
struct KeysPage {
    l: Lang,
    user: String,
    csrf: String,
    flash: Option<String>,
    keys: Vec<KeyRow>,
    /// (scope, ticked)
    all_scopes: Vec<(&'static str, bool)>,
    secret: Option<String>,
    error: Option<String>,
    /// What was typed, shown again when the form is refused.
    form: KeyForm,
}

async fn keys_page(
    state: &AppState,
    chrome: Chrome,
    secret: Option<String>,
    error: Option<String>,
    form: KeyForm,
) -> Result<KeysPage, PageError> {
    let keys = engine::list_api_keys(state)
        .await?
        .into_iter()
        .map(|k| KeyRow {
            id: k.id,
            name: k.name,
            prefix: k.prefix,
            scopes: k
                .scopes
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            channel: k.channel.map(|c| c.to_string()).unwrap_or_default(),
            boards: k.reach.board_names().map(|b| b.join(", ")),
            leagues: k.reach.league_names().map(|l| l.join(", ")),
            created: k.created_at.format("%Y-%m-%d %H:%M UTC").to_string(),
            revoked: k
                .revoked_at
                .map(|t| t.format("%Y-%m-%d %H:%M UTC").to_string()),
        })
        .collect();
    Ok(KeysPage {
        l: chrome.l,
        user: chrome.user,
        csrf: chrome.csrf,
        flash: chrome.flash,
        keys,
        all_scopes: Scope::EVERY
            .iter()
            .map(|s| (s.as_str(), form.scopes.iter().any(|f| f == s.as_str())))
            .collect(),
        secret,
        error,
        form,
    })
}

async fn list_keys(
    state: web::Data<AppState>,
    session: Session,
    user: AdminUser,
) -> Result<HttpResponse, PageError> {
    let secret = session::take_secret(&session);
    html(
        &keys_page(
            &state,
            Chrome::of(&session, &user),
            secret,
            None,
            KeyForm::default(),
        )
        .await?,
    )
}

#[derive(Default, Deserialize)]
struct KeyForm {
    name: String,
    #[serde(default)]
    scopes: Vec<String>,
    #[serde(default)]
    channel: String,
    /// Board slugs, separated by commas or spaces; empty: every board.
    #[serde(default)]
    boards: String,
    /// League slugs likewise; empty: every league (none for a key bound to a channel).
    #[serde(default)]
    leagues: String,
}

/// A list typed in a form field: slugs separated by commas or spaces; an empty field is
/// `None` (no limit).
fn slug_list(field: &str) -> Option<Vec<&str>> {
    let names: Vec<&str> = field
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|s| !s.is_empty())
        .collect();
    (!names.is_empty()).then_some(names)
}

async fn create_key(
    state: web::Data<AppState>,
    session: Session,
    user: AdminUser,
    form: CsrfForm<KeyForm>,
) -> Result<HttpResponse, PageError> {
    let form = form.0;
    let result = async {
        let scopes: Vec<&str> = form.scopes.iter().map(String::as_str).collect();
        let spec = KeySpec::parse(
            &form.name,
            &scopes,
            Some(form.channel.trim()).filter(|c| !c.is_empty()),
            slug_list(&form.boards).as_deref(),
            slug_list(&form.leagues).as_deref(),
        )?;
        engine::create_api_key(&state, &user.actor(), &spec).await
    }
    .await;
    match result {
        Ok((_, secret)) => {
            session::leave_secret(&session, &secret);
            Ok(see_other("/admin/keys"))
        }
        Err(err @ EngineError::Invalid { .. }) => {
            let chrome = Chrome::of(&session, &user);
            let page = keys_page(&state, chrome, None, Some(err.to_string()), form).await?;
            html_with(&page, actix_web::http::StatusCode::UNPROCESSABLE_ENTITY)
        }
        Err(other) => Err(other.into()),
    }
}

async fn revoke_key(
    state: web::Data<AppState>,
    session: Session,
    user: AdminUser,
    path: web::Path<String>,
    _form: CsrfForm<HashMap<String, String>>,
) -> Result<HttpResponse, PageError> {
    let id: i64 = path
        .parse()
        .map_err(|_| PageError::NotFound(format!("no key {:?}", path.as_str())))?;
    engine::revoke_api_key(&state, &user.actor(), id).await?;
    session::flash(
        &session,
        &user.lang.tr("flash-key-revoked", &[("id", id.into())]),
    );
    Ok(see_other("/admin/keys"))
}
