//! API key scopes.

use std::fmt;

use crate::domain::code::Code;
use chrono::{DateTime, Utc};
use sha2::{Digest, Sha256};

use super::Invalid;
use super::ids::Channel;

/// What an API key may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scope {
    Vote,
    Read,
    Admin,
    /// Submit votes with an explicit past time (`at`).
    Backfill,
    /// Speak for end users: set a vote's `ip` (a backend relaying its users' votes).
    Trusted,
}

impl Scope {
    pub const EVERY: [Scope; 5] = [
        Scope::Vote,
        Scope::Read,
        Scope::Admin,
        Scope::Backfill,
        Scope::Trusted,
    ];

    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        match raw {
            "vote" => Ok(Self::Vote),
            "read" => Ok(Self::Read),
            "admin" => Ok(Self::Admin),
            "backfill" => Ok(Self::Backfill),
            "trusted" => Ok(Self::Trusted),
            _ => Err(Invalid::new(
                Code::InvalidScope,
                format!("unknown scope {raw:?} (want vote, read, admin, backfill or trusted)"),
            )),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Vote => "vote",
            Self::Read => "read",
            Self::Admin => "admin",
            Self::Backfill => "backfill",
            Self::Trusted => "trusted",
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Parses a list of scope names: at least one; repeats are merged.
pub fn parse_scopes<S: AsRef<str>>(raw: &[S]) -> Result<Vec<Scope>, Invalid> {
    let mut scopes = raw
        .iter()
        .map(|s| Scope::parse(s.as_ref()))
        .collect::<Result<Vec<_>, _>>()?;
    scopes.sort();
    scopes.dedup();
    if scopes.is_empty() {
        return Err(Invalid::new(
            Code::InvalidScopes,
            "scopes must name at least one scope",
        ));
    }
    Ok(scopes)
}

/// An API key as stored: everything but the secret, which only its hash stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiKey {
    pub id: i64,
    pub name: String,
    /// The key's first characters, to tell keys apart in lists.
    pub prefix: String,
    pub scopes: Vec<Scope>,
    /// When set, votes made with this key count for this channel whatever the body says.
    pub channel: Option<Channel>,
    pub created_at: DateTime<Utc>,
    pub revoked_at: Option<DateTime<Utc>>,
}

/// The stored form of a key: SHA-256, hex. Keys are long random strings, so a fast hash
/// is enough; a slow password hash would only slow every request.
pub fn hash_key(raw: &str) -> String {
    hex::encode(Sha256::digest(raw.as_bytes()))
}
