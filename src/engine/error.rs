//! `EngineError`: why an engine operation did not happen, in the engine's own words.
//! The boundary turns it into an answer: `error.rs` maps each kind to an HTTP status
//! for the API (`ApiError`) and the pages (`PageError`); background tasks and the CLI
//! log or print it.

use serde_json::{Map, Value, json};

use crate::domain::Invalid;
use crate::domain::code::Code;
use crate::store::redis::RedisFailure;
use crate::store::sql::SqlError;

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The caller is not known: no key where one is needed, or an unknown or revoked one.
    #[error("{0}")]
    Unauthorized(String),
    /// A voter's token is refused: malformed, badly signed, expired, of another issuer…
    /// (`token_*` codes).
    #[error("{message}")]
    Token { code: Code, message: String },
    /// The caller may not do this: a scope it lacks (`forbidden`), a board or league its
    /// key does not reach (`key_not_allowed`).
    #[error("{message}")]
    Forbidden { code: Code, message: String },
    /// What the request names does not exist: a board, member, league, …
    #[error("{message}")]
    NotFound { code: Code, message: String },
    /// The request conflicts with the current state (a campaign over, a season closing).
    #[error("{message}")]
    Conflict { code: Code, message: String },
    /// Too many items or too much at once.
    #[error("{message}")]
    TooLarge { code: Code, message: String },
    /// A value is out of range or ill-formed; `details` go beside code and message.
    #[error("{message}")]
    Invalid {
        code: Code,
        message: String,
        details: Map<String, Value>,
    },
    /// A rate-limit rule refused the write.
    #[error("{message}")]
    RateLimited {
        message: String,
        /// The rule as `engine::limits::rule_json` shows it.
        rule: Value,
        /// Seconds until the rule admits the write; `None` when it never will.
        retry_after_s: Option<i64>,
    },
    /// This instance holds as much of something as it may (live streams): try again
    /// later, or another instance.
    #[error("{message}")]
    Busy { code: Code, message: String },
    /// The client holds as much of something as one client may (live streams from one
    /// address): it must let one go first.
    #[error("{message}")]
    TooMany { code: Code, message: String },
    /// Redis or SQL cannot be reached; nothing was written.
    #[error("store unavailable: {0}")]
    Unavailable(String),
    /// Redis did not answer a write in time: it may or may not have been applied, and a
    /// retry with the same idempotency key settles it.
    #[error("store did not answer: {0}")]
    OutcomeUnknown(String),
    /// A bug or a broken store; the cause is for the log only.
    #[error(transparent)]
    Internal(#[from] anyhow::Error),
}

impl EngineError {
    pub fn forbidden(code: Code, message: impl Into<String>) -> Self {
        Self::Forbidden {
            code,
            message: message.into(),
        }
    }

    pub fn not_found(code: Code, message: impl Into<String>) -> Self {
        Self::NotFound {
            code,
            message: message.into(),
        }
    }

    pub fn conflict(code: Code, message: impl Into<String>) -> Self {
        Self::Conflict {
            code,
            message: message.into(),
        }
    }

    pub fn too_large(code: Code, message: impl Into<String>) -> Self {
        Self::TooLarge {
            code,
            message: message.into(),
        }
    }

    pub fn invalid(code: Code, message: impl Into<String>) -> Self {
        Self::invalid_with(code, message, Map::new())
    }

    /// `invalid_field`, naming the field (or query parameter) that is wrong.
    pub fn invalid_field(field: &str, message: impl Into<String>) -> Self {
        let mut details = Map::new();
        details.insert("field".into(), json!(field));
        Self::invalid_with(Code::InvalidField, message, details)
    }

    /// An invalid value with more fields beside code and message.
    pub fn invalid_with(
        code: Code,
        message: impl Into<String>,
        details: Map<String, Value>,
    ) -> Self {
        Self::Invalid {
            code,
            message: message.into(),
            details,
        }
    }

    /// The per-item errors of an invalid batch or CSV (each `{"line" | "index", "code",
    /// "message"}`); none for any other error.
    pub fn item_errors(&self) -> &[Value] {
        match self {
            Self::Invalid { details, .. } => details
                .get("errors")
                .and_then(Value::as_array)
                .map_or(&[], Vec::as_slice),
            _ => &[],
        }
    }

    /// The stable snake_case code.
    pub fn code(&self) -> Code {
        match self {
            Self::Forbidden { code, .. }
            | Self::NotFound { code, .. }
            | Self::Conflict { code, .. }
            | Self::TooLarge { code, .. }
            | Self::Busy { code, .. }
            | Self::TooMany { code, .. }
            | Self::Token { code, .. }
            | Self::Invalid { code, .. } => *code,
            Self::Unauthorized(_) => Code::Unauthorized,
            Self::RateLimited { .. } => Code::RateLimited,
            Self::Unavailable(_) | Self::OutcomeUnknown(_) => Code::StoreUnavailable,
            Self::Internal(_) => Code::InternalError,
        }
    }
}

impl From<Invalid> for EngineError {
    fn from(err: Invalid) -> Self {
        Self::invalid(err.code, err.message)
    }
}

impl From<RedisFailure> for EngineError {
    fn from(err: RedisFailure) -> Self {
        match err {
            RedisFailure::Unavailable(cause) => Self::Unavailable(cause),
            other => Self::Internal(anyhow::Error::new(other).context("redis call failed")),
        }
    }
}

impl From<SqlError> for EngineError {
    fn from(err: SqlError) -> Self {
        match err {
            SqlError::Conflict => Self::conflict(Code::AlreadyExists, "already exists"),
            SqlError::Db(db) if is_connection_error(&db) => Self::Unavailable(db.to_string()),
            other => Self::Internal(anyhow::Error::new(other).context("sql call failed")),
        }
    }
}

fn is_connection_error(err: &sea_orm::DbErr) -> bool {
    matches!(
        err,
        sea_orm::DbErr::ConnectionAcquire(_) | sea_orm::DbErr::Conn(_)
    )
}
