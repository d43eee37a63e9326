//! Watch administration: what makes a board hold votes for review.

use actix_web::{HttpResponse, delete, get, patch, post, web};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::board_slug;
use crate::api::auth::Admin;
use crate::domain::code::Code;
use crate::domain::limit::Window;
use crate::domain::watch::{Watch, WatchSpec, parse_dimensions};
use crate::engine::admin::board_of;
use crate::engine::state::AppState;
use crate::engine::watches as engine;
use crate::error::ApiError;

/// A watch's settings; on create every field is required, on update every field is
/// optional.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"name": "one network per member", "dimensions": ["ip/24", "member"], "window": "rolling:10m", "threshold": 50}))]
pub struct WatchRequest {
    pub name: Option<String>,
    /// A non-empty set of voter, member, channel, terminal, ip and ip/N: the watch counts
    /// per combination of their values. `ip/N` groups addresses by network: N from 8 to
    /// 31 groups IPv4 addresses by /N (IPv6 ones count by /64, as `ip` counts them), N
    /// from 33 to 63 groups IPv6 addresses by /N (IPv4 ones count whole).
    pub dimensions: Option<Vec<String>>,
    /// second, minute, hour, day, week, month (in the board's timezone), campaign, or
    /// rolling:<n><s|m|h|d> (at most 31 days).
    pub window: Option<String>,
    /// Votes a subject casts in a window before its next ones are held (1 to
    /// 1,000,000,000). A rolling window counts in tenths of its length: a vote counts for
    /// between 0.9 and 1 times it.
    pub threshold: Option<i64>,
}

impl WatchRequest {
    fn apply(&self, spec: &mut WatchSpec) -> Result<(), ApiError> {
        if let Some(name) = &self.name {
            spec.name = name.clone();
        }
        if let Some(dims) = &self.dimensions {
            spec.dimensions = parse_dimensions(dims)?;
        }
        if let Some(window) = &self.window {
            spec.window = Window::parse(window)?;
        }
        if let Some(threshold) = self.threshold {
            spec.threshold = threshold;
        }
        Ok(())
    }

    /// A new watch's settings: every field must be there.
    fn create(&self) -> Result<WatchSpec, ApiError> {
        let required =
            |code: Code, field: &str| ApiError::invalid(code, format!("{field} is required"));
        Ok(WatchSpec {
            name: self
                .name
                .clone()
                .ok_or_else(|| required(Code::InvalidName, "name"))?,
            dimensions: parse_dimensions(
                self.dimensions
                    .as_deref()
                    .ok_or_else(|| required(Code::EmptyDimensions, "dimensions"))?,
            )?,
            window: Window::parse(
                self.window
                    .as_deref()
                    .ok_or_else(|| required(Code::InvalidWindow, "window"))?,
            )?,
            threshold: self
                .threshold
                .ok_or_else(|| required(Code::InvalidThreshold, "threshold"))?,
        })
    }
}

/// A watch as stored.
#[derive(Debug, Serialize, ToSchema)]
pub struct WatchResponse {
    pub id: i64,
    pub name: String,
    pub dimensions: Vec<String>,
    pub window: String,
    pub threshold: i64,
}

impl From<&Watch> for WatchResponse {
    fn from(watch: &Watch) -> Self {
        let spec = &watch.spec;
        Self {
            id: watch.id,
            name: spec.name.clone(),
            dimensions: spec.dimensions.iter().map(|d| d.code()).collect(),
            window: spec.window.code(),
            threshold: spec.threshold,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct WatchesResponse {
    pub watches: Vec<WatchResponse>,
}

fn watch_id(raw: &str) -> Result<i64, ApiError> {
    raw.parse()
        .map_err(|_| ApiError::not_found(Code::WatchNotFound, format!("no watch {raw:?}")))
}

/// Adds a watch to a board: a vote that takes its subject's count in the window past the
/// threshold is held for review, and so are the subject's later votes while the count
/// stays past it.
#[utoipa::path(post, path = "/api/v1/admin/boards/{board}/watches", tag = "admin",
    params(("board" = String, Path)), request_body = WatchRequest,
    responses(
        (status = 201, body = WatchResponse),
        (status = 404, description = "board_not_found", body = crate::api::ErrorBody),
        (status = 409, description = "too_many_watches (5 per board), ledger_required (the board keeps no ledger), wrong_scoring (a scores board)", body = crate::api::ErrorBody),
        (status = 422, description = "invalid_name, invalid_dimension, empty_dimensions, invalid_window, invalid_threshold, invalid_field; not_for_family (a family)", body = crate::api::ErrorBody),
    ))]
#[post("/boards/{board}/watches")]
pub async fn create_watch(
    state: web::Data<AppState>,
    Admin(caller): Admin,
    board: web::Path<String>,
    body: web::Json<WatchRequest>,
) -> Result<HttpResponse, ApiError> {
    let slug = board_slug(&board)?;
    board_of(&state, &slug)?;
    let watch = engine::create(&state, &caller.actor, &slug, body.create()?).await?;
    Ok(HttpResponse::Created().json(WatchResponse::from(&watch)))
}

/// A board's watches, oldest first.
#[utoipa::path(get, path = "/api/v1/admin/boards/{board}/watches", tag = "admin",
    params(("board" = String, Path)),
    responses((status = 200, body = WatchesResponse), (status = 404, description = "board_not_found", body = crate::api::ErrorBody)))]
#[get("/boards/{board}/watches")]
pub async fn list_watches(
    state: web::Data<AppState>,
    _admin: Admin,
    board: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let board = board_of(&state, &board_slug(&board)?)?;
    let watches = board.watches.iter().map(WatchResponse::from).collect();
    Ok(HttpResponse::Ok().json(WatchesResponse { watches }))
}

/// Changes some settings of a watch.
#[utoipa::path(patch, path = "/api/v1/admin/boards/{board}/watches/{id}", tag = "admin",
    params(("board" = String, Path), ("id" = i64, Path)), request_body = WatchRequest,
    responses(
        (status = 200, body = WatchResponse),
        (status = 404, description = "board_not_found, watch_not_found", body = crate::api::ErrorBody),
        (status = 422, description = "invalid_name, invalid_dimension, empty_dimensions, invalid_window, invalid_threshold", body = crate::api::ErrorBody),
    ))]
#[patch("/boards/{board}/watches/{id}")]
pub async fn update_watch(
    state: web::Data<AppState>,
    Admin(caller): Admin,
    path: web::Path<(String, String)>,
    body: web::Json<WatchRequest>,
) -> Result<HttpResponse, ApiError> {
    let (board, id) = path.into_inner();
    let slug = board_slug(&board)?;
    let current = board_of(&state, &slug)?;
    let mut watch = engine::watch_of(&current, watch_id(&id)?)?;
    body.apply(&mut watch.spec)?;
    let watch = engine::update(&state, &caller.actor, &slug, watch).await?;
    Ok(HttpResponse::Ok().json(WatchResponse::from(&watch)))
}

/// Deletes a watch: it holds no more votes; the votes it held stay held until reviewed.
#[utoipa::path(delete, path = "/api/v1/admin/boards/{board}/watches/{id}", tag = "admin",
    params(("board" = String, Path), ("id" = i64, Path)),
    responses((status = 204), (status = 404, description = "board_not_found, watch_not_found", body = crate::api::ErrorBody)))]
#[delete("/boards/{board}/watches/{id}")]
pub async fn delete_watch(
    state: web::Data<AppState>,
    Admin(caller): Admin,
    path: web::Path<(String, String)>,
) -> Result<HttpResponse, ApiError> {
    let (board, id) = path.into_inner();
    engine::delete(&state, &caller.actor, &board_slug(&board)?, watch_id(&id)?).await?;
    Ok(HttpResponse::NoContent().finish())
}
