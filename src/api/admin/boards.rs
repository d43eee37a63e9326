//! Board administration.

use actix_web::{HttpResponse, delete, get, patch, post, web};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::{board_slug, nullable};
use crate::api::auth::Admin;
use crate::api::boards::{BoardResponse, InstancesRequest, RetentionSettings, StorageSettings};
use crate::domain::board::{
    BoardSettings, Membership, parse_carry_over, parse_multiplier, parse_origin, parse_periods,
};
use crate::domain::code::Code;
use crate::domain::identity::Voters;
use crate::domain::ids::BoardSlug;
use crate::domain::period::{parse_instant, parse_timezone};
use crate::domain::retention::check_archive_top;
use crate::domain::scoring::{Scoring, Storage};
use crate::engine::admin as engine;
use crate::engine::archive;
use crate::engine::error::EngineError;
use crate::engine::state::AppState;
use crate::error::ApiError;

/// Settings of a board; on create every field but `slug` and `title` has a default, on
/// update every field is optional and `null` clears the window ends.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"slug": "stars", "title": "Stars", "membership": "closed",
    "periods": ["hour", "day", "week", "month", "all"], "timezone": "Asia/Shanghai",
    "multiplier": 1, "carry_over": 0, "public_page": true}))]
pub struct BoardRequest {
    /// Create only.
    pub slug: Option<String>,
    pub title: Option<String>,
    pub description: Option<String>,
    /// closed (default) or open.
    pub membership: Option<String>,
    /// hour, day, week, month, all, at most four rolling windows rolling:Nh (N 1–168,
    /// UTC hours) or rolling:Nd (N 1–90, local days), and at most four trending periods
    /// trending:Nh (half-life N hours, 1–720; `full` boards only); default: the first
    /// five.
    pub periods: Option<Vec<String>>,
    /// IANA name, default UTC.
    pub timezone: Option<String>,
    /// Display multiplier N, default 1, up to three decimals.
    pub multiplier: Option<f64>,
    /// Carry-over ratio r in [0, 1], default 0, up to three decimals.
    pub carry_over: Option<f64>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    pub starts_at: Option<Option<String>>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    pub ends_at: Option<Option<String>>,
    pub public_page: Option<bool>,
    /// Largest count per vote, default 1000.
    pub max_count: Option<i64>,
    /// Decimals pages show of a score, 0 (default) to 6; the API shows exact values.
    pub display_decimals: Option<i64>,
    /// Sites that may show the voting page in a frame, as origins
    /// (`https://shop.example`), at most 20; `/embed/b/<slug>` answers for them only.
    pub embed_origins: Option<Vec<String>>,
    /// `votes` (default) or `scores`; fixed at creation.
    pub scoring: Option<String>,
    /// A scores board's decimals, 0 (default) to 6; fixed at creation.
    pub decimals: Option<i64>,
    /// How the board is kept; fixed at creation. Default `{"kind": "full"}`. A `votes`
    /// board is `full` or `sharded` (votes spread by voter; calendar periods only).
    pub storage: Option<StorageSettings>,
    /// Days a closed bucket stays in Redis once archived, per period kind (1 to 36,500;
    /// `null`: forever). A key left out takes its default: hour 3, day 60, week 400,
    /// month 800.
    pub retention: Option<RetentionSettings>,
    /// Entries of each view the archive keeps per closed bucket, 1 to 10,000 (default
    /// 1,000).
    pub archive_top: Option<i64>,
    /// `{"ttl_s": …}` makes the board a family: one board per live room, match or region,
    /// addressed as `<slug>:<instance>` and made by its first write; `null` (default) a
    /// plain board. Whether a board is a family, and its `ttl_s`, are fixed at creation;
    /// `max_live`, `pages` and `ledger_days` may change.
    #[serde(default, deserialize_with = "nullable")]
    pub instances: Option<Option<InstancesRequest>>,
    /// Record every accepted write in the board's ledger (`GET …/ledger`). Default: on
    /// for a `votes` board, off for a `scores` board; a family keeps none. Turning it
    /// off stops recording; what was recorded stays.
    pub ledger: Option<bool>,
    /// Seconds after `ends_at` (0, the default, to 3,600) a write stamped before it is
    /// still taken: for gateways that queue votes sent before the cut-off. A `vote` key
    /// may then send `at` up to this long in the past.
    pub late_grace_s: Option<i64>,
    /// A vote one of the board's watches holds for review answers `"held": true`
    /// (default false: it answers as an accepted vote does, so a vote farm learns
    /// nothing).
    pub tell_held: Option<bool>,
    /// Who may vote on the public page: `anyone` (default: a cookie names the visitor)
    /// or `signed_in` (only visitors signed in with one of `identity_providers`). API
    /// keys vote as they always do.
    pub voters: Option<String>,
    /// The identity providers whose voter tokens the board takes (at most 10 names);
    /// default none.
    pub identity_providers: Option<Vec<String>>,
}

impl BoardRequest {
    pub(crate) fn apply(&self, s: &mut BoardSettings) -> Result<(), EngineError> {
        if let Some(title) = &self.title {
            s.title = title.clone();
        }
        if let Some(d) = &self.description {
            s.description = d.clone();
        }
        if let Some(m) = &self.membership {
            s.membership = Membership::parse(m)?;
        }
        if let Some(p) = &self.periods {
            s.periods = parse_periods(p)?;
        }
        if let Some(tz) = &self.timezone {
            s.timezone = parse_timezone(tz)?;
        }
        if let Some(m) = self.multiplier {
            s.multiplier = parse_multiplier(m)?;
        }
        if let Some(r) = self.carry_over {
            s.carry_over = parse_carry_over(r)?;
        }
        if let Some(t) = &self.starts_at {
            s.starts_at = t.as_deref().map(parse_instant).transpose()?;
        }
        if let Some(t) = &self.ends_at {
            s.ends_at = t.as_deref().map(parse_instant).transpose()?;
        }
        if let Some(p) = self.public_page {
            s.public_page = p;
        }
        if let Some(n) = self.max_count {
            s.max_count = n;
        }
        if let Some(origins) = &self.embed_origins {
            s.embed_origins = origins
                .iter()
                .map(|o| parse_origin(o))
                .collect::<Result<_, _>>()?;
        }
        if self.scoring.is_some() || self.decimals.is_some() {
            let scoring = self.scoring.as_deref().unwrap_or(s.scoring.as_str());
            let decimals = match (self.decimals, scoring == s.scoring.as_str()) {
                (None, true) => Some(i64::from(s.scoring.decimals())),
                (decimals, _) => decimals,
            };
            s.scoring = Scoring::parse(scoring, decimals)?;
        }
        if let Some(st) = &self.storage {
            s.storage =
                Storage::parse(&st.kind, st.retain, st.trim_at, st.shards)?.placed_as(s.storage);
        }
        if let Some(r) = &self.retention {
            s.retention = r.parse()?;
        }
        if let Some(n) = self.archive_top {
            s.archive_top = check_archive_top(n)?;
        }
        if let Some(instances) = self.instances {
            s.instances = instances.map(|i| i.apply(s.instances)).transpose()?;
        }
        if let Some(ledger) = self.ledger {
            s.ledger = ledger;
        }
        if let Some(grace) = self.late_grace_s {
            s.late_grace_s = grace;
        }
        if let Some(tell) = self.tell_held {
            s.tell_held = tell;
        }
        if let Some(voters) = &self.voters {
            s.voters = Voters::parse(voters)?;
        }
        if let Some(providers) = &self.identity_providers {
            s.providers = providers.clone();
        }
        if let Some(n) = self.display_decimals {
            s.display_decimals = u8::try_from(n).map_err(|_| {
                EngineError::invalid(
                    Code::InvalidDisplayDecimals,
                    "display_decimals must be between 0 and 6",
                )
            })?;
        }
        Ok(())
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct BoardsResponse {
    pub boards: Vec<BoardResponse>,
}

/// Creates a board.
#[utoipa::path(post, path = "/api/v1/admin/boards", tag = "admin", request_body = BoardRequest,
    responses(
        (status = 201, body = BoardResponse),
        (status = 409, description = "board_exists", body = crate::api::ErrorBody),
        (status = 422, description = "invalid_board_slug, invalid_timezone, invalid_period, invalid_periods (none, or more than four rolling windows or four trending periods), invalid_number, invalid_window, invalid_scoring, invalid_storage, invalid_ttl (instances.ttl_s outside 1 to 31,536,000), invalid_field (a setting a scores board does not have; rolling windows or trending periods on a sharded board or a scores board not stored full), …", body = crate::api::ErrorBody),
    ))]
#[post("/boards")]
pub async fn create_board(
    state: web::Data<AppState>,
    Admin(caller): Admin,
    body: web::Json<BoardRequest>,
) -> Result<HttpResponse, ApiError> {
    let actor = caller.actor.clone();
    let slug = BoardSlug::parse(body.slug.as_deref().unwrap_or(""))?;
    caller.reach_board(&slug)?;
    let title = body
        .title
        .clone()
        .ok_or_else(|| ApiError::invalid(Code::InvalidTitle, "title is required"))?;
    let mut settings = BoardSettings::new(title);
    body.apply(&mut settings)?;
    if body.ledger.is_none() {
        settings.ledger = settings.ledger_by_default();
    }
    let board = engine::create_board(&state, &actor, slug, settings).await?;
    Ok(HttpResponse::Created().json(BoardResponse::of(&board)?))
}

/// Every board the key may reach.
#[utoipa::path(get, path = "/api/v1/admin/boards", tag = "admin", responses((status = 200, body = BoardsResponse)))]
#[get("/boards")]
pub async fn list_boards(
    state: web::Data<AppState>,
    Admin(caller): Admin,
) -> Result<HttpResponse, ApiError> {
    let boards = state
        .config
        .boards()
        .iter()
        .filter(|b| caller.reach.board(&b.board.slug))
        .map(|b| BoardResponse::of(b))
        .collect::<Result<_, _>>()?;
    Ok(HttpResponse::Ok().json(BoardsResponse { boards }))
}

/// Archives every closed bucket of the board now, then releases the Redis keys of its
/// archived buckets past their retention (an operator freeing memory after a campaign).
/// Reads of released buckets answer from the archive (`"archived": true`).
#[utoipa::path(post, path = "/api/v1/admin/boards/{board}/archive", tag = "admin",
    params(("board" = String, Path)),
    responses(
        (status = 200, body = ArchiveReport),
        (status = 404, description = "board_not_found", body = crate::api::ErrorBody),
        (status = 409, description = "archive_busy: another instance held the archive for 10 s; try again", body = crate::api::ErrorBody),
        (status = 503, description = "redis_unavailable", body = crate::api::ErrorBody),
    ))]
#[post("/boards/{board}/archive")]
pub async fn archive_board(
    state: web::Data<AppState>,
    Admin(caller): Admin,
    board: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let slug = board_slug(&board)?;
    let report = engine::archive_board(&state, &caller.actor, &slug).await?;
    Ok(HttpResponse::Ok().json(ArchiveReport::from(report)))
}

/// One board, public or not.
#[utoipa::path(get, path = "/api/v1/admin/boards/{board}", tag = "admin", operation_id = "admin_get_board", params(("board" = String, Path)),
    responses((status = 200, body = BoardResponse), (status = 404, body = crate::api::ErrorBody)))]
#[get("/boards/{board}")]
pub async fn get_board(
    state: web::Data<AppState>,
    _admin: Admin,
    board: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let slug = board_slug(&board)?;
    let board = engine::board_of(&state, &slug)?;
    Ok(HttpResponse::Ok().json(BoardResponse::of(&board)?))
}

/// Changes some settings of a board.
#[utoipa::path(patch, path = "/api/v1/admin/boards/{board}", tag = "admin", params(("board" = String, Path)),
    request_body = BoardRequest,
    responses((status = 200, body = BoardResponse), (status = 404, body = crate::api::ErrorBody), (status = 422, body = crate::api::ErrorBody)))]
#[patch("/boards/{board}")]
pub async fn update_board(
    state: web::Data<AppState>,
    Admin(caller): Admin,
    board: web::Path<String>,
    body: web::Json<BoardRequest>,
) -> Result<HttpResponse, ApiError> {
    let actor = caller.actor;
    let slug = board_slug(&board)?;
    if body.slug.as_deref().is_some_and(|s| s != slug.as_str()) {
        return Err(ApiError::invalid(
            Code::SlugImmutable,
            "a board's slug cannot change",
        ));
    }
    let current = engine::board_of(&state, &slug)?;
    let mut settings = current.board.settings.clone();
    body.apply(&mut settings)?;
    let board = engine::update_board(&state, &actor, &slug, settings).await?;
    Ok(HttpResponse::Ok().json(BoardResponse::of(&board)?))
}

/// Deletes a board with its members and rankings.
#[utoipa::path(delete, path = "/api/v1/admin/boards/{board}", tag = "admin", params(("board" = String, Path)),
    responses((status = 204), (status = 404, body = crate::api::ErrorBody)))]
#[delete("/boards/{board}")]
pub async fn delete_board(
    state: web::Data<AppState>,
    Admin(caller): Admin,
    board: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let actor = caller.actor;
    engine::delete_board(&state, &actor, &board_slug(&board)?).await?;
    Ok(HttpResponse::NoContent().finish())
}

/// One bucket the archive wrote or released.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct BucketRef {
    pub period: String,
    pub bucket: String,
}

impl From<archive::BucketRef> for BucketRef {
    fn from(v: archive::BucketRef) -> Self {
        Self {
            period: v.period,
            bucket: v.bucket,
        }
    }
}

/// What archiving a board did.
#[derive(Debug, Clone, Default, Serialize, ToSchema)]
pub struct ArchiveReport {
    /// Buckets written to the archive, oldest first per period.
    pub archived: Vec<BucketRef>,
    /// Buckets whose Redis keys were released (the endpoint only).
    pub released: Vec<BucketRef>,
}

impl From<archive::ArchiveReport> for ArchiveReport {
    fn from(v: archive::ArchiveReport) -> Self {
        Self {
            archived: v.archived.into_iter().map(Into::into).collect(),
            released: v.released.into_iter().map(Into::into).collect(),
        }
    }
}
