//! A board's vote ledger, for auditors: pages by `seq`, or every entry as NDJSON; a
//! recount of the board from it.

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, get, post, web};
use chrono::{DateTime, Utc};
use futures_util::StreamExt;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::board_slug;
use crate::api::auth::Admin;
use crate::domain::ledger::Recorded;
use crate::domain::score::View;
use crate::domain::scoring::to_points;
use crate::engine::state::AppState;
use crate::engine::{boards, ledger, recount};
use crate::error::ApiError;

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct LedgerQuery {
    /// Entries after this `seq` (default 0: from the first).
    pub after: Option<i64>,
    /// Default 1000, at most 10,000 (a page only; the NDJSON stream has no limit).
    pub limit: Option<i64>,
}

/// One accepted write, as the ledger keeps it.
#[derive(Debug, Serialize, ToSchema)]
pub struct LedgerEntry {
    /// 1, 2, 3, … per board, without gaps, in the order the board accepted its writes.
    pub seq: i64,
    /// The write's own id, unique in the board's ledger.
    pub id: i64,
    /// The write's time: a backfill's `at`, else when it arrived.
    pub at: DateTime<Utc>,
    /// When the write arrived.
    pub recorded_at: DateTime<Utc>,
    pub member: String,
    pub voter: Option<String>,
    pub channel: Option<String>,
    pub terminal: Option<String>,
    /// Votes (1 for a score write; an adjustment's real-view change).
    pub count: i64,
    /// A vote: what it added to the display view (votes × multiplier).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<f64>)]
    pub display: Option<serde_json::Number>,
    /// A vote: what it carried into the next bucket's display view.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<f64>)]
    pub carry: Option<serde_json::Number>,
    /// A score write: `incr`, `decr`, `set` or `best`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub op: Option<String>,
    /// A score write: its value.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<f64>)]
    pub value: Option<serde_json::Number>,
    /// The revocation that struck it out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revoked: Option<i64>,
    /// An adjustment (`POST …/members/{member}/adjustments`): the one bucket it changed,
    /// as `<period>:<label>`; its `at` is that bucket's start (`all`: when it was made),
    /// its `count` what it added to the real view, `display` to the display view.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub adjusts: Option<String>,
    /// The end user's address, recorded on a board with watches.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ip: Option<String>,
    /// A vote a watch held for review: it counts nowhere.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub held: Option<HeldMark>,
    /// A held vote released by a review: the `id` of the held entry this entry counts,
    /// at that vote's time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub releases: Option<i64>,
}

/// Which watch held a vote, and the subject it counted the vote under: the vote's value
/// for each of the watch's dimensions, each prefixed with its length in bytes and a dot,
/// joined by `|` in the order the watch lists them (`2.m3|14.203.0.113.0/24`).
#[derive(Debug, Serialize, ToSchema)]
pub struct HeldMark {
    pub watch: i64,
    pub subject: String,
}

impl LedgerEntry {
    fn of(r: Recorded, decimals: u8) -> Self {
        let e = r.entry;
        let time = |ms: i64| DateTime::from_timestamp_millis(ms).unwrap_or_default();
        let vote = e.op.is_none();
        Self {
            seq: r.seq,
            id: e.id,
            at: time(e.at),
            recorded_at: time(e.recorded),
            member: e.member,
            voter: e.voter,
            channel: e.channel,
            terminal: e.terminal,
            count: e.count,
            display: vote.then(|| View::Display.to_votes(e.display)),
            carry: vote.then(|| View::Display.to_votes(e.carry)),
            op: e.op.map(|o| o.as_str().to_owned()),
            value: e.value.map(|v| to_points(v, decimals)),
            revoked: r.revoked,
            adjusts: e.adjusts,
            ip: e.ip,
            held: e.held.map(|h| HeldMark {
                watch: h.watch,
                subject: h.subject,
            }),
            releases: e.releases,
        }
    }
}

/// A page of a board's ledger.
#[derive(Debug, Serialize, ToSchema)]
pub struct LedgerResponse {
    pub entries: Vec<LedgerEntry>,
    /// `after` for the next page; null at the end.
    pub next_after: Option<i64>,
    /// Accepted writes still in Redis, not yet in SQL (within seconds they are).
    pub pending: u64,
}

/// A board's ledger: every write it accepted, in order. With `Accept:
/// application/x-ndjson`, every entry after `after` as one JSON object a line (no
/// `limit`; `pending` is then in the `X-Ledger-Pending` header), streamed from SQL: at
/// most `OVATION_EXPORTS_MAX` at once per instance, a reader that takes nothing for
/// `OVATION_STALL_TIMEOUT_MS` cut off (the body then ends without its last chunk).
#[utoipa::path(get, path = "/api/v1/admin/boards/{board}/ledger", tag = "admin",
    params(("board" = String, Path, description = "the board's slug, or `<family>:<instance>` for an instance of a family, whose ledger is its own"), LedgerQuery),
    responses(
        (status = 200, description = "a page (`application/json`), or every entry after `after`, one `LedgerEntry` a line (`application/x-ndjson`)",
            content((LedgerResponse = "application/json"), (LedgerEntry = "application/x-ndjson"))),
        (status = 404, description = "board_not_found (also for an instance of a board that is not a family)", body = crate::api::ErrorBody),
        (status = 422, description = "invalid_field (after, limit); instance_required (a family named without an instance); invalid_instance", body = crate::api::ErrorBody),
        (status = 503, description = "too_many_exports: `OVATION_EXPORTS_MAX` NDJSON exports already run on this instance (`Retry-After: 5`, before any body); store_unavailable", body = crate::api::ErrorBody),
    ))]
#[get("/boards/{board}/ledger")]
pub async fn get_ledger(
    state: web::Data<AppState>,
    _admin: Admin,
    req: HttpRequest,
    board: web::Path<String>,
    query: web::Query<LedgerQuery>,
) -> Result<HttpResponse, ApiError> {
    let name = boards::parse_name(&board)?;
    let after = query.after.unwrap_or(0);
    let decimals = boards::board_of(&state, &name.slug)?
        .board
        .settings
        .scoring
        .decimals();
    if wants_ndjson(&req) {
        let pending = ledger::pending(&state, &name).await?;
        let entries = ledger::export(&state, &name, after)
            .await?
            .map(move |entry| {
                let entry = entry.map_err(|err| {
                    tracing::error!(error = %err, "the ledger stream stopped");
                    std::io::Error::other("the ledger stream stopped")
                })?;
                let mut line = serde_json::to_vec(&LedgerEntry::of(entry, decimals))
                    .map_err(std::io::Error::other)?;
                line.push(b'\n');
                Ok::<_, std::io::Error>(web::Bytes::from(line))
            });
        return Ok(HttpResponse::Ok()
            .content_type("application/x-ndjson")
            .insert_header(("X-Ledger-Pending", pending.to_string()))
            .streaming(entries));
    }
    let page = ledger::page(&state, &name, after, query.limit.unwrap_or(1000)).await?;
    Ok(HttpResponse::Ok().json(LedgerResponse {
        entries: page
            .entries
            .into_iter()
            .map(|e| LedgerEntry::of(e, decimals))
            .collect(),
        next_after: page.next_after,
        pending: page.pending,
    }))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct RecountQuery {
    /// Set every score that differs to the recount (default false: compare only).
    pub repair: Option<bool>,
}

/// One score that differs from the ledger.
#[derive(Debug, Serialize, ToSchema)]
pub struct MismatchInfo {
    pub period: String,
    pub bucket: String,
    /// `real` or `display`.
    pub view: String,
    pub member: String,
    /// What Redis holds (0: nothing).
    #[schema(value_type = f64)]
    pub live: serde_json::Number,
    /// What the ledger adds up to.
    #[schema(value_type = f64)]
    pub recounted: serde_json::Number,
    /// Set to the recount (`repair=true`; false when the score moved meanwhile).
    pub repaired: bool,
    /// On a sharded `votes` board, the shard whose part of the member's score differs
    /// (`live` and `recounted` are that part); absent on other boards.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shard: Option<usize>,
}

/// What a recount found.
#[derive(Debug, Serialize, ToSchema)]
pub struct RecountResponse {
    /// Buckets compared (every calendar period's, both views).
    pub buckets: u64,
    /// Ledger entries replayed (revoked ones apart).
    pub entries: u64,
    /// Closed buckets Redis no longer holds (archived and released), not compared.
    pub skipped: u64,
    /// The differences, at most 10,000 listed.
    pub mismatches: Vec<MismatchInfo>,
    /// Every difference found, listed or not.
    pub mismatched: u64,
    /// Differences set to the recount.
    pub repaired: u64,
    /// Ranges of `seq` SQL lost after Redis had trimmed them (SQL restored from an older
    /// backup): their entries are in neither store and are not counted. Empty when none.
    pub gaps: Vec<SeqRange>,
}

/// A range of a ledger's `seq`, both ends included.
#[derive(Debug, Serialize, ToSchema)]
pub struct SeqRange {
    pub from: i64,
    pub to: i64,
}

/// Recounts a `votes` board from its ledger — every bucket of every calendar period, both
/// views, carry-over and initial votes — and compares it with Redis; `repair=true` sets
/// what differs to the recount (audited). Votes may go on meanwhile: a difference in a
/// bucket still taking votes is reported only when it holds still.
#[utoipa::path(post, path = "/api/v1/admin/boards/{board}/recount", tag = "admin",
    params(("board" = String, Path), RecountQuery),
    responses(
        (status = 200, body = RecountResponse),
        (status = 404, description = "board_not_found", body = crate::api::ErrorBody),
        (status = 409, description = "wrong_scoring: a scores board (its set and best depend on the order writes arrived in)", body = crate::api::ErrorBody),
        (status = 422, description = "not_for_family: a family (its instances' ledgers are read, not recounted)", body = crate::api::ErrorBody),
        (status = 503, description = "store_unavailable: Redis or SQL did not answer, or the ledger did not catch up within 10 s", body = crate::api::ErrorBody),
    ))]
#[post("/boards/{board}/recount")]
pub async fn recount_board(
    state: web::Data<AppState>,
    Admin(caller): Admin,
    board: web::Path<String>,
    query: web::Query<RecountQuery>,
) -> Result<HttpResponse, ApiError> {
    let slug = board_slug(&board)?;
    let found = recount::recount(
        &state,
        &caller.actor,
        &slug,
        query.repair.unwrap_or(false),
        &|_, _| {},
    )
    .await?;
    Ok(HttpResponse::Ok().json(RecountResponse {
        buckets: found.buckets,
        entries: found.entries,
        skipped: found.skipped,
        mismatches: found
            .mismatches
            .into_iter()
            .map(|m| MismatchInfo {
                period: m.period.to_string(),
                bucket: m.bucket,
                view: m.view.as_str().to_owned(),
                member: m.member,
                live: m.view.to_votes(m.live),
                recounted: m.view.to_votes(m.recounted),
                repaired: m.repaired,
                shard: m.shard,
            })
            .collect(),
        mismatched: found.mismatched,
        repaired: found.repaired,
        gaps: found
            .gaps
            .iter()
            .map(|&(from, to)| SeqRange { from, to })
            .collect(),
    }))
}

fn wants_ndjson(req: &HttpRequest) -> bool {
    req.headers()
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("application/x-ndjson"))
}
