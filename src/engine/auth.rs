//! Who is calling: the master key or a stored API key, with its scopes, channel and the
//! boards and leagues it may reach; or, for a vote, a voter signed in with an identity
//! provider's token (`engine::identity`). A request carries one `Authorization: Bearer`
//! value: a known key decides; only a value that is no key and looks like a JWT is read
//! as a voter's token.

use super::error::EngineError;
use super::state::AppState;
use crate::domain::auth::{Reach, Scope, hash_key};
use crate::domain::code::Code;
use crate::domain::identity::SignedIn;
use crate::domain::ids::{BoardSlug, Channel, LeagueSlug};

/// An authenticated caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub scopes: Vec<Scope>,
    /// Votes by this caller count for this channel whatever the request says.
    pub channel: Option<Channel>,
    /// The boards and leagues this caller may reach.
    pub reach: Reach,
    /// Who this is, as the audit log names them: `master key` or `key:<id> <name>`.
    pub actor: String,
    /// A stable id that owns this caller's idempotency keys: `master`, `key:<id>`, or
    /// `visitor:<id>` on the voting page, `voter:<provider>:<voter>` for a signed-in
    /// voter.
    pub id: String,
    /// The voter a token names, when the caller signed in with one: the voter of every
    /// vote it casts, on boards that accept its provider.
    pub signed_in: Option<SignedIn>,
}

impl Caller {
    /// A voter signed in with `signed_in`'s provider: votes only, on any board (each
    /// write checks that its board accepts the provider), for the token's channel.
    pub fn signed_in(signed_in: SignedIn) -> Self {
        Self {
            scopes: vec![Scope::Vote],
            channel: signed_in.channel.clone(),
            reach: Reach {
                boards: None,
                leagues: Some(Vec::new()),
            },
            actor: format!("voter {}/{}", signed_in.provider, signed_in.voter),
            id: format!("voter:{}:{}", signed_in.provider, signed_in.voter),
            signed_in: Some(signed_in),
        }
    }

    /// Whether this is a voting page's visitor (not an API client).
    pub fn is_visitor(&self) -> bool {
        self.id.starts_with("visitor:")
    }

    pub fn has(&self, scope: Scope) -> bool {
        self.scopes.contains(&scope)
    }

    /// Refuses with 403 unless the caller holds `scope`.
    pub fn require(&self, scope: Scope) -> Result<(), EngineError> {
        if self.has(scope) {
            Ok(())
        } else {
            Err(EngineError::forbidden(
                Code::Forbidden,
                format!("this key lacks the {scope} scope"),
            ))
        }
    }

    /// Refuses with 403 `key_not_allowed` unless the caller may reach board `slug`.
    pub fn reach_board(&self, slug: &BoardSlug) -> Result<(), EngineError> {
        if self.reach.board(slug) {
            Ok(())
        } else {
            Err(EngineError::forbidden(
                Code::KeyNotAllowed,
                format!("this key may not reach board {slug}"),
            ))
        }
    }

    /// Refuses with 403 `key_not_allowed` unless the caller may reach league `slug`.
    pub fn reach_league(&self, slug: &LeagueSlug) -> Result<(), EngineError> {
        if self.reach.league(slug) {
            Ok(())
        } else {
            Err(EngineError::forbidden(
                Code::KeyNotAllowed,
                format!("this key may not reach league {slug}"),
            ))
        }
    }

    /// Refuses with 403 `key_not_allowed` unless the caller reaches every board and
    /// league: what managing API keys takes, since a new key could reach anything.
    pub fn reach_everywhere(&self) -> Result<(), EngineError> {
        if self.reach.is_everywhere() {
            Ok(())
        } else {
            Err(EngineError::forbidden(
                Code::KeyNotAllowed,
                "only a key that may reach every board and league manages API keys",
            ))
        }
    }
}

/// What an `Authorization` header carries.
pub enum Credential<'a> {
    /// No header.
    None,
    /// The master key or a live API key.
    Key(Box<Caller>),
    /// A value that is no key and has a JWT's shape: a voter's token, to be verified.
    Token(&'a str),
}

/// Resolves an `Authorization` header value; a voter's token is answered as `None` (a
/// token reads what anyone may, and manages nothing).
pub fn authenticate(state: &AppState, header: Option<&str>) -> Result<Option<Caller>, EngineError> {
    match credential(state, header)? {
        Credential::Key(caller) => Ok(Some(*caller)),
        Credential::None | Credential::Token(_) => Ok(None),
    }
}

/// Whether `value` has a JWT's shape: three dot-separated base64url parts.
fn is_jwt(value: &str) -> bool {
    value.split('.').count() == 3
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// Reads an `Authorization` header value: a key (the master key or a live API key) wins;
/// else a value shaped as a JWT is a voter's token; else 401.
pub fn credential<'a>(
    state: &AppState,
    header: Option<&'a str>,
) -> Result<Credential<'a>, EngineError> {
    let (cache, master_key_hash) = (&state.config, state.master_key_hash.as_deref());
    let Some(header) = header else {
        return Ok(Credential::None);
    };
    let Some(token) = header.strip_prefix("Bearer ").map(str::trim) else {
        return Err(EngineError::Unauthorized(
            "use Authorization: Bearer <key>".into(),
        ));
    };
    let hash = hash_key(token);
    if master_key_hash == Some(hash.as_str()) {
        return Ok(Credential::Key(Box::new(Caller {
            scopes: Scope::EVERY.to_vec(),
            channel: None,
            reach: Reach::EVERYWHERE,
            actor: "master key".to_owned(),
            id: "master".to_owned(),
            signed_in: None,
        })));
    }
    match cache.api_key(&hash) {
        Some(key) => Ok(Credential::Key(Box::new(Caller {
            scopes: key.scopes.clone(),
            channel: key.channel.clone(),
            reach: key.reach.clone(),
            actor: format!("key:{} {}", key.id, key.name),
            id: format!("key:{}", key.id),
            signed_in: None,
        }))),
        None if is_jwt(token) => Ok(Credential::Token(token)),
        None => Err(EngineError::Unauthorized(
            "unknown or revoked API key".into(),
        )),
    }
}

/// Refuses with 401 when there is no caller, else requires `scope`.
pub fn require(caller: Option<&Caller>, scope: Scope) -> Result<&Caller, EngineError> {
    let caller =
        caller.ok_or_else(|| EngineError::Unauthorized("this endpoint needs an API key".into()))?;
    caller.require(scope)?;
    Ok(caller)
}
