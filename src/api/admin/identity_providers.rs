//! Identity provider administration: the providers whose tokens name signed-in voters.
//! Managing them takes a key that reaches every board (a provider serves any board).

use actix_web::{HttpResponse, delete, get, patch, post, web};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::nullable;
use crate::api::auth::Admin;
use crate::domain::code::Code;
use crate::domain::identity::{
    Algorithm, LEEWAY_DEFAULT_S, MAX_AGE_DEFAULT_S, Provider, ProviderKind, ProviderSpec,
};
use crate::engine::error::EngineError;
use crate::engine::identity as engine;
use crate::engine::state::AppState;
use crate::error::ApiError;

/// A provider's settings. On create, `name`, `kind`, `issuer` and `audience` are
/// required (and `jwks_url` for `jwks`); on update every field is optional, `null`
/// clears an optional one, and `name` and `kind` stay.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"name": "accounts", "kind": "jwks", "issuer": "https://id.example",
    "audience": "ovation", "jwks_url": "https://id.example/.well-known/jwks.json",
    "algorithms": ["RS256"], "login_url": "https://id.example/login?client=ovation"}))]
pub struct ProviderRequest {
    /// 1 to 64 lowercase letters, digits and hyphens; create only.
    pub name: Option<String>,
    /// `jwks` (public keys fetched from `jwks_url`) or `hmac` (an HS256 secret made
    /// here and shown once); create only.
    pub kind: Option<String>,
    /// The `iss` every token carries.
    pub issuer: Option<String>,
    /// The `aud` every token carries (or holds, in an array).
    pub audience: Option<String>,
    /// `jwks` only: where the public keys are (http or https; a public address unless
    /// `OVATION_WEBHOOK_ALLOW_PRIVATE`).
    pub jwks_url: Option<String>,
    /// `jwks` only: any of RS256, ES256 and EdDSA (default `["RS256"]`).
    pub algorithms: Option<Vec<String>>,
    /// The claim that names the voter (default `sub`).
    pub voter_claim: Option<String>,
    /// A claim naming the vote's channel (default none).
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    pub channel_claim: Option<Option<String>>,
    /// A claim naming the vote's terminal (default none).
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    pub terminal_claim: Option<Option<String>>,
    /// The oldest token taken, by its `iat`: 60 to 2,592,000 seconds (default 86,400).
    pub max_age_s: Option<i64>,
    /// Clock leeway for `exp`, `nbf` and `iat`: 0 to 300 seconds (default 60).
    pub leeway_s: Option<i64>,
    /// Where a board's voting page sends a visitor to sign in; the page adds
    /// `return_to=<its address>`, and the sign-in sends the visitor back to it with
    /// `#token=<JWT>` (default none).
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    pub login_url: Option<Option<String>>,
}

impl ProviderRequest {
    fn apply(&self, spec: &mut ProviderSpec) -> Result<(), EngineError> {
        if let Some(issuer) = &self.issuer {
            spec.issuer = issuer.clone();
        }
        if let Some(audience) = &self.audience {
            spec.audience = audience.clone();
        }
        if self.jwks_url.is_some() || self.algorithms.is_some() {
            let ProviderKind::Jwks { url, algorithms } = &mut spec.kind else {
                return Err(EngineError::invalid(
                    Code::InvalidProvider,
                    "jwks_url and algorithms are settings of a jwks provider",
                ));
            };
            if let Some(new) = &self.jwks_url {
                *url = new.clone();
            }
            if let Some(names) = &self.algorithms {
                *algorithms = names
                    .iter()
                    .map(|n| {
                        Algorithm::from_header(n).ok_or_else(|| {
                            EngineError::invalid(
                                Code::InvalidProvider,
                                format!("algorithms: {n:?} is not RS256, ES256 or EdDSA"),
                            )
                        })
                    })
                    .collect::<Result<_, _>>()?;
            }
        }
        if let Some(claim) = &self.voter_claim {
            spec.voter_claim = claim.clone();
        }
        if let Some(claim) = &self.channel_claim {
            spec.channel_claim = claim.clone();
        }
        if let Some(claim) = &self.terminal_claim {
            spec.terminal_claim = claim.clone();
        }
        if let Some(s) = self.max_age_s {
            spec.max_age_s = s;
        }
        if let Some(s) = self.leeway_s {
            spec.leeway_s = s;
        }
        if let Some(url) = &self.login_url {
            spec.login_url = url.clone();
        }
        Ok(())
    }

    /// A new provider's settings: the request's over the defaults.
    fn spec(&self) -> Result<ProviderSpec, EngineError> {
        let required = |field: &str, value: &Option<String>| {
            value.clone().ok_or_else(|| {
                EngineError::invalid(Code::InvalidProvider, format!("{field} is required"))
            })
        };
        let kind = match required("kind", &self.kind)?.as_str() {
            "jwks" => ProviderKind::Jwks {
                url: required("jwks_url", &self.jwks_url)?,
                algorithms: vec![Algorithm::Rs256],
            },
            "hmac" => ProviderKind::Hmac,
            other => {
                return Err(EngineError::invalid(
                    Code::InvalidProvider,
                    format!("kind must be jwks or hmac, not {other:?}"),
                ));
            }
        };
        let mut spec = ProviderSpec {
            name: required("name", &self.name)?,
            kind,
            issuer: required("issuer", &self.issuer)?,
            audience: required("audience", &self.audience)?,
            voter_claim: "sub".to_owned(),
            channel_claim: None,
            terminal_claim: None,
            max_age_s: MAX_AGE_DEFAULT_S,
            leeway_s: LEEWAY_DEFAULT_S,
            login_url: None,
        };
        self.apply(&mut spec)?;
        Ok(spec)
    }
}

/// A provider as listed; an `hmac` provider's secret is never shown again.
#[derive(Debug, Serialize, ToSchema)]
pub struct ProviderResponse {
    pub name: String,
    pub kind: String,
    pub issuer: String,
    pub audience: String,
    pub jwks_url: Option<String>,
    pub algorithms: Vec<String>,
    pub voter_claim: String,
    pub channel_claim: Option<String>,
    pub terminal_claim: Option<String>,
    pub max_age_s: i64,
    pub leeway_s: i64,
    pub login_url: Option<String>,
    pub created_at: DateTime<Utc>,
}

impl From<&Provider> for ProviderResponse {
    fn from(p: &Provider) -> Self {
        let s = &p.spec;
        Self {
            name: s.name.clone(),
            kind: s.kind.as_str().to_owned(),
            issuer: s.issuer.clone(),
            audience: s.audience.clone(),
            jwks_url: match &s.kind {
                ProviderKind::Jwks { url, .. } => Some(url.clone()),
                ProviderKind::Hmac => None,
            },
            algorithms: s
                .kind
                .algorithms()
                .iter()
                .map(|a| a.as_str().to_owned())
                .collect(),
            voter_claim: s.voter_claim.clone(),
            channel_claim: s.channel_claim.clone(),
            terminal_claim: s.terminal_claim.clone(),
            max_age_s: s.max_age_s,
            leeway_s: s.leeway_s,
            login_url: s.login_url.clone(),
            created_at: p.created_at,
        }
    }
}

/// A new provider; an `hmac` one with its secret, shown this once.
#[derive(Debug, Serialize, ToSchema)]
pub struct CreatedProviderResponse {
    #[serde(flatten)]
    pub provider: ProviderResponse,
    /// `hmac` only: the HS256 secret (its UTF-8 bytes are the key); store it now.
    pub secret: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ProvidersResponse {
    pub identity_providers: Vec<ProviderResponse>,
}

/// Creates an identity provider.
#[utoipa::path(post, path = "/api/v1/admin/identity-providers", tag = "admin",
    request_body = ProviderRequest,
    responses((status = 201, body = CreatedProviderResponse),
        (status = 403, description = "forbidden, key_not_allowed: the calling key is limited to some boards or leagues", body = crate::api::ErrorBody),
        (status = 409, description = "provider_exists", body = crate::api::ErrorBody),
        (status = 422, description = "invalid_provider: a field missing or out of range (its name is in the message)", body = crate::api::ErrorBody)))]
#[post("/identity-providers")]
pub async fn create_provider(
    state: web::Data<AppState>,
    Admin(caller): Admin,
    body: web::Json<ProviderRequest>,
) -> Result<HttpResponse, ApiError> {
    caller.reach_everywhere()?;
    let (provider, secret) = engine::create(&state, &caller.actor, body.spec()?).await?;
    Ok(HttpResponse::Created().json(CreatedProviderResponse {
        provider: ProviderResponse::from(&*provider),
        secret,
    }))
}

/// Every identity provider, by name.
#[utoipa::path(get, path = "/api/v1/admin/identity-providers", tag = "admin",
    responses((status = 200, body = ProvidersResponse),
        (status = 403, description = "forbidden, key_not_allowed", body = crate::api::ErrorBody)))]
#[get("/identity-providers")]
pub async fn list_providers(
    state: web::Data<AppState>,
    Admin(caller): Admin,
) -> Result<HttpResponse, ApiError> {
    caller.reach_everywhere()?;
    let identity_providers = engine::list(&state)
        .iter()
        .map(|p| ProviderResponse::from(&**p))
        .collect();
    Ok(HttpResponse::Ok().json(ProvidersResponse { identity_providers }))
}

/// One identity provider.
#[utoipa::path(get, path = "/api/v1/admin/identity-providers/{name}", tag = "admin",
    params(("name" = String, Path)),
    responses((status = 200, body = ProviderResponse),
        (status = 403, description = "forbidden, key_not_allowed", body = crate::api::ErrorBody),
        (status = 404, description = "provider_not_found", body = crate::api::ErrorBody)))]
#[get("/identity-providers/{name}")]
pub async fn get_provider(
    state: web::Data<AppState>,
    Admin(caller): Admin,
    name: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    caller.reach_everywhere()?;
    let provider = engine::get(&state, &name)?;
    Ok(HttpResponse::Ok().json(ProviderResponse::from(&*provider)))
}

/// Changes an identity provider's settings (not its name or kind).
#[utoipa::path(patch, path = "/api/v1/admin/identity-providers/{name}", tag = "admin",
    params(("name" = String, Path)), request_body = ProviderRequest,
    responses((status = 200, body = ProviderResponse),
        (status = 403, description = "forbidden, key_not_allowed", body = crate::api::ErrorBody),
        (status = 404, description = "provider_not_found", body = crate::api::ErrorBody),
        (status = 422, description = "invalid_provider", body = crate::api::ErrorBody)))]
#[patch("/identity-providers/{name}")]
pub async fn update_provider(
    state: web::Data<AppState>,
    Admin(caller): Admin,
    name: web::Path<String>,
    body: web::Json<ProviderRequest>,
) -> Result<HttpResponse, ApiError> {
    caller.reach_everywhere()?;
    if body.name.is_some() || body.kind.is_some() {
        return Err(ApiError::invalid(
            Code::InvalidProvider,
            "a provider's name and kind are fixed at creation",
        ));
    }
    let provider = engine::update(&state, &caller.actor, &name, |spec| body.apply(spec)).await?;
    Ok(HttpResponse::Ok().json(ProviderResponse::from(&*provider)))
}

/// Deletes an identity provider that no board accepts.
#[utoipa::path(delete, path = "/api/v1/admin/identity-providers/{name}", tag = "admin",
    params(("name" = String, Path)),
    responses((status = 204),
        (status = 403, description = "forbidden, key_not_allowed", body = crate::api::ErrorBody),
        (status = 404, description = "provider_not_found", body = crate::api::ErrorBody),
        (status = 409, description = "provider_in_use: a board accepts it", body = crate::api::ErrorBody)))]
#[delete("/identity-providers/{name}")]
pub async fn delete_provider(
    state: web::Data<AppState>,
    Admin(caller): Admin,
    name: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    caller.reach_everywhere()?;
    engine::delete(&state, &caller.actor, &name).await?;
    Ok(HttpResponse::NoContent().finish())
}
