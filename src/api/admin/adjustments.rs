//! Adjustments: a member's score changed by hand in one bucket (`engine::adjustments`).

use actix_web::{HttpResponse, post, web};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::board_slug;
use crate::api::auth::Admin;
use crate::domain::adjustment::{Asked, DELTA_MAX};
use crate::domain::code::Code;
use crate::domain::ids::{IdempotencyKey, MemberId};
use crate::domain::score::View;
use crate::engine::adjustments::{self, Made};
use crate::engine::error::EngineError;
use crate::engine::state::AppState;
use crate::error::ApiError;

/// Which bucket, which views, by how much and why.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"period": "day", "at": "2026-11-25", "view": "both", "delta": 5, "reason": "phone votes counted by hand", "idempotency_key": "adj-2026-11-25-1"}))]
pub struct AdjustmentBody {
    /// A calendar period the board keeps, or `all` (not a rolling window).
    pub period: String,
    /// The bucket: a label of the period (`2026-11-25`, `2026-W48`, …) or an RFC 3339
    /// instant inside it; may be left out for `all`. A bucket that has not begun is a 422
    /// `invalid_bucket`.
    pub at: Option<String>,
    /// `real`, `display` or `both` (the default).
    pub view: Option<String>,
    /// Whole votes to add (negative: to take off), 1 to 1,000,000,000 either way; each
    /// view moves by that many votes.
    #[schema(value_type = i64)]
    pub delta: serde_json::Number,
    /// Why, for the audit log: 1 to 2,000 bytes.
    pub reason: String,
    /// Makes a retry safe: the same key with the same request answers the first
    /// adjustment again (`replayed`), with another request it is a 422
    /// `idempotency_key_reused`. Remembered as long as votes' keys.
    pub idempotency_key: Option<String>,
}

/// An adjustment made.
#[derive(Debug, Serialize, ToSchema)]
pub struct AdjustmentResponse {
    pub board: String,
    pub member: String,
    pub period: String,
    /// The bucket's label.
    pub bucket: String,
    pub view: String,
    pub delta: i64,
    pub reason: String,
    /// The member's real score in the bucket after it; null when the real view was
    /// left alone.
    #[schema(value_type = Option<f64>)]
    pub real: Option<serde_json::Number>,
    /// The same for the display view.
    #[schema(value_type = Option<f64>)]
    pub display: Option<serde_json::Number>,
    /// True when this answer repeats the first one for the same idempotency key.
    pub replayed: bool,
}

impl AdjustmentResponse {
    fn of(board: &str, made: Made) -> Self {
        let a = made.adjustment;
        Self {
            board: board.to_owned(),
            member: made.member.to_string(),
            period: a.bucket.period.to_string(),
            bucket: a.bucket.label,
            view: a.views.as_str().to_owned(),
            delta: a.delta,
            reason: a.reason,
            real: made.scores.real.map(|u| View::Real.to_votes(u)),
            display: made.scores.display.map(|u| View::Display.to_votes(u)),
            replayed: made.replayed,
        }
    }
}

/// Changes a member's score in one bucket of a `votes` board, in the real view, the
/// display view or both (seed 000: editing a member's count in the back office). Only that
/// bucket moves: no other period, no carry-over, no rolling window, no hourly count. A
/// member left at 0 leaves the bucket's ranking. The board's ledger records it (a recount
/// or a rebuild counts it in that bucket); the audit log records who, what and why. A
/// closed bucket is adjusted while Redis still holds it, and the archive writes it again.
#[utoipa::path(post, path = "/api/v1/admin/boards/{board}/members/{member}/adjustments", tag = "admin",
    params(("board" = String, Path), ("member" = String, Path)), request_body = AdjustmentBody,
    responses(
        (status = 201, description = "adjusted", body = AdjustmentResponse),
        (status = 200, description = "replayed for a known idempotency key (`Idempotent-Replayed: true`)", body = AdjustmentResponse),
        (status = 404, description = "board_not_found, member_not_found", body = crate::api::ErrorBody),
        (status = 409, description = "wrong_scoring (a scores board), bucket_released (a closed bucket Redis no longer holds), negative_score (a score would go below 0)", body = crate::api::ErrorBody),
        (status = 422, description = "invalid_period (unknown, or a rolling window), period_not_enabled, invalid_bucket (not a bucket of the period, missing, or not begun), ambiguous_bucket, invalid_view, invalid_delta, invalid_field (reason: blank, over 2,000 bytes, or a control or bidirectional-override character), invalid_idempotency_key, idempotency_key_reused, score_overflow, not_for_family", body = crate::api::ErrorBody),
        (status = 503, description = "store_unavailable", body = crate::api::ErrorBody),
    ))]
#[post("/boards/{board}/members/{member}/adjustments")]
pub async fn create_adjustment(
    state: web::Data<AppState>,
    Admin(caller): Admin,
    path: web::Path<(String, String)>,
    body: web::Json<AdjustmentBody>,
) -> Result<HttpResponse, ApiError> {
    let (board, member) = path.into_inner();
    let slug = board_slug(&board)?;
    let member = MemberId::parse(&member)
        .map_err(|e| ApiError::not_found(Code::MemberNotFound, e.message))?;
    let delta = body.delta.as_i64().ok_or_else(|| {
        EngineError::invalid(
            Code::InvalidDelta,
            format!("delta: a whole number of votes from -{DELTA_MAX} to {DELTA_MAX}, not 0"),
        )
    })?;
    let key = body
        .idempotency_key
        .as_deref()
        .map(IdempotencyKey::parse)
        .transpose()?;
    let asked = Asked {
        period: &body.period,
        at: body.at.as_deref(),
        view: body.view.as_deref().unwrap_or("both"),
        delta,
        reason: &body.reason,
    };
    let made = adjustments::adjust(&state, &caller.actor, &slug, member, asked, key).await?;
    let replayed = made.replayed;
    let answer = AdjustmentResponse::of(slug.as_str(), made);
    if replayed {
        Ok(crate::api::writes::written(true, &answer))
    } else {
        Ok(HttpResponse::Created().json(answer))
    }
}
