//! Who is calling: the master key or a stored API key, with its scopes and channel.

use crate::domain::auth::{Scope, hash_key};
use crate::domain::ids::Channel;
use crate::engine::config::ConfigCache;
use crate::error::ApiError;

/// An authenticated caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub scopes: Vec<Scope>,
    /// Votes by this caller count for this channel whatever the request says.
    pub channel: Option<Channel>,
    /// Who this is, as the audit log names them: `master key` or `key:<id> <name>`.
    pub actor: String,
    /// A stable id that owns this caller's idempotency keys: `master`, `key:<id>`, or
    /// `visitor:<id>` on the voting page.
    pub id: String,
}

impl Caller {
    pub fn has(&self, scope: Scope) -> bool {
        self.scopes.contains(&scope)
    }

    /// Refuses with 403 unless the caller holds `scope`.
    pub fn require(&self, scope: Scope) -> Result<(), ApiError> {
        if self.has(scope) {
            Ok(())
        } else {
            Err(ApiError::Forbidden(format!(
                "this key lacks the {scope} scope"
            )))
        }
    }
}

/// Resolves an `Authorization` header value; `None` when the request carries none.
pub fn authenticate(
    cache: &ConfigCache,
    master_key_hash: Option<&str>,
    header: Option<&str>,
) -> Result<Option<Caller>, ApiError> {
    let Some(header) = header else {
        return Ok(None);
    };
    let Some(token) = header.strip_prefix("Bearer ").map(str::trim) else {
        return Err(ApiError::Unauthorized(
            "use Authorization: Bearer <key>".into(),
        ));
    };
    let hash = hash_key(token);
    if master_key_hash == Some(hash.as_str()) {
        return Ok(Some(Caller {
            scopes: Scope::EVERY.to_vec(),
            channel: None,
            actor: "master key".to_owned(),
            id: "master".to_owned(),
        }));
    }
    match cache.api_key(&hash) {
        Some(key) => Ok(Some(Caller {
            scopes: key.scopes.clone(),
            channel: key.channel.clone(),
            actor: format!("key:{} {}", key.id, key.name),
            id: format!("key:{}", key.id),
        })),
        None => Err(ApiError::Unauthorized("unknown or revoked API key".into())),
    }
}

/// Refuses with 401 when there is no caller, else requires `scope`.
pub fn require(caller: Option<&Caller>, scope: Scope) -> Result<&Caller, ApiError> {
    let caller =
        caller.ok_or_else(|| ApiError::Unauthorized("this endpoint needs an API key".into()))?;
    caller.require(scope)?;
    Ok(caller)
}
