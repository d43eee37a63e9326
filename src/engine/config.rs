//! The in-memory configuration cache: boards, members, rules and API keys loaded from SQL.
//!
//! The vote and read paths only ever look here, never at SQL. An admin change reloads the
//! changed part on the instance that made it and publishes a notice on Redis; every other
//! instance's listener reloads the same part from SQL. When the listener (re)connects it
//! reloads everything, so notices missed while Redis was away cannot leave an instance
//! stale.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use futures_util::StreamExt;
use sea_orm::DatabaseConnection;

use crate::domain::auth::ApiKey;
use crate::domain::board::{Board, Member};
use crate::domain::ids::{BoardSlug, MemberId};
use crate::domain::limit::RateRule;
use crate::store::redis::{BoardKeys, Keys, RedisStore};
use crate::store::sql::{self, SqlError};

/// A board as the hot path needs it.
#[derive(Debug)]
pub struct BoardConfig {
    pub board: Board,
    pub members: HashMap<MemberId, Member>,
    /// Rate-limit rules, oldest first; a vote must pass all of them.
    pub rules: Vec<RateRule>,
    pub keys: BoardKeys,
}

/// What changed, as published on the configuration channel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    Board(BoardSlug),
    ApiKeys,
}

impl Change {
    fn encode(&self) -> String {
        match self {
            Self::Board(slug) => format!("board:{slug}"),
            Self::ApiKeys => "api-keys".to_owned(),
        }
    }

    fn decode(payload: &str) -> Option<Self> {
        match payload.split_once(':') {
            Some(("board", slug)) => BoardSlug::parse(slug).ok().map(Self::Board),
            _ if payload == "api-keys" => Some(Self::ApiKeys),
            _ => None,
        }
    }
}

/// Boards by slug and live API keys by hash.
///
/// Reloads can overlap (a request's own reload and the listener's, say). Each takes a
/// ticket before it reads SQL, and a load never replaces one with a later ticket: a load
/// that started earlier may have read rows from before a change, and must not undo it.
pub struct ConfigCache {
    keys: Keys,
    tickets: AtomicU64,
    boards: RwLock<Boards>,
    api_keys: RwLock<ApiKeys>,
}

#[derive(Default)]
struct Boards {
    by_slug: HashMap<BoardSlug, Arc<BoardConfig>>,
    /// The ticket of the newest load applied to each slug, removals included.
    loaded: HashMap<BoardSlug, u64>,
}

impl Boards {
    /// Puts a load of `slug` (`None`: the board is gone) unless a newer one is in.
    fn apply(&mut self, slug: &BoardSlug, config: Option<Arc<BoardConfig>>, ticket: u64) {
        if self.loaded.get(slug).is_some_and(|&t| t > ticket) {
            return;
        }
        self.loaded.insert(slug.clone(), ticket);
        match config {
            Some(config) => self.by_slug.insert(slug.clone(), config),
            None => self.by_slug.remove(slug),
        };
    }
}

#[derive(Default)]
struct ApiKeys {
    by_hash: HashMap<String, Arc<ApiKey>>,
    loaded: u64,
}

impl ConfigCache {
    /// Loads everything from SQL.
    pub async fn load(db: &DatabaseConnection, keys: Keys) -> Result<Self, SqlError> {
        let cache = Self {
            keys,
            tickets: AtomicU64::new(0),
            boards: RwLock::default(),
            api_keys: RwLock::default(),
        };
        cache.reload_all(db).await?;
        Ok(cache)
    }

    /// The board with this slug.
    pub fn board(&self, slug: &BoardSlug) -> Option<Arc<BoardConfig>> {
        read(&self.boards).by_slug.get(slug).cloned()
    }

    /// Every board, by slug.
    pub fn boards(&self) -> Vec<Arc<BoardConfig>> {
        let mut boards: Vec<_> = read(&self.boards).by_slug.values().cloned().collect();
        boards.sort_by(|a, b| a.board.slug.cmp(&b.board.slug));
        boards
    }

    /// The live key with this hash.
    pub fn api_key(&self, hash: &str) -> Option<Arc<ApiKey>> {
        read(&self.api_keys).by_hash.get(hash).cloned()
    }

    /// Reloads every board and key.
    pub async fn reload_all(&self, db: &DatabaseConnection) -> Result<(), SqlError> {
        let ticket = self.ticket();
        let mut fresh = HashMap::new();
        for board in sql::boards::list_boards(db).await? {
            let config = self.assemble(db, board).await?;
            fresh.insert(config.board.slug.clone(), Arc::new(config));
        }
        {
            let mut boards = write(&self.boards);
            let gone: Vec<BoardSlug> = boards
                .by_slug
                .keys()
                .filter(|slug| !fresh.contains_key(*slug))
                .cloned()
                .collect();
            for slug in gone {
                boards.apply(&slug, None, ticket);
            }
            for (slug, config) in fresh {
                boards.apply(&slug, Some(config), ticket);
            }
        }
        self.reload_api_keys(db).await
    }

    /// Reloads what `change` names.
    pub async fn apply(&self, db: &DatabaseConnection, change: &Change) -> Result<(), SqlError> {
        match change {
            Change::Board(slug) => self.reload_board(db, slug).await,
            Change::ApiKeys => self.reload_api_keys(db).await,
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

    fn ticket(&self) -> u64 {
        self.tickets.fetch_add(1, Ordering::SeqCst) + 1
    }

    async fn reload_api_keys(&self, db: &DatabaseConnection) -> Result<(), SqlError> {
        let ticket = self.ticket();
        let live = sql::api_keys::list_api_keys(db)
            .await?
            .into_iter()
            .filter(|(_, key)| key.revoked_at.is_none())
            .map(|(hash, key)| (hash, Arc::new(key)))
            .collect();
        let mut keys = write(&self.api_keys);
        if keys.loaded < ticket {
            *keys = ApiKeys {
                by_hash: live,
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
        let rules = sql::rules::list_rules(db, board.id).await?;
        Ok(BoardConfig {
            keys: self.keys.board(board.id),
            board,
            members,
            rules,
        })
    }
}

/// Reloads `change` here, then tells the other instances.
pub async fn changed(
    cache: &ConfigCache,
    db: &DatabaseConnection,
    redis: &RedisStore,
    change: Change,
) -> Result<(), crate::error::ApiError> {
    cache.apply(db, &change).await?;
    if let Err(err) = redis.publish_config_change(&change.encode()).await {
        // The change is saved and live here; other instances catch up when their
        // listener reconnects, which reloads everything.
        tracing::warn!(error = %err, "failed to publish a configuration change");
    }
    Ok(())
}

/// Follows configuration notices until the process ends, reconnecting after failures.
pub async fn listen(
    cache: Arc<ConfigCache>,
    db: DatabaseConnection,
    redis_url: String,
    channel: String,
) {
    loop {
        match RedisStore::config_changes(&redis_url, &channel).await {
            Ok(stream) => {
                // Notices sent before this subscription are lost: catch up on everything.
                if let Err(err) = cache.reload_all(&db).await {
                    tracing::warn!(error = %err, "failed to reload configuration");
                }
                let mut stream = std::pin::pin!(stream);
                while let Some(payload) = stream.next().await {
                    let Some(change) = Change::decode(&payload) else {
                        tracing::warn!(%payload, "ignoring an unknown configuration notice");
                        continue;
                    };
                    if let Err(err) = cache.apply(&db, &change).await {
                        tracing::warn!(error = %err, ?change, "failed to reload configuration");
                    }
                }
                tracing::warn!("configuration listener disconnected; reconnecting");
            }
            Err(err) => {
                tracing::debug!(error = %err, "configuration listener cannot connect; retrying")
            }
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
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
            },
            members: HashMap::new(),
            rules: Vec::new(),
            keys: Keys::new("t:").board(1),
        })
    }

    #[test]
    fn a_load_that_started_earlier_never_replaces_a_later_one() {
        let slug = BoardSlug::parse("b").unwrap();
        let mut boards = Boards::default();
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
