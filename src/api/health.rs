//! Liveness and readiness.

use actix_web::{HttpResponse, get, web};
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::json;
use utoipa::ToSchema;

use crate::engine::state::AppState;
use crate::engine::{durability, readiness};

/// The process is up.
#[utoipa::path(get, path = "/healthz", tag = "ops", responses((status = 200, description = "up")))]
#[get("/healthz")]
pub async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(json!({"status": "ok"}))
}

/// Prometheus metrics (text exposition format): votes, HTTP requests and latency by
/// route, Redis calls, configuration reloads, read-cache hits, Redis resets.
#[utoipa::path(get, path = "/metrics", tag = "ops", responses(
    (status = 200, description = "Prometheus text format", content_type = "text/plain", body = String)
))]
#[get("/metrics")]
pub async fn metrics(state: web::Data<AppState>) -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/plain; version=0.0.4; charset=utf-8")
        .body(state.metrics.render())
}

/// Readiness: Redis and SQL answer, Redis does not evict keys, and no board is being
/// rebuilt from its ledger.
#[derive(Debug, Serialize, ToSchema)]
pub struct Readiness {
    /// `ok`, `unavailable`, or `evicting` (an evicting `maxmemory-policy`).
    pub redis: &'static str,
    /// `ok` or `unavailable`.
    pub sql: &'static str,
    /// Redis's persistence and eviction settings, and when it last came back empty;
    /// null when Redis does not answer.
    pub redis_durability: Option<RedisDurability>,
    /// Why the instance is not ready, when it is not.
    pub message: Option<String>,
    /// Accepted writes not yet in the SQL ledger, as this instance's drain last saw them.
    pub ledger: LedgerBacklog,
}

/// The ledger's backlog.
#[derive(Debug, Serialize, ToSchema)]
pub struct LedgerBacklog {
    /// Seconds since the oldest entry still waiting in Redis was accepted (the largest
    /// over boards); 0 when none waits.
    pub lag_s: f64,
    /// Ledgers whose entries wait in Redis, over all boards: a plain board counts one
    /// when any of its entries waits, a family each of its rooms whose entries wait.
    pub pending: u64,
    /// Boards being rebuilt from their ledgers after Redis lost them (the instance is not
    /// ready until they are); null when none is.
    pub rebuild: Option<Rebuild>,
    /// Ranges of a ledger's `seq` SQL lost after Redis had trimmed them (SQL restored
    /// from an older backup), newest found first, at most 20; empty when none. The
    /// instance stays ready: new entries are numbered after them.
    pub gaps: Vec<LedgerGap>,
}

/// A range of a ledger's `seq` SQL lost.
#[derive(Debug, Serialize, ToSchema)]
pub struct LedgerGap {
    pub board: String,
    /// The family's room, or "" for a plain board.
    pub instance: String,
    pub from: i64,
    pub to: i64,
}

/// A rebuild from the ledger under way.
#[derive(Debug, Serialize, ToSchema)]
pub struct Rebuild {
    pub boards: usize,
    /// Entries replayed so far.
    pub done: i64,
    /// Entries to replay.
    pub total: i64,
}

/// Redis and SQL both answer, Redis does not evict keys (unless
/// `OVATION_ALLOW_EVICTION`), and no board is being rebuilt from its ledger after Redis
/// lost it; the body also says which persistence Redis has, when it last came back
/// empty, and the ledger's backlog and rebuild.
#[utoipa::path(get, path = "/readyz", tag = "ops", responses(
    (status = 200, description = "ready", body = Readiness),
    (status = 503, description = "a store is unreachable, Redis evicts keys, or boards are being rebuilt from their ledgers", body = Readiness)
))]
#[get("/readyz")]
pub async fn readyz(state: web::Data<AppState>) -> HttpResponse {
    let ready = readiness::check(&state).await;
    let body = Readiness {
        redis: match (&ready.redis, &ready.refusal) {
            (None, _) => "unavailable",
            (Some(_), Some(_)) => "evicting",
            (Some(_), None) => "ok",
        },
        sql: if ready.sql { "ok" } else { "unavailable" },
        message: ready.refusal.clone().or_else(|| {
            ready.rebuild.map(|(boards, done, total)| {
                format!(
                    "rebuilding {boards} board(s) from their ledgers: {done} of {total} entries"
                )
            })
        }),
        redis_durability: ready.redis.clone().map(Into::into),
        ledger: LedgerBacklog {
            lag_s: ready.ledger.0,
            pending: ready.ledger.1,
            rebuild: ready.rebuild.map(|(boards, done, total)| Rebuild {
                boards,
                done,
                total,
            }),
            gaps: ready
                .gaps
                .iter()
                .map(|(board, instance, from, to)| LedgerGap {
                    board: board.clone(),
                    instance: instance.clone(),
                    from: *from,
                    to: *to,
                })
                .collect(),
        },
    };
    if ready.ready() {
        HttpResponse::Ok().json(body)
    } else {
        HttpResponse::ServiceUnavailable().json(body)
    }
}

/// Redis's settings that decide what it can lose, as `/readyz` shows them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
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

impl From<durability::RedisDurability> for RedisDurability {
    fn from(v: durability::RedisDurability) -> Self {
        Self {
            maxmemory_policy: v.maxmemory_policy,
            persistence: v.persistence,
            evicting: v.evicting,
            reset_at: v.reset_at,
        }
    }
}
