//! Whether Redis can lose votes, and noticing when it did.
//!
//! A Redis with an evicting `maxmemory-policy` drops keys when memory runs out: scores,
//! rate-limit counters, idempotency records. Such a Redis makes the instance not ready
//! (`/readyz` answers 503 naming the policy) unless `OVATION_ALLOW_EVICTION` says the
//! operator accepts it. Without AOF a restart loses recent votes: that is logged, and
//! `/readyz` says which persistence Redis has.
//!
//! Ovation keeps a marker key in Redis. When it is gone, Redis came back empty (a restart
//! without persistence, a FLUSHALL): the instance counts it (`ovation_redis_resets_total`),
//! `/readyz` reports when, and the initial votes and pending removals SQL holds are
//! applied again (`engine::reconcile::watch`).

use std::sync::RwLock;

use chrono::{DateTime, Utc};

use crate::store::redis::{RedisFailure, RedisStore};

/// What an instance knows about its Redis's durability.
pub struct Durability {
    /// `OVATION_ALLOW_EVICTION`: ready even with an evicting policy.
    allow_eviction: bool,
    /// When this instance last found Redis empty.
    reset_at: RwLock<Option<DateTime<Utc>>>,
}

/// Redis's settings that decide what it can lose, as `/readyz` shows them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedisDurability {
    /// `maxmemory-policy`; null when Redis does not let `CONFIG GET` read it.
    pub maxmemory_policy: Option<String>,
    /// `aof`, `rdb` (snapshots only), `none`, or `unknown`.
    pub persistence: &'static str,
    /// Whether the policy evicts keys when memory runs out.
    pub evicting: bool,
    /// When this instance last found Redis empty (its data lost), if ever.
    pub reset_at: Option<DateTime<Utc>>,
}

impl Durability {
    pub fn new(allow_eviction: bool) -> Self {
        Self {
            allow_eviction,
            reset_at: RwLock::new(None),
        }
    }

    /// Reads Redis's settings.
    pub async fn inspect(&self, redis: &RedisStore) -> Result<RedisDurability, RedisFailure> {
        let settings = redis.durability_settings().await?;
        let get = |name: &str| settings.as_ref().and_then(|s| s.get(name).cloned());
        let policy = get("maxmemory-policy");
        let persistence = match (get("appendonly").as_deref(), get("save").as_deref()) {
            (Some("yes"), _) => "aof",
            (Some(_), Some(save)) if !save.trim().is_empty() => "rdb",
            (Some(_), Some(_)) => "none",
            _ => "unknown",
        };
        Ok(RedisDurability {
            evicting: policy.as_deref().is_some_and(|p| p != "noeviction"),
            maxmemory_policy: policy,
            persistence,
            reset_at: *self
                .reset_at
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        })
    }

    /// Why the instance is not ready with this Redis, if it is not.
    pub fn refusal(&self, report: &RedisDurability) -> Option<String> {
        (report.evicting && !self.allow_eviction).then(|| {
            format!(
                "Redis evicts keys when memory runs out (maxmemory-policy {}): votes, scores and \
                 rate-limit counters could vanish. Set maxmemory-policy noeviction, or \
                 OVATION_ALLOW_EVICTION=true to accept the risk",
                report.maxmemory_policy.as_deref().unwrap_or("?")
            )
        })
    }

    pub fn record_reset(&self) {
        *self
            .reset_at
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(Utc::now());
    }
}
