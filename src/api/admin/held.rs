//! The review queue of held votes, and their reviews.

use std::collections::BTreeMap;

use actix_web::{HttpResponse, get, post, web};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::board_slug;
use crate::api::auth::Admin;
use crate::domain::held::{Flagged, Review, ReviewAction, ReviewRequest};
use crate::domain::ids::MemberId;
use crate::domain::watch::Watch;
use crate::engine::held as engine;
use crate::engine::state::AppState;
use crate::error::ApiError;

/// A flagged subject: a watch's subject whose votes it held.
#[derive(Debug, Serialize, ToSchema)]
pub struct FlaggedSubject {
    /// The watch's id and name (a deleted watch keeps both).
    pub watch: i64,
    pub watch_name: Option<String>,
    /// The subject as a review names it: each value length-prefixed, joined by `|`.
    pub subject: String,
    /// The subject's value for each of the watch's dimensions.
    pub values: BTreeMap<String, String>,
    /// Votes (their counts summed) still held, released and dropped.
    pub held: i64,
    pub released: i64,
    pub dropped: i64,
    /// The first and the last held vote's time.
    pub first_at: DateTime<Utc>,
    pub last_at: DateTime<Utc>,
    /// Votes still held, per member they went to.
    pub members: BTreeMap<String, i64>,
    /// Up to five voters and five addresses of the votes still held.
    pub voters: Vec<String>,
    pub ips: Vec<String>,
}

impl FlaggedSubject {
    fn of((f, watch): (Flagged, Option<Watch>)) -> Self {
        let time = |ms: i64| DateTime::from_timestamp_millis(ms).unwrap_or_default();
        let values = watch
            .as_ref()
            .and_then(|w| w.spec.values_of(&f.subject))
            .map(|values| values.into_iter().map(|(d, v)| (d.code(), v)).collect())
            .unwrap_or_default();
        Self {
            watch: f.watch,
            watch_name: watch.map(|w| w.spec.name),
            values,
            subject: f.subject,
            held: f.held,
            released: f.released,
            dropped: f.dropped,
            first_at: time(f.first_ms),
            last_at: time(f.last_ms),
            members: f.members,
            voters: f.voters,
            ips: f.ips,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct HeldResponse {
    /// Subjects with votes still held first, then the latest.
    pub subjects: Vec<FlaggedSubject>,
}

/// A review: release or drop a subject's votes still held, or one member's among them.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"watch": 3, "subject": "2.m3|14.203.0.113.0/24", "action": "drop"}))]
pub struct ReviewBody {
    pub watch: i64,
    /// As the queue names it.
    pub subject: String,
    /// Only this member's votes of the subject.
    pub member: Option<String>,
    /// `release` (the votes count, each in the buckets of its own time) or `drop` (they
    /// never count).
    pub action: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ReviewResponse {
    pub id: i64,
    pub watch: i64,
    pub subject: String,
    pub member: Option<String>,
    pub action: String,
    /// Votes reviewed (their counts summed).
    pub votes: i64,
}

impl From<Review> for ReviewResponse {
    fn from(r: Review) -> Self {
        Self {
            id: r.id,
            watch: r.request.watch,
            subject: r.request.subject,
            member: r.request.member,
            action: r.request.action.as_str().to_owned(),
            votes: r.votes,
        }
    }
}

/// The board's review queue: each subject a watch flagged, with its held, released and
/// dropped votes. Every vote accepted before the request is in it.
#[utoipa::path(get, path = "/api/v1/admin/boards/{board}/held", tag = "admin",
    params(("board" = String, Path)),
    responses(
        (status = 200, body = HeldResponse),
        (status = 404, description = "board_not_found", body = crate::api::ErrorBody),
        (status = 409, description = "wrong_scoring (a scores board)", body = crate::api::ErrorBody),
        (status = 422, description = "not_for_family", body = crate::api::ErrorBody),
    ))]
#[get("/boards/{board}/held")]
pub async fn list_held(
    state: web::Data<AppState>,
    _admin: Admin,
    board: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let subjects = engine::queue(&state, &board_slug(&board)?).await?;
    Ok(HttpResponse::Ok().json(HeldResponse {
        subjects: subjects.into_iter().map(FlaggedSubject::of).collect(),
    }))
}

/// Releases or drops a subject's votes still held. A release counts each vote in the
/// buckets of its own time, both views, with carry-over and participants, as if it had
/// been accepted then (a closed bucket takes it as a late write).
#[utoipa::path(post, path = "/api/v1/admin/boards/{board}/held/reviews", tag = "admin",
    params(("board" = String, Path)), request_body = ReviewBody,
    responses(
        (status = 201, body = ReviewResponse),
        (status = 404, description = "board_not_found, subject_not_found (the watch held no such votes)", body = crate::api::ErrorBody),
        (status = 409, description = "already_reviewed (every held vote of the subject was reviewed), bucket_released (a release into a bucket Redis let go after the archive), wrong_scoring", body = crate::api::ErrorBody),
        (status = 422, description = "invalid_field (an unknown action), invalid_member_id, not_for_family", body = crate::api::ErrorBody),
        (status = 503, description = "store_unavailable (the ledger did not reach SQL in time)", body = crate::api::ErrorBody),
    ))]
#[post("/boards/{board}/held/reviews")]
pub async fn review_held(
    state: web::Data<AppState>,
    Admin(caller): Admin,
    board: web::Path<String>,
    body: web::Json<ReviewBody>,
) -> Result<HttpResponse, ApiError> {
    let body = body.into_inner();
    let request = ReviewRequest {
        watch: body.watch,
        subject: body.subject,
        member: body
            .member
            .as_deref()
            .map(|m| MemberId::parse(m).map(|m| m.to_string()))
            .transpose()?,
        action: ReviewAction::parse(&body.action)?,
    };
    let review = engine::review(&state, &caller.actor, &board_slug(&board)?, request).await?;
    Ok(HttpResponse::Created().json(ReviewResponse::from(review)))
}
