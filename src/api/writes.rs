//! Writing to boards over HTTP, one module for votes and score writes: `POST
//! /boards/{board}/votes` and the batch `POST /votes`, `POST /boards/{board}/scores` and
//! the batch `POST /scores`. Each request is read into `engine::writes::Write`s (the
//! fields every write shares, then what it writes) and answered per write; a batch's
//! items are read one by one, so a malformed item fails alone.

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
use crate::domain::ids::{Channel, IdempotencyKey, MemberId, Terminal, VoterId};
use crate::domain::limit::parse_ip;
use crate::domain::period::parse_instant;
use crate::domain::scoring::Op;
use crate::engine::auth::Caller;
use crate::engine::boards;
use crate::engine::error::EngineError;
use crate::engine::state::AppState;
use crate::engine::writes::{self, What, Write, Written};
use crate::error::ApiError;
use crate::metrics::WriteKind;

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

/// Either `{"ok": true, …VoteResult}` (`…ScoreResult`) or `{"ok": false, "error": {…}}`.
#[derive(Debug, Serialize, ToSchema)]
pub struct BatchResult {
    pub ok: bool,
    #[serde(flatten)]
    #[schema(value_type = Object)]
    pub body: Value,
}

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

/// A value that may be missing, parsed when present.
fn optional<T>(
    raw: Option<&str>,
    parse: fn(&str) -> Result<T, Invalid>,
) -> Result<Option<T>, EngineError> {
    Ok(raw.map(parse).transpose()?)
}

/// The fields of a request that every write in it shares.
struct Common<'a> {
    voter: Option<&'a str>,
    channel: Option<&'a str>,
    terminal: Option<&'a str>,
    /// The address the body names, if any.
    body_ip: Option<IpAddr>,
    /// The connection's (or a trusted proxy's) address.
    client_ip: Option<IpAddr>,
    skip_limits: bool,
}

impl<'a> Common<'a> {
    fn new(body: &'a impl Request, client: ClientIp, caller: &Caller) -> Result<Self, EngineError> {
        let Shared {
            voter,
            channel,
            terminal,
            ip,
            skip_limits,
        } = body.shared();
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

/// A request's fields that every write in it shares, as sent.
struct Shared<'a> {
    voter: Option<&'a str>,
    channel: Option<&'a str>,
    terminal: Option<&'a str>,
    ip: Option<&'a str>,
    skip_limits: Option<bool>,
}

/// A request of writes: it names what they share.
trait Request {
    fn shared(&self) -> Shared<'_>;
}

/// A request of one write, on the board its path names.
trait Single: Request {
    fn item<'a>(&'a self, board: &'a str) -> Result<Item<'a>, EngineError>;
}

/// A request of many writes, each read on its own.
trait Batch: Request {
    /// What each item is.
    type Item: serde::de::DeserializeOwned + BatchItem;
    /// What the items are called in errors (`votes`, `scores`).
    const ITEMS: &'static str;
    fn items(&self) -> &[Value];
}

/// A batch item: a write with its own board.
trait BatchItem {
    fn item(&self) -> Result<Item<'_>, EngineError>;
}

macro_rules! requests {
    ($($request:ty),*) => {$(
        impl Request for $request {
            fn shared(&self) -> Shared<'_> {
                Shared {
                    voter: self.voter.as_deref(),
                    channel: self.channel.as_deref(),
                    terminal: self.terminal.as_deref(),
                    ip: self.ip.as_deref(),
                    skip_limits: self.skip_limits,
                }
            }
        }
    )*};
}

requests!(
    CastVoteRequest,
    CastVotesRequest,
    WriteScoreRequest,
    WriteScoresRequest
);

impl Single for CastVoteRequest {
    fn item<'a>(&'a self, board: &'a str) -> Result<Item<'a>, EngineError> {
        Ok(Item {
            board,
            member: &self.member,
            what: What::Vote {
                count: self.count.unwrap_or(1),
            },
            idempotency_key: self.idempotency_key.as_deref(),
            at: self.at.as_deref(),
        })
    }
}

impl Single for WriteScoreRequest {
    fn item<'a>(&'a self, board: &'a str) -> Result<Item<'a>, EngineError> {
        Ok(Item {
            board,
            member: &self.member,
            what: score(&self.op, &self.value)?,
            idempotency_key: self.idempotency_key.as_deref(),
            at: self.at.as_deref(),
        })
    }
}

impl Batch for CastVotesRequest {
    type Item = BatchVote;
    const ITEMS: &'static str = "votes";
    fn items(&self) -> &[Value] {
        &self.votes
    }
}

impl Batch for WriteScoresRequest {
    type Item = BatchScore;
    const ITEMS: &'static str = "scores";
    fn items(&self) -> &[Value] {
        &self.scores
    }
}

impl BatchItem for BatchVote {
    fn item(&self) -> Result<Item<'_>, EngineError> {
        Ok(Item {
            board: &self.board,
            member: &self.member,
            what: What::Vote {
                count: self.count.unwrap_or(1),
            },
            idempotency_key: self.idempotency_key.as_deref(),
            at: self.at.as_deref(),
        })
    }
}

impl BatchItem for BatchScore {
    fn item(&self) -> Result<Item<'_>, EngineError> {
        Ok(Item {
            board: &self.board,
            member: &self.member,
            what: score(&self.op, &self.value)?,
            idempotency_key: self.idempotency_key.as_deref(),
            at: self.at.as_deref(),
        })
    }
}

/// One write's own fields, as a request carries them.
struct Item<'a> {
    board: &'a str,
    member: &'a str,
    what: What,
    idempotency_key: Option<&'a str>,
    at: Option<&'a str>,
}

/// Reads one write. Its idempotency fingerprint is the request as the body says it,
/// normalised (a retry matches whatever the connection's address is by then), field by
/// field in an order that must not change: records made before would no longer match.
fn parse_write(item: Item<'_>, common: &Common<'_>) -> Result<Write, EngineError> {
    let board = boards::parse_name(item.board)?;
    let member = MemberId::parse(item.member)?;
    let voter = optional(common.voter, VoterId::parse)?;
    let channel = optional(common.channel, Channel::parse)?;
    let terminal = optional(common.terminal, Terminal::parse)?;
    let at = optional(item.at, parse_instant)?;
    let idempotency = optional(item.idempotency_key, IdempotencyKey::parse)?.map(|key| {
        let (count, op, value) = match &item.what {
            What::Vote { count } => (Some(count.to_string()), None, None),
            What::Score { op, value } => (None, Some(op.as_str()), Some(value.to_string())),
        };
        let mut fields = vec![
            ("board", Some(item.board)),
            ("member", Some(member.as_str())),
        ];
        if op.is_some() {
            fields.extend([("op", op), ("value", value.as_deref())]);
        }
        fields.push(("voter", voter.as_ref().map(VoterId::as_str)));
        if count.is_some() {
            fields.push(("count", count.as_deref()));
        }
        let at = at.map(|t| t.to_rfc3339());
        let ip = common.body_ip.map(|ip| ip.to_string());
        fields.extend([
            ("channel", channel.as_ref().map(Channel::as_str)),
            ("terminal", terminal.as_ref().map(Terminal::as_str)),
            ("at", at.as_deref()),
            ("ip", ip.as_deref()),
            (
                "skip_limits",
                Some(if common.skip_limits { "1" } else { "0" }),
            ),
        ]);
        Idempotency::new(key, &fields)
    });
    Ok(Write {
        board,
        member,
        what: item.what,
        voter,
        channel,
        terminal,
        idempotency,
        at,
        ip: common.body_ip.or(common.client_ip),
        skip_limits: common.skip_limits,
        releases: None,
    })
}

/// What a score item writes: its operator, and its value as sent.
fn score(op: &str, value: &serde_json::Number) -> Result<What, EngineError> {
    Ok(What::Score {
        op: Op::parse(op)?,
        value: value.clone(),
    })
}

/// Applies the one write of `body` on `board` and answers it as `A`.
async fn write_one<A: From<Written> + Serialize>(
    state: &AppState,
    caller: &Caller,
    client: ClientIp,
    kind: WriteKind,
    board: &str,
    body: &impl Single,
) -> Result<HttpResponse, ApiError> {
    let common = Common::new(body, client, caller)?;
    let write = parse_write(body.item(board)?, &common)?;
    let result = writes::apply(state, caller, kind, vec![Ok(write)])
        .await?
        .pop()
        .ok_or_else(|| anyhow::anyhow!("no write result"))??;
    Ok(written(result.replayed, &A::from(result)))
}

/// Applies the writes of `body`, each read on its own (a malformed item is that item's
/// error), and answers a result per item, each as `A`.
async fn write_batch<A: From<Written> + Serialize, B: Batch>(
    state: &AppState,
    caller: &Caller,
    client: ClientIp,
    kind: WriteKind,
    body: &B,
) -> Result<Vec<BatchResult>, ApiError> {
    check_batch(body.items().len(), B::ITEMS)?;
    let common = Common::new(body, client, caller)?;
    let items = body
        .items()
        .iter()
        .map(|raw| {
            let item: B::Item = serde_json::from_value(raw.clone())
                .map_err(|e| EngineError::invalid(Code::InvalidItem, e.to_string()))?;
            parse_write(item.item()?, &common)
        })
        .collect();
    let results = writes::apply(state, caller, kind, items).await?;
    Ok(results
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
        .collect())
}

/// Casts one vote. `Authorization: Bearer` carries an API key with the `vote` scope, or
/// a voter's token from an identity provider the board accepts (the key decides when the
/// value is a key): the token's voter casts it, and a browser on one of the board's
/// `embed_origins` may post it (CORS).
#[utoipa::path(post, path = "/api/v1/boards/{board}/votes", tag = "votes",
    params(("board" = String, Path, description = "board slug")),
    request_body = CastVoteRequest,
    responses(
        (status = 200, description = "counted, or replayed for a known idempotency key", body = VoteResult),
        (status = 400, description = "malformed JSON", body = super::ErrorBody),
        (status = 401, description = "unauthorized: no key; token_too_large, token_malformed, token_algorithm_refused, token_unknown_key, token_bad_signature, token_wrong_issuer, token_wrong_audience, token_expired, token_not_yet_valid, token_too_old, token_claims_invalid: a voter's token refused", body = super::ErrorBody),
        (status = 403, description = "forbidden: the key lacks the vote scope, the backfill scope for `at` or `skip_limits`, or the trusted scope for `ip`; provider_not_accepted: the board does not take the token's identity provider; voter_mismatch: the body names another voter than the token", body = super::ErrorBody),
        (status = 404, description = "board_not_found, member_not_found", body = super::ErrorBody),
        (status = 409, description = "wrong_scoring: the board keeps scores (POST …/scores); campaign_not_started, campaign_ended, member_disabled; family_full (a family's room would open past its `instances.max_live`)", body = super::ErrorBody),
        (status = 422, description = "invalid_count, invalid_member_id, invalid_timestamp, invalid_ip, invalid_field, score_overflow (past 2^53 units; on a sharded board, past 2^53 / shards in the vote's shard), voter_required (and the other <dimension>_required), count_exceeds_limit; idempotency_key_reused: the key came with a different request before, nothing counted (use a new key for a new vote)", body = super::ErrorBody),
        (status = 429, description = "rate_limited: `rule` names the rule, `retry_after_s` (also the Retry-After header) when it admits the vote again, null for never; on a family, also a rule of rooms opened (dimensions creator) refusing the write that would open a room", body = super::RateLimitedBody),
        (status = 503, description = "store_unavailable: with `\"outcome\": \"unknown\"` the vote may have counted; retry after Retry-After with the same idempotency key; jwks_unavailable: the token's identity provider's keys cannot be fetched", body = super::ErrorBody),
    ))]
#[post(
    "/boards/{board}/votes",
    wrap = "actix_web::middleware::from_fn(super::vote_cors::on_votes)"
)]
pub async fn cast_vote(
    state: web::Data<AppState>,
    Voter(caller): Voter,
    client: ClientIp,
    board: web::Path<String>,
    body: web::Json<CastVoteRequest>,
) -> Result<HttpResponse, ApiError> {
    write_one::<VoteResult>(&state, &caller, client, WriteKind::Vote, &board, &*body).await
}

/// Casts up to 100 votes on any boards; each item succeeds or fails on its own.
#[utoipa::path(post, path = "/api/v1/votes", tag = "votes",
    request_body = CastVotesRequest,
    responses(
        (status = 200, description = "a result per item, in order; a refused item carries the same error object as a single vote (rate_limited with rule and retry_after_s, …)", body = CastVotesResponse),
        (status = 400, description = "malformed JSON", body = super::ErrorBody),
        (status = 401, description = "unauthorized, or a voter's token refused (token_* codes, as for a single vote); provider_not_accepted and voter_mismatch are items' errors", body = super::ErrorBody),
        (status = 413, description = "batch_too_large: more than 100 items; nothing counted", body = super::ErrorBody),
        (status = 422, description = "empty_batch, invalid_field", body = super::ErrorBody),
        (status = 503, description = "store_unavailable with `\"outcome\": \"unknown\"`: Redis did not answer, some items may have counted; retry with each item's idempotency key. An item Redis refused answers its own error in `results` instead; jwks_unavailable", body = super::ErrorBody),
    ))]
#[post("/votes")]
pub async fn cast_votes(
    state: web::Data<AppState>,
    Voter(caller): Voter,
    client: ClientIp,
    body: web::Json<CastVotesRequest>,
) -> Result<HttpResponse, ApiError> {
    let results =
        write_batch::<VoteResult, _>(&state, &caller, client, WriteKind::Vote, &*body).await?;
    Ok(HttpResponse::Ok().json(CastVotesResponse { results }))
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
        (status = 409, description = "wrong_scoring: the board counts votes (POST …/votes); campaign_not_started, campaign_ended, member_disabled; family_full (a family's room would open past its `instances.max_live`)", body = super::ErrorBody),
        (status = 422, description = "invalid_op, invalid_value (negative, too many decimals, past 2^53 units), operator_not_allowed (a top_n board's score may not go down; set and best on a board keeping rolling windows or trending periods), score_overflow, idempotency_key_reused, voter_required (and the other <dimension>_required), invalid_member_id, invalid_timestamp", body = super::ErrorBody),
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
    write_one::<ScoreResult>(&state, &caller, client, WriteKind::Score, &board, &*body).await
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
    let results =
        write_batch::<ScoreResult, _>(&state, &caller, client, WriteKind::Score, &*body).await?;
    Ok(HttpResponse::Ok().json(WriteScoresResponse { results }))
}

/// Refuses a batch (`items`: what it holds) that is empty or holds more than
/// [`MAX_BATCH`] items, before anything is written.
fn check_batch(len: usize, items: &str) -> Result<(), ApiError> {
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

/// The member's new scores after a vote.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct VoteResult {
    pub board: String,
    pub member: String,
    /// True when this answer repeats the first one for the same idempotency key.
    pub replayed: bool,
    /// Present (`true`) when one of the board's watches held the vote for review and
    /// the board tells voters so (`tell_held`): it counts nowhere until reviewed, and
    /// the scores are the member's as they stand.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub held: bool,
    /// One entry per enabled period, shortest first.
    pub scores: Vec<PeriodScore>,
}

impl From<Written> for VoteResult {
    fn from(v: Written) -> Self {
        Self {
            board: v.board,
            member: v.member,
            replayed: v.replayed,
            held: v.held,
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

impl From<writes::BucketTotals> for PeriodScore {
    fn from(v: writes::BucketTotals) -> Self {
        Self {
            period: v.period,
            bucket: v.bucket,
            real: v.real,
            display: v.display,
        }
    }
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

impl From<Written> for ScoreResult {
    fn from(v: Written) -> Self {
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

impl From<writes::BucketTotals> for BucketScore {
    fn from(v: writes::BucketTotals) -> Self {
        Self {
            period: v.period,
            bucket: v.bucket,
            score: v.real,
        }
    }
}
