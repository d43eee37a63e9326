//! API key administration.

use actix_web::{HttpResponse, delete, get, post, web};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::api::auth::Admin;
use crate::domain::auth::{ApiKey, KeySpec};
use crate::engine::admin as engine;
use crate::engine::state::AppState;
use crate::error::ApiError;

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"name": "game backend", "scopes": ["vote", "read"], "channel": null, "boards": null, "leagues": ["arena"]}))]
pub struct CreateApiKeyRequest {
    /// 1 to 200 bytes.
    pub name: String,
    /// Any of vote, read, admin, backfill, trusted.
    pub scopes: Vec<String>,
    /// Bind the key to a channel: its votes count for this channel whatever they say.
    pub channel: Option<String>,
    /// The boards the key may reach (at most 100 slugs); `null` (the default): every
    /// board. Elsewhere the key gets 403 `key_not_allowed`.
    pub boards: Option<Vec<String>>,
    /// The leagues the key may reach (at most 100 slugs); `null`: every league for a key
    /// without a channel, none for a key bound to a channel.
    pub leagues: Option<Vec<String>>,
}

/// A key as listed; the secret is never shown again.
#[derive(Debug, Serialize, ToSchema)]
pub struct ApiKeyResponse {
    pub id: i64,
    pub name: String,
    /// The key's first characters.
    pub prefix: String,
    pub scopes: Vec<String>,
    pub channel: Option<String>,
    /// The boards it may reach; `null`: every one.
    pub boards: Option<Vec<String>>,
    /// The leagues it may reach; `null`: every one.
    pub leagues: Option<Vec<String>>,
    pub created_at: DateTime<Utc>,
    pub revoked_at: Option<DateTime<Utc>>,
}

impl From<ApiKey> for ApiKeyResponse {
    fn from(k: ApiKey) -> Self {
        Self {
            id: k.id,
            name: k.name,
            prefix: k.prefix,
            scopes: k.scopes.iter().map(|s| s.to_string()).collect(),
            channel: k.channel.map(|c| c.to_string()),
            boards: k
                .reach
                .board_names()
                .map(|b| b.into_iter().map(str::to_owned).collect()),
            leagues: k
                .reach
                .league_names()
                .map(|l| l.into_iter().map(str::to_owned).collect()),
            created_at: k.created_at,
            revoked_at: k.revoked_at,
        }
    }
}

/// The new key with its secret, shown this once.
#[derive(Debug, Serialize, ToSchema)]
pub struct CreatedApiKeyResponse {
    #[serde(flatten)]
    pub key: ApiKeyResponse,
    /// The secret; store it now.
    #[serde(rename = "key")]
    pub secret: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ApiKeysResponse {
    pub api_keys: Vec<ApiKeyResponse>,
}

/// Creates a key. Managing keys takes a key that reaches every board and league.
#[utoipa::path(post, path = "/api/v1/admin/api-keys", tag = "admin", request_body = CreateApiKeyRequest,
    responses((status = 201, body = CreatedApiKeyResponse),
        (status = 403, description = "forbidden, key_not_allowed: the calling key is limited to some boards or leagues", body = crate::api::ErrorBody),
        (status = 422, description = "invalid_scope, invalid_scopes, invalid_channel, invalid_name, invalid_boards, invalid_leagues", body = crate::api::ErrorBody)))]
#[post("/api-keys")]
pub async fn create_api_key(
    state: web::Data<AppState>,
    Admin(caller): Admin,
    body: web::Json<CreateApiKeyRequest>,
) -> Result<HttpResponse, ApiError> {
    caller.reach_everywhere()?;
    let spec = KeySpec::parse(
        &body.name,
        &body.scopes,
        body.channel.as_deref(),
        body.boards.as_deref(),
        body.leagues.as_deref(),
    )?;
    let (key, secret) = engine::create_api_key(&state, &caller.actor, &spec).await?;
    Ok(HttpResponse::Created().json(CreatedApiKeyResponse {
        key: key.into(),
        secret,
    }))
}

/// Every key, newest first.
#[utoipa::path(get, path = "/api/v1/admin/api-keys", tag = "admin", responses((status = 200, body = ApiKeysResponse),
    (status = 403, description = "forbidden, key_not_allowed", body = crate::api::ErrorBody)))]
#[get("/api-keys")]
pub async fn list_api_keys(
    state: web::Data<AppState>,
    Admin(caller): Admin,
) -> Result<HttpResponse, ApiError> {
    caller.reach_everywhere()?;
    let api_keys = engine::list_api_keys(&state)
        .await?
        .into_iter()
        .map(Into::into)
        .collect();
    Ok(HttpResponse::Ok().json(ApiKeysResponse { api_keys }))
}

/// Revokes a key on every instance.
#[utoipa::path(delete, path = "/api/v1/admin/api-keys/{id}", tag = "admin", params(("id" = i64, Path)),
    responses((status = 204), (status = 403, description = "forbidden, key_not_allowed", body = crate::api::ErrorBody),
        (status = 404, description = "api_key_not_found", body = crate::api::ErrorBody)))]
#[delete("/api-keys/{id}")]
pub async fn revoke_api_key(
    state: web::Data<AppState>,
    Admin(caller): Admin,
    id: web::Path<i64>,
) -> Result<HttpResponse, ApiError> {
    caller.reach_everywhere()?;
    let actor = caller.actor;
    engine::revoke_api_key(&state, &actor, id.into_inner()).await?;
    Ok(HttpResponse::NoContent().finish())
}
