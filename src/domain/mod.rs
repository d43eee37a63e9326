//! Pure types and rules: identifiers, periods and buckets, scores, board settings,
//! rate-limit rules, scopes, idempotency fingerprints, dashboard sessions, ledger entries
//! and adjustments with their reasons, watches, live tops and their changes.
//!
//! Nothing here imports actix, sea-orm or redis; values are parsed once at the edge and
//! carried inward as these types.

pub mod adjustment;
pub mod auth;
pub mod board;
pub mod board_webhook;
pub mod code;
pub mod held;
pub mod idempotency;
pub mod identity;
pub mod ids;
pub mod league;
pub mod ledger;
pub mod limit;
pub mod live;
pub mod percentile;
pub mod period;
pub mod reason;
pub mod recount;
pub mod retention;
pub mod score;
pub mod scoring;
pub mod session;
pub mod watch;
pub mod webhook;

/// Why a raw value could not become a domain value: a stable code and a human message.
use self::code::Code;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Invalid {
    /// Stable snake_case code used in API error bodies.
    pub code: Code,
    /// What was wrong, for a person.
    pub message: String,
}

impl Invalid {
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
}
