//! Extractors for the caller named by the `Authorization` header: `Auth` (any caller, or
//! none) for reads of public boards, and `Admin`, `Voter` (an API key, or a voter's
//! token) and `Reader`, which refuse a caller without the scope — or whose key may not
//! reach the board or league the path names — before the request body is read.

use std::future::{Ready, ready};

use actix_web::{FromRequest, HttpRequest, dev::Payload, http::header, web};
use futures_util::future::LocalBoxFuture;

use crate::domain::auth::Scope;
use crate::domain::ids::{BoardName, LeagueSlug};
use crate::engine::auth::{Caller, Credential, authenticate, credential, require};
use crate::engine::identity;
use crate::engine::state::AppState;
use crate::error::ApiError;

/// The caller, or `None` when the request carries no key. A key that is present but
/// unknown is refused here, before the handler runs.
pub struct Auth(pub Option<Caller>);

impl FromRequest for Auth {
    type Error = ApiError;
    type Future = Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        ready(state_and_header(req).and_then(|(state, header)| {
            authenticate(state, header)
                .map(Auth)
                .map_err(ApiError::from)
        }))
    }
}

/// The app state and the request's `Authorization` value.
fn state_and_header(req: &HttpRequest) -> Result<(&AppState, Option<&str>), ApiError> {
    let Some(state) = req.app_data::<web::Data<AppState>>() else {
        return Err(anyhow::anyhow!("app state is not registered").into());
    };
    let header = req
        .headers()
        .get(header::AUTHORIZATION)
        .map(|v| v.to_str().unwrap_or(""));
    Ok((state, header))
}

fn scoped(req: &HttpRequest, scope: Scope) -> Result<Caller, ApiError> {
    let (state, header) = state_and_header(req)?;
    within_reach(req, authenticate(state, header)?, scope)
}

/// `caller` (a key's, or none), refused unless it holds `scope` and reaches the board
/// or league the path names.
fn within_reach(
    req: &HttpRequest,
    caller: Option<Caller>,
    scope: Scope,
) -> Result<Caller, ApiError> {
    let caller = require(caller.as_ref(), scope)?;
    // A name that does not parse names nothing: the handler answers its 404 or 422. An
    // instance is reached through its family.
    if let Some(board) = req.match_info().get("board")
        && let Ok(name) = BoardName::parse(board)
    {
        caller.reach_board(&name.slug)?;
    }
    if let Some(league) = req.match_info().get("league")
        && let Ok(slug) = LeagueSlug::parse(league)
    {
        caller.reach_league(&slug)?;
    }
    Ok(caller.clone())
}

/// A caller with the `admin` scope. Listed before the body in a handler's arguments, it
/// answers 401 or 403 without reading the body.
pub struct Admin(pub Caller);

impl FromRequest for Admin {
    type Error = ApiError;
    type Future = Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        ready(scoped(req, Scope::Admin).map(Admin))
    }
}

/// A caller with the `vote` scope, or a voter signed in with a token (verified here,
/// its key fetched if need be); like [`Admin`], refused before the body is read. With a
/// key and a token, the key decides: a request carries one `Authorization` value.
pub struct Voter(pub Caller);

impl FromRequest for Voter {
    type Error = ApiError;
    type Future = LocalBoxFuture<'static, Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let req = req.clone();
        Box::pin(async move {
            let (state, header) = state_and_header(&req)?;
            // The header is read once: a key is looked up (and hashed) once per vote.
            let caller = match credential(state, header)? {
                Credential::Token(token) => {
                    return Ok(Voter(Caller::signed_in(
                        identity::verify(state, token).await?,
                    )));
                }
                Credential::Key(caller) => Some(*caller),
                Credential::None => None,
            };
            within_reach(&req, caller, Scope::Vote).map(Voter)
        })
    }
}

/// A caller with the `read` scope (league standings).
pub struct Reader(pub Caller);

impl FromRequest for Reader {
    type Error = ApiError;
    type Future = Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        ready(scoped(req, Scope::Read).map(Reader))
    }
}
