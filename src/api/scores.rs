//! `POST /boards/{board}/scores` and the batch `POST /scores`: score writes on `scores`
//! boards, with the same keys, rules and idempotency as votes.

use actix_web::{HttpResponse, post, web};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use super::auth::Voter;
use super::client_ip::ClientIp;
use super::votes::{BatchResult, Common, batch_results, check_batch, optional, written};
use crate::domain::code::Code;
use crate::domain::idempotency::Idempotency;
use crate::domain::ids::{BoardSlug, Channel, IdempotencyKey, MemberId, Terminal, VoterId};
use crate::domain::period::parse_instant;
use crate::domain::scoring::Op;
use crate::engine::error::EngineError;
use crate::engine::scores::{self, ScoreWrite};
use crate::engine::state::AppState;
use crate::error::ApiError;

/// One score write for one member.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"member": "u1", "op": "incr", "value": 12.5, "voter": "fan-7", "idempotency_key": "gift-991"}))]
pub struct WriteScoreRequest {
    pub member: String,
    /// `incr` (add), `decr` (subtract), `set` (replace) or `best` (keep the higher).
    pub op: String,
    /// A non-negative number with at most the board's `decimals` decimals.
    #[schema(value_type = f64)]
    pub value: serde_json::Number,
    pub voter: Option<String>,
    pub channel: Option<String>,
    pub terminal: Option<String>,
    /// As for votes: a repeat returns the first answer and changes nothing.
    pub idempotency_key: Option<String>,
    /// RFC 3339 time of the write; needs the `backfill` scope.
    pub at: Option<String>,
    /// The end user's IP address; needs the `trusted` (or `backfill`) scope.
    pub ip: Option<String>,
    /// Write without rate-limit rules; needs the `backfill` scope.
    pub skip_limits: Option<bool>,
}

/// Several score writes; each item is applied or refused on its own.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"voter": "fan-7", "scores": [
    {"board": "gifts", "member": "u1", "op": "incr", "value": 5, "idempotency_key": "gift-992"},
    {"board": "levels", "member": "u1", "op": "best", "value": 31}
]}))]
pub struct WriteScoresRequest {
    pub voter: Option<String>,
    pub channel: Option<String>,
    pub terminal: Option<String>,
    pub ip: Option<String>,
    pub skip_limits: Option<bool>,
    /// At most 100 items. Items are read one by one, so a malformed item fails alone.
    #[schema(value_type = Vec<BatchScore>)]
    pub scores: Vec<Value>,
}

/// The fields of a batch item.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BatchScore {
    pub board: String,
    pub member: String,
    pub op: String,
    #[schema(value_type = f64)]
    pub value: serde_json::Number,
    pub idempotency_key: Option<String>,
    pub at: Option<String>,
}

/// A result per item, in the order of the request.
#[derive(Debug, Serialize, ToSchema)]
pub struct WriteScoresResponse {
    pub results: Vec<BatchResult>,
}

struct Item<'a> {
    board: &'a str,
    member: &'a str,
    op: &'a str,
    value: &'a serde_json::Number,
    idempotency_key: Option<&'a str>,
    at: Option<&'a str>,
}

fn parse_write(item: &Item<'_>, common: &Common<'_>) -> Result<ScoreWrite, EngineError> {
    let board = BoardSlug::parse(item.board)
        .map_err(|e| EngineError::not_found(Code::BoardNotFound, e.message))?;
    let member = MemberId::parse(item.member)?;
    let op = Op::parse(item.op)?;
    let voter = optional(common.voter, VoterId::parse)?;
    let channel = optional(common.channel, Channel::parse)?;
    let terminal = optional(common.terminal, Terminal::parse)?;
    let at = optional(item.at, parse_instant)?;
    let idempotency = optional(item.idempotency_key, IdempotencyKey::parse)?.map(|key| {
        Idempotency::new(
            key,
            &[
                ("board", Some(board.as_str())),
                ("member", Some(member.as_str())),
                ("op", Some(op.as_str())),
                ("value", Some(&item.value.to_string())),
                ("voter", voter.as_ref().map(VoterId::as_str)),
                ("channel", channel.as_ref().map(Channel::as_str)),
                ("terminal", terminal.as_ref().map(Terminal::as_str)),
                ("at", at.map(|t| t.to_rfc3339()).as_deref()),
                ("ip", common.body_ip.map(|ip| ip.to_string()).as_deref()),
                (
                    "skip_limits",
                    Some(if common.skip_limits { "1" } else { "0" }),
                ),
            ],
        )
    });
    Ok(ScoreWrite {
        board,
        member,
        op,
        value: item.value.clone(),
        voter,
        channel,
        terminal,
        idempotency,
        at,
        ip: common.body_ip.or(common.client_ip),
        skip_limits: common.skip_limits,
    })
}

/// Writes one member's score on a scores board.
#[utoipa::path(post, path = "/api/v1/boards/{board}/scores", tag = "votes",
    params(("board" = String, Path, description = "board slug")),
    request_body = WriteScoreRequest,
    responses(
        (status = 200, description = "written, or replayed for a known idempotency key", body = ScoreResult),
        (status = 400, description = "malformed JSON", body = super::ErrorBody),
        (status = 401, description = "no key", body = super::ErrorBody),
        (status = 403, description = "forbidden: the key lacks the vote scope, the backfill scope for `at` or `skip_limits`, or the trusted scope for `ip`", body = super::ErrorBody),
        (status = 404, description = "board_not_found, member_not_found", body = super::ErrorBody),
        (status = 409, description = "wrong_scoring: the board counts votes (POST …/votes); campaign_not_started, campaign_ended, member_disabled", body = super::ErrorBody),
        (status = 422, description = "invalid_op, invalid_value (negative, too many decimals, past 2^53 units), operator_not_allowed (a top_n board's score may not go down), score_overflow, idempotency_key_reused, voter_required (and the other <dimension>_required), invalid_member_id, invalid_timestamp", body = super::ErrorBody),
        (status = 429, description = "rate_limited, as for a vote (a write counts 1)", body = super::RateLimitedBody),
        (status = 503, description = "store_unavailable: with `\"outcome\": \"unknown\"` the write may have been applied; retry with the same idempotency key", body = super::ErrorBody),
    ))]
#[post("/boards/{board}/scores")]
pub async fn write_score(
    state: web::Data<AppState>,
    Voter(caller): Voter,
    client: ClientIp,
    board: web::Path<String>,
    body: web::Json<WriteScoreRequest>,
) -> Result<HttpResponse, ApiError> {
    let common = Common::new(
        body.voter.as_deref(),
        body.channel.as_deref(),
        body.terminal.as_deref(),
        body.ip.as_deref(),
        body.skip_limits,
        client,
        &caller,
    )?;
    let item = Item {
        board: &board,
        member: &body.member,
        op: &body.op,
        value: &body.value,
        idempotency_key: body.idempotency_key.as_deref(),
        at: body.at.as_deref(),
    };
    let write = parse_write(&item, &common)?;
    let mut results = scores::write(
        &state.config,
        &state.redis,
        state.settings.idempotency_ttl,
        &caller,
        vec![Ok(write)],
    )
    .await?;
    let result = results
        .pop()
        .ok_or_else(|| anyhow::anyhow!("no score result"))??;
    Ok(written(result.replayed, &ScoreResult::from(result)))
}

/// Writes up to 100 scores on any scores boards; each item succeeds or fails on its own.
#[utoipa::path(post, path = "/api/v1/scores", tag = "votes",
    request_body = WriteScoresRequest,
    responses(
        (status = 200, description = "a result per item, in order; a refused item carries the same error object as a single write", body = WriteScoresResponse),
        (status = 400, description = "malformed JSON", body = super::ErrorBody),
        (status = 413, description = "batch_too_large: more than 100 items; nothing written", body = super::ErrorBody),
        (status = 422, description = "empty_batch, invalid_field", body = super::ErrorBody),
        (status = 503, description = "store_unavailable with `\"outcome\": \"unknown\"`: some items may have been applied; retry with each item's idempotency key", body = super::ErrorBody),
    ))]
#[post("/scores")]
pub async fn write_scores(
    state: web::Data<AppState>,
    Voter(caller): Voter,
    client: ClientIp,
    body: web::Json<WriteScoresRequest>,
) -> Result<HttpResponse, ApiError> {
    check_batch(body.scores.len(), "scores")?;
    let common = Common::new(
        body.voter.as_deref(),
        body.channel.as_deref(),
        body.terminal.as_deref(),
        body.ip.as_deref(),
        body.skip_limits,
        client,
        &caller,
    )?;
    let parsed = body
        .scores
        .iter()
        .map(|item| {
            let item: BatchScore = serde_json::from_value(item.clone())
                .map_err(|e| EngineError::invalid(Code::InvalidItem, e.to_string()))?;
            parse_write(
                &Item {
                    board: &item.board,
                    member: &item.member,
                    op: &item.op,
                    value: &item.value,
                    idempotency_key: item.idempotency_key.as_deref(),
                    at: item.at.as_deref(),
                },
                &common,
            )
        })
        .collect();
    let results = scores::write(
        &state.config,
        &state.redis,
        state.settings.idempotency_ttl,
        &caller,
        parsed,
    )
    .await?;
    let results = batch_results::<_, ScoreResult>(results);
    Ok(HttpResponse::Ok().json(WriteScoresResponse { results }))
}

/// The member's new scores after a write.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ScoreResult {
    pub board: String,
    pub member: String,
    /// True when this answer repeats the first one for the same idempotency key.
    pub replayed: bool,
    /// One entry per enabled period, shortest first.
    pub scores: Vec<BucketScore>,
}

impl From<scores::ScoreWritten> for ScoreResult {
    fn from(v: scores::ScoreWritten) -> Self {
        Self {
            board: v.board,
            member: v.member,
            replayed: v.replayed,
            scores: v.scores.into_iter().map(Into::into).collect(),
        }
    }
}

/// A member's score in one bucket.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct BucketScore {
    pub period: String,
    pub bucket: String,
    #[schema(value_type = f64)]
    pub score: serde_json::Number,
}

impl From<scores::BucketTotal> for BucketScore {
    fn from(v: scores::BucketTotal) -> Self {
        Self {
            period: v.period,
            bucket: v.bucket,
            score: v.score,
        }
    }
}
