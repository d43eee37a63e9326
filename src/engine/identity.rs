//! Signed-in voters: the identity providers operators set up, and the check of a voter's
//! token.
//!
//! A token is checked in this order, each refusal with its own code and counted in
//! `ovation_token_checks_total`:
//! 1. its shape, size and algorithm, unverified (`domain::identity::read_unverified`);
//! 2. its provider: the one whose issuer and audience the token names;
//! 3. its signature, with the `jsonwebtoken` crate: an `hmac` provider's secret, or the
//!    key of the provider's JWKS that the token's `kid` names (`engine::jwks`), and only
//!    with an algorithm the provider allows;
//! 4. its claims (`domain::identity::check_claims`): times, age, voter, channel, terminal.
//!
//! Whether a board takes the provider is the write's check (`engine::writes`).

use std::sync::Arc;

use jsonwebtoken::{DecodingKey, Validation};
use serde_json::{Map, Value, json};

use super::audit;
use super::config::Change;
use super::config_sync;
use super::error::EngineError;
use super::state::AppState;
use crate::domain::code::Code;
use crate::domain::identity::{
    self, Algorithm, Provider, ProviderKind, ProviderSpec, SignedIn, Unverified,
};
use crate::store::sql;

/// Every provider, by name.
pub fn list(state: &AppState) -> Vec<Arc<Provider>> {
    state.config.providers()
}

/// The provider named `name`, or 404 `provider_not_found`.
pub fn get(state: &AppState, name: &str) -> Result<Arc<Provider>, EngineError> {
    state.config.provider(name).ok_or_else(|| {
        EngineError::not_found(
            Code::ProviderNotFound,
            format!("no identity provider {name:?}"),
        )
    })
}

/// Creates a provider; an `hmac` one gets a new secret, answered here and never again.
pub async fn create(
    state: &AppState,
    actor: &str,
    spec: ProviderSpec,
) -> Result<(Arc<Provider>, Option<String>), EngineError> {
    let spec = spec.checked(state.settings.webhook_allow_private)?;
    let secret = matches!(spec.kind, ProviderKind::Hmac).then(identity::new_secret);
    let provider = sql::identity_providers::insert_provider(&state.db, &spec, secret.clone())
        .await
        .map_err(|e| match e {
            sql::SqlError::Conflict => EngineError::conflict(
                Code::ProviderExists,
                format!("identity provider {} already exists", spec.name),
            ),
            other => other.into(),
        })?;
    config_sync::changed(state, Change::Providers).await?;
    audit::record(
        state,
        actor,
        "identity_provider.create",
        &format!("identity provider {}", provider.spec.name),
        describe(&provider.spec),
    )
    .await;
    Ok((get(state, &provider.spec.name)?, secret))
}

/// Saves new settings of provider `name`; its name and kind stay (`edit` may change
/// the rest).
pub async fn update(
    state: &AppState,
    actor: &str,
    name: &str,
    edit: impl FnOnce(&mut ProviderSpec) -> Result<(), EngineError>,
) -> Result<Arc<Provider>, EngineError> {
    let current = get(state, name)?;
    let mut spec = current.spec.clone();
    edit(&mut spec)?;
    if spec.name != current.spec.name || spec.kind.as_str() != current.spec.kind.as_str() {
        return Err(EngineError::invalid(
            Code::InvalidProvider,
            "a provider's name and kind are fixed at creation",
        ));
    }
    let spec = spec.checked(state.settings.webhook_allow_private)?;
    sql::identity_providers::update_provider(&state.db, current.id, &spec)
        .await?
        .ok_or_else(|| {
            EngineError::not_found(
                Code::ProviderNotFound,
                format!("no identity provider {name:?}"),
            )
        })?;
    config_sync::changed(state, Change::Providers).await?;
    audit::record(
        state,
        actor,
        "identity_provider.update",
        &format!("identity provider {name}"),
        describe(&spec),
    )
    .await;
    get(state, name)
}

/// Deletes provider `name`, refused (409 `provider_in_use`) while a board accepts it.
pub async fn delete(state: &AppState, actor: &str, name: &str) -> Result<(), EngineError> {
    get(state, name)?;
    let users: Vec<String> = state
        .config
        .boards()
        .iter()
        .filter(|b| b.board.settings.providers.iter().any(|p| p == name))
        .map(|b| b.board.slug.to_string())
        .collect();
    if !users.is_empty() {
        return Err(EngineError::conflict(
            Code::ProviderInUse,
            format!(
                "boards {} accept identity provider {name}: remove it from them first",
                users.join(", ")
            ),
        ));
    }
    if !sql::identity_providers::delete_provider(&state.db, name).await? {
        return Err(EngineError::not_found(
            Code::ProviderNotFound,
            format!("no identity provider {name:?}"),
        ));
    }
    config_sync::changed(state, Change::Providers).await?;
    audit::record(
        state,
        actor,
        "identity_provider.delete",
        &format!("identity provider {name}"),
        json!({}),
    )
    .await;
    Ok(())
}

/// Refuses board settings that name a provider that does not exist (422
/// `provider_not_found`).
pub fn check_board_providers(state: &AppState, providers: &[String]) -> Result<(), EngineError> {
    match providers
        .iter()
        .find(|p| state.config.provider(p).is_none())
    {
        Some(missing) => Err(EngineError::invalid(
            Code::ProviderNotFound,
            format!("identity_providers: no identity provider {missing:?}"),
        )),
        None => Ok(()),
    }
}

fn describe(spec: &ProviderSpec) -> Value {
    json!({
        "kind": spec.kind.as_str(),
        "issuer": spec.issuer,
        "audience": spec.audience,
        "jwks_url": match &spec.kind {
            ProviderKind::Jwks { url, .. } => Some(url),
            ProviderKind::Hmac => None,
        },
        "algorithms": spec.kind.algorithms().iter().map(|a| a.as_str()).collect::<Vec<_>>(),
        "voter_claim": spec.voter_claim,
        "channel_claim": spec.channel_claim,
        "terminal_claim": spec.terminal_claim,
        "max_age_s": spec.max_age_s,
        "leeway_s": spec.leeway_s,
        "login_url": spec.login_url,
    })
}

/// The voter a token names, once its provider, signature and claims hold.
pub async fn verify(state: &AppState, token: &str) -> Result<SignedIn, EngineError> {
    let (provider, outcome) = match check(state, token).await {
        Ok(signed_in) => (signed_in.provider.clone(), Ok(signed_in)),
        Err((provider, err)) => (provider, Err(err)),
    };
    crate::metrics::token_checked(
        &provider,
        match &outcome {
            Ok(_) => "accepted",
            Err(err) => err.code().as_str(),
        },
    );
    outcome
}

/// [`verify`], answering with a refusal the provider's name (`unknown` before one is
/// found) for the metric.
async fn check(state: &AppState, token: &str) -> Result<SignedIn, (String, EngineError)> {
    let unknown = |err: EngineError| ("unknown".to_owned(), err);
    let unverified = identity::read_unverified(token).map_err(|e| unknown(refusal(e)))?;
    let provider = provider_of(state, &unverified.claims).map_err(unknown)?;
    let name = provider.spec.name.clone();
    let fail = |err: EngineError| (name.clone(), err);
    let claims = signed_claims(state, &provider, &unverified, token)
        .await
        .map_err(fail)?;
    identity::check_claims(&provider.spec, &claims, chrono::Utc::now().timestamp())
        .map_err(|e| fail(refusal(e)))
}

fn refusal(e: crate::domain::Invalid) -> EngineError {
    EngineError::Token {
        code: e.code,
        message: e.message,
    }
}

/// The provider whose issuer and audience the (unverified) claims name.
fn provider_of(
    state: &AppState,
    claims: &Map<String, Value>,
) -> Result<Arc<Provider>, EngineError> {
    let issuer = identity::issuer(claims);
    let of_issuer: Vec<Arc<Provider>> = state
        .config
        .providers()
        .into_iter()
        .filter(|p| Some(p.spec.issuer.as_str()) == issuer)
        .collect();
    if of_issuer.is_empty() {
        return Err(EngineError::Token {
            code: Code::TokenWrongIssuer,
            message: format!("no identity provider has the token's issuer {issuer:?}"),
        });
    }
    of_issuer
        .into_iter()
        .find(|p| identity::has_audience(claims, &p.spec.audience))
        .ok_or_else(|| EngineError::Token {
            code: Code::TokenWrongAudience,
            message: "the token's aud names no identity provider of its issuer".to_owned(),
        })
}

/// The token's claims once its signature holds with `provider`'s key.
async fn signed_claims(
    state: &AppState,
    provider: &Provider,
    unverified: &Unverified,
    token: &str,
) -> Result<Map<String, Value>, EngineError> {
    let algorithm = unverified.algorithm;
    if !provider.spec.kind.algorithms().contains(&algorithm) {
        return Err(EngineError::Token {
            code: Code::TokenAlgorithmRefused,
            message: format!(
                "identity provider {} does not take tokens signed with {algorithm}",
                provider.spec.name
            ),
        });
    }
    let jwks_key;
    let secret_key;
    let key: &DecodingKey = match (&provider.spec.kind, &provider.secret) {
        (ProviderKind::Hmac, Some(secret)) => {
            secret_key = DecodingKey::from_secret(secret.as_bytes());
            &secret_key
        }
        (ProviderKind::Jwks { url, .. }, _) => {
            jwks_key = state
                .jwks
                .key(
                    &provider.spec.name,
                    url,
                    unverified.kid.as_deref(),
                    algorithm,
                )
                .await?;
            &jwks_key.decoding
        }
        (ProviderKind::Hmac, None) => {
            return Err(
                anyhow::anyhow!("hmac provider {} has no secret", provider.spec.name).into(),
            );
        }
    };
    // The signature only: the claims are read by `check_claims`, each with its own code.
    let mut validation = Validation::new(library_algorithm(algorithm));
    validation.validate_exp = false;
    validation.validate_nbf = false;
    validation.validate_aud = false;
    validation.required_spec_claims.clear();
    jsonwebtoken::decode::<Map<String, Value>>(token, key, &validation)
        .map(|data| data.claims)
        .map_err(|e| {
            use jsonwebtoken::errors::ErrorKind;
            let (code, message) = match e.kind() {
                ErrorKind::InvalidSignature => (
                    Code::TokenBadSignature,
                    "the token's signature does not hold".to_owned(),
                ),
                ErrorKind::InvalidAlgorithm | ErrorKind::InvalidAlgorithmName => (
                    Code::TokenAlgorithmRefused,
                    format!("the token's algorithm does not fit the key: {e}"),
                ),
                _ => (
                    Code::TokenMalformed,
                    format!("the token cannot be read: {e}"),
                ),
            };
            EngineError::Token { code, message }
        })
}

fn library_algorithm(algorithm: Algorithm) -> jsonwebtoken::Algorithm {
    match algorithm {
        Algorithm::Rs256 => jsonwebtoken::Algorithm::RS256,
        Algorithm::Es256 => jsonwebtoken::Algorithm::ES256,
        Algorithm::EdDsa => jsonwebtoken::Algorithm::EdDSA,
        Algorithm::Hs256 => jsonwebtoken::Algorithm::HS256,
    }
}
