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
