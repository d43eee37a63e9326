//! `/api/v1/admin/boards/{board}/webhooks`: receivers of a board's rank events (see
//! `engine::board_webhooks`): add, list with recent deliveries, send a test, delete.

use actix_web::{HttpResponse, delete, get, post, web};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::board_slug;
use crate::api::auth::Admin;
use crate::domain::board_webhook::{BoardDelivery, BoardWebhook};
use crate::domain::code::Code;
use crate::engine::board_webhooks::{self as engine, NewWebhook};
use crate::engine::state::AppState;
use crate::error::ApiError;

/// A new webhook.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct WebhookRequest {
    /// Where deliveries are POSTed: `http` or `https`, a public address unless
    /// `OVATION_WEBHOOK_ALLOW_PRIVATE` is set.
    pub url: String,
    /// The period of the top it watches (default: the board's default period); always
    /// its current bucket.
    pub period: Option<String>,
    /// `display` (default) or `real`.
    pub view: Option<String>,
    /// How many members the watched top holds, 1 to 100 (default 10).
    pub top: Option<i64>,
    /// The rank events it is sent: `entered_top`, `left_top`, `overtook` (default all).
    pub events: Option<Vec<String>>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct WebhookResponse {
    pub id: i64,
    pub url: String,
    pub period: String,
    pub view: String,
    pub top: i64,
    pub events: Vec<String>,
    /// Signs every delivery: `X-Ovation-Signature: t=<unix>,v1=<hex HMAC-SHA256 of
    /// "<t>.<delivery id>.<body>">`.
    pub secret: String,
    pub created_at: DateTime<Utc>,
}

impl From<&BoardWebhook> for WebhookResponse {
    fn from(hook: &BoardWebhook) -> Self {
        Self {
            id: hook.id,
            url: hook.url.clone(),
            period: hook.period.to_string(),
            view: hook.view.as_str().to_owned(),
            top: hook.top,
            events: hook.events.iter().map(|e| (*e).to_owned()).collect(),
            secret: hook.secret.clone(),
            created_at: hook.created_at,
        }
    }
}

/// One delivery of a board's webhooks.
#[derive(Debug, Serialize, ToSchema)]
pub struct DeliveryResponse {
    pub id: i64,
    pub webhook: i64,
    /// The JSON sent: `{"type": "rank", "board", "webhook", "period", "view", "top",
    /// "bucket", "events": [{"type", "member", "rank", "other"}], "at"}`, or `{"type":
    /// "test", …}`.
    pub body: String,
    pub attempts: i32,
    /// `pending`, `delivered` or `gave_up`.
    pub status: String,
    pub next_attempt_at: DateTime<Utc>,
    pub delivered_at: Option<DateTime<Utc>>,
    pub last_status: Option<i32>,
    pub last_error: Option<String>,
    pub created_at: DateTime<Utc>,
}

impl From<&BoardDelivery> for DeliveryResponse {
    fn from(d: &BoardDelivery) -> Self {
        let status = match (d.delivered_at, d.gave_up_at) {
            (Some(_), _) => "delivered",
            (None, Some(_)) => "gave_up",
            (None, None) => "pending",
        };
        Self {
            id: d.id,
            webhook: d.webhook_id,
            body: d.body.clone(),
            attempts: d.attempts,
            status: status.to_owned(),
            next_attempt_at: d.next_attempt_at,
            delivered_at: d.delivered_at,
            last_status: d.last_status,
            last_error: d.last_error.clone(),
            created_at: d.created_at,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct WebhooksResponse {
    pub webhooks: Vec<WebhookResponse>,
    /// The board's 20 most recent deliveries, newest first.
    pub deliveries: Vec<DeliveryResponse>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct TestResponse {
    /// The test delivery put in the outbox.
    pub delivery: i64,
}

fn webhook_id(raw: &str) -> Result<i64, ApiError> {
    raw.parse()
        .map_err(|_| ApiError::not_found(Code::WebhookNotFound, format!("no webhook {raw:?}")))
}

/// Adds a webhook: each change of the top it watches (read every
/// `OVATION_EVENTS_INTERVAL_MS` by one instance) that holds rank events it wants is one
/// signed POST, retried like league webhooks until 2xx, for three days.
#[utoipa::path(post, path = "/api/v1/admin/boards/{board}/webhooks", tag = "admin",
    params(("board" = String, Path)), request_body = WebhookRequest,
    responses(
        (status = 201, body = WebhookResponse),
        (status = 404, description = "board_not_found", body = crate::api::ErrorBody),
        (status = 409, description = "too_many_webhooks (20 per board)", body = crate::api::ErrorBody),
        (status = 422, description = "invalid_webhook (url: not http(s), over 2048 bytes, credentials, or a literal loopback, private, link-local or unspecified address unless OVATION_WEBHOOK_ALLOW_PRIVATE), invalid_period, period_not_enabled, invalid_view, invalid_field (top, events), not_for_family", body = crate::api::ErrorBody),
    ))]
#[post("/boards/{board}/webhooks")]
pub async fn create_webhook(
    state: web::Data<AppState>,
    Admin(caller): Admin,
    board: web::Path<String>,
    body: web::Json<WebhookRequest>,
) -> Result<HttpResponse, ApiError> {
    let body = body.into_inner();
    let new = NewWebhook {
        url: body.url,
        period: body.period,
        view: body.view,
        top: body.top,
        events: body.events,
    };
    let hook = engine::create(&state, &caller.actor, &board_slug(&board)?, new).await?;
    Ok(HttpResponse::Created().json(WebhookResponse::from(&hook)))
}

/// A board's webhooks, oldest first, and its 20 most recent deliveries.
#[utoipa::path(get, path = "/api/v1/admin/boards/{board}/webhooks", tag = "admin",
    params(("board" = String, Path)),
    responses(
        (status = 200, body = WebhooksResponse),
        (status = 404, description = "board_not_found", body = crate::api::ErrorBody),
        (status = 422, description = "not_for_family", body = crate::api::ErrorBody),
    ))]
#[get("/boards/{board}/webhooks")]
pub async fn list_webhooks(
    state: web::Data<AppState>,
    _admin: Admin,
    board: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let slug = board_slug(&board)?;
    let hooks = engine::list(&state, &slug).await?;
    let deliveries = engine::recent_deliveries(&state, &slug).await?;
    Ok(HttpResponse::Ok().json(WebhooksResponse {
        webhooks: hooks.iter().map(WebhookResponse::from).collect(),
        deliveries: deliveries.iter().map(DeliveryResponse::from).collect(),
    }))
}

/// Sends a webhook a test delivery (`{"type": "test", "board", "webhook", "at"}`) through
/// the outbox.
#[utoipa::path(post, path = "/api/v1/admin/boards/{board}/webhooks/{id}/test", tag = "admin",
    params(("board" = String, Path), ("id" = i64, Path)),
    responses(
        (status = 202, body = TestResponse),
        (status = 404, description = "board_not_found, webhook_not_found", body = crate::api::ErrorBody),
        (status = 422, description = "not_for_family", body = crate::api::ErrorBody),
    ))]
#[post("/boards/{board}/webhooks/{id}/test")]
pub async fn test_webhook(
    state: web::Data<AppState>,
    Admin(caller): Admin,
    path: web::Path<(String, String)>,
) -> Result<HttpResponse, ApiError> {
    let (board, id) = path.into_inner();
    let delivery = engine::test(
        &state,
        &caller.actor,
        &board_slug(&board)?,
        webhook_id(&id)?,
    )
    .await?;
    Ok(HttpResponse::Accepted().json(TestResponse { delivery }))
}

/// Deletes a webhook; its deliveries not sent yet are dropped.
#[utoipa::path(delete, path = "/api/v1/admin/boards/{board}/webhooks/{id}", tag = "admin",
    params(("board" = String, Path), ("id" = i64, Path)),
    responses(
        (status = 204),
        (status = 404, description = "board_not_found, webhook_not_found", body = crate::api::ErrorBody),
        (status = 422, description = "not_for_family", body = crate::api::ErrorBody),
    ))]
#[delete("/boards/{board}/webhooks/{id}")]
pub async fn delete_webhook(
    state: web::Data<AppState>,
    Admin(caller): Admin,
    path: web::Path<(String, String)>,
) -> Result<HttpResponse, ApiError> {
    let (board, id) = path.into_inner();
    engine::delete(
        &state,
        &caller.actor,
        &board_slug(&board)?,
        webhook_id(&id)?,
    )
    .await?;
    Ok(HttpResponse::NoContent().finish())
}
