//! Revocations: a voter's votes struck out of a board, and the list of them.

use std::collections::BTreeMap;

use actix_web::{HttpResponse, get, post, web};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::board_slug;
use crate::api::auth::Admin;
use crate::domain::ids::VoterId;
use crate::domain::ledger::{Revocation, RevocationRequest};
use crate::domain::period::parse_instant;
use crate::engine::revocations;
use crate::engine::state::AppState;
use crate::error::ApiError;

/// Whose votes to strike out, from when to when, and why.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"voter": "u123", "from": null, "to": null, "reason": "one of the bot farm found on 2026-11-24"}))]
pub struct RevocationBody {
    pub voter: String,
    /// RFC 3339; votes at or after it (null: from the first).
    pub from: Option<String>,
    /// RFC 3339; votes before it (null: up to now).
    pub to: Option<String>,
    /// Why, for the audit log and the list: 1 to 2,000 bytes.
    pub reason: String,
}

/// A revocation.
#[derive(Debug, Serialize, ToSchema)]
pub struct RevocationResponse {
    pub id: i64,
    pub voter: String,
    pub from: Option<DateTime<Utc>>,
    pub to: Option<DateTime<Utc>>,
    pub reason: String,
    /// Who asked for it.
    pub actor: String,
    pub created_at: DateTime<Utc>,
    /// Votes struck out (their counts summed); 0 when a repeat found none left.
    pub votes: i64,
    /// Votes struck out per member.
    pub by_member: BTreeMap<String, i64>,
}

impl From<Revocation> for RevocationResponse {
    fn from(r: Revocation) -> Self {
        Self {
            id: r.id,
            voter: r.voter,
            from: r.from,
            to: r.to,
            reason: r.reason,
            actor: r.actor,
            created_at: r.created_at,
            votes: r.votes,
            by_member: r.by_member,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct RevocationsResponse {
    /// Newest first, the last 200.
    pub revocations: Vec<RevocationResponse>,
}

/// Strikes out a voter's votes on a `votes` board: every vote of the voter accepted in
/// the time range leaves every bucket of every calendar period, both views, the
/// carry-over it gave the next bucket and the hourly vote counts; the distinct voters of
/// the buckets it counted in are rebuilt from the ledger. Rate-limit counters keep what
/// the votes used. Repeating it strikes out nothing more (`votes`: 0). Audited.
#[utoipa::path(post, path = "/api/v1/admin/boards/{board}/revocations", tag = "admin",
    params(("board" = String, Path)), request_body = RevocationBody,
    responses(
        (status = 201, body = RevocationResponse),
        (status = 404, description = "board_not_found", body = crate::api::ErrorBody),
        (status = 409, description = "wrong_scoring: a scores board", body = crate::api::ErrorBody),
        (status = 422, description = "invalid_voter, invalid_timestamp (from, to), invalid_window (from not before to), invalid_field (reason: blank, over 2,000 bytes, or a control or bidirectional-override character), not_for_family (a family: its instances' votes are not revoked)", body = crate::api::ErrorBody),
        (status = 503, description = "store_unavailable", body = crate::api::ErrorBody),
    ))]
#[post("/boards/{board}/revocations")]
pub async fn create_revocation(
    state: web::Data<AppState>,
    Admin(caller): Admin,
    board: web::Path<String>,
    body: web::Json<RevocationBody>,
) -> Result<HttpResponse, ApiError> {
    let slug = board_slug(&board)?;
    let body = body.into_inner();
    let request = RevocationRequest::new(
        VoterId::parse(&body.voter)?,
        body.from.as_deref().map(parse_instant).transpose()?,
        body.to.as_deref().map(parse_instant).transpose()?,
        body.reason,
    )?;
    let revocation = revocations::revoke(&state, &caller.actor, &slug, request).await?;
    Ok(HttpResponse::Created().json(RevocationResponse::from(revocation)))
}

/// A board's revocations, newest first.
#[utoipa::path(get, path = "/api/v1/admin/boards/{board}/revocations", tag = "admin",
    params(("board" = String, Path)),
    responses(
        (status = 200, body = RevocationsResponse),
        (status = 404, description = "board_not_found", body = crate::api::ErrorBody),
        (status = 422, description = "not_for_family: a family", body = crate::api::ErrorBody),
    ))]
#[get("/boards/{board}/revocations")]
pub async fn list_revocations(
    state: web::Data<AppState>,
    _admin: Admin,
    board: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let slug = board_slug(&board)?;
    let list = revocations::list(&state, &slug).await?;
    Ok(HttpResponse::Ok().json(RevocationsResponse {
        revocations: list.into_iter().map(Into::into).collect(),
    }))
}
