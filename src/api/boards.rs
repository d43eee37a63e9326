//! Reads of one board: its settings, top, a member, neighbours, stats.

use actix_web::{HttpResponse, get, web};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::auth::Auth;
use crate::domain::Invalid;
use crate::domain::board::Instances;
use crate::domain::code::Code;
use crate::domain::ids::MemberId;
use crate::domain::percentile::Percent;
use crate::domain::period::Bucket;
use crate::domain::retention::Retention;
use crate::domain::scoring::Storage;
use crate::engine::boards;
use crate::engine::config::BoardConfig;
use crate::engine::error::EngineError;
use crate::engine::leaderboard::{self, readable_board, readable_config, select};
use crate::engine::state::AppState;
use crate::error::ApiError;

/// Which bucket and view to read.
#[derive(Debug, Deserialize, IntoParams)]
pub struct SelectQuery {
    /// hour, day, week, month, all, a rolling window rolling:Nh (N 1–168) or
    /// rolling:Nd (N 1–90), or a trending period trending:Nh (half-life N hours, 1–720;
    /// scores decayed to the read) (default: all when kept, else the shortest period).
    pub period: Option<String>,
    /// A bucket label (`2019-03-17`, `2019-W12`) or an RFC 3339 timestamp; default now.
    /// Rolling windows take none (422 `invalid_bucket`): they always end now.
    pub at: Option<String>,
    /// display (default) or real.
    pub view: Option<String>,
}

#[derive(Debug, Deserialize, IntoParams)]
pub struct TopQuery {
    /// hour, day, week, month, all, a rolling window rolling:Nh (N 1–168) or
    /// rolling:Nd (N 1–90), or a trending period trending:Nh (half-life N hours, 1–720;
    /// scores decayed to the read) (default: all when kept, else the shortest period).
    pub period: Option<String>,
    /// A bucket label (`2019-03-17`, `2019-W12`) or an RFC 3339 timestamp; default now.
    /// Rolling windows take none (422 `invalid_bucket`): they always end now.
    pub at: Option<String>,
    /// display (default) or real.
    pub view: Option<String>,
    /// Default 0.
    pub offset: Option<i64>,
    /// Default 100, at most 1000.
    pub limit: Option<i64>,
    /// Instead of `limit`: the top share of the ranking, in percent (above 0, at most
    /// 100, two decimals): ⌈percent % × `total_members`⌉ members, at most 1000.
    pub percent: Option<f64>,
}

#[derive(Debug, Deserialize, IntoParams)]
pub struct HistoryQuery {
    /// hour, day (default), week or month.
    pub period: Option<String>,
    /// The newest bucket: a label or an RFC 3339 timestamp; default the current one.
    pub at: Option<String>,
    /// display (default) or real.
    pub view: Option<String>,
    /// Buckets, 1 to 100; default 30.
    pub limit: Option<i64>,
}

#[derive(Debug, Deserialize, IntoParams)]
pub struct AroundQuery {
    /// hour, day, week, month, all, a rolling window rolling:Nh (N 1–168) or
    /// rolling:Nd (N 1–90), or a trending period trending:Nh (half-life N hours, 1–720;
    /// scores decayed to the read) (default: all when kept, else the shortest period).
    pub period: Option<String>,
    /// A bucket label (`2019-03-17`, `2019-W12`) or an RFC 3339 timestamp; default now.
    /// Rolling windows take none (422 `invalid_bucket`): they always end now.
    pub at: Option<String>,
    /// display (default) or real.
    pub view: Option<String>,
    /// Neighbours on each side; default 5, at most 100.
    pub radius: Option<i64>,
}

/// A period the board keeps, with its current bucket.
#[derive(Debug, Serialize, ToSchema)]
pub struct PeriodInfo {
    pub period: String,
    /// The bucket's label; a rolling window's own name.
    pub bucket: String,
    /// Null for `all` and rolling windows.
    pub resets_at: Option<DateTime<Utc>>,
}

/// A member as clients see it.
#[derive(Debug, Serialize, ToSchema)]
pub struct MemberInfo {
    pub id: String,
    pub name: String,
    pub image_url: Option<String>,
    pub enabled: bool,
    #[schema(value_type = Object)]
    pub profile: serde_json::Value,
}

/// A board's storage layout, as set and as read.
#[derive(Debug, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"kind": "top_n", "retain": 1000, "trim_at": 1200}))]
pub struct StorageSettings {
    /// `full`, `top_n` (scores boards) or `sharded`.
    pub kind: String,
    /// `top_n`: members the sorted set keeps, 1 to 100000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retain: Option<i64>,
    /// `top_n`: size at which it is trimmed back to `retain`, above `retain` and at most
    /// 1000000; default 1.2 × `retain`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trim_at: Option<i64>,
    /// `sharded`: sorted sets per bucket, 2 to 256 (a scores board's members, a votes
    /// board's voters, spread over them by a hash), placed evenly over Redis Cluster's
    /// slot range.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shards: Option<i64>,
}

impl StorageSettings {
    pub fn of(storage: Storage) -> Self {
        let (retain, trim_at, shards) = match storage {
            Storage::Full => (None, None, None),
            Storage::TopN { retain, trim_at } => (Some(retain), Some(trim_at), None),
            Storage::Sharded { shards, .. } => (None, None, Some(shards)),
        };
        Self {
            kind: storage.kind().to_owned(),
            retain,
            trim_at,
            shards,
        }
    }
}

/// A family's instances: each comes into being with its first write and leaves Redis
/// `ttl_s` after its last.
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
#[schema(example = json!({"ttl_s": 604800, "max_live": 100000, "pages": false, "ledger_days": 90}))]
pub struct InstancesSettings {
    /// Seconds an instance lives after its last write, 1 to 31,536,000 (a year).
    pub ttl_s: i64,
    /// The most instances live at once; a write that would open one more is refused
    /// (409 `family_full`) and creates nothing.
    pub max_live: i64,
    /// Whether each instance has a public voting page (`/b/<family>:<instance>`, with
    /// `public_page` on).
    pub pages: bool,
    /// Days an instance's ledger stays in SQL after the instance expired.
    pub ledger_days: i64,
}

impl From<Instances> for InstancesSettings {
    fn from(i: Instances) -> Self {
        Self {
            ttl_s: i.ttl_s,
            max_live: i.max_live,
            pages: i.pages,
            ledger_days: i.ledger_days,
        }
    }
}

/// A family's instances as a request sets them: `ttl_s` when the family is created
/// (fixed after), the others at any time; a field left out keeps its value (or takes its
/// default on creation).
#[derive(Debug, Clone, Copy, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"ttl_s": 604800, "max_live": 100000}))]
pub struct InstancesRequest {
    /// Seconds an instance lives after its last write, 1 to 31,536,000 (a year);
    /// required when the family is created, and fixed.
    pub ttl_s: Option<i64>,
    /// The most instances live at once, 1 to 10,000,000 (default 100,000).
    pub max_live: Option<i64>,
    /// Give each instance a public voting page when `public_page` is on (default false).
    pub pages: Option<bool>,
    /// Days an instance's ledger (entries and the drain's place) stays in SQL after the
    /// instance expired, 1 to 36,500 (default 90).
    pub ledger_days: Option<i64>,
}

impl InstancesRequest {
    /// The settings this request makes of `current` (a family's, or `None` for a board
    /// becoming one).
    pub fn apply(&self, current: Option<Instances>) -> Result<Instances, Invalid> {
        let base = match (current, self.ttl_s) {
            (Some(current), _) => current,
            (None, Some(ttl_s)) => Instances::new(ttl_s)?,
            (None, None) => {
                return Err(Invalid::new(
                    Code::InvalidTtl,
                    "instances.ttl_s is required to make a family",
                ));
            }
        };
        Instances {
            ttl_s: self.ttl_s.unwrap_or(base.ttl_s),
            max_live: self.max_live.unwrap_or(base.max_live),
            pages: self.pages.unwrap_or(base.pages),
            ledger_days: self.ledger_days.unwrap_or(base.ledger_days),
        }
        .checked()
    }
}

/// Days a closed bucket stays in Redis once archived, per period kind (1 to 36,500);
/// `null` keeps it forever, and a key left out takes its default.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"hour": 3, "day": 60, "week": 400, "month": 800}))]
pub struct RetentionSettings {
    /// Default 3.
    #[serde(default = "default_hour")]
    pub hour: Option<i64>,
    /// Default 60.
    #[serde(default = "default_day")]
    pub day: Option<i64>,
    /// Default 400.
    #[serde(default = "default_week")]
    pub week: Option<i64>,
    /// Default 800.
    #[serde(default = "default_month")]
    pub month: Option<i64>,
}

fn default_hour() -> Option<i64> {
    Retention::default().hour
}
fn default_day() -> Option<i64> {
    Retention::default().day
}
fn default_week() -> Option<i64> {
    Retention::default().week
}
fn default_month() -> Option<i64> {
    Retention::default().month
}

impl RetentionSettings {
    pub fn of(r: Retention) -> Self {
        Self {
            hour: r.hour,
            day: r.day,
            week: r.week,
            month: r.month,
        }
    }

    pub fn parse(&self) -> Result<Retention, Invalid> {
        Retention::new(self.hour, self.day, self.week, self.month)
    }
}

/// What a client needs to show a board.
#[derive(Debug, Serialize, ToSchema)]
pub struct BoardResponse {
    pub slug: String,
    pub title: String,
    pub description: String,
    pub membership: String,
    pub timezone: String,
    pub multiplier: f64,
    pub carry_over: f64,
    pub starts_at: Option<DateTime<Utc>>,
    pub ends_at: Option<DateTime<Utc>>,
    pub public_page: bool,
    pub max_count: i64,
    /// Decimals pages show of a score.
    pub display_decimals: u8,
    /// Sites that may show the voting page in a frame.
    pub embed_origins: Vec<String>,
    /// `votes` or `scores`.
    pub scoring: String,
    /// Decimals of a scores board's scores (0 on votes boards).
    pub decimals: u8,
    pub storage: StorageSettings,
    pub retention: RetentionSettings,
    pub archive_top: i64,
    /// Set on a family: its boards are `<slug>:<instance>`, each made by its first write.
    pub instances: Option<InstancesSettings>,
    /// Whether accepted writes are recorded in the board's ledger.
    pub ledger: bool,
    /// Seconds after `ends_at` a write stamped before it is still taken.
    pub late_grace_s: i64,
    /// Whether a vote a watch holds answers `"held": true`.
    pub tell_held: bool,
    /// Who may vote on the public page: `anyone` or `signed_in`.
    pub voters: String,
    /// The identity providers whose voter tokens the board takes.
    pub identity_providers: Vec<String>,
    pub periods: Vec<PeriodInfo>,
    pub members: Vec<MemberInfo>,
}

impl BoardResponse {
    pub fn of(config: &BoardConfig) -> Result<Self, Invalid> {
        let s = &config.board.settings;
        let now = Utc::now();
        let mut members: Vec<MemberInfo> = config
            .members
            .values()
            .map(|m| MemberInfo {
                id: m.id.to_string(),
                name: m.name.clone(),
                image_url: m.image_url.clone(),
                enabled: m.enabled,
                profile: m.profile.clone(),
            })
            .collect();
        members.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(Self {
            slug: config.board.slug.to_string(),
            title: s.title.clone(),
            description: s.description.clone(),
            membership: s.membership.as_str().to_owned(),
            timezone: s.timezone.name().to_owned(),
            multiplier: s.multiplier.as_f64(),
            carry_over: s.carry_over.as_f64(),
            starts_at: s.starts_at,
            ends_at: s.ends_at,
            public_page: s.public_page,
            max_count: s.max_count,
            display_decimals: s.display_decimals,
            embed_origins: s.embed_origins.clone(),
            scoring: s.scoring.as_str().to_owned(),
            decimals: s.scoring.decimals(),
            storage: StorageSettings::of(s.storage),
            retention: RetentionSettings::of(s.retention),
            archive_top: s.archive_top,
            instances: s.instances.map(InstancesSettings::from),
            ledger: s.ledger,
            late_grace_s: s.late_grace_s,
            tell_held: s.tell_held,
            voters: s.voters.as_str().to_owned(),
            identity_providers: s.providers.clone(),
            periods: s
                .periods
                .iter()
                .map(|&p| {
                    let bucket = Bucket::containing(p, s.timezone, now)?;
                    Ok(PeriodInfo {
                        period: p.to_string(),
                        bucket: bucket.label,
                        resets_at: bucket.end,
                    })
                })
                .collect::<Result<_, Invalid>>()?,
            members,
        })
    }
}

/// A board's settings, members and current buckets.
#[utoipa::path(get, path = "/api/v1/boards/{board}", tag = "reads",
    params(("board" = String, Path)),
    responses((status = 200, body = BoardResponse), (status = 404, body = super::ErrorBody)))]
#[get("/boards/{board}")]
pub async fn get_board(
    state: web::Data<AppState>,
    auth: Auth,
    board: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let (board, _) = readable_config(&state, auth.0.as_ref(), &board)?;
    let key = format!("board:{}", board.board.id);
    super::cached_json(&state, key, || async { Ok(BoardResponse::of(&board)?) }).await
}

#[derive(Debug, Deserialize, IntoParams)]
pub struct InstancesQuery {
    /// Default 50, at most 1000.
    pub limit: Option<i64>,
    /// `next_cursor` of the page before; none for the first page.
    pub cursor: Option<String>,
    /// Only instances whose name contains this text (an instance name's characters:
    /// letters, digits, `_`, `.`, `-`; 1 to 64). A search looks at 5,000 instances at
    /// most per request, most recent first: a page may hold fewer than `limit` matches
    /// (even none) and still have a `next_cursor` to go on from.
    pub search: Option<String>,
}

/// One live instance of a family.
#[derive(Debug, Serialize, ToSchema)]
pub struct InstanceInfo {
    pub instance: String,
    pub last_write_at: DateTime<Utc>,
    /// Members with a score in the family's default period's current bucket.
    pub total_members: i64,
}

/// A page of a family's live instances.
#[derive(Debug, Serialize, ToSchema)]
pub struct InstancesResponse {
    /// Most recently written first.
    pub instances: Vec<InstanceInfo>,
    /// Every instance written within the family's `ttl_s` (with `search` too: a search
    /// counts no matches).
    pub total: i64,
    /// Pass as `cursor` for the next page; null after the last.
    pub next_cursor: Option<String>,
}

impl From<boards::Instances> for InstancesResponse {
    fn from(v: boards::Instances) -> Self {
        Self {
            instances: v
                .instances
                .into_iter()
                .map(|i| InstanceInfo {
                    instance: i.instance,
                    last_write_at: i.last_write_at,
                    total_members: i.total_members,
                })
                .collect(),
            total: v.total,
            next_cursor: v.next_cursor,
        }
    }
}

/// A family's live instances: those written within its `ttl_s`, most recently written
/// first. An instance leaves the list when it expires; nothing sweeps for it. Answers
/// are shared for `OVATION_READ_CACHE_MS` by identical requests (the read cache).
#[utoipa::path(get, path = "/api/v1/boards/{board}/instances", tag = "reads",
    params(("board" = String, Path, description = "a family's slug"), InstancesQuery),
    responses(
        (status = 200, body = InstancesResponse),
        (status = 404, description = "board_not_found: no such board, or a board that is not a family", body = super::ErrorBody),
        (status = 422, description = "invalid_field (limit, search), invalid_cursor", body = super::ErrorBody),
    ))]
#[get("/boards/{board}/instances")]
pub async fn get_instances(
    state: web::Data<AppState>,
    auth: Auth,
    board: web::Path<String>,
    query: web::Query<InstancesQuery>,
) -> Result<HttpResponse, ApiError> {
    let (family, name) = readable_config(&state, auth.0.as_ref(), &board)?;
    if name.instance.is_some() {
        return Err(EngineError::not_found(
            Code::BoardNotFound,
            format!("{name} is an instance: it has no instances of its own"),
        )
        .into());
    }
    let limit = query.limit.unwrap_or(50);
    let (cursor, search) = (query.cursor.as_deref(), query.search.as_deref());
    let key = format!(
        "instances:{}:{limit}:{}:{}",
        family.board.id,
        cursor.unwrap_or(""),
        search.unwrap_or("")
    );
    super::cached_json(&state, key, || async {
        let page = boards::instances(&state, &family, limit, cursor, search).await?;
        Ok(InstancesResponse::from(page))
    })
    .await
}

/// The ranking of a bucket, best first.
#[utoipa::path(get, path = "/api/v1/boards/{board}/top", tag = "reads",
    params(("board" = String, Path), TopQuery),
    responses(
        (status = 200, body = TopResponse),
        (status = 404, description = "board_not_found", body = super::ErrorBody),
        (status = 422, description = "invalid_period, period_not_enabled, invalid_bucket, invalid_limit, …", body = super::ErrorBody),
    ))]
#[get("/boards/{board}/top")]
pub async fn get_top(
    state: web::Data<AppState>,
    auth: Auth,
    board: web::Path<String>,
    query: web::Query<TopQuery>,
) -> Result<HttpResponse, ApiError> {
    let board = readable_board(&state, auth.0.as_ref(), &board)?;
    let sel = select(
        board,
        query.period.as_deref(),
        query.at.as_deref(),
        query.view.as_deref(),
    )?;
    let offset = query.offset.unwrap_or(0);
    let limit = match (query.limit, query.percent) {
        (Some(_), Some(_)) => {
            return Err(ApiError::invalid_field(
                "percent",
                "give limit or percent, not both",
            ));
        }
        (None, Some(percent)) => {
            let share = Percent::parse(percent)
                .map_err(|e| ApiError::invalid_field("percent", e.message))?;
            leaderboard::share_limit(&state, &sel, share).await?
        }
        (limit, None) => limit.unwrap_or(100),
    };
    leaderboard::check_page(offset, limit)?;
    let body = top_json(&state, sel, offset, limit).await?;
    Ok(HttpResponse::Ok()
        .content_type("application/json")
        .body(body))
}

/// A page of a bucket's ranking as `/top` answers it (JSON), from the short-lived read
/// cache: `/top` and `POST /tops` share it.
pub(super) async fn top_json(
    state: &AppState,
    sel: leaderboard::Selection,
    offset: i64,
    limit: i64,
) -> Result<actix_web::web::Bytes, EngineError> {
    // The board id (not the slug) keys the cache, so a re-created board starts afresh.
    let key = format!(
        "top:{}:{}:{}:{}:{offset}:{limit}",
        sel.board.cache_id(),
        sel.bucket.period,
        sel.bucket.label,
        sel.view.as_str()
    );
    state
        .reads
        .get_or_make(key, || async {
            let mut tops = leaderboard::tops(state, &[sel], offset, limit).await?;
            let top = tops.pop().ok_or_else(|| anyhow::anyhow!("no page"))?;
            Ok(serde_json::to_vec(&TopResponse::from(top))
                .map_err(anyhow::Error::from)?
                .into())
        })
        .await
}

fn parse_member(raw: &str) -> Result<MemberId, ApiError> {
    MemberId::parse(raw).map_err(|e| ApiError::not_found(Code::MemberNotFound, e.message))
}

/// One member: rank, score, participants, the member above and the previous bucket.
#[utoipa::path(get, path = "/api/v1/boards/{board}/members/{member}", tag = "reads",
    params(("board" = String, Path), ("member" = String, Path), SelectQuery),
    responses((status = 200, body = MemberResponse), (status = 404, body = super::ErrorBody)))]
#[get("/boards/{board}/members/{member}")]
pub async fn get_member(
    state: web::Data<AppState>,
    auth: Auth,
    path: web::Path<(String, String)>,
    query: web::Query<SelectQuery>,
) -> Result<HttpResponse, ApiError> {
    let (board, member) = path.into_inner();
    let board = readable_board(&state, auth.0.as_ref(), &board)?;
    let member = parse_member(&member)?;
    let sel = select(
        board,
        query.period.as_deref(),
        query.at.as_deref(),
        query.view.as_deref(),
    )?;
    let mut standings = leaderboard::standings(&state, &sel, &[member]).await?;
    let standing = standings
        .pop()
        .ok_or_else(|| anyhow::anyhow!("no standing"))?;
    Ok(HttpResponse::Ok().json(MemberResponse::from(standing)))
}

/// A member's rank and score per bucket of a calendar period, newest first, from the
/// bucket `at` names (default: the current one) back: live buckets from Redis, archived
/// ones from the archive (`archived: true`).
#[utoipa::path(get, path = "/api/v1/boards/{board}/members/{member}/history", tag = "reads",
    params(("board" = String, Path), ("member" = String, Path), HistoryQuery),
    responses((status = 200, body = HistoryResponse),
        (status = 404, body = super::ErrorBody),
        (status = 422, description = "invalid_period (not hour, day, week or month), period_not_enabled, invalid_field (limit)", body = super::ErrorBody)))]
#[get("/boards/{board}/members/{member}/history")]
pub async fn get_history(
    state: web::Data<AppState>,
    auth: Auth,
    path: web::Path<(String, String)>,
    query: web::Query<HistoryQuery>,
) -> Result<HttpResponse, ApiError> {
    let (board, member) = path.into_inner();
    let board = readable_board(&state, auth.0.as_ref(), &board)?;
    let member = parse_member(&member)?;
    let period = query.period.as_deref().unwrap_or("day");
    let sel = select(
        board,
        Some(period),
        query.at.as_deref(),
        query.view.as_deref(),
    )?;
    let history = leaderboard::history(&state, &sel, &member, query.limit.unwrap_or(30)).await?;
    Ok(HttpResponse::Ok().json(HistoryResponse::from(history)))
}

/// A member and its neighbours; `entries` is empty when the member has no score.
#[utoipa::path(get, path = "/api/v1/boards/{board}/members/{member}/around", tag = "reads",
    params(("board" = String, Path), ("member" = String, Path), AroundQuery),
    responses((status = 200, body = TopResponse), (status = 404, body = super::ErrorBody)))]
#[get("/boards/{board}/members/{member}/around")]
pub async fn get_around(
    state: web::Data<AppState>,
    auth: Auth,
    path: web::Path<(String, String)>,
    query: web::Query<AroundQuery>,
) -> Result<HttpResponse, ApiError> {
    let (board, member) = path.into_inner();
    let board = readable_board(&state, auth.0.as_ref(), &board)?;
    let member = parse_member(&member)?;
    let sel = select(
        board,
        query.period.as_deref(),
        query.at.as_deref(),
        query.view.as_deref(),
    )?;
    let page = leaderboard::around(&state, &sel, &member, query.radius.unwrap_or(5)).await?;
    Ok(HttpResponse::Ok().json(TopResponse::from(page)))
}

/// Participants, members and votes of a bucket, and votes per hour over the last 48 hours.
#[utoipa::path(get, path = "/api/v1/boards/{board}/stats", tag = "reads",
    params(("board" = String, Path), SelectQuery),
    responses((status = 200, body = StatsResponse), (status = 404, body = super::ErrorBody)))]
#[get("/boards/{board}/stats")]
pub async fn get_stats(
    state: web::Data<AppState>,
    auth: Auth,
    board: web::Path<String>,
    query: web::Query<SelectQuery>,
) -> Result<HttpResponse, ApiError> {
    let board = readable_board(&state, auth.0.as_ref(), &board)?;
    let sel = select(
        board,
        query.period.as_deref(),
        query.at.as_deref(),
        query.view.as_deref(),
    )?;
    Ok(HttpResponse::Ok().json(StatsResponse::from(leaderboard::stats(&state, &sel).await?)))
}

/// One ranked entry.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Entry {
    pub rank: i64,
    pub member: String,
    pub name: Option<String>,
    pub image_url: Option<String>,
    #[schema(value_type = f64)]
    pub score: serde_json::Number,
}

impl From<leaderboard::TopEntry> for Entry {
    fn from(v: leaderboard::TopEntry) -> Self {
        Self {
            rank: v.rank,
            member: v.member,
            name: v.name,
            image_url: v.image_url,
            score: v.score,
        }
    }
}

/// A page of a board.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TopResponse {
    pub board: String,
    pub period: String,
    pub bucket: String,
    pub view: String,
    /// When the bucket ends (RFC 3339); null for `all` and rolling windows.
    pub resets_at: Option<DateTime<Utc>>,
    /// Rolling windows only: what the read covered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<WindowSpan>,
    /// Members with a score in the bucket.
    pub total_members: i64,
    /// Distinct voters in the bucket (HyperLogLog estimate).
    pub participants: i64,
    pub offset: i64,
    pub entries: Vec<Entry>,
    /// Present (`true`) when the bucket was read from the archive: it left Redis. The
    /// archive keeps each bucket's best `archive_top` entries.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub archived: bool,
}

impl From<leaderboard::Top> for TopResponse {
    fn from(v: leaderboard::Top) -> Self {
        Self {
            board: v.board,
            period: v.period,
            bucket: v.bucket,
            view: v.view,
            resets_at: v.resets_at,
            window: v.window.map(Into::into),
            total_members: v.total_members,
            participants: v.participants,
            offset: v.offset,
            entries: v.entries.into_iter().map(Into::into).collect(),
            archived: v.archived,
        }
    }
}

/// The span a rolling window's read covered: from the start of the oldest slot counted
/// to the time of the read.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct WindowSpan {
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
}

impl From<leaderboard::ReadSpan> for WindowSpan {
    fn from(v: leaderboard::ReadSpan) -> Self {
        Self {
            from: v.from,
            to: v.to,
        }
    }
}

/// The nearest member with a strictly higher score.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Above {
    pub member: String,
    pub rank: i64,
    #[schema(value_type = f64)]
    pub score: serde_json::Number,
    /// Their score minus this member's.
    #[schema(value_type = f64)]
    pub gap: serde_json::Number,
}

impl From<leaderboard::AboveMember> for Above {
    fn from(v: leaderboard::AboveMember) -> Self {
        Self {
            member: v.member,
            rank: v.rank,
            score: v.score,
            gap: v.gap,
        }
    }
}

/// The same member in the bucket before.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Previous {
    pub bucket: String,
    pub rank: Option<i64>,
    #[schema(value_type = f64)]
    pub score: serde_json::Number,
    /// `up`, `down`, `same`, or `new` when the member had no score then.
    pub trend: &'static str,
}

impl From<leaderboard::PreviousStanding> for Previous {
    fn from(v: leaderboard::PreviousStanding) -> Self {
        Self {
            bucket: v.bucket,
            rank: v.rank,
            score: v.score,
            trend: v.trend,
        }
    }
}

/// One member's standing.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct MemberResponse {
    pub board: String,
    pub period: String,
    pub bucket: String,
    pub view: String,
    pub member: String,
    pub name: Option<String>,
    /// Null when the member has no score in the bucket, or (top_n boards) when it is
    /// outside the ranked members.
    pub rank: Option<i64>,
    /// top_n boards, for a member with a score outside the ranked members: how many are
    /// ranked (its rank is beyond that).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rank_beyond: Option<i64>,
    #[schema(value_type = f64)]
    pub score: serde_json::Number,
    /// Distinct voters for this member in the bucket; null for rolling windows, which
    /// count distinct voters for the whole board only.
    pub participants: Option<i64>,
    /// Votes cast for the member in the bucket (people: `participants`; votes: this),
    /// whatever the view; null on a scores board and for a trending period.
    pub votes: Option<i64>,
    /// 100 × (members with a strictly lower score) / `total_members`, two decimals:
    /// "ahead of 97.5 % of members"; null without a rank.
    pub percentile: Option<f64>,
    /// Absent at rank 1.
    pub above: Option<Above>,
    /// Absent for `all`.
    pub previous: Option<Previous>,
    /// Present (`true`) when the standing was read from the archive.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub archived: bool,
}

impl From<leaderboard::MemberStanding> for MemberResponse {
    fn from(v: leaderboard::MemberStanding) -> Self {
        Self {
            board: v.board,
            period: v.period,
            bucket: v.bucket,
            view: v.view,
            member: v.member,
            name: v.name,
            rank: v.rank,
            rank_beyond: v.rank_beyond,
            score: v.score,
            participants: v.participants,
            votes: v.votes,
            percentile: v.percentile,
            above: v.above.map(Into::into),
            previous: v.previous.map(Into::into),
            archived: v.archived,
        }
    }
}

/// A member in one bucket of its history.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct HistoryEntry {
    pub bucket: String,
    pub starts_at: Option<DateTime<Utc>>,
    /// Null without a score in the bucket (or outside what was ranked or archived).
    pub rank: Option<i64>,
    #[schema(value_type = f64)]
    pub score: serde_json::Number,
    /// Whether this bucket was read from the archive.
    pub archived: bool,
}

impl From<leaderboard::HistoryItem> for HistoryEntry {
    fn from(v: leaderboard::HistoryItem) -> Self {
        Self {
            bucket: v.bucket,
            starts_at: v.starts_at,
            rank: v.rank,
            score: v.score,
            archived: v.archived,
        }
    }
}

/// A member's rank and score per bucket, newest first.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct HistoryResponse {
    pub board: String,
    pub member: String,
    pub period: String,
    pub view: String,
    pub buckets: Vec<HistoryEntry>,
}

impl From<leaderboard::History> for HistoryResponse {
    fn from(v: leaderboard::History) -> Self {
        Self {
            board: v.board,
            member: v.member,
            period: v.period,
            view: v.view,
            buckets: v.buckets.into_iter().map(Into::into).collect(),
        }
    }
}

/// Votes in one hour.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct HourVotes {
    /// Start of the hour (RFC 3339, UTC).
    pub hour: DateTime<Utc>,
    pub votes: i64,
    /// Votes refused by rate-limit rules in this hour, per rule (the refusing rule only).
    pub refused: Vec<RuleRefusals>,
}

impl From<leaderboard::HourCount> for HourVotes {
    fn from(v: leaderboard::HourCount) -> Self {
        Self {
            hour: v.hour,
            votes: v.votes,
            refused: v.refused.into_iter().map(Into::into).collect(),
        }
    }
}

/// Votes one rule refused.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct RuleRefusals {
    pub rule: i64,
    pub votes: i64,
}

impl From<leaderboard::RuleCount> for RuleRefusals {
    fn from(v: leaderboard::RuleCount) -> Self {
        Self {
            rule: v.rule,
            votes: v.votes,
        }
    }
}

/// Activity of a board.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct StatsResponse {
    pub board: String,
    pub period: String,
    pub bucket: String,
    /// Distinct voters in the bucket.
    pub participants: i64,
    /// Members with a score in the bucket (real view).
    pub total_members: i64,
    /// Votes counted in the bucket: the sum of its members' real-view scores (each
    /// vote's count, adjustments included; participants count people, this counts
    /// votes; a trending period's are the all-time bucket's). Null on a `scores` board,
    /// for a rolling window, for a trending period on a board without `all`, and for a
    /// bucket that began before the board counted votes per bucket (boards made before
    /// this count existed).
    pub votes: Option<i64>,
    /// The last 48 hours, oldest first, ending with the current hour.
    pub votes_per_hour: Vec<HourVotes>,
}

impl From<leaderboard::Stats> for StatsResponse {
    fn from(v: leaderboard::Stats) -> Self {
        Self {
            board: v.board,
            period: v.period,
            bucket: v.bucket,
            participants: v.participants,
            total_members: v.total_members,
            votes: v.votes,
            votes_per_hour: v.votes_per_hour.into_iter().map(Into::into).collect(),
        }
    }
}
