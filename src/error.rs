//! `ApiError`: every error a JSON client can see, with its status and stable code.
//!
//! Bodies are `{"error": {"code": "snake_case", "message": "…", …details}}`. Unexpected
//! failures are logged with their cause and answered opaquely.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use serde_json::{Map, Value, json};

use crate::domain::Invalid;
use crate::domain::code::Code;
use crate::engine::error::EngineError;

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// 400: the request cannot be read (malformed JSON, bad query string).
    #[error("{message}")]
    Malformed { code: Code, message: String },
    /// 405: the route exists but takes other methods, listed in `Allow`.
    #[error("{message}")]
    MethodNotAllowed { message: String, allow: String },
    /// What the engine refused or failed at, with the status of its kind: 401
    /// unauthorized, 403 forbidden, 404 not found, 409 conflict, 413 too large, 422
    /// invalid, 429 rate-limited, 503 unavailable or outcome unknown, 500 internal.
    #[error(transparent)]
    Engine(#[from] EngineError),
}

impl ApiError {
    pub fn malformed(code: Code, message: impl Into<String>) -> Self {
        Self::Malformed {
            code,
            message: message.into(),
        }
    }

    pub fn not_found(code: Code, message: impl Into<String>) -> Self {
        EngineError::not_found(code, message).into()
    }

    pub fn conflict(code: Code, message: impl Into<String>) -> Self {
        EngineError::conflict(code, message).into()
    }

    pub fn too_large(code: Code, message: impl Into<String>) -> Self {
        EngineError::too_large(code, message).into()
    }

    pub fn invalid(code: Code, message: impl Into<String>) -> Self {
        EngineError::invalid(code, message).into()
    }

    pub fn forbidden(code: Code, message: impl Into<String>) -> Self {
        EngineError::forbidden(code, message).into()
    }

    pub fn unauthorized(message: impl Into<String>) -> Self {
        EngineError::Unauthorized(message.into()).into()
    }

    /// 422 `invalid_field` naming the field (or query parameter) that is wrong.
    pub fn invalid_field(field: &str, message: impl Into<String>) -> Self {
        EngineError::invalid_field(field, message).into()
    }

    /// 422 with extra fields beside code and message.
    pub fn invalid_with(
        code: Code,
        message: impl Into<String>,
        details: Map<String, Value>,
    ) -> Self {
        EngineError::invalid_with(code, message, details).into()
    }

    /// The stable snake_case code of the JSON body.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Malformed { code, .. } => code.as_str(),
            Self::MethodNotAllowed { .. } => Code::MethodNotAllowed.as_str(),
            Self::Engine(err) => err.code().as_str(),
        }
    }

    /// The JSON body, also used for per-item errors in batch answers.
    pub fn body(&self) -> Value {
        let message = match self {
            Self::Engine(EngineError::Internal(_)) => "internal error".to_owned(),
            Self::Engine(EngineError::Unavailable(_)) => {
                "the data store is unavailable; try again shortly".to_owned()
            }
            Self::Engine(EngineError::OutcomeUnknown(_)) => {
                "the data store did not answer in time, so this write may \
                or may not have been applied: retry it with the same idempotency key"
                    .to_owned()
            }
            other => other.to_string(),
        };
        let mut error = Map::new();
        error.insert("code".into(), json!(self.code()));
        error.insert("message".into(), json!(message));
        match self {
            Self::Engine(EngineError::Invalid { details, .. }) => error.extend(details.clone()),
            Self::Engine(EngineError::RateLimited {
                rule,
                retry_after_s,
                ..
            }) => {
                error.insert("rule".into(), rule.clone());
                error.insert("retry_after_s".into(), json!(retry_after_s));
            }
            Self::Engine(EngineError::OutcomeUnknown(_)) => {
                error.insert("outcome".into(), json!("unknown"));
            }
            _ => {}
        }
        json!({ "error": error })
    }
}

impl From<Invalid> for ApiError {
    fn from(err: Invalid) -> Self {
        EngineError::from(err).into()
    }
}

impl From<anyhow::Error> for ApiError {
    fn from(err: anyhow::Error) -> Self {
        EngineError::Internal(err).into()
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        match self {
            Self::Malformed { .. } => StatusCode::BAD_REQUEST,
            Self::MethodNotAllowed { .. } => StatusCode::METHOD_NOT_ALLOWED,
            Self::Engine(err) => match err {
                EngineError::Unauthorized(_) | EngineError::Token { .. } => {
                    StatusCode::UNAUTHORIZED
                }
                EngineError::Forbidden { .. } => StatusCode::FORBIDDEN,
                EngineError::NotFound { .. } => StatusCode::NOT_FOUND,
                EngineError::Conflict { .. } => StatusCode::CONFLICT,
                EngineError::TooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
                EngineError::Invalid { .. } => StatusCode::UNPROCESSABLE_ENTITY,
                EngineError::RateLimited { .. } | EngineError::TooMany { .. } => {
                    StatusCode::TOO_MANY_REQUESTS
                }
                EngineError::Busy { .. }
                | EngineError::Unavailable(_)
                | EngineError::OutcomeUnknown(_) => StatusCode::SERVICE_UNAVAILABLE,
                EngineError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
            },
        }
    }

    fn error_response(&self) -> HttpResponse {
        match self {
            Self::Engine(EngineError::Internal(err)) => {
                tracing::error!(error = ?err, "request failed")
            }
            Self::Engine(EngineError::Unavailable(cause) | EngineError::OutcomeUnknown(cause)) => {
                tracing::warn!(%cause, "store unavailable")
            }
            _ => {}
        }
        let mut response = HttpResponse::build(self.status_code());
        match self {
            Self::Engine(EngineError::Unavailable(_) | EngineError::OutcomeUnknown(_)) => {
                response.insert_header(("Retry-After", "1"));
            }
            Self::Engine(EngineError::Busy { .. }) => {
                response.insert_header(("Retry-After", "5"));
            }
            Self::Engine(EngineError::RateLimited {
                retry_after_s: Some(s),
                ..
            }) => {
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
    /// 503: this instance is full (of live streams).
    #[error("{0}")]
    Busy(String),
    /// 429: the visitor holds as many (live streams) as one may.
    #[error("{0}")]
    TooMany(String),
    /// 500: the cause goes to the log only.
    #[error(transparent)]
    Internal(#[from] anyhow::Error),
}

impl From<EngineError> for PageError {
    fn from(err: EngineError) -> Self {
        match err {
            EngineError::NotFound { message, .. } => Self::NotFound(message),
            EngineError::Forbidden { message, .. }
            | EngineError::Unauthorized(message)
            | EngineError::Token { message, .. } => Self::Forbidden(message),
            EngineError::Unavailable(cause) | EngineError::OutcomeUnknown(cause) => {
                tracing::warn!(%cause, "store unavailable");
                Self::Unavailable
            }
            EngineError::Busy { message, .. } => Self::Busy(message),
            EngineError::TooMany { message, .. } => Self::TooMany(message),
            EngineError::Internal(err) => Self::Internal(err),
            other => Self::Invalid(other.to_string()),
        }
    }
}

impl From<Invalid> for PageError {
    fn from(err: Invalid) -> Self {
        Self::Invalid(err.message)
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
            Self::Unavailable | Self::Busy(_) => StatusCode::SERVICE_UNAVAILABLE,
            Self::TooMany(_) => StatusCode::TOO_MANY_REQUESTS,
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
        let mut response = HttpResponse::build(status);
        if let Self::Busy(_) = self {
            response.insert_header(("Retry-After", "5"));
        }
        response
            .content_type("text/html; charset=utf-8")
            .body(page.render().unwrap_or(message))
    }
}
