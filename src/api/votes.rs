//! `POST /boards/{board}/votes` and the batch `POST /votes`.

use std::net::IpAddr;

use actix_web::{HttpResponse, post, web};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use super::auth::Voter;
use super::client_ip::ClientIp;
use crate::domain::Invalid;
use crate::domain::auth::Scope;
use crate::domain::code::Code;
use crate::domain::idempotency::Idempotency;
use crate::domain::ids::{BoardSlug, Channel, IdempotencyKey, MemberId, Terminal, VoterId};
use crate::domain::limit::parse_ip;
use crate::domain::period::parse_instant;
use crate::engine::auth::Caller;
use crate::engine::error::EngineError;
use crate::engine::state::AppState;
use crate::engine::votes::{self, Vote};
use crate::error::ApiError;

/// Items per batch at most.
pub const MAX_BATCH: usize = 100;

/// One vote for one member.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"member": "m1", "voter": "u123", "count": 1, "channel": "app", "terminal": "ios", "idempotency_key": "order-42"}))]
pub struct CastVoteRequest {
    pub member: String,
    pub voter: Option<String>,
    /// Votes at once (default 1, at most the board's `max_count`).
    pub count: Option<i64>,
    pub channel: Option<String>,
    pub terminal: Option<String>,
    /// A repeat of the same request with the same key (from the same API key, within 24
    /// hours) returns the first answer and counts nothing; the same key with a different
    /// request is a 422 `idempotency_key_reused`.
    pub idempotency_key: Option<String>,
    /// RFC 3339 time of the vote; needs the `backfill` scope.
    pub at: Option<String>,
    /// The end user's IP address, when an API client votes on their behalf; needs the
    /// `trusted` (or `backfill`) scope. Default: the connection's (or a trusted proxy's
    /// `X-Forwarded-For`).
    pub ip: Option<String>,
    /// Cast without rate-limit rules; needs the `backfill` scope.
    pub skip_limits: Option<bool>,
}

/// Several votes; each item is applied or refused on its own.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"voter": "u123", "channel": "app", "votes": [
    {"board": "stars", "member": "m1", "count": 1, "idempotency_key": "order-43"},
    {"board": "stars", "member": "m2", "idempotency_key": "order-44"}
]}))]
pub struct CastVotesRequest {
    pub voter: Option<String>,
    pub channel: Option<String>,
    pub terminal: Option<String>,
    /// The end user's IP address (see the single vote; needs the `trusted` scope).
    pub ip: Option<String>,
    /// Cast every item without rate-limit rules; needs the `backfill` scope.
    pub skip_limits: Option<bool>,
    /// At most 100 items. Items are read one by one, so a malformed item fails alone.
    #[schema(value_type = Vec<BatchVote>)]
    pub votes: Vec<Value>,
}

/// The fields of a batch item.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BatchVote {
    pub board: String,
    pub member: String,
    pub count: Option<i64>,
    pub idempotency_key: Option<String>,
    pub at: Option<String>,
}

/// A result per item, in the order of the request.
#[derive(Debug, Serialize, ToSchema)]
pub struct CastVotesResponse {
    pub results: Vec<BatchResult>,
}

/// Either `{"ok": true, …VoteResult}` or `{"ok": false, "error": {…}}`.
#[derive(Debug, Serialize, ToSchema)]
pub struct BatchResult {
    pub ok: bool,
    #[serde(flatten)]
    #[schema(value_type = Object)]
    pub body: Value,
}

pub(super) fn optional<T>(
    raw: Option<&str>,
    parse: fn(&str) -> Result<T, Invalid>,
) -> Result<Option<T>, EngineError> {
    Ok(raw.map(parse).transpose()?)
}

pub(super) struct Common<'a> {
    pub(super) voter: Option<&'a str>,
    pub(super) channel: Option<&'a str>,
    pub(super) terminal: Option<&'a str>,
    /// The address the body names, if any.
    pub(super) body_ip: Option<IpAddr>,
    /// The connection's (or a trusted proxy's) address.
    pub(super) client_ip: Option<IpAddr>,
    pub(super) skip_limits: bool,
}

impl<'a> Common<'a> {
    pub(super) fn new(
        voter: Option<&'a str>,
        channel: Option<&'a str>,
        terminal: Option<&'a str>,
        ip: Option<&str>,
        skip_limits: Option<bool>,
        client: ClientIp,
        caller: &Caller,
    ) -> Result<Self, EngineError> {
        // Anyone could defeat every `ip` rule by naming a fresh address: only a key that
        // speaks for its end users may.
        if ip.is_some() && !(caller.has(Scope::Trusted) || caller.has(Scope::Backfill)) {
            return Err(EngineError::forbidden(
                Code::Forbidden,
                "setting a vote's ip needs a key with the trusted (or backfill) scope",
            ));
        }
        Ok(Self {
            voter,
            channel,
            terminal,
            body_ip: optional(ip, parse_ip)?,
            client_ip: client.0,
            skip_limits: skip_limits.unwrap_or(false),
        })
    }
}

fn parse_vote(
    board: &str,
    member: &str,
    count: Option<i64>,
    idempotency_key: Option<&str>,
    at: Option<&str>,
    common: &Common<'_>,
) -> Result<Vote, EngineError> {
    let board = BoardSlug::parse(board)
        .map_err(|e| EngineError::not_found(Code::BoardNotFound, e.message))?;
    let member = MemberId::parse(member)?;
    let voter = optional(common.voter, VoterId::parse)?;
    let count = count.unwrap_or(1);
    let channel = optional(common.channel, Channel::parse)?;
    let terminal = optional(common.terminal, Terminal::parse)?;
    let at = optional(at, parse_instant)?;
    let idempotency = optional(idempotency_key, IdempotencyKey::parse)?.map(|key| {
        // The request as the body says it, normalised: a retry matches whatever the
        // connection's address is by then.
        Idempotency::new(
            key,
            &[
                ("board", Some(board.as_str())),
                ("member", Some(member.as_str())),
                ("voter", voter.as_ref().map(VoterId::as_str)),
                ("count", Some(&count.to_string())),
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
    Ok(Vote {
        board,
        member,
        voter,
        count,
        channel,
        terminal,
        idempotency,
        at,
        ip: common.body_ip.or(common.client_ip),
        skip_limits: common.skip_limits,
    })
}

/// Casts one vote.
#[utoipa::path(post, path = "/api/v1/boards/{board}/votes", tag = "votes",
    params(("board" = String, Path, description = "board slug")),
    request_body = CastVoteRequest,
    responses(
        (status = 200, description = "counted, or replayed for a known idempotency key", body = VoteResult),
        (status = 400, description = "malformed JSON", body = super::ErrorBody),
        (status = 401, description = "no key", body = super::ErrorBody),
        (status = 403, description = "forbidden: the key lacks the vote scope, the backfill scope for `at` or `skip_limits`, or the trusted scope for `ip`", body = super::ErrorBody),
        (status = 404, description = "board_not_found, member_not_found", body = super::ErrorBody),
        (status = 409, description = "wrong_scoring: the board keeps scores (POST …/scores); campaign_not_started, campaign_ended, member_disabled", body = super::ErrorBody),
        (status = 422, description = "invalid_count, invalid_member_id, invalid_timestamp, invalid_ip, invalid_field, score_overflow, voter_required (and the other <dimension>_required), count_exceeds_limit; idempotency_key_reused: the key came with a different request before, nothing counted (use a new key for a new vote)", body = super::ErrorBody),
        (status = 429, description = "rate_limited: `rule` names the rule, `retry_after_s` (also the Retry-After header) when it admits the vote again, null for never", body = super::RateLimitedBody),
        (status = 503, description = "store_unavailable: with `\"outcome\": \"unknown\"` the vote may have counted; retry after Retry-After with the same idempotency key", body = super::ErrorBody),
    ))]
#[post("/boards/{board}/votes")]
pub async fn cast_vote(
    state: web::Data<AppState>,
    Voter(caller): Voter,
    client: ClientIp,
    board: web::Path<String>,
    body: web::Json<CastVoteRequest>,
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
    let vote = parse_vote(
        &board,
        &body.member,
        body.count,
        body.idempotency_key.as_deref(),
        body.at.as_deref(),
        &common,
    )?;
    let mut results = votes::cast(
        &state.config,
        &state.redis,
        state.settings.idempotency_ttl,
        &caller,
        vec![Ok(vote)],
    )
    .await?;
    let result = results
        .pop()
        .ok_or_else(|| anyhow::anyhow!("no vote result"))??;
    Ok(written(result.replayed, &VoteResult::from(result)))
}

/// Casts up to 100 votes on any boards; each item succeeds or fails on its own.
#[utoipa::path(post, path = "/api/v1/votes", tag = "votes",
    request_body = CastVotesRequest,
    responses(
        (status = 200, description = "a result per item, in order; a refused item carries the same error object as a single vote (rate_limited with rule and retry_after_s, …)", body = CastVotesResponse),
        (status = 400, description = "malformed JSON", body = super::ErrorBody),
        (status = 413, description = "batch_too_large: more than 100 items; nothing counted", body = super::ErrorBody),
        (status = 422, description = "empty_batch, invalid_field", body = super::ErrorBody),
        (status = 503, description = "store_unavailable with `\"outcome\": \"unknown\"`: Redis did not answer, some items may have counted; retry with each item's idempotency key. An item Redis refused answers its own error in `results` instead", body = super::ErrorBody),
    ))]
#[post("/votes")]
pub async fn cast_votes(
    state: web::Data<AppState>,
    Voter(caller): Voter,
    client: ClientIp,
    body: web::Json<CastVotesRequest>,
) -> Result<HttpResponse, ApiError> {
    check_batch(body.votes.len(), "votes")?;
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
        .votes
        .iter()
        .map(|item| {
            let item: BatchVote = serde_json::from_value(item.clone())
                .map_err(|e| EngineError::invalid(Code::InvalidItem, e.to_string()))?;
            parse_vote(
                &item.board,
                &item.member,
                item.count,
                item.idempotency_key.as_deref(),
                item.at.as_deref(),
                &common,
            )
        })
        .collect();
    let results = votes::cast(
        &state.config,
        &state.redis,
        state.settings.idempotency_ttl,
        &caller,
        parsed,
    )
    .await?;
    let results = batch_results::<_, VoteResult>(results);
    Ok(HttpResponse::Ok().json(CastVotesResponse { results }))
}

/// Refuses a batch (`items`: what it holds) that is empty or holds more than
/// [`MAX_BATCH`] items, before anything is written.
pub(super) fn check_batch(len: usize, items: &str) -> Result<(), ApiError> {
    if len > MAX_BATCH {
        return Err(ApiError::too_large(
            Code::BatchTooLarge,
            format!("a batch holds at most {MAX_BATCH} {items}, got {len}"),
        ));
    }
    if len == 0 {
        return Err(ApiError::invalid(
            Code::EmptyBatch,
            format!("{items} must hold at least one item"),
        ));
    }
    Ok(())
}

/// The 200 of one write, marked `Idempotent-Replayed` when it repeats the first answer.
pub(super) fn written(replayed: bool, result: &impl Serialize) -> HttpResponse {
    let mut response = HttpResponse::Ok();
    if replayed {
        response.insert_header(("Idempotent-Replayed", "true"));
    }
    response.json(result)
}

/// A batch's answers, one per item in order: each result as its API answer `A`.
pub(super) fn batch_results<T, A: From<T> + Serialize>(
    results: Vec<Result<T, EngineError>>,
) -> Vec<BatchResult> {
    results
        .into_iter()
        .map(|r| match r {
            Ok(result) => BatchResult {
                ok: true,
                body: serde_json::to_value(A::from(result)).unwrap_or_default(),
            },
            Err(err) => BatchResult {
                ok: false,
                body: ApiError::from(err).body(),
            },
        })
        .collect()
}

/// The member's new scores after a vote.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct VoteResult {
    pub board: String,
    pub member: String,
    /// True when this answer repeats the first one for the same idempotency key.
    pub replayed: bool,
    /// One entry per enabled period, shortest first.
    pub scores: Vec<PeriodScore>,
}

impl From<votes::VoteCounted> for VoteResult {
    fn from(v: votes::VoteCounted) -> Self {
        Self {
            board: v.board,
            member: v.member,
            replayed: v.replayed,
            scores: v.scores.into_iter().map(Into::into).collect(),
        }
    }
}

/// A member's scores in one bucket.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PeriodScore {
    pub period: String,
    pub bucket: String,
    #[schema(value_type = f64)]
    pub real: serde_json::Number,
    #[schema(value_type = f64)]
    pub display: serde_json::Number,
}

impl From<votes::PeriodTotals> for PeriodScore {
    fn from(v: votes::PeriodTotals) -> Self {
        Self {
            period: v.period,
            bucket: v.bucket,
            real: v.real,
            display: v.display,
        }
    }
}
