//! API key administration.

use actix_web::{HttpResponse, delete, get, post, web};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::api::auth::Admin;
use crate::domain::auth::{ApiKey, parse_scopes};
use crate::domain::ids::Channel;
use crate::engine::admin as engine;
use crate::engine::state::AppState;
use crate::error::ApiError;

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"name": "game backend", "scopes": ["vote", "read"], "channel": null}))]
pub struct CreateApiKeyRequest {
    pub name: String,
    /// Any of vote, read, admin, backfill.
    pub scopes: Vec<String>,
    /// Bind the key to a channel: its votes count for this channel whatever they say.
    pub channel: Option<String>,
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

/// Creates a key.
#[utoipa::path(post, path = "/api/v1/admin/api-keys", tag = "admin", request_body = CreateApiKeyRequest,
    responses((status = 201, body = CreatedApiKeyResponse), (status = 422, description = "invalid_scope, invalid_channel, invalid_name", body = crate::api::ErrorBody)))]
#[post("/api-keys")]
pub async fn create_api_key(
    state: web::Data<AppState>,
    Admin(caller): Admin,
    body: web::Json<CreateApiKeyRequest>,
) -> Result<HttpResponse, ApiError> {
    let actor = caller.actor;
    let scopes = parse_scopes(&body.scopes)?;
    let channel = body.channel.as_deref().map(Channel::parse).transpose()?;
    let (key, secret) =
        engine::create_api_key(&state, &actor, &body.name, &scopes, channel.as_ref()).await?;
    Ok(HttpResponse::Created().json(CreatedApiKeyResponse {
        key: key.into(),
        secret,
    }))
}

/// Every key, newest first.
#[utoipa::path(get, path = "/api/v1/admin/api-keys", tag = "admin", responses((status = 200, body = ApiKeysResponse)))]
#[get("/api-keys")]
pub async fn list_api_keys(
    state: web::Data<AppState>,
    _admin: Admin,
) -> Result<HttpResponse, ApiError> {
    let api_keys = engine::list_api_keys(&state)
        .await?
        .into_iter()
        .map(Into::into)
        .collect();
    Ok(HttpResponse::Ok().json(ApiKeysResponse { api_keys }))
}

/// Revokes a key on every instance.
#[utoipa::path(delete, path = "/api/v1/admin/api-keys/{id}", tag = "admin", params(("id" = i64, Path)),
    responses((status = 204), (status = 404, description = "api_key_not_found", body = crate::api::ErrorBody)))]
#[delete("/api-keys/{id}")]
pub async fn revoke_api_key(
    state: web::Data<AppState>,
    Admin(caller): Admin,
    id: web::Path<i64>,
) -> Result<HttpResponse, ApiError> {
    let actor = caller.actor;
    engine::revoke_api_key(&state, &actor, id.into_inner()).await?;
    Ok(HttpResponse::NoContent().finish())
}
