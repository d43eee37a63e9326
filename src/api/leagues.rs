//! Playing in leagues: `POST /leagues/{league}/join`, `POST /leagues/{league}/scores`,
//! and the standings `GET /leagues/{league}/players/{player}` and
//! `GET /leagues/{league}/brackets/{bracket}`.

use actix_web::{HttpResponse, get, post, web};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::auth::{Reader, Voter};
use super::client_ip::ClientIp;
use crate::domain::code::Code;
use crate::domain::idempotency::Idempotency;
use crate::domain::ids::{IdempotencyKey, LeagueSlug, PlayerId};
use crate::domain::league::{SCORE_MAX, ScoreOp};
use crate::engine::league_play::{self, Profile, ScoreWrite};
use crate::engine::state::AppState;
use crate::error::ApiError;

/// A player joins the league's current season.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"player": "u1", "profile": {"nickname": "Ana", "avatar": "https://example.com/a.png"}}))]
pub struct JoinRequest {
    pub player: String,
    /// Cached for the season and shown with standings; a later join replaces it.
    pub profile: Option<ProfileRequest>,
}

/// A player's name and picture.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ProfileRequest {
    /// 1 to 32 characters; control and bidirectional characters (such as U+202E) are
    /// refused.
    pub nickname: Option<String>,
    /// An http(s) URL, at most 2048 bytes, without spaces or control characters.
    pub avatar: Option<String>,
}

/// Points for a player in their bracket of the current season: `delta` (added), or `op`
/// with `value`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"player": "u1", "delta": 10, "idempotency_key": "match-981"}))]
pub struct LeagueScoreRequest {
    pub player: String,
    /// A whole number (negative takes points away); the score stays within ±(2^53 - 1).
    /// Without `op`.
    #[schema(value_type = Option<i64>)]
    pub delta: Option<serde_json::Number>,
    /// `incr` (add `value`, as `delta`), `set` (the score becomes `value`) or `best` (the
    /// score becomes `value` when that is higher). With `value`, without `delta`.
    pub op: Option<String>,
    /// A whole number within ±(2^53 - 1).
    #[schema(value_type = Option<i64>)]
    pub value: Option<serde_json::Number>,
    /// As for votes: a repeat returns the first answer and changes nothing.
    pub idempotency_key: Option<String>,
}

/// The fields of a score write its idempotency fingerprint covers, beside league and
/// player.
type Fingerprinted = Vec<(&'static str, String)>;

impl LeagueScoreRequest {
    /// What the write does, and the fields its idempotency fingerprint covers.
    /// (A `delta` write's fingerprint is what it was before ops came.)
    fn op(&self) -> Result<(ScoreOp, Fingerprinted), ApiError> {
        let whole =
            |n: &serde_json::Number| n.as_i64().filter(|v| (-SCORE_MAX..=SCORE_MAX).contains(v));
        match (&self.delta, &self.op, &self.value) {
            (Some(delta), None, None) => {
                let delta = whole(delta).ok_or_else(|| {
                    ApiError::invalid(
                        Code::InvalidDelta,
                        "delta must be a whole number within ±(2^53 - 1)",
                    )
                })?;
                Ok((ScoreOp::Incr(delta), vec![("delta", delta.to_string())]))
            }
            (None, Some(op), Some(value)) => {
                let value = whole(value).ok_or_else(|| {
                    ApiError::invalid(
                        Code::InvalidValue,
                        "value must be a whole number within ±(2^53 - 1)",
                    )
                })?;
                let parsed = ScoreOp::parse(op, value)?;
                Ok((
                    parsed,
                    vec![("op", op.clone()), ("value", value.to_string())],
                ))
            }
            _ => Err(ApiError::invalid(
                Code::InvalidOp,
                "give either delta, or op (set, best, incr) with value",
            )),
        }
    }
}

/// A league slug from a path: an ill-formed one names no league.
pub fn league_slug(raw: &str) -> Result<LeagueSlug, ApiError> {
    LeagueSlug::parse(raw).map_err(|e| ApiError::not_found(Code::LeagueNotFound, e.message))
}

/// Joins the current season: a new player starts in the lowest tier, a returning one in
/// the tier their last season gave them; brackets of a tier fill in join order. Joining
/// again answers the same bracket. `rewards` lists what earlier seasons gave the player,
/// once.
#[utoipa::path(post, path = "/api/v1/leagues/{league}/join", tag = "leagues",
    params(("league" = String, Path)), request_body = JoinRequest,
    responses(
        (status = 200, body = JoinAnswer),
        (status = 404, description = "league_not_found", body = super::ErrorBody),
        (status = 422, description = "invalid_player, invalid_profile", body = super::ErrorBody),
    ))]
#[post("/leagues/{league}/join")]
pub async fn join_league(
    state: web::Data<AppState>,
    Voter(caller): Voter,
    league: web::Path<String>,
    body: web::Json<JoinRequest>,
) -> Result<HttpResponse, ApiError> {
    let slug = league_slug(&league)?;
    let player = PlayerId::parse(&body.player)?;
    let profile = body.profile.as_ref().map(|p| Profile {
        nickname: p.nickname.clone(),
        avatar: p.avatar.clone(),
    });
    let answer = league_play::join(&state, &caller, &slug, &player, profile.as_ref()).await?;
    Ok(HttpResponse::Ok().json(JoinAnswer::from(answer)))
}

/// Changes a player's score in the current season: adds `delta` points, or applies `op`
/// (`incr`, `set`, `best`) with `value`.
#[utoipa::path(post, path = "/api/v1/leagues/{league}/scores", tag = "leagues",
    params(("league" = String, Path)), request_body = LeagueScoreRequest,
    responses(
        (status = 200, body = ScoreAnswer),
        (status = 404, description = "league_not_found", body = super::ErrorBody),
        (status = 429, description = "rate_limited: a score limit of the league refused the write (Retry-After)", body = super::RateLimitedBody),
        (status = 409, description = "not_joined: the player has not joined this season; season_closing: the season is over (or the previous one is still closing): join the next one, retry in a moment", body = super::ErrorBody),
        (status = 422, description = "invalid_player, invalid_delta, invalid_op (neither or both of delta and op, op without value, an unknown op), invalid_value, score_overflow, invalid_idempotency_key, idempotency_key_reused", body = super::ErrorBody),
    ))]
#[post("/leagues/{league}/scores")]
pub async fn write_league_score(
    state: web::Data<AppState>,
    Voter(caller): Voter,
    ip: ClientIp,
    league: web::Path<String>,
    body: web::Json<LeagueScoreRequest>,
) -> Result<HttpResponse, ApiError> {
    let slug = league_slug(&league)?;
    let player = PlayerId::parse(&body.player)?;
    let (op, fingerprinted) = body.op()?;
    let idempotency = body
        .idempotency_key
        .as_deref()
        .map(IdempotencyKey::parse)
        .transpose()?
        .map(|key| {
            let mut fields = vec![
                ("league", Some(slug.as_str())),
                ("player", Some(player.as_str())),
            ];
            fields.extend(fingerprinted.iter().map(|(n, v)| (*n, Some(v.as_str()))));
            Idempotency::new(key, &fields)
        });
    let write = ScoreWrite {
        player: &player,
        op,
        idempotency: idempotency.as_ref(),
        ip: ip.0,
    };
    let answer = league_play::score(&state, &caller, &slug, &write).await?;
    Ok(super::writes::written(
        answer.replayed,
        &ScoreAnswer::from(answer),
    ))
}

/// A player's place in the current season, and the zone it puts them in.
#[utoipa::path(get, path = "/api/v1/leagues/{league}/players/{player}", tag = "leagues",
    params(("league" = String, Path), ("player" = String, Path)),
    responses(
        (status = 200, body = PlayerAnswer),
        (status = 404, description = "league_not_found, not_joined", body = super::ErrorBody),
    ))]
#[get("/leagues/{league}/players/{player}")]
pub async fn get_player(
    state: web::Data<AppState>,
    _reader: Reader,
    path: web::Path<(String, String)>,
) -> Result<HttpResponse, ApiError> {
    let (league, player) = path.into_inner();
    let slug = league_slug(&league)?;
    let player =
        PlayerId::parse(&player).map_err(|e| ApiError::not_found(Code::NotJoined, e.message))?;
    Ok(HttpResponse::Ok().json(PlayerAnswer::from(
        league_play::player(&state, &slug, &player).await?,
    )))
}

/// Which season to read.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
pub struct SeasonQuery {
    /// A season's number; default the current one.
    pub season: Option<i64>,
}

/// A bracket: its players best first (equal scores: earlier join first), with profiles
/// and zones. A closed season's bracket reads from its recorded results (final ranks,
/// the zone each got; no profiles).
#[utoipa::path(get, path = "/api/v1/leagues/{league}/brackets/{bracket}", tag = "leagues",
    params(("league" = String, Path), ("bracket" = String, Path, description = "`<tier>-<number>`, like `gold-3`"), SeasonQuery),
    responses(
        (status = 200, body = BracketAnswer),
        (status = 404, description = "league_not_found, bracket_not_found, season_not_found (no closed season of that number)", body = super::ErrorBody),
        (status = 422, description = "invalid_bracket, unknown_tier", body = super::ErrorBody),
    ))]
#[get("/leagues/{league}/brackets/{bracket}")]
pub async fn get_bracket(
    state: web::Data<AppState>,
    _reader: Reader,
    path: web::Path<(String, String)>,
    query: web::Query<SeasonQuery>,
) -> Result<HttpResponse, ApiError> {
    let (league, bracket) = path.into_inner();
    let slug = league_slug(&league)?;
    Ok(HttpResponse::Ok().json(BracketAnswer::from(
        league_play::bracket(&state, &slug, &bracket, query.season).await?,
    )))
}

/// What a join answers.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct JoinAnswer {
    pub season: i64,
    pub tier: String,
    /// The bracket's id: `<tier>-<number>`.
    pub bracket: String,
    pub rank: i64,
    pub score: i64,
    /// What the player won in earlier seasons, listed once: the next join answers it
    /// empty.
    pub rewards: Vec<String>,
}

impl From<league_play::Joined> for JoinAnswer {
    fn from(v: league_play::Joined) -> Self {
        Self {
            season: v.season,
            tier: v.tier,
            bracket: v.bracket,
            rank: v.rank,
            score: v.score,
            rewards: v.rewards,
        }
    }
}

/// What a score write answers.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ScoreAnswer {
    pub season: i64,
    pub player: String,
    pub tier: String,
    pub bracket: String,
    pub rank: i64,
    pub score: i64,
    /// True when this answer repeats the first one for the same idempotency key.
    pub replayed: bool,
}

impl From<league_play::Scored> for ScoreAnswer {
    fn from(v: league_play::Scored) -> Self {
        Self {
            season: v.season,
            player: v.player,
            tier: v.tier,
            bracket: v.bracket,
            rank: v.rank,
            score: v.score,
            replayed: v.replayed,
        }
    }
}

/// A player's place in the current season.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PlayerAnswer {
    pub season: i64,
    pub player: String,
    pub tier: String,
    pub bracket: String,
    pub rank: i64,
    pub score: i64,
    /// `promote`, `stay` or `demote`: where the rank puts the player if the season
    /// closed now.
    pub zone: String,
}

impl From<league_play::PlayerStanding> for PlayerAnswer {
    fn from(v: league_play::PlayerStanding) -> Self {
        Self {
            season: v.season,
            player: v.player,
            tier: v.tier,
            bracket: v.bracket,
            rank: v.rank,
            score: v.score,
            zone: v.zone,
        }
    }
}

/// One player in a bracket.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct BracketEntry {
    pub rank: i64,
    pub player: String,
    pub score: i64,
    pub nickname: Option<String>,
    pub avatar: Option<String>,
    pub zone: String,
}

impl From<league_play::BracketPlayer> for BracketEntry {
    fn from(v: league_play::BracketPlayer) -> Self {
        Self {
            rank: v.rank,
            player: v.player,
            score: v.score,
            nickname: v.nickname,
            avatar: v.avatar,
            zone: v.zone,
        }
    }
}

/// A bracket's standings.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct BracketAnswer {
    pub season: i64,
    pub tier: String,
    pub bracket: String,
    /// The season takes scores (false once it is over, while its close runs).
    pub open: bool,
    /// When the season ends (RFC 3339).
    pub ends_at: String,
    pub entries: Vec<BracketEntry>,
}

impl From<league_play::BracketStandings> for BracketAnswer {
    fn from(v: league_play::BracketStandings) -> Self {
        Self {
            season: v.season,
            tier: v.tier,
            bracket: v.bracket,
            open: v.open,
            ends_at: v.ends_at,
            entries: v.entries.into_iter().map(Into::into).collect(),
        }
    }
}
