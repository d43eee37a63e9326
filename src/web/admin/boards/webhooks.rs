//! A board's webhooks in the dashboard: add one (the top it watches and the rank events
//! it wants), list them with their secrets, send a test, delete (confirmed first), and
//! the board's recent deliveries. A refused form keeps what was typed.

use std::collections::HashMap;

use actix_session::Session;
use actix_web::http::StatusCode;
use actix_web::{HttpResponse, web};
use askama::Template;
use serde::Deserialize;

use super::board;
use crate::domain::board_webhook::{BoardDelivery, BoardWebhook, EVENT_KINDS};
use crate::engine::board_webhooks::{self, NewWebhook};
use crate::engine::error::EngineError;
use crate::engine::state::AppState;
use crate::error::PageError;
use crate::i18n::Lang;
use crate::web::admin::{Chrome, html, html_with, see_other};
use crate::web::forms::CsrfForm;
use crate::web::session::{self, AdminUser};

#[derive(Deserialize, Default)]
#[serde(default)]
pub struct WebhookForm {
    url: String,
    period: String,
    view: String,
    top: String,
    events: Vec<String>,
}

#[derive(Template)]
#[template(path = "admin/boards/webhooks.html")]
struct WebhooksPage {
    l: Lang,
    user: String,
    csrf: String,
    flash: Option<String>,
    slug: String,
    title: String,
    /// The board's periods, for the form.
    periods: Vec<&'static str>,
    /// The events the form offers: (kind, label, checked).
    kinds: Vec<(&'static str, String, bool)>,
    hooks: Vec<BoardWebhook>,
    deliveries: Vec<BoardDelivery>,
    form: WebhookForm,
    /// Why the form was refused.
    error: Option<String>,
}

async fn page(
    state: &AppState,
    chrome: Chrome,
    raw: &str,
    form: WebhookForm,
    error: Option<String>,
) -> Result<WebhooksPage, PageError> {
    let config = board(state, raw)?;
    let slug = config.board.slug.clone();
    let hooks = board_webhooks::list(state, &slug).await?;
    let deliveries = board_webhooks::recent_deliveries(state, &slug).await?;
    Ok(WebhooksPage {
        l: chrome.l,
        user: chrome.user,
        csrf: chrome.csrf,
        flash: chrome.flash,
        slug: slug.to_string(),
        title: config.board.settings.title.clone(),
        periods: config
            .board
            .settings
            .periods
            .iter()
            .map(|p| p.as_str())
            .collect(),
        kinds: EVENT_KINDS
            .iter()
            .map(|k| {
                let label = chrome.l.t(&format!("webhooks-event-{k}"));
                (*k, label, form.events.iter().any(|e| e == k))
            })
            .collect(),
        hooks,
        deliveries,
        form,
        error,
    })
}

pub async fn get_webhooks(
    state: web::Data<AppState>,
    session: Session,
    user: AdminUser,
    path: web::Path<String>,
) -> Result<HttpResponse, PageError> {
    let form = WebhookForm {
        top: "10".to_owned(),
        events: EVENT_KINDS.iter().map(|k| (*k).to_owned()).collect(),
        ..WebhookForm::default()
    };
    html(&page(&state, Chrome::of(&session, &user), &path, form, None).await?)
}

pub async fn create_webhook(
    state: web::Data<AppState>,
    session: Session,
    user: AdminUser,
    path: web::Path<String>,
    CsrfForm(form): CsrfForm<WebhookForm>,
) -> Result<HttpResponse, PageError> {
    let config = board(&state, &path)?;
    let slug = config.board.slug.clone();
    let blank = |v: &str| (!v.trim().is_empty()).then(|| v.trim().to_owned());
    let top = blank(&form.top)
        .map(|t| {
            t.parse::<i64>()
                .map_err(|_| EngineError::invalid_field("top", "top must be between 1 and 100"))
        })
        .transpose();
    let created = match top {
        Ok(top) => {
            let new = NewWebhook {
                url: form.url.trim().to_owned(),
                period: blank(&form.period),
                view: blank(&form.view),
                top,
                events: Some(form.events.clone()),
            };
            board_webhooks::create(&state, &user.actor(), &slug, new).await
        }
        Err(err) => Err(err),
    };
    match created {
        Ok(hook) => {
            session::flash(
                &session,
                &user
                    .lang
                    .tr("flash-webhook-added", &[("id", hook.id.into())]),
            );
            Ok(see_other(&format!("/admin/boards/{slug}/webhooks")))
        }
        Err(err @ (EngineError::Invalid { .. } | EngineError::Conflict { .. })) => {
            let chrome = Chrome::of(&session, &user);
            let page = page(&state, chrome, &path, form, Some(err.to_string())).await?;
            html_with(&page, StatusCode::UNPROCESSABLE_ENTITY)
        }
        Err(err) => Err(err.into()),
    }
}

pub async fn test_webhook(
    state: web::Data<AppState>,
    session: Session,
    user: AdminUser,
    path: web::Path<(String, i64)>,
    _form: CsrfForm<HashMap<String, String>>,
) -> Result<HttpResponse, PageError> {
    let (raw, id) = path.into_inner();
    let slug = board(&state, &raw)?.board.slug.clone();
    let delivery = board_webhooks::test(&state, &user.actor(), &slug, id).await?;
    session::flash(
        &session,
        &user.lang.tr(
            "flash-webhook-tested",
            &[("id", id.into()), ("delivery", delivery.into())],
        ),
    );
    Ok(see_other(&format!("/admin/boards/{slug}/webhooks")))
}

pub async fn delete_webhook(
    state: web::Data<AppState>,
    session: Session,
    user: AdminUser,
    path: web::Path<(String, i64)>,
    _form: CsrfForm<HashMap<String, String>>,
) -> Result<HttpResponse, PageError> {
    let (raw, id) = path.into_inner();
    let slug = board(&state, &raw)?.board.slug.clone();
    board_webhooks::delete(&state, &user.actor(), &slug, id).await?;
    session::flash(
        &session,
        &user.lang.tr("flash-webhook-deleted", &[("id", id.into())]),
    );
    Ok(see_other(&format!("/admin/boards/{slug}/webhooks")))
}
