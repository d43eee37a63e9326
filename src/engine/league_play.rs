//! Playing in a league: joins, score writes and standings. The league comes from the
//! configuration cache and the season from its record in Redis, read again whenever a
//! script says a newer season is current; joins and score writes run on Redis alone.
//! SQL is touched in two places only: a join that hands rewards over records it in the
//! background, and a closed season's standings are read from its recorded results.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use serde_json::json;

use super::config::LeagueConfig;
use super::error::EngineError;
use super::league_close;
use super::limits::{self, RuleScope};
use super::state::AppState;
use super::writes::{outcome, outcome_unknown};
use crate::domain::code::Code;
use crate::domain::idempotency::Idempotency;
use crate::domain::ids::{LeagueSlug, PlayerId};
use crate::domain::league::{BracketRef, ScoreOp, Season, SeasonRules, player_of};
use crate::domain::limit::{VoteValues, ip_subject};
use crate::engine::auth::Caller;
use crate::metrics::WriteKind;
use crate::store::redis::{
    HandedReward, JoinCall, JoinReply, LeagueScoreCall, LeagueScoreReply, SeasonRecord, Standing,
};
use crate::store::sql;

/// How many times a call is made again after learning of a newer season (or, for a
/// score write, of the player's bracket).
const SEASON_TRIES: usize = 4;
/// Calls a join may take: it may learn of a newer season, of last season's bracket and
/// of this season's (twice, when other joins fill a bracket meanwhile).
const JOIN_TRIES: usize = 8;
/// Longest nickname, in characters (and at most four bytes each).
pub const NICKNAME_MAX: usize = 32;
/// Longest avatar URL, in bytes.
pub const AVATAR_MAX: usize = 2048;

/// A player's name and picture as standings show them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Profile {
    pub nickname: Option<String>,
    pub avatar: Option<String>,
}

/// Characters that change how the text around them is shown: the bidirectional
/// embeddings, overrides and isolates (U+202E turns `evil.exe` around), the direction
/// marks, and the line and paragraph separators.
fn is_layout_control(c: char) -> bool {
    matches!(
        c,
        '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{2028}'..='\u{202E}' | '\u{2066}'..='\u{2069}'
    )
}

impl Profile {
    /// Checks the fields: a nickname of 1 to 32 characters without control or
    /// bidirectional characters, an http(s) avatar URL of at most 2048 bytes without
    /// spaces or control characters.
    pub fn check(&self) -> Result<(), EngineError> {
        if let Some(n) = &self.nickname
            && (n.trim().is_empty()
                || n.chars().count() > NICKNAME_MAX
                || n.chars().any(|c| c.is_control() || is_layout_control(c)))
        {
            return Err(EngineError::invalid(
                Code::InvalidProfile,
                format!(
                    "nickname must be 1 to {NICKNAME_MAX} characters, without control or \
                    bidirectional characters"
                ),
            ));
        }
        if let Some(a) = &self.avatar
            && (a.len() > AVATAR_MAX
                || !(a.starts_with("https://") || a.starts_with("http://"))
                || a.chars()
                    .any(|c| c.is_whitespace() || c.is_control() || is_layout_control(c)))
        {
            return Err(EngineError::invalid(
                Code::InvalidProfile,
                format!("avatar must be an http:// or https:// URL of at most {AVATAR_MAX} bytes"),
            ));
        }
        Ok(())
    }

    fn to_json(&self) -> String {
        json!({"nickname": self.nickname, "avatar": self.avatar}).to_string()
    }

    fn from_json(text: &str) -> Self {
        let value: serde_json::Value = serde_json::from_str(text).unwrap_or_default();
        let field = |name: &str| value.get(name).and_then(|v| v.as_str()).map(str::to_owned);
        Self {
            nickname: field("nickname"),
            avatar: field("avatar"),
        }
    }
}

/// What a join answers.
#[derive(Debug, Clone)]
pub struct Joined {
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

/// What a score write answers.
#[derive(Debug, Clone)]
pub struct Scored {
    pub season: i64,
    pub player: String,
    pub tier: String,
    pub bracket: String,
    pub rank: i64,
    pub score: i64,
    /// True when this answer repeats the first one for the same idempotency key.
    pub replayed: bool,
}

/// A player's place in the current season.
#[derive(Debug, Clone)]
pub struct PlayerStanding {
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

/// One player in a bracket.
#[derive(Debug, Clone)]
pub struct BracketPlayer {
    pub rank: i64,
    pub player: String,
    pub score: i64,
    pub nickname: Option<String>,
    pub avatar: Option<String>,
    pub zone: String,
}

/// A bracket's standings.
#[derive(Debug, Clone)]
pub struct BracketStandings {
    pub season: i64,
    pub tier: String,
    pub bracket: String,
    /// The season takes scores (false once it is over, while its close runs).
    pub open: bool,
    /// When the season ends (RFC 3339).
    pub ends_at: String,
    pub entries: Vec<BracketPlayer>,
}

/// The league with this slug, from the configuration cache.
pub fn league(state: &AppState, slug: &LeagueSlug) -> Result<Arc<LeagueConfig>, EngineError> {
    state
        .config
        .league(slug)
        .ok_or_else(|| EngineError::not_found(Code::LeagueNotFound, format!("no league {slug}")))
}

/// The league's current season record: the one last read, or read now.
async fn season(state: &AppState, config: &LeagueConfig) -> Result<Arc<SeasonRecord>, EngineError> {
    match config.known_season() {
        Some(record) => Ok(record),
        None => fresh_season(state, config).await,
    }
}

/// Reads the league's season record again (starting the first season when Redis holds
/// none).
async fn fresh_season(
    state: &AppState,
    config: &LeagueConfig,
) -> Result<Arc<SeasonRecord>, EngineError> {
    let record = match state.redis.league_season(&config.keys).await? {
        Some(record) => record,
        None => league_close::restore_season(state, config).await?,
    };
    Ok(config.remember_season(record))
}

fn place_names(rules: &SeasonRules, place: BracketRef) -> (String, String) {
    (rules.tier_name(place.tier).to_owned(), place.id(rules))
}

fn season_changed() -> EngineError {
    EngineError::Unavailable("the season changed again and again during the call".into())
}

/// Whether the caller with this id can still call: the master key when one is set, a
/// key that is not revoked.
fn caller_is_live(state: &AppState, id: &str) -> bool {
    match id.strip_prefix("key:") {
        Some(key) => key
            .parse()
            .is_ok_and(|key| state.config.api_key_is_live(key)),
        None => id == "master" && state.master_key_hash.is_some(),
    }
}

/// `player` joins the current season (see `league_join.lua`). The rewards waiting for
/// the player are handed over when this caller played the season that won them; those
/// held for a caller that can no longer call (a revoked key) are handed to this one.
pub async fn join(
    state: &AppState,
    caller: &Caller,
    slug: &LeagueSlug,
    player: &PlayerId,
    profile: Option<&Profile>,
) -> Result<Joined, EngineError> {
    let joined = join_once(state, caller, slug, player, profile).await;
    count(
        state,
        WriteKind::LeagueJoin,
        slug,
        joined.as_ref().map(|_| false),
    );
    joined
}

/// Counts a league write in the writes metric.
fn count(
    state: &AppState,
    kind: WriteKind,
    slug: &LeagueSlug,
    replayed: Result<bool, &EngineError>,
) {
    let target = if state.config.league(slug).is_some() {
        slug.as_str()
    } else {
        "unknown"
    };
    crate::metrics::write(kind, target, outcome(replayed));
}

async fn join_once(
    state: &AppState,
    caller: &Caller,
    slug: &LeagueSlug,
    player: &PlayerId,
    profile: Option<&Profile>,
) -> Result<Joined, EngineError> {
    let config = league(state, slug)?;
    if let Some(p) = profile {
        p.check()?;
    }
    let profile = profile.map(Profile::to_json);
    let mut record = season(state, &config).await?;
    let (mut place, mut previous) = (config.known_place(record.n, player.as_str()), None);
    let (mut claim, mut rewards) = (Vec::new(), Vec::new());
    for _ in 0..JOIN_TRIES {
        let call = JoinCall {
            season: record.n,
            player: player.as_str(),
            profile: profile.as_deref(),
            now_ms: Utc::now().timestamp_millis(),
            caller: &caller.id,
            claim: &claim,
            place,
            previous,
        };
        let reply = state
            .redis
            .join_league(&config.keys, &call)
            .await
            .map_err(outcome_unknown)?;
        match reply {
            JoinReply::Joined {
                place: joined,
                rank,
                score,
                handed,
                held,
            } => {
                config.remember_place(record.n, player.as_str(), joined);
                record_handed(state, &config, caller, player, &handed);
                rewards.extend(handed);
                let orphaned: Vec<String> = held
                    .into_iter()
                    .filter(|holder| !claim.contains(holder) && !caller_is_live(state, holder))
                    .collect();
                if orphaned.is_empty() {
                    return Ok(joined_answer(&record, joined, rank, score, rewards));
                }
                // The join is done; calling again takes what revoked keys held.
                claim.extend(orphaned);
                place = Some(joined);
            }
            JoinReply::Place {
                place: wanted,
                previous: before,
            } => {
                (place, previous) = (wanted, before);
            }
            JoinReply::Stale(_) | JoinReply::NoSeason => {
                record = fresh_season(state, &config).await?;
                (place, previous) = (None, None);
            }
            JoinReply::Ended => {
                league_close::advance(state, &config, &record).await?;
                record = fresh_season(state, &config).await?;
                (place, previous) = (None, None);
            }
        }
    }
    Err(season_changed())
}

fn joined_answer(
    record: &SeasonRecord,
    place: BracketRef,
    rank: i64,
    score: i64,
    handed: Vec<HandedReward>,
) -> Joined {
    let (tier, bracket) = place_names(&record.rules, place);
    Joined {
        season: record.n,
        tier,
        bracket,
        rank,
        score,
        rewards: handed.into_iter().map(|r| r.reward).collect(),
    }
}

/// Records in SQL, in the background, which caller took which seasons' rewards.
fn record_handed(
    state: &AppState,
    config: &LeagueConfig,
    caller: &Caller,
    player: &PlayerId,
    handed: &[HandedReward],
) {
    if handed.is_empty() {
        return;
    }
    let mut seasons: Vec<i64> = handed.iter().filter_map(|r| r.season).collect();
    seasons.sort_unstable();
    seasons.dedup();
    let (db, id, player, by) = (
        state.db.clone(),
        config.league.id,
        player.clone(),
        caller.id.clone(),
    );
    tokio::spawn(async move {
        if let Err(err) =
            sql::leagues::rewards_delivered(&db, id, player.as_str(), &seasons, &by).await
        {
            tracing::warn!(error = %err, %player, "failed to record rewards as delivered");
        }
    });
}

/// One score write, parsed.
#[derive(Debug)]
pub struct ScoreWrite<'a> {
    pub player: &'a PlayerId,
    pub op: ScoreOp,
    pub idempotency: Option<&'a Idempotency>,
    /// The end user's address, for limits per `ip`.
    pub ip: Option<IpAddr>,
}

/// Changes the player's score in the current season as `write.op` says (adds points,
/// sets it, or keeps the higher of it and a value), within the league's score limits.
pub async fn score(
    state: &AppState,
    caller: &Caller,
    slug: &LeagueSlug,
    write: &ScoreWrite<'_>,
) -> Result<Scored, EngineError> {
    let scored = score_once(state, caller, slug, write).await;
    count(
        state,
        WriteKind::LeagueScore,
        slug,
        scored.as_ref().map(|s| s.replayed),
    );
    scored
}

async fn score_once(
    state: &AppState,
    caller: &Caller,
    slug: &LeagueSlug,
    write: &ScoreWrite<'_>,
) -> Result<Scored, EngineError> {
    let config = league(state, slug)?;
    let (player, op, idempotency) = (write.player, write.op, write.idempotency);
    let ttl: Duration = state.settings.idempotency_ttl;
    let settings = &config.league.settings;
    let now = Utc::now();
    let values = VoteValues {
        voter: None,
        member: Some(player.to_string()),
        channel: None,
        terminal: None,
        ip: write.ip.map(ip_subject),
        creator: None,
    };
    let scope = RuleScope {
        rules: &settings.limits,
        timezone: settings.timezone,
        campaign_end: None,
        campaign_idle: limits::CAMPAIGN_IDLE,
        lifetime: None,
    };
    let rules = limits::checks(scope, &values, 1, now, now)?;
    let tag = format!("{:016x}", rand::random::<u64>());
    let mut record = season(state, &config).await?;
    for _ in 0..SEASON_TRIES {
        let call = LeagueScoreCall {
            rules: &rules,
            tag: &tag,
            season: record.n,
            player: player.as_str(),
            op,
            now_ms: Utc::now().timestamp_millis(),
            idempotency: idempotency
                .map(|i| (caller.id.as_str(), &i.key, ttl, i.fingerprint.as_str())),
            place: config.known_place(record.n, player.as_str()),
        };
        let reply = state
            .redis
            .league_score(&config.keys, &call)
            .await
            .map_err(outcome_unknown)?;
        let answer = |standing: Standing, replayed: bool| {
            let (tier, bracket) = place_names(&record.rules, standing.place);
            Scored {
                season: record.n,
                player: player.to_string(),
                tier,
                bracket,
                rank: standing.rank,
                score: standing.score,
                replayed,
            }
        };
        let refused = |code: Code, message: String| Err(EngineError::conflict(code, message));
        match reply {
            LeagueScoreReply::Scored(standing) => return Ok(answer(standing, false)),
            LeagueScoreReply::Replayed {
                fingerprint,
                standing,
            } => {
                if idempotency.is_some_and(|i| i.fingerprint != fingerprint) {
                    return Err(EngineError::invalid(
                        Code::IdempotencyKeyReused,
                        "this idempotency key was used for a different request",
                    ));
                }
                return Ok(answer(standing, true));
            }
            LeagueScoreReply::Limited { index, retry_ms } => {
                let (check, rule) = rules
                    .get(index)
                    .zip(
                        settings
                            .limits
                            .iter()
                            .find(|r| Some(r.id) == rules.get(index).map(|c| c.rule)),
                    )
                    .ok_or_else(|| {
                        anyhow::anyhow!("limit {index} refused, which the write did not pass")
                    })?;
                return Err(limits::score_refusal(rule, check.limit, retry_ms));
            }
            LeagueScoreReply::NotJoined => {
                return refused(
                    Code::NotJoined,
                    format!(
                        "player {player} has not joined season {} of {slug}",
                        record.n
                    ),
                );
            }
            LeagueScoreReply::Closing => {
                return refused(
                    Code::SeasonClosing,
                    format!(
                        "season {} of {slug} is over or its predecessor is still closing; join the next season and try again in a moment",
                        record.n
                    ),
                );
            }
            LeagueScoreReply::Overflow => {
                return Err(EngineError::invalid(
                    Code::ScoreOverflow,
                    "the score would pass 2^53 - 1 in magnitude",
                ));
            }
            LeagueScoreReply::Place(place) => {
                config.remember_place(record.n, player.as_str(), place);
            }
            LeagueScoreReply::Stale(_) | LeagueScoreReply::NoSeason => {
                record = fresh_season(state, &config).await?;
            }
        }
    }
    Err(season_changed())
}

/// Where `player` stands in the current season.
pub async fn player(
    state: &AppState,
    slug: &LeagueSlug,
    player: &PlayerId,
) -> Result<PlayerStanding, EngineError> {
    let config = league(state, slug)?;
    let record = fresh_season(state, &config).await?;
    let place = state
        .redis
        .league_player(&config.keys, record.n, player.as_str())
        .await?
        .ok_or_else(|| {
            EngineError::not_found(
                Code::NotJoined,
                format!(
                    "player {player} has not joined season {} of {slug}",
                    record.n
                ),
            )
        })?;
    let s = place.standing;
    let (tier, bracket) = place_names(&record.rules, s.place);
    Ok(PlayerStanding {
        season: record.n,
        player: player.to_string(),
        tier,
        bracket,
        rank: s.rank,
        score: s.score,
        zone: record
            .rules
            .zone(s.place.tier, s.rank, place.players)
            .as_str()
            .to_owned(),
    })
}

/// The brackets of one season, by tier.
#[derive(Debug, Clone)]
pub struct SeasonBrackets {
    pub season: i64,
    /// Still played (false: closed, read from SQL).
    pub live: bool,
    /// `(tier name, [(bracket id, players)])`, lowest tier first; tiers without players
    /// are left out.
    pub tiers: Vec<(String, Vec<(String, i64)>)>,
}

/// The rules season `n` ran with, from SQL (a season recorded before they were kept
/// reads with the league's current ones).
async fn closed_rules(
    state: &AppState,
    config: &LeagueConfig,
    n: i64,
) -> Result<(Season, SeasonRules), EngineError> {
    let row = sql::leagues::season(&state.db, config.league.id, n)
        .await?
        .filter(|row| row.closed)
        .ok_or_else(|| {
            EngineError::not_found(
                Code::SeasonNotFound,
                format!("{} has no closed season {n}", config.league.slug),
            )
        })?;
    let rules = row
        .rules
        .clone()
        .unwrap_or_else(|| config.league.settings.rules());
    Ok((row, rules))
}

/// Every bracket of season `season` (default: the current one) with its player count.
pub async fn season_brackets(
    state: &AppState,
    slug: &LeagueSlug,
    season: Option<i64>,
) -> Result<SeasonBrackets, EngineError> {
    let config = league(state, slug)?;
    let record = fresh_season(state, &config).await?;
    let n = season.unwrap_or(record.n);
    let mut by_tier: std::collections::BTreeMap<usize, Vec<(String, i64)>> = Default::default();
    let (live, rules) = if n == record.n {
        for (tier, count) in state.redis.league_counts(&config.keys, n).await? {
            let brackets = record
                .rules
                .brackets(tier, count)
                .map(|(place, players)| (place.id(&record.rules), players))
                .collect();
            by_tier.insert(tier, brackets);
        }
        (true, record.rules.clone())
    } else {
        let (row, rules) = closed_rules(state, &config, n).await?;
        for (place, players) in sql::leagues::bracket_sizes(&state.db, row.id).await? {
            by_tier
                .entry(place.tier)
                .or_default()
                .push((place.id(&rules), players));
        }
        (false, rules)
    };
    Ok(SeasonBrackets {
        season: n,
        live,
        tiers: by_tier
            .into_iter()
            .map(|(tier, brackets)| (rules.tier_name(tier).to_owned(), brackets))
            .collect(),
    })
}

/// The standings of bracket `id` of season `season` (default: the current one, from
/// Redis; a closed one from its recorded results, without profiles).
pub async fn bracket(
    state: &AppState,
    slug: &LeagueSlug,
    id: &str,
    season: Option<i64>,
) -> Result<BracketStandings, EngineError> {
    let config = league(state, slug)?;
    let record = fresh_season(state, &config).await?;
    if let Some(n) = season.filter(|&n| n != record.n) {
        return closed_bracket(state, &config, n, id).await;
    }
    let place = BracketRef::parse(id, &record.rules)?;
    let ranked = state
        .redis
        .league_brackets(&config.keys, record.n, &[place])
        .await?
        .pop()
        .unwrap_or_default();
    if ranked.is_empty() {
        return Err(EngineError::not_found(
            Code::BracketNotFound,
            format!("season {} of {slug} has no bracket {id}", record.n),
        ));
    }
    let players: Vec<&str> = ranked.iter().map(|(m, _)| player_of(m)).collect();
    let profiles = state
        .redis
        .league_profiles(&config.keys, record.n, &players)
        .await?;
    let count = ranked.len() as i64;
    let entries = ranked
        .iter()
        .zip(profiles)
        .enumerate()
        .map(|(i, ((member, score), profile))| {
            let profile = profile
                .as_deref()
                .map(Profile::from_json)
                .unwrap_or_default();
            let rank = i as i64 + 1;
            BracketPlayer {
                rank,
                player: player_of(member).to_owned(),
                score: *score,
                nickname: profile.nickname,
                avatar: profile.avatar,
                zone: record
                    .rules
                    .zone(place.tier, rank, count)
                    .as_str()
                    .to_owned(),
            }
        })
        .collect();
    Ok(BracketStandings {
        season: record.n,
        tier: record.rules.tier_name(place.tier).to_owned(),
        bracket: place.id(&record.rules),
        open: record.open && Utc::now().timestamp_millis() < record.ends_ms,
        ends_at: chrono::DateTime::from_timestamp_millis(record.ends_ms)
            .unwrap_or_default()
            .to_rfc3339(),
        entries,
    })
}

async fn closed_bracket(
    state: &AppState,
    config: &LeagueConfig,
    n: i64,
    id: &str,
) -> Result<BracketStandings, EngineError> {
    let (row, rules) = closed_rules(state, config, n).await?;
    let place = BracketRef::parse(id, &rules)?;
    let entries: Vec<BracketPlayer> = sql::leagues::bracket_results(&state.db, row.id, place)
        .await?
        .into_iter()
        .map(|r| BracketPlayer {
            rank: r.rank,
            player: r.player,
            score: r.score,
            nickname: None,
            avatar: None,
            zone: r.zone,
        })
        .collect();
    if entries.is_empty() {
        return Err(EngineError::not_found(
            Code::BracketNotFound,
            format!("season {n} of {} had no bracket {id}", config.league.slug),
        ));
    }
    Ok(BracketStandings {
        season: n,
        tier: rules.tier_name(place.tier).to_owned(),
        bracket: place.id(&rules),
        open: false,
        ends_at: row.ends_at.to_rfc3339(),
        entries,
    })
}
