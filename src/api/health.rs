//! Liveness and readiness.

use actix_web::{HttpResponse, get, web};
use serde_json::json;

use crate::state::AppState;
use crate::store::sql;

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

/// Redis and SQL both answer.
#[utoipa::path(get, path = "/readyz", tag = "ops", responses(
    (status = 200, description = "ready"),
    (status = 503, description = "a store is unreachable")
))]
#[get("/readyz")]
pub async fn readyz(state: web::Data<AppState>) -> HttpResponse {
    let (redis, db) = tokio::join!(state.redis.ping(), sql::ping(&state.db));
    let body = json!({
        "redis": if redis.is_ok() { "ok" } else { "unavailable" },
        "sql": if db.is_ok() { "ok" } else { "unavailable" },
    });
    if redis.is_ok() && db.is_ok() {
        HttpResponse::Ok().json(body)
    } else {
        HttpResponse::ServiceUnavailable().json(body)
    }
}
