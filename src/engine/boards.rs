//! The board a request names (`BoardName`): a plain board, or one instance of a family,
//! found in the configuration cache (never SQL) with the keys its rankings live under.
//!
//! An instance has no row and no cache entry of its own: it is its family's
//! configuration (`BoardConfig`) and the instance's keys, put together per request, so
//! nothing in the process grows with the instances ever written.

use std::sync::Arc;

use chrono::{DateTime, Utc};

use super::config::BoardConfig;
use super::error::EngineError;
use super::state::AppState;
use crate::domain::board::BoardSettings;
use crate::domain::code::Code;
use crate::domain::ids::{BoardName, BoardSlug, InstanceId};
use crate::domain::period::{Bucket, Period, voter_buckets};
use crate::store::redis::{BoardKeys, InstancePage, SearchQuery};

/// A board that keeps rankings: a plain board, or an instance of a family.
#[derive(Debug, Clone)]
pub struct BoardRef {
    /// The board's configuration: a family's for an instance.
    pub config: Arc<BoardConfig>,
    pub instance: Option<InstanceId>,
    /// Where its rankings live: the board's keys, or the instance's.
    pub keys: BoardKeys,
}

impl BoardRef {
    /// The board `name` names in `config`: an instance of a family, or a plain board.
    /// A family without an instance is 422 `instance_required` (its rankings are its
    /// instances'); an instance of a plain board names no board (404).
    pub fn of(config: Arc<BoardConfig>, name: &BoardName) -> Result<Self, EngineError> {
        let family = config.board.settings.instances;
        let keys = match (family, &name.instance) {
            (Some(family), Some(instance)) => {
                config.keys.instance(instance.as_str(), family.ttl_s * 1000)
            }
            (Some(_), None) => {
                return Err(EngineError::invalid(
                    Code::InstanceRequired,
                    format!(
                        "board {} is a family: name one of its boards, {}:<instance>",
                        name.slug, name.slug
                    ),
                ));
            }
            (None, Some(_)) => {
                return Err(EngineError::not_found(
                    Code::BoardNotFound,
                    format!("no board {name}: board {} has no instances", name.slug),
                ));
            }
            (None, None) => config.keys.clone(),
        };
        Ok(Self {
            config,
            instance: name.instance.clone(),
            keys,
        })
    }

    /// A plain board as a whole (a family is 422 `instance_required`).
    pub fn plain(config: Arc<BoardConfig>) -> Result<Self, EngineError> {
        let name = BoardName::from(config.board.slug.clone());
        Self::of(config, &name)
    }

    pub fn settings(&self) -> &BoardSettings {
        &self.config.board.settings
    }

    /// The name the API shows: `<slug>` or `<slug>:<instance>`.
    pub fn name(&self) -> String {
        match &self.instance {
            Some(instance) => format!("{}:{instance}", self.config.board.slug),
            None => self.config.board.slug.to_string(),
        }
    }

    /// What keys the read cache by: the board's id (a board deleted and created again
    /// under its slug starts afresh) and the instance.
    pub fn cache_id(&self) -> String {
        match &self.instance {
            Some(instance) => format!("{}:{instance}", self.config.board.id),
            None => self.config.board.id.to_string(),
        }
    }

    /// Whether the board's closed buckets go to the archive: an instance's never do (its
    /// keys expire with it).
    pub fn archived(&self) -> bool {
        self.instance.is_none()
    }
}

/// Whether `board` holds rankings a live stream can follow: a plain board always, a
/// family's instance while it is live (written within its family's `ttl_s`).
pub async fn is_live(state: &AppState, board: &BoardRef) -> Result<bool, EngineError> {
    let (Some(instance), Some(family)) = (&board.instance, board.settings().instances) else {
        return Ok(true);
    };
    Ok(state
        .redis
        .instance_live(
            &board.config.keys,
            instance.as_str(),
            family.ttl_s * 1000,
            Utc::now().timestamp_millis(),
        )
        .await?)
}

/// Notes in each family's listing that its instances in `written` were written at
/// `now` (and keeps a sharded instance's shards alive together), and for the drain those
/// whose writes appended ledger entries (the `bool`). The writes are answered already: a
/// failure here is logged, the instance is listed again by its next write, and the
/// ledger's note is left to this instance's drain.
pub async fn note_written(state: &AppState, written: &[(BoardRef, bool)], now: DateTime<Utc>) {
    let mut by_family: Vec<(&BoardRef, Vec<(&str, bool)>)> = Vec::new();
    for (board, ledgered) in written {
        let Some(instance) = &board.instance else {
            continue;
        };
        let noted = (instance.as_str(), *ledgered);
        match by_family
            .iter_mut()
            .find(|(f, _)| f.config.board.id == board.config.board.id)
        {
            Some((_, instances)) => instances.push(noted),
            None => by_family.push((board, vec![noted])),
        }
    }
    for (board, mut instances) in by_family {
        // An instance written both with and without an entry: "with" sorts first, stays.
        instances.sort_unstable_by(|a, b| a.0.cmp(b.0).then(b.1.cmp(&a.1)));
        instances.dedup_by(|a, b| a.0 == b.0);
        let settings = board.settings();
        let Some(family) = settings.instances else {
            continue;
        };
        let buckets = current_buckets(settings, now);
        let now_ms = now.timestamp_millis();
        if let Err(err) = state
            .redis
            .instances_written(
                &board.config.keys,
                family.ttl_s * 1000,
                now_ms,
                &instances,
                &buckets,
            )
            .await
        {
            tracing::warn!(error = %err, family = %board.config.board.slug, "could not list written instances; their next write lists them");
            let ledgered: Vec<&str> = instances
                .iter()
                .filter(|(_, l)| *l)
                .map(|(i, _)| *i)
                .collect();
            state
                .backlogs
                .unnoted(board.config.board.id, &ledgered, now_ms);
        }
    }
}

/// The buckets a write now lands in, and those whose distinct voters it counts: what a
/// sharded instance's refresh keeps alive.
fn current_buckets(settings: &BoardSettings, now: DateTime<Utc>) -> Vec<Bucket> {
    let tz = settings.timezone;
    let mut buckets: Vec<Bucket> = settings
        .periods
        .iter()
        .filter(|p| p.is_bucketed())
        .filter_map(|&p| Bucket::containing(p, tz, now).ok())
        .collect();
    for voters in voter_buckets(&settings.periods, tz, now).unwrap_or_default() {
        if !buckets.contains(&voters) {
            buckets.push(voters);
        }
    }
    buckets
}

/// Instances one search request looks at, at most: past it, the page ends with a cursor
/// to go on from, so a search costs the same however many instances live.
pub const SEARCH_BUDGET: i64 = 5000;

/// Instances a page of a family's listing holds at most.
pub const MAX_INSTANCES_PAGE: i64 = 1000;

/// One live instance of a family.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveInstance {
    pub instance: String,
    pub last_write_at: DateTime<Utc>,
    /// Members with a score in the family's default period's current bucket.
    pub total_members: i64,
}

/// A page of a family's live instances, most recently written first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instances {
    pub instances: Vec<LiveInstance>,
    /// Every live instance (a search's page too: it counts no matches).
    pub total: i64,
    /// Where the next page starts; `None` after the last.
    pub next_cursor: Option<String>,
}

/// The page of `family`'s instances written within its TTL after `cursor` (as a page
/// answered it), `limit` at most (1 to [`MAX_INSTANCES_PAGE`]); with `search`, only
/// those whose name contains it among at most [`SEARCH_BUDGET`] instances looked at, the
/// cursor saying where to go on (a search page may hold fewer than `limit`, even none,
/// and still have a next one).
pub async fn instances(
    state: &AppState,
    family: &BoardConfig,
    limit: i64,
    cursor: Option<&str>,
    search: Option<&str>,
) -> Result<Instances, EngineError> {
    let Some(lifetime) = family.board.settings.instances else {
        return Err(EngineError::not_found(
            Code::BoardNotFound,
            format!(
                "board {} is not a family: it has no instances",
                family.board.slug
            ),
        ));
    };
    if !(1..=MAX_INSTANCES_PAGE).contains(&limit) {
        return Err(EngineError::invalid_field(
            "limit",
            format!("limit must be between 1 and {MAX_INSTANCES_PAGE}"),
        ));
    }
    let after = cursor.map(parse_cursor).transpose()?;
    let after = after.as_ref().map(|(ms, i)| (*ms, i.as_str()));
    let search = search
        .map(|text| {
            InstanceId::parse(text).map_err(|_| {
                EngineError::invalid_field(
                    "search",
                    "search: 1 to 64 of the characters an instance name has (letters, digits, _ . -)",
                )
            })
        })
        .transpose()?;
    let now = Utc::now();
    let ttl_ms = lifetime.ttl_s * 1000;
    let now_ms = now.timestamp_millis();
    let (page, next) = match &search {
        Some(text) => {
            let found = state
                .redis
                .instances_matching(
                    &family.keys,
                    ttl_ms,
                    now_ms,
                    SearchQuery {
                        text: text.as_str(),
                        limit,
                        budget: SEARCH_BUDGET,
                        after,
                    },
                )
                .await?;
            let page = InstancePage {
                total: found.total,
                instances: found.instances,
            };
            (page, found.next.map(|(ms, i)| format!("{ms}:{i}")))
        }
        None => {
            let page = state
                .redis
                .instances_page(&family.keys, ttl_ms, now_ms, limit, after)
                .await?;
            let next = (page.instances.len() as i64 == limit)
                .then(|| page.instances.last().map(|(i, ms)| format!("{ms}:{i}")))
                .flatten();
            (page, next)
        }
    };
    let settings = &family.board.settings;
    let bucket = Bucket::containing(
        Period::default_of(&settings.periods),
        settings.timezone,
        now,
    )?;
    let keys: Vec<BoardKeys> = page
        .instances
        .iter()
        .map(|(instance, _)| family.keys.instance(instance, ttl_ms))
        .collect();
    let members = state.redis.members_in(&keys, &bucket).await?;
    Ok(Instances {
        instances: page
            .instances
            .into_iter()
            .zip(members)
            .map(|((instance, ms), total_members)| LiveInstance {
                instance,
                last_write_at: DateTime::from_timestamp_millis(ms).unwrap_or(now),
                total_members,
            })
            .collect(),
        total: page.total,
        next_cursor: next,
    })
}

/// Reads a listing cursor, `<last write ms>:<instance>`.
fn parse_cursor(raw: &str) -> Result<(i64, InstanceId), EngineError> {
    raw.split_once(':')
        .and_then(|(ms, instance)| Some((ms.parse().ok()?, InstanceId::parse(instance).ok()?)))
        .ok_or_else(|| {
            EngineError::invalid(
                Code::InvalidCursor,
                "cursor: pass next_cursor as the previous page answered it",
            )
        })
}

/// Reads a board's name from a route or a batch item: a malformed slug names no board
/// (404 `board_not_found`, as an unknown one), a malformed instance is 422
/// `invalid_instance`.
pub fn parse_name(raw: &str) -> Result<BoardName, EngineError> {
    BoardName::parse(raw).map_err(|e| match e.code {
        Code::InvalidBoardSlug => EngineError::not_found(Code::BoardNotFound, e.message),
        _ => e.into(),
    })
}

/// The board `slug` names, as a whole (a family's own settings, members and rules): 404
/// `board_not_found` when there is none.
pub fn board_of(state: &AppState, slug: &BoardSlug) -> Result<Arc<BoardConfig>, EngineError> {
    state
        .config
        .board(slug)
        .ok_or_else(|| EngineError::not_found(Code::BoardNotFound, format!("no board {slug}")))
}

/// Finds the board `name` names, for writing or reading rankings: 404 `board_not_found`
/// when there is no such board.
pub fn find(state: &AppState, name: &BoardName) -> Result<BoardRef, EngineError> {
    BoardRef::of(board_of(state, &name.slug)?, name)
}
