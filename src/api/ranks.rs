//! Batch reads: several members of one board, several boards at once.

use actix_web::{HttpResponse, get, post, web};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::auth::Auth;
use super::boards::{MemberResponse, TopResponse};
use crate::domain::code::Code;
use crate::domain::ids::MemberId;
use crate::engine::leaderboard::{self, MAX_BATCH, Selection, readable_board, select};
use crate::engine::state::AppState;
use crate::error::ApiError;

#[derive(Debug, Deserialize, IntoParams)]
pub struct RanksQuery {
    pub board: String,
    /// Comma-separated member ids, at most 100.
    pub members: String,
    pub period: Option<String>,
    pub at: Option<String>,
    pub view: Option<String>,
}

/// One member per requested id, in the order asked.
#[derive(Debug, Serialize, ToSchema)]
pub struct RanksResponse {
    pub members: Vec<RankEntry>,
}

/// A member's standing, or why there is none (an id that is not a member of a closed
/// board, or not a member id at all), so one bad id does not fail the others.
#[derive(Debug, Serialize, ToSchema)]
#[serde(untagged)]
pub enum RankEntry {
    Found(Box<MemberResponse>),
    Missing {
        member: String,
        error: super::ErrorDetail,
    },
}

/// Boards one `/tops` call reads at most.
pub const MAX_TOPS: usize = 50;

#[derive(Debug, Deserialize, IntoParams)]
pub struct TopsQuery {
    /// Comma-separated board slugs, each at most once, at most 50.
    pub boards: String,
    pub period: Option<String>,
    pub at: Option<String>,
    pub view: Option<String>,
    /// Default 10, at most 1000.
    pub limit: Option<i64>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct TopsResponse {
    pub tops: Vec<TopResponse>,
}

fn split(list: &str) -> Vec<&str> {
    list.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect()
}

/// Several members of one board in one call.
#[utoipa::path(get, path = "/api/v1/ranks", tag = "reads", params(RanksQuery),
    responses((status = 200, body = RanksResponse), (status = 404, body = super::ErrorBody), (status = 413, body = super::ErrorBody)))]
#[get("/ranks")]
pub async fn get_ranks(
    state: web::Data<AppState>,
    auth: Auth,
    query: web::Query<RanksQuery>,
) -> Result<HttpResponse, ApiError> {
    let board = readable_board(&state, auth.0.as_ref(), &query.board)?;
    let ids = split(&query.members);
    if ids.is_empty() {
        return Err(ApiError::invalid_field(
            "members",
            "members must name at least one member",
        ));
    }
    if ids.len() > MAX_BATCH {
        return Err(ApiError::too_large(
            Code::TooManyMembers,
            format!("at most {MAX_BATCH} members at once"),
        ));
    }
    let sel = select(
        board,
        query.period.as_deref(),
        query.at.as_deref(),
        query.view.as_deref(),
    )?;
    let checked: Vec<Result<MemberId, ApiError>> = ids
        .iter()
        .map(|raw| {
            let id = MemberId::parse(raw)?;
            leaderboard::check_member(&sel, &id)?;
            Ok(id)
        })
        .collect();
    let found: Vec<MemberId> = checked
        .iter()
        .filter_map(|c| c.as_ref().ok())
        .cloned()
        .collect();
    let mut standings = leaderboard::standings(&state, &sel, &found)
        .await?
        .into_iter();
    let members = ids
        .iter()
        .zip(checked)
        .map(|(raw, checked)| match checked {
            Ok(_) => standings
                .next()
                .map(|m| RankEntry::Found(Box::new(m.into())))
                .ok_or_else(|| ApiError::from(anyhow::anyhow!("redis answered fewer standings"))),
            Err(err) => Ok(RankEntry::Missing {
                member: (*raw).to_owned(),
                error: (&err).into(),
            }),
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(HttpResponse::Ok().json(RanksResponse { members }))
}

/// The tops of several boards in one call. Its cost is bounded: each board at most
/// once, at most 50 boards, and the answer is reused like a single top's.
#[utoipa::path(get, path = "/api/v1/tops", tag = "reads", params(TopsQuery),
    responses((status = 200, body = TopsResponse), (status = 404, body = super::ErrorBody),
        (status = 413, description = "too_many_boards: more than 50", body = super::ErrorBody),
        (status = 422, description = "duplicate_board: a board named twice; invalid_field, invalid_period, …", body = super::ErrorBody)))]
#[get("/tops")]
pub async fn get_tops(
    state: web::Data<AppState>,
    auth: Auth,
    query: web::Query<TopsQuery>,
) -> Result<HttpResponse, ApiError> {
    let slugs = split(&query.boards);
    if slugs.is_empty() {
        return Err(ApiError::invalid_field(
            "boards",
            "boards must name at least one board",
        ));
    }
    if slugs.len() > MAX_TOPS {
        return Err(ApiError::too_large(
            Code::TooManyBoards,
            format!("at most {MAX_TOPS} boards at once"),
        ));
    }
    if let Some(repeated) = slugs
        .iter()
        .enumerate()
        .find_map(|(i, s)| slugs[..i].contains(s).then_some(*s))
    {
        return Err(ApiError::invalid(
            Code::DuplicateBoard,
            format!("board {repeated} is named more than once"),
        ));
    }
    let selections = slugs
        .into_iter()
        .map(|slug| {
            let board = readable_board(&state, auth.0.as_ref(), slug)?;
            select(
                board,
                query.period.as_deref(),
                query.at.as_deref(),
                query.view.as_deref(),
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    let limit = query.limit.unwrap_or(10);
    leaderboard::check_page(0, limit)?;
    // Board ids (not slugs) key the cache, as for a single top.
    let key = selections.iter().fold(format!("tops:{limit}"), |key, sel| {
        format!(
            "{key}:{}/{}/{}/{}",
            sel.board.cache_id(),
            sel.bucket.period,
            sel.bucket.label,
            sel.view.as_str()
        )
    });
    super::cached_json(&state, key, || async {
        let tops = leaderboard::tops(&state, &selections, 0, limit).await?;
        Ok(TopsResponse {
            tops: tops.into_iter().map(Into::into).collect(),
        })
    })
    .await
}

/// One read of a `POST /tops`: a board's top, as `GET /boards/{board}/top` takes it.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TopRead {
    pub board: String,
    /// As `/top`'s: default `all` when kept, else the shortest period.
    pub period: Option<String>,
    /// A bucket label or an RFC 3339 timestamp; default now.
    pub at: Option<String>,
    /// display (default) or real.
    pub view: Option<String>,
    /// Default 10, at most 1000.
    pub limit: Option<i64>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"reads": [{"board": "stars", "period": "day"}, {"board": "rising", "period": "hour", "view": "real", "limit": 3}]}))]
pub struct TopReadsRequest {
    /// At most 50; the same board may be read with several periods, views or buckets,
    /// but not twice the same.
    pub reads: Vec<TopRead>,
}

/// One read's answer: the top, as `/top` answers it, or why there is none.
#[derive(Debug, Serialize, ToSchema)]
#[serde(untagged)]
pub enum TopReadResult {
    Top(Box<TopResponse>),
    Failed {
        board: String,
        error: super::ErrorDetail,
    },
}

/// The answers in the order of the reads.
#[derive(Debug, Serialize, ToSchema)]
pub struct TopReadsResponse {
    pub results: Vec<TopReadResult>,
}

/// The tops of several boards, each its own period, view and bucket, in one call: each
/// read answers like `/top` (from the same short-lived cache), or an error object of its
/// own (an unknown board, a period it does not keep, a key not allowed there), so one
/// bad read does not fail the others. The call itself is refused only when it cannot be
/// read, reads nothing, more than 50 boards, or the same read twice.
#[utoipa::path(post, path = "/api/v1/tops", tag = "reads", request_body = TopReadsRequest,
    responses((status = 200, body = TopReadsResponse),
        (status = 413, description = "too_many_boards: more than 50 reads", body = super::ErrorBody),
        (status = 422, description = "duplicate_board: the same board, period, bucket and view read twice; invalid_field: no reads, or a field no read takes", body = super::ErrorBody)))]
#[post("/tops")]
pub async fn post_tops(
    state: web::Data<AppState>,
    auth: Auth,
    body: web::Json<TopReadsRequest>,
) -> Result<HttpResponse, ApiError> {
    let reads = body.into_inner().reads;
    if reads.is_empty() {
        return Err(ApiError::invalid_field(
            "reads",
            "reads must name at least one board",
        ));
    }
    if reads.len() > MAX_TOPS {
        return Err(ApiError::too_large(
            Code::TooManyBoards,
            format!("at most {MAX_TOPS} reads at once"),
        ));
    }
    let checked: Vec<Result<(Selection, i64), ApiError>> = reads
        .iter()
        .map(|read| {
            let board = readable_board(&state, auth.0.as_ref(), &read.board)?;
            let sel = select(
                board,
                read.period.as_deref(),
                read.at.as_deref(),
                read.view.as_deref(),
            )?;
            let limit = read.limit.unwrap_or(10);
            leaderboard::check_page(0, limit)?;
            Ok((sel, limit))
        })
        .collect();
    let identity = |sel: &Selection| {
        (
            sel.board.cache_id(),
            sel.bucket.period.to_string(),
            sel.bucket.label.clone(),
            sel.view.as_str(),
        )
    };
    let ok: Vec<&(Selection, i64)> = checked.iter().filter_map(|c| c.as_ref().ok()).collect();
    if let Some(sel) = ok.iter().enumerate().find_map(|(i, (sel, _))| {
        ok[..i]
            .iter()
            .any(|(s, _)| identity(s) == identity(sel))
            .then_some(sel)
    }) {
        return Err(ApiError::invalid(
            Code::DuplicateBoard,
            format!(
                "board {} is read twice with period {}, bucket {} and view {}",
                sel.board.name(),
                sel.bucket.period,
                sel.bucket.label,
                sel.view.as_str()
            ),
        ));
    }
    let answers = futures_util::future::join_all(checked.into_iter().map(|c| {
        let state = &state;
        async move {
            let (sel, limit) = c?;
            super::boards::top_json(state, sel, 0, limit)
                .await
                .map_err(ApiError::from)
        }
    }))
    .await;
    // Each top as the cache holds it, written into the array as it is.
    let mut out = b"{\"results\":[".to_vec();
    for (i, (read, answer)) in reads.iter().zip(answers).enumerate() {
        if i > 0 {
            out.push(b',');
        }
        match answer {
            Ok(bytes) => out.extend_from_slice(&bytes),
            Err(err) => {
                let failed = TopReadResult::Failed {
                    board: read.board.clone(),
                    error: (&err).into(),
                };
                out.extend(serde_json::to_vec(&failed).map_err(anyhow::Error::from)?);
            }
        }
    }
    out.extend_from_slice(b"]}");
    Ok(HttpResponse::Ok()
        .content_type("application/json")
        .body(out))
}
