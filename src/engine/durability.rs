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

use super::state::AppState;
use crate::store::redis::{RedisFailure, RedisStore};
use crate::store::sql;

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

/// Whether an instance is ready to serve: what its stores answered.
#[derive(Debug, Clone)]
pub struct Readiness {
    /// Redis's durability settings; `None` when Redis does not answer.
    pub redis: Option<RedisDurability>,
    /// Whether SQL answers.
    pub sql: bool,
    /// Why Redis makes the instance not ready though it answers (it evicts keys).
    pub refusal: Option<String>,
}

impl Readiness {
    pub fn ready(&self) -> bool {
        self.redis.is_some() && self.sql && self.refusal.is_none()
    }
}

/// Asks Redis and SQL, at once, whether they answer, and Redis what it risks.
pub async fn readiness(state: &AppState) -> Readiness {
    let (report, sql) = tokio::join!(state.durability.inspect(&state.redis), sql::ping(&state.db));
    let redis = report.ok();
    Readiness {
        refusal: redis.as_ref().and_then(|r| state.durability.refusal(r)),
        redis,
        sql: sql.is_ok(),
    }
}

/// Logs what Redis risks at start-up (when it answers).
pub async fn warn_at_start(state: &AppState) {
    let durability = &state.durability;
    match durability.inspect(&state.redis).await {
        Ok(report) => {
            if let Some(why) = durability.refusal(&report) {
                tracing::error!("{why}; /readyz answers 503 until it changes");
            }
            match report.persistence {
                "aof" => {}
                "unknown" => tracing::warn!(
                    "cannot read Redis's persistence settings (CONFIG GET is not allowed); make sure AOF is on"
                ),
                other => tracing::warn!(
                    persistence = other,
                    "Redis runs without AOF: a restart loses the votes since its last snapshot (or all of them)"
                ),
            }
        }
        Err(err) => tracing::warn!(error = %err, "cannot inspect Redis's durability at start-up"),
    }
}
