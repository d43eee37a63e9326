//! The in-memory configuration cache: boards, members, rules, API keys and leagues loaded
//! from SQL.
//!
//! Votes, score writes and reads find boards, members, rules, keys and leagues here,
//! never in SQL (where a request reads SQL, and why, ARCHITECTURE.md says). How a change
//! reaches every instance's cache is `engine::config_sync`.

use std::collections::{HashMap, HashSet};
use std::hash::Hash;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use sea_orm::DatabaseConnection;

use crate::domain::auth::ApiKey;
use crate::domain::board::{Board, Member};
use crate::domain::identity::Provider;
use crate::domain::ids::{BoardSlug, LeagueSlug, MemberId};
use crate::domain::league::{BracketRef, League};
use crate::domain::limit::RateRule;
use crate::domain::watch::Watch;
use crate::store::redis::{BoardKeys, Keys, LeagueKeys, SeasonRecord, Spread};
use crate::store::sql::{self, SqlError};

/// A board as the hot path needs it.
#[derive(Debug)]
pub struct BoardConfig {
    pub board: Board,
    pub members: HashMap<MemberId, Member>,
    /// Rate-limit rules, oldest first; a vote must pass all of them.
    pub rules: Vec<RateRule>,
    /// A family's rules of rooms opened per creator (`RuleSpec::opens_rooms`), oldest
    /// first: a write that opens a room must pass all of them.
    pub opening_rules: Vec<RateRule>,
    /// Watches, oldest first: a vote past one of them is held for review.
    pub watches: Vec<Watch>,
    pub keys: BoardKeys,
}

impl BoardConfig {
    /// Every rule of the board, writes' then rooms', oldest first within each.
    pub fn all_rules(&self) -> impl Iterator<Item = &RateRule> {
        self.rules.iter().chain(&self.opening_rules)
    }
}

/// A league as the hot path needs it.
#[derive(Debug)]
pub struct LeagueConfig {
    pub league: League,
    pub keys: LeagueKeys,
    /// The season record this instance last read (`None`: not yet); a script told of an
    /// older season answers the current one's number, and the caller reads it again.
    pub season: RwLock<Option<Arc<SeasonRecord>>>,
    /// Where players are this season, as scripts told this instance: a player never
    /// changes bracket within a season, so a score write names the right one at once.
    places: Mutex<Places>,
}

/// The brackets of one season's players, remembered up to [`PLACES_MAX`] of them.
#[derive(Debug, Default)]
struct Places {
    season: i64,
    by_player: HashMap<String, BracketRef>,
}

/// Players whose bracket a league remembers; past it, it starts afresh (a forgotten one
/// costs a score write one more call).
const PLACES_MAX: usize = 100_000;

impl LeagueConfig {
    /// The bracket `player` is known to be in in season `n`.
    pub fn known_place(&self, n: i64, player: &str) -> Option<BracketRef> {
        let places = lock(&self.places);
        (places.season == n)
            .then(|| places.by_player.get(player).copied())
            .flatten()
    }

    /// Remembers that `player` is in `place` in season `n`.
    pub fn remember_place(&self, n: i64, player: &str, place: BracketRef) {
        let mut places = lock(&self.places);
        if places.season != n || places.by_player.len() >= PLACES_MAX {
            places.season = n;
            places.by_player.clear();
        }
        places.by_player.insert(player.to_owned(), place);
    }

    /// The season record last read.
    pub fn known_season(&self) -> Option<Arc<SeasonRecord>> {
        read(&self.season).clone()
    }

    /// Keeps `record` as the last read, unless a newer season is known already.
    pub fn remember_season(&self, record: SeasonRecord) -> Arc<SeasonRecord> {
        let mut known = write(&self.season);
        match known.as_ref() {
            Some(k) if k.n > record.n => k.clone(),
            _ => {
                let record = Arc::new(record);
                *known = Some(record.clone());
                record
            }
        }
    }
}

/// What changed, as published on the configuration channel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    Board(BoardSlug),
    League(LeagueSlug),
    ApiKeys,
    Providers,
}

impl Change {
    pub(super) fn encode(&self) -> String {
        match self {
            Self::Board(slug) => format!("board:{slug}"),
            Self::League(slug) => format!("league:{slug}"),
            Self::ApiKeys => "api-keys".to_owned(),
            Self::Providers => "providers".to_owned(),
        }
    }

    /// A notice is `<version> <change>`.
    pub(super) fn decode(payload: &str) -> Option<(i64, Self)> {
        let (version, change) = payload.split_once(' ')?;
        let change = match change.split_once(':') {
            Some(("board", slug)) => Self::Board(BoardSlug::parse(slug).ok()?),
            Some(("league", slug)) => Self::League(LeagueSlug::parse(slug).ok()?),
            _ if change == "api-keys" => Self::ApiKeys,
            _ if change == "providers" => Self::Providers,
            _ => return None,
        };
        Some((version.parse().ok()?, change))
    }
}

/// Boards and leagues by slug, live API keys by hash, identity providers by name.
///
/// Reloads can overlap (a request's own reload and the listener's, say). Each takes a
/// ticket before it reads SQL, and a load never replaces one with a later ticket: a load
/// that started earlier may have read rows from before a change, and must not undo it.
pub struct ConfigCache {
    keys: Keys,
    tickets: AtomicU64,
    /// The configuration version (as counted in Redis) this instance has caught up with;
    /// -1 before the first check.
    pub(super) version: AtomicI64,
    boards: RwLock<BySlug<BoardSlug, BoardConfig>>,
    leagues: RwLock<BySlug<LeagueSlug, LeagueConfig>>,
    api_keys: RwLock<ApiKeys>,
    providers: RwLock<Providers>,
}

#[derive(Default)]
struct Providers {
    by_name: HashMap<String, Arc<Provider>>,
    loaded: u64,
}

/// Loaded things by slug.
struct BySlug<K, V> {
    by_slug: HashMap<K, Arc<V>>,
    /// The ticket of the newest load applied to each slug, removals included.
    loaded: HashMap<K, u64>,
}

impl<K, V> Default for BySlug<K, V> {
    fn default() -> Self {
        Self {
            by_slug: HashMap::new(),
            loaded: HashMap::new(),
        }
    }
}

impl<K: Clone + Eq + Hash, V> BySlug<K, V> {
    /// Puts a load of `slug` (`None`: it is gone) unless a newer one is in.
    fn apply(&mut self, slug: &K, config: Option<Arc<V>>, ticket: u64) {
        if self.loaded.get(slug).is_some_and(|&t| t > ticket) {
            return;
        }
        self.loaded.insert(slug.clone(), ticket);
        match config {
            Some(config) => self.by_slug.insert(slug.clone(), config),
            None => self.by_slug.remove(slug),
        };
    }

    /// Replaces everything with `fresh`, loaded under `ticket`.
    fn replace(&mut self, fresh: HashMap<K, Arc<V>>, ticket: u64) {
        let gone: Vec<K> = self
            .by_slug
            .keys()
            .filter(|slug| !fresh.contains_key(*slug))
            .cloned()
            .collect();
        for slug in gone {
            self.apply(&slug, None, ticket);
        }
        for (slug, config) in fresh {
            self.apply(&slug, Some(config), ticket);
        }
    }
}

#[derive(Default)]
struct ApiKeys {
    by_hash: HashMap<String, Arc<ApiKey>>,
    /// The ids of live keys.
    live: HashSet<i64>,
    loaded: u64,
}

impl ConfigCache {
    /// Loads everything from SQL.
    pub async fn load(db: &DatabaseConnection, keys: Keys) -> Result<Self, SqlError> {
        let cache = Self {
            keys,
            tickets: AtomicU64::new(0),
            version: AtomicI64::new(-1),
            boards: RwLock::default(),
            leagues: RwLock::default(),
            api_keys: RwLock::default(),
            providers: RwLock::default(),
        };
        cache.reload_all(db).await?;
        Ok(cache)
    }

    /// The board with this slug.
    pub fn board(&self, slug: &BoardSlug) -> Option<Arc<BoardConfig>> {
        read(&self.boards).by_slug.get(slug).cloned()
    }

    /// The board with this SQL id (a scan: for reports, not the hot path).
    pub fn board_by_id(&self, id: i64) -> Option<Arc<BoardConfig>> {
        read(&self.boards)
            .by_slug
            .values()
            .find(|b| b.board.id == id)
            .cloned()
    }

    /// Every board, by slug.
    pub fn boards(&self) -> Vec<Arc<BoardConfig>> {
        let mut boards: Vec<_> = read(&self.boards).by_slug.values().cloned().collect();
        boards.sort_by(|a, b| a.board.slug.cmp(&b.board.slug));
        boards
    }

    /// The league with this slug.
    pub fn league(&self, slug: &LeagueSlug) -> Option<Arc<LeagueConfig>> {
        read(&self.leagues).by_slug.get(slug).cloned()
    }

    /// Every league, by slug.
    pub fn leagues(&self) -> Vec<Arc<LeagueConfig>> {
        let mut leagues: Vec<_> = read(&self.leagues).by_slug.values().cloned().collect();
        leagues.sort_by(|a, b| a.league.slug.cmp(&b.league.slug));
        leagues
    }

    /// The live key with this hash.
    pub fn api_key(&self, hash: &str) -> Option<Arc<ApiKey>> {
        read(&self.api_keys).by_hash.get(hash).cloned()
    }

    /// Whether the key with this id is live (not revoked, not deleted).
    pub fn api_key_is_live(&self, id: i64) -> bool {
        read(&self.api_keys).live.contains(&id)
    }

    /// The identity provider named `name`.
    pub fn provider(&self, name: &str) -> Option<Arc<Provider>> {
        read(&self.providers).by_name.get(name).cloned()
    }

    /// Every identity provider, by name.
    pub fn providers(&self) -> Vec<Arc<Provider>> {
        let mut all: Vec<_> = read(&self.providers).by_name.values().cloned().collect();
        all.sort_by(|a, b| a.spec.name.cmp(&b.spec.name));
        all
    }

    /// Reloads every board, league, key and provider.
    pub async fn reload_all(&self, db: &DatabaseConnection) -> Result<(), SqlError> {
        crate::metrics::config_reload("all");
        let ticket = self.ticket();
        let mut fresh = HashMap::new();
        for board in sql::boards::list_boards(db).await? {
            let config = self.assemble(db, board).await?;
            fresh.insert(config.board.slug.clone(), Arc::new(config));
        }
        let leagues = sql::leagues::list_leagues(db)
            .await?
            .into_iter()
            .map(|league| (league.slug.clone(), Arc::new(self.league_config(league))))
            .collect();
        write(&self.boards).replace(fresh, ticket);
        write(&self.leagues).replace(leagues, ticket);
        self.reload_api_keys(db).await?;
        self.reload_providers(db).await
    }

    fn league_config(&self, league: League) -> LeagueConfig {
        LeagueConfig {
            keys: self.keys.league(league.id),
            league,
            season: RwLock::new(None),
            places: Mutex::default(),
        }
    }

    /// Reloads what `change` names.
    pub async fn apply(&self, db: &DatabaseConnection, change: &Change) -> Result<(), SqlError> {
        match change {
            Change::Board(slug) => {
                crate::metrics::config_reload("board");
                self.reload_board(db, slug).await
            }
            Change::League(slug) => {
                crate::metrics::config_reload("league");
                let ticket = self.ticket();
                let config = sql::leagues::find_league(db, slug)
                    .await?
                    .map(|league| Arc::new(self.league_config(league)));
                write(&self.leagues).apply(slug, config, ticket);
                Ok(())
            }
            Change::ApiKeys => {
                crate::metrics::config_reload("api_keys");
                self.reload_api_keys(db).await
            }
            Change::Providers => {
                crate::metrics::config_reload("providers");
                self.reload_providers(db).await
            }
        }
    }

    async fn reload_board(
        &self,
        db: &DatabaseConnection,
        slug: &BoardSlug,
    ) -> Result<(), SqlError> {
        let ticket = self.ticket();
        let config = match sql::boards::find_board(db, slug).await? {
            Some(board) => Some(Arc::new(self.assemble(db, board).await?)),
            None => None,
        };
        write(&self.boards).apply(slug, config, ticket);
        Ok(())
    }

    /// Records that the change counted as `version` is applied, when it is the one right
    /// after the last version caught up with; a gap is left for the next check to close.
    pub(super) fn applied(&self, version: i64) {
        let _ =
            self.version
                .compare_exchange(version - 1, version, Ordering::SeqCst, Ordering::SeqCst);
    }

    /// Reloads everything and records `version`, read before the reload started.
    pub(super) async fn catch_up(
        &self,
        db: &DatabaseConnection,
        version: i64,
    ) -> Result<(), SqlError> {
        self.reload_all(db).await?;
        self.version.store(version, Ordering::SeqCst);
        Ok(())
    }

    fn ticket(&self) -> u64 {
        self.tickets.fetch_add(1, Ordering::SeqCst) + 1
    }

    async fn reload_api_keys(&self, db: &DatabaseConnection) -> Result<(), SqlError> {
        let ticket = self.ticket();
        let by_hash: HashMap<_, _> = sql::api_keys::list_api_keys(db)
            .await?
            .into_iter()
            .filter(|(_, key)| key.revoked_at.is_none())
            .map(|(hash, key)| (hash, Arc::new(key)))
            .collect();
        let live = by_hash.values().map(|k| k.id).collect();
        let mut keys = write(&self.api_keys);
        if keys.loaded < ticket {
            *keys = ApiKeys {
                by_hash,
                live,
                loaded: ticket,
            };
        }
        Ok(())
    }

    async fn reload_providers(&self, db: &DatabaseConnection) -> Result<(), SqlError> {
        let ticket = self.ticket();
        let by_name = sql::identity_providers::list_providers(db)
            .await?
            .into_iter()
            .map(|p| (p.spec.name.clone(), Arc::new(p)))
            .collect();
        let mut providers = write(&self.providers);
        if providers.loaded < ticket {
            *providers = Providers {
                by_name,
                loaded: ticket,
            };
        }
        Ok(())
    }

    async fn assemble(
        &self,
        db: &DatabaseConnection,
        board: Board,
    ) -> Result<BoardConfig, SqlError> {
        let members = sql::members::list_members(db, board.id)
            .await?
            .into_iter()
            .map(|m| (m.id.clone(), m))
            .collect();
        let (opening_rules, rules) = sql::rules::list_rules(db, board.id)
            .await?
            .into_iter()
            .partition(|r| r.spec.opens_rooms());
        let watches = sql::watches::list(db, board.id, false).await?;
        Ok(BoardConfig {
            keys: self.keys.board(
                board.id,
                board.settings.storage,
                if board.settings.scoring.is_scores() {
                    Spread::Members
                } else {
                    Spread::Voters
                },
                board.settings.timezone,
            ),
            board,
            members,
            rules,
            opening_rules,
            watches,
        })
    }
}

fn read<T>(lock: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    lock.read()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn write<T>(lock: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    lock.write()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::board::BoardSettings;

    fn config(slug: &BoardSlug, title: &str) -> Arc<BoardConfig> {
        Arc::new(BoardConfig {
            board: Board {
                id: 1,
                slug: slug.clone(),
                settings: BoardSettings::new(title.to_owned()),
                votes_counted_from: None,
            },
            members: HashMap::new(),
            rules: Vec::new(),
            opening_rules: Vec::new(),
            watches: Vec::new(),
            keys: Keys::new("t:").board(
                1,
                crate::domain::scoring::Storage::Full,
                Spread::Voters,
                chrono_tz::Tz::UTC,
            ),
        })
    }

    #[test]
    fn a_load_that_started_earlier_never_replaces_a_later_one() {
        let slug = BoardSlug::parse("b").unwrap();
        let mut boards = BySlug::default();
        boards.apply(&slug, Some(config(&slug, "new")), 2);
        boards.apply(&slug, Some(config(&slug, "old")), 1);
        assert_eq!(boards.by_slug[&slug].board.settings.title, "new");
        boards.apply(&slug, None, 3);
        boards.apply(&slug, Some(config(&slug, "older")), 2);
        assert!(!boards.by_slug.contains_key(&slug));
        boards.apply(&slug, Some(config(&slug, "again")), 4);
        assert_eq!(boards.by_slug[&slug].board.settings.title, "again");
    }
}
