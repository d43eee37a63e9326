//! `AppState`: what every handler shares, built once in `startup`.

use std::sync::Arc;

use sea_orm::DatabaseConnection;

use crate::config::Settings;
use crate::domain::session::SessionPolicy;
use crate::engine::backlog::Backlogs;
use crate::engine::config::ConfigCache;
use crate::engine::durability::Durability;
use crate::engine::jwks::Jwks;
use crate::engine::read_cache::ReadCache;
use crate::engine::watchers::Watchers;
use crate::store::redis::RedisStore;

/// Shared by every worker; cloning is cheap.
#[derive(Clone)]
pub struct AppState {
    /// Settings read at start-up.
    pub settings: Arc<Settings>,
    /// SQL pool for configuration; never used on the vote path.
    pub db: DatabaseConnection,
    /// The multiplexed Redis connection for rankings.
    pub redis: RedisStore,
    /// Boards, members and API keys in memory, kept fresh across instances.
    pub config: Arc<ConfigCache>,
    /// Rendered top-N pages, reused for `OVATION_READ_CACHE_MS`.
    pub reads: Arc<ReadCache>,
    /// SHA-256 of `OVATION_MASTER_KEY`, when one is set.
    pub master_key_hash: Option<String>,
    /// How long dashboard sessions live.
    pub sessions: SessionPolicy,
    /// What Redis can lose, and when it last came back empty.
    pub durability: Arc<Durability>,
    /// What the ledger's drain last saw waiting in Redis, per board.
    pub backlogs: Arc<Backlogs>,
    /// Renders `/metrics`.
    pub metrics: metrics_exporter_prometheus::PrometheusHandle,
    /// The tops this instance watches for live subscribers (`engine::events`).
    pub watchers: Arc<Watchers>,
    /// Ledger exports that may run at once (`OVATION_EXPORTS_MAX`): each holds one SQL
    /// connection while its reader reads.
    pub exports: Arc<tokio::sync::Semaphore>,
    /// Identity providers' public keys (`engine::jwks`).
    pub jwks: Arc<Jwks>,
}
