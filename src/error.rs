//! `ApiError`: every error a JSON client can see, with its status and stable code.
//!
//! Bodies are `{"error": {"code": "snake_case", "message": "…", …details}}`. Unexpected
//! failures are logged with their cause and answered opaquely.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use serde_json::{Map, Value, json};

use crate::domain::Invalid;
use crate::domain::code::Code;
use crate::store::redis::RedisFailure;
use crate::store::sql::SqlError;

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// 400: the request cannot be read (malformed JSON, bad query string).
    #[error("{message}")]
    Malformed { code: Code, message: String },
    /// 401: no usable credentials.
    #[error("{0}")]
    Unauthorized(String),
    /// 403: the key lacks the scope (`forbidden`), or may not reach the board or league
    /// (`key_not_allowed`).
    #[error("{message}")]
    Forbidden { code: Code, message: String },
    /// 404: unknown board, member or key.
    #[error("{message}")]
    NotFound { code: Code, message: String },
    /// 405: the route exists but takes other methods, listed in `Allow`.
    #[error("{message}")]
    MethodNotAllowed { message: String, allow: String },
    /// 409: the request conflicts with the current state.
    #[error("{message}")]
    Conflict { code: Code, message: String },
    /// 413: too many items or bytes.
    #[error("{message}")]
    TooLarge { code: Code, message: String },
    /// 422: a value is out of range or ill-formed.
    #[error("{message}")]
    Invalid {
        code: Code,
        message: String,
        details: Map<String, Value>,
    },
    /// 429: a rate-limit rule refused the vote.
    #[error("{message}")]
    RateLimited {
        message: String,
        /// The rule as `engine::limits::rule_json` shows it.
        rule: Value,
        /// Seconds until the rule admits the vote; `None` when it never will.
        retry_after_s: Option<i64>,
    },
    /// 503: Redis or SQL cannot be reached; nothing was written.
    #[error("store unavailable: {0}")]
    StoreUnavailable(String),
    /// 503 on a write: Redis did not answer in time, so the write may or may not have
    /// been applied. Retrying with the same idempotency key is safe.
    #[error("store did not answer: {0}")]
    OutcomeUnknown(String),
    /// 500: a bug or a broken store; the cause goes to the log only.
    #[error(transparent)]
    Internal(#[from] anyhow::Error),
}

impl ApiError {
    pub fn malformed(code: Code, message: impl Into<String>) -> Self {
        Self::Malformed {
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

    pub fn forbidden(code: Code, message: impl Into<String>) -> Self {
        Self::Forbidden {
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
        Self::Invalid {
            code,
            message: message.into(),
            details: Map::new(),
        }
    }

    /// 422 `invalid_field` naming the field (or query parameter) that is wrong.
    pub fn invalid_field(field: &str, message: impl Into<String>) -> Self {
        let mut details = Map::new();
        details.insert("field".into(), json!(field));
        Self::invalid_with(Code::InvalidField, message, details)
    }

    /// 422 with extra fields beside code and message.
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

    /// The stable snake_case code of the JSON body.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Malformed { code, .. }
            | Self::Forbidden { code, .. }
            | Self::NotFound { code, .. }
            | Self::Conflict { code, .. }
            | Self::TooLarge { code, .. }
            | Self::Invalid { code, .. } => code.as_str(),
            Self::RateLimited { .. } => Code::RateLimited.as_str(),
            Self::MethodNotAllowed { .. } => Code::MethodNotAllowed.as_str(),
            Self::Unauthorized(_) => Code::Unauthorized.as_str(),
            Self::StoreUnavailable(_) | Self::OutcomeUnknown(_) => Code::StoreUnavailable.as_str(),
            Self::Internal(_) => Code::InternalError.as_str(),
        }
    }

    /// The JSON body, also used for per-item errors in batch answers.
    pub fn body(&self) -> Value {
        let message = match self {
            Self::Internal(_) => "internal error".to_owned(),
            Self::StoreUnavailable(_) => {
                "the data store is unavailable; try again shortly".to_owned()
            }
            Self::OutcomeUnknown(_) => "the data store did not answer in time, so this write may \
                or may not have been applied: retry it with the same idempotency key"
                .to_owned(),
            other => other.to_string(),
        };
        let mut error = Map::new();
        error.insert("code".into(), json!(self.code()));
        error.insert("message".into(), json!(message));
        match self {
            Self::Invalid { details, .. } => error.extend(details.clone()),
            Self::RateLimited {
                rule,
                retry_after_s,
                ..
            } => {
                error.insert("rule".into(), rule.clone());
                error.insert("retry_after_s".into(), json!(retry_after_s));
            }
            Self::OutcomeUnknown(_) => {
                error.insert("outcome".into(), json!("unknown"));
            }
            _ => {}
        }
        json!({ "error": error })
    }
}

impl From<Invalid> for ApiError {
    fn from(err: Invalid) -> Self {
        Self::invalid(err.code, err.message)
    }
}

impl From<RedisFailure> for ApiError {
    fn from(err: RedisFailure) -> Self {
        match err {
            RedisFailure::Unavailable(cause) => Self::StoreUnavailable(cause),
            other => Self::Internal(anyhow::Error::new(other).context("redis call failed")),
        }
    }
}

impl From<SqlError> for ApiError {
    fn from(err: SqlError) -> Self {
        match err {
            SqlError::Conflict => Self::conflict(Code::AlreadyExists, "already exists"),
            SqlError::Db(db) if is_connection_error(&db) => Self::StoreUnavailable(db.to_string()),
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

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        match self {
            Self::Malformed { .. } => StatusCode::BAD_REQUEST,
            Self::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            Self::Forbidden { .. } => StatusCode::FORBIDDEN,
            Self::NotFound { .. } => StatusCode::NOT_FOUND,
            Self::MethodNotAllowed { .. } => StatusCode::METHOD_NOT_ALLOWED,
            Self::Conflict { .. } => StatusCode::CONFLICT,
            Self::TooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            Self::Invalid { .. } => StatusCode::UNPROCESSABLE_ENTITY,
            Self::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
            Self::StoreUnavailable(_) | Self::OutcomeUnknown(_) => StatusCode::SERVICE_UNAVAILABLE,
            Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn error_response(&self) -> HttpResponse {
        match self {
            Self::Internal(err) => tracing::error!(error = ?err, "request failed"),
            Self::StoreUnavailable(cause) | Self::OutcomeUnknown(cause) => {
                tracing::warn!(%cause, "store unavailable")
            }
            _ => {}
        }
        let mut response = HttpResponse::build(self.status_code());
        match self {
            Self::StoreUnavailable(_) | Self::OutcomeUnknown(_) => {
                response.insert_header(("Retry-After", "1"));
            }
            Self::RateLimited {
                retry_after_s: Some(s),
                ..
            } => {
                response.insert_header(("Retry-After", s.to_string()));
            }
            Self::MethodNotAllowed { allow, .. } => {
                response.insert_header(("Allow", allow.clone()));
            }
            _ => {}
        }
        response.json(self.body())
    }
}

/// Every error an HTML page can show, rendered as a page (or a redirect to the login).
#[derive(Debug, thiserror::Error)]
pub enum PageError {
    /// No session: the browser is sent to the login page.
    #[error("sign in first")]
    SignInRequired,
    /// 400: the request itself is malformed (a control character in a query value).
    #[error("{0}")]
    BadRequest(String),
    /// 403: a missing or stale CSRF token, or a forbidden action.
    #[error("{0}")]
    Forbidden(String),
    /// 404.
    #[error("{0}")]
    NotFound(String),
    /// 422: a form value is wrong.
    #[error("{0}")]
    Invalid(String),
    /// 503.
    #[error("the data store is unavailable; try again shortly")]
    Unavailable,
    /// 500: the cause goes to the log only.
    #[error(transparent)]
    Internal(#[from] anyhow::Error),
}

impl From<ApiError> for PageError {
    fn from(err: ApiError) -> Self {
        match err {
            ApiError::NotFound { message, .. } => Self::NotFound(message),
            ApiError::Forbidden { message, .. } | ApiError::Unauthorized(message) => {
                Self::Forbidden(message)
            }
            ApiError::StoreUnavailable(cause) | ApiError::OutcomeUnknown(cause) => {
                tracing::warn!(%cause, "store unavailable");
                Self::Unavailable
            }
            ApiError::Internal(err) => Self::Internal(err),
            other => Self::Invalid(other.to_string()),
        }
    }
}

impl From<askama::Error> for PageError {
    fn from(err: askama::Error) -> Self {
        Self::Internal(anyhow::Error::new(err).context("failed to render a template"))
    }
}

#[derive(askama::Template)]
#[template(path = "error.html")]
struct ErrorPage<'a> {
    status: u16,
    message: &'a str,
}

impl ResponseError for PageError {
    fn status_code(&self) -> StatusCode {
        match self {
            Self::SignInRequired => StatusCode::SEE_OTHER,
            Self::BadRequest(_) => StatusCode::BAD_REQUEST,
            Self::Forbidden(_) => StatusCode::FORBIDDEN,
            Self::NotFound(_) => StatusCode::NOT_FOUND,
            Self::Invalid(_) => StatusCode::UNPROCESSABLE_ENTITY,
            Self::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
            Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn error_response(&self) -> HttpResponse {
        use askama::Template;
        if let Self::SignInRequired = self {
            return HttpResponse::SeeOther()
                .insert_header(("Location", "/admin/login"))
                .insert_header(("HX-Redirect", "/admin/login"))
                .finish();
        }
        let message = match self {
            Self::Internal(err) => {
                tracing::error!(error = ?err, "page failed");
                "something went wrong on our side".to_owned()
            }
            other => other.to_string(),
        };
        let status = self.status_code();
        let page = ErrorPage {
            status: status.as_u16(),
            message: &message,
        };
        HttpResponse::build(status)
            .content_type("text/html; charset=utf-8")
            .body(page.render().unwrap_or(message))
    }
}
