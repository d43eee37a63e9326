//! The `Auth` extractor: the caller named by the `Authorization` header, if any.

use std::future::{Ready, ready};

use actix_web::{FromRequest, HttpRequest, dev::Payload, http::header, web};

use crate::engine::auth::{Caller, authenticate};
use crate::error::ApiError;
use crate::state::AppState;

/// The caller, or `None` when the request carries no key. A key that is present but
/// unknown is refused here, before the handler runs.
pub struct Auth(pub Option<Caller>);

impl FromRequest for Auth {
    type Error = ApiError;
    type Future = Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let Some(state) = req.app_data::<web::Data<AppState>>() else {
            return ready(Err(anyhow::anyhow!("app state is not registered").into()));
        };
        let header = req
            .headers()
            .get(header::AUTHORIZATION)
            .map(|v| v.to_str().unwrap_or(""));
        ready(authenticate(&state.config, state.master_key_hash.as_deref(), header).map(Auth))
    }
}
