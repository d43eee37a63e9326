//! Identity providers' public keys, fetched from their JWKS URLs and kept per URL.
//!
//! - A set is kept for its response's `Cache-Control: max-age`, within [`FRESH_MIN`] and
//!   [`FRESH_MAX`] ([`FRESH_DEFAULT`] without one). A token whose key is held is checked
//!   at once even when the set is stale: the refresh runs beside it.
//! - A token naming a key the set does not hold fetches the set again, at most once per
//!   `OVATION_JWKS_REFETCH_MS` per URL, one fetch at a time: a flood of made-up key ids
//!   costs the provider one request per interval.
//! - A fetch is bounded: [`FETCH_TIMEOUT`] in all, [`FETCH_MAX_BYTES`] of body, public
//!   addresses only unless `OVATION_WEBHOOK_ALLOW_PRIVATE` (`engine::outbound`). A fetch
//!   that fails keeps the keys held.
//! - Only asymmetric keys are taken from a set (RSA for RS256, P-256 for ES256, Ed25519
//!   for EdDSA), each for its one algorithm: a token signed with HS256 over a public key
//!   (algorithm confusion) finds no key.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use jsonwebtoken::DecodingKey;
use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, KeyAlgorithm};
use serde_json::Value;

use super::error::EngineError;
use super::outbound;
use crate::domain::code::Code;
use crate::domain::identity::Algorithm;

/// How long a fetch may take, connecting included.
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(5);
/// The largest JWKS document read.
pub const FETCH_MAX_BYTES: usize = 1024 * 1024;
/// Bounds of how long a fetched set is fresh.
pub const FRESH_MIN: Duration = Duration::from_secs(60);
pub const FRESH_MAX: Duration = Duration::from_secs(86_400);
pub const FRESH_DEFAULT: Duration = Duration::from_secs(600);

/// A public key of a set, for the one algorithm it signs with.
pub struct Key {
    pub decoding: DecodingKey,
    pub algorithm: Algorithm,
}

/// Every provider's key set, by JWKS URL.
pub struct Jwks {
    client: reqwest::Client,
    allow_private: bool,
    refetch: Duration,
    sets: Mutex<HashMap<String, Arc<Set>>>,
}

/// One URL's keys.
#[derive(Default)]
struct Set {
    held: RwLock<Held>,
    /// Held while fetching: one fetch at a time per URL.
    fetching: tokio::sync::Mutex<()>,
}

#[derive(Default)]
struct Held {
    by_kid: HashMap<String, Arc<Key>>,
    fresh_until: Option<Instant>,
    last_attempt: Option<Instant>,
    /// Whether the last fetch failed.
    failing: bool,
    refreshing: bool,
}

impl Held {
    /// The key `kid` names for `algorithm`; without a kid, the set's only key for it.
    fn find(&self, kid: Option<&str>, algorithm: Algorithm) -> Option<Arc<Key>> {
        let key = match kid {
            Some(kid) => self.by_kid.get(kid).cloned(),
            None => {
                let mut of_alg = self.by_kid.values().filter(|k| k.algorithm == algorithm);
                match (of_alg.next(), of_alg.next()) {
                    (Some(only), None) => Some(Arc::clone(only)),
                    _ => None,
                }
            }
        }?;
        (key.algorithm == algorithm).then_some(key)
    }

    fn may_fetch(&self, now: Instant, refetch: Duration) -> bool {
        self.last_attempt
            .is_none_or(|at| now.duration_since(at) >= refetch)
    }
}

impl Jwks {
    pub fn new(allow_private: bool, refetch: Duration) -> Self {
        Self {
            client: outbound::client(allow_private, FETCH_TIMEOUT, FETCH_TIMEOUT),
            allow_private,
            refetch,
            sets: Mutex::default(),
        }
    }

    fn set(&self, url: &str) -> Arc<Set> {
        let mut sets = self.sets.lock().unwrap_or_else(|e| e.into_inner());
        Arc::clone(sets.entry(url.to_owned()).or_default())
    }

    /// The key of `provider`'s set at `url` that `kid` names for `algorithm`: 401
    /// `token_unknown_key` when the set (fetched again if allowed) does not hold it, 503
    /// `jwks_unavailable` when no set could be fetched at all.
    pub async fn key(
        &self,
        provider: &str,
        url: &str,
        kid: Option<&str>,
        algorithm: Algorithm,
    ) -> Result<Arc<Key>, EngineError> {
        let set = self.set(url);
        let now = Instant::now();
        {
            let mut held = set.held.write().unwrap_or_else(|e| e.into_inner());
            if let Some(key) = held.find(kid, algorithm) {
                let stale = held.fresh_until.is_none_or(|until| now >= until);
                if stale && !held.refreshing && held.may_fetch(now, self.refetch) {
                    held.refreshing = true;
                    let (set, client) = (Arc::clone(&set), self.client.clone());
                    let (provider, url) = (provider.to_owned(), url.to_owned());
                    let allow_private = self.allow_private;
                    tokio::spawn(async move {
                        let _one = set.fetching.lock().await;
                        refresh(&set, &client, allow_private, &provider, &url).await;
                        set.held
                            .write()
                            .unwrap_or_else(|e| e.into_inner())
                            .refreshing = false;
                    });
                }
                return Ok(key);
            }
        }
        let _one = set.fetching.lock().await;
        let fetch = {
            let held = set.held.read().unwrap_or_else(|e| e.into_inner());
            if let Some(key) = held.find(kid, algorithm) {
                return Ok(key);
            }
            held.may_fetch(Instant::now(), self.refetch)
        };
        if fetch {
            refresh(&set, &self.client, self.allow_private, provider, url).await;
        }
        let held = set.held.read().unwrap_or_else(|e| e.into_inner());
        if let Some(key) = held.find(kid, algorithm) {
            return Ok(key);
        }
        if held.by_kid.is_empty() && held.failing {
            return Err(EngineError::Busy {
                code: Code::JwksUnavailable,
                message: format!(
                    "the keys of identity provider {provider} cannot be fetched; try again shortly"
                ),
            });
        }
        Err(EngineError::Token {
            code: Code::TokenUnknownKey,
            message: match kid {
                Some(kid) => {
                    format!("identity provider {provider} holds no {algorithm} key {kid:?}")
                }
                None => format!(
                    "the token names no key (kid) and identity provider {provider} has not exactly one {algorithm} key"
                ),
            },
        })
    }
}

/// Fetches the set at `url` and keeps it; a failure keeps the keys held.
async fn refresh(
    set: &Set,
    client: &reqwest::Client,
    allow_private: bool,
    provider: &str,
    url: &str,
) {
    let fetched = fetch(client, allow_private, url).await;
    crate::metrics::jwks_fetched(
        provider,
        match &fetched {
            Ok(_) => "ok",
            Err(outcome) => outcome,
        },
    );
    let now = Instant::now();
    let mut held = set.held.write().unwrap_or_else(|e| e.into_inner());
    held.last_attempt = Some(now);
    match fetched {
        Ok((keys, fresh)) => {
            held.by_kid = keys;
            held.fresh_until = Some(now + fresh);
            held.failing = false;
        }
        Err(outcome) => {
            tracing::warn!(
                provider,
                url,
                outcome,
                "JWKS fetch failed; the keys held stay"
            );
            held.failing = true;
        }
    }
}

/// The usable keys of the set at `url` and how long they are fresh, or why not
/// (`error`, `timeout`, `too_large`, `invalid`).
async fn fetch(
    client: &reqwest::Client,
    allow_private: bool,
    url: &str,
) -> Result<(HashMap<String, Arc<Key>>, Duration), &'static str> {
    if outbound::literal_refusal(url, allow_private).is_some() {
        return Err("error");
    }
    let failed = |e: reqwest::Error| if e.is_timeout() { "timeout" } else { "error" };
    let mut response = client.get(url).send().await.map_err(failed)?;
    if !response.status().is_success() {
        return Err("error");
    }
    if response
        .content_length()
        .is_some_and(|n| n > FETCH_MAX_BYTES as u64)
    {
        return Err("too_large");
    }
    let fresh = max_age(response.headers());
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(failed)? {
        if body.len() + chunk.len() > FETCH_MAX_BYTES {
            return Err("too_large");
        }
        body.extend_from_slice(&chunk);
    }
    let doc: Value = serde_json::from_slice(&body).map_err(|_| "invalid")?;
    let keys = doc.get("keys").and_then(Value::as_array).ok_or("invalid")?;
    Ok((keys.iter().filter_map(usable).collect(), fresh))
}

/// A JWK this service verifies with: a signing key with a kid, of RSA, P-256 or
/// Ed25519, whose stated `alg` (if any) is its family's.
fn usable(raw: &Value) -> Option<(String, Arc<Key>)> {
    let jwk: Jwk = serde_json::from_value(raw.clone()).ok()?;
    let kid = jwk.common.key_id.clone()?;
    let algorithm = match &jwk.algorithm {
        AlgorithmParameters::RSA(_) => Algorithm::Rs256,
        AlgorithmParameters::EllipticCurve(ec) if ec.curve == EllipticCurve::P256 => {
            Algorithm::Es256
        }
        AlgorithmParameters::OctetKeyPair(okp) if okp.curve == EllipticCurve::Ed25519 => {
            Algorithm::EdDsa
        }
        _ => return None,
    };
    let stated = jwk.common.key_algorithm.map(|a| match a {
        KeyAlgorithm::RS256 => Some(Algorithm::Rs256),
        KeyAlgorithm::ES256 => Some(Algorithm::Es256),
        KeyAlgorithm::EdDSA => Some(Algorithm::EdDsa),
        _ => None,
    });
    if stated.is_some_and(|s| s != Some(algorithm)) {
        return None;
    }
    if raw
        .get("use")
        .and_then(Value::as_str)
        .is_some_and(|u| u != "sig")
    {
        return None;
    }
    let decoding = DecodingKey::from_jwk(&jwk).ok()?;
    Some((
        kid,
        Arc::new(Key {
            decoding,
            algorithm,
        }),
    ))
}

/// How long a response's set is fresh: its `max-age`, within bounds.
fn max_age(headers: &reqwest::header::HeaderMap) -> Duration {
    headers
        .get_all(reqwest::header::CACHE_CONTROL)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .find_map(|d| d.trim().strip_prefix("max-age=")?.parse::<u64>().ok())
        .map_or(FRESH_DEFAULT, |s| {
            Duration::from_secs(s).clamp(FRESH_MIN, FRESH_MAX)
        })
}
