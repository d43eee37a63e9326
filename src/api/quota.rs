//! `GET /boards/{board}/quota`: how much of each rate-limit rule a visitor has used.

use actix_web::{HttpResponse, get, web};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::auth::Auth;
use super::client_ip::ClientIp;
use crate::domain::ids::{Channel, MemberId, Terminal, VoterId};
use crate::domain::limit::{VoteValues, ip_subject, parse_ip};
use crate::engine::leaderboard::readable_board;
use crate::engine::limits;
use crate::engine::state::AppState;
use crate::error::ApiError;

/// The values a vote would carry; `ip` defaults to the caller's address.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
pub struct QuotaQuery {
    pub voter: Option<String>,
    pub member: Option<String>,
    pub channel: Option<String>,
    pub terminal: Option<String>,
    pub ip: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct QuotaResponse {
    pub board: String,
    /// Every rule of the board, oldest first.
    pub rules: Vec<QuotaRule>,
}

/// What a visitor has used of each rule right now ("3 votes left today").
#[utoipa::path(get, path = "/api/v1/boards/{board}/quota", tag = "reads",
    params(("board" = String, Path), QuotaQuery),
    responses(
        (status = 200, body = QuotaResponse),
        (status = 404, description = "board_not_found", body = super::ErrorBody),
        (status = 422, description = "invalid_voter, invalid_ip, …", body = super::ErrorBody),
    ))]
#[get("/boards/{board}/quota")]
pub async fn get_quota(
    state: web::Data<AppState>,
    auth: Auth,
    client: ClientIp,
    board: web::Path<String>,
    query: web::Query<QuotaQuery>,
) -> Result<HttpResponse, ApiError> {
    let caller = auth.0.as_ref();
    let board = readable_board(&state, caller, &board)?;
    let parsed = |raw: &Option<String>,
                  parse: fn(&str) -> Result<String, crate::domain::Invalid>| {
        raw.as_deref().map(parse).transpose()
    };
    let ip = match &query.ip {
        Some(raw) => Some(parse_ip(raw)?),
        None => client.0,
    };
    // A key bound to a channel votes for that channel, so its quota is that channel's.
    let channel = match caller.and_then(|c| c.channel.as_ref()) {
        Some(bound) => Some(bound.to_string()),
        None => parsed(&query.channel, |c| Channel::parse(c).map(|c| c.to_string()))?,
    };
    let values = VoteValues {
        voter: parsed(&query.voter, |v| VoterId::parse(v).map(|v| v.to_string()))?,
        member: parsed(&query.member, |m| MemberId::parse(m).map(|m| m.to_string()))?,
        channel,
        terminal: parsed(&query.terminal, |t| {
            Terminal::parse(t).map(|t| t.to_string())
        })?,
        ip: ip.map(ip_subject),
        creator: None,
    };
    let rules = limits::quota(&state, &board, &values, Utc::now()).await?;
    Ok(HttpResponse::Ok().json(QuotaResponse {
        board: board.name(),
        rules: rules.into_iter().map(Into::into).collect(),
    }))
}

/// One rule's standing for a visitor, as the voting page shows it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct QuotaRule {
    pub id: i64,
    pub name: String,
    pub dimensions: Vec<String>,
    pub window: String,
    /// The limit for these values (overrides applied).
    pub limit: i64,
    /// Votes counted in the current window; null when the query lacks a value the rule
    /// counts on (see `needs`).
    pub used: Option<i64>,
    pub remaining: Option<i64>,
    /// When more votes open up: the end of a calendar window, the moment the oldest vote
    /// leaves a rolling one; null for the campaign or an unused rolling window.
    pub resets_at: Option<DateTime<Utc>>,
    /// Dimensions the rule counts on that the query did not give.
    pub needs: Vec<String>,
}

impl From<limits::QuotaRule> for QuotaRule {
    fn from(v: limits::QuotaRule) -> Self {
        Self {
            id: v.id,
            name: v.name,
            dimensions: v.dimensions,
            window: v.window,
            limit: v.limit,
            used: v.used,
            remaining: v.remaining,
            resets_at: v.resets_at,
            needs: v.needs,
        }
    }
}
