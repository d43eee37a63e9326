//! `CsrfForm<T>`: a urlencoded form whose `_csrf` field (or `X-CSRF-Token` header) must
//! match the session's token before the handler sees it. `serde_html_form` reads it,
//! because unlike `serde_urlencoded` it turns repeated fields (checkboxes) into a `Vec`.

use std::pin::Pin;

use actix_session::SessionExt;
use actix_web::{FromRequest, HttpRequest, dev::Payload, web};
use serde::Deserialize;
use serde::de::DeserializeOwned;

use super::session::verify_csrf;
use crate::error::PageError;

/// Largest form accepted (a pasted CSV of members fits).
const FORM_LIMIT: usize = 4 * 1024 * 1024;

#[derive(Deserialize)]
struct Token {
    #[serde(rename = "_csrf")]
    csrf: Option<String>,
}

/// A form that passed the CSRF check.
pub struct CsrfForm<T>(pub T);

impl<T: DeserializeOwned + 'static> FromRequest for CsrfForm<T> {
    type Error = PageError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, PageError>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let req = req.clone();
        let body = web::Bytes::from_request(&req, payload);
        Box::pin(async move {
            let body = body
                .await
                .map_err(|e| PageError::Invalid(format!("unreadable form: {e}")))?;
            if body.len() > FORM_LIMIT {
                return Err(PageError::Invalid("the form is too large".into()));
            }
            let header = req
                .headers()
                .get("x-csrf-token")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            let token = serde_html_form::from_bytes::<Token>(&body)
                .ok()
                .and_then(|t| t.csrf)
                .or(header);
            verify_csrf(&req.get_session(), token.as_deref())?;
            serde_html_form::from_bytes::<T>(&body)
                .map(CsrfForm)
                .map_err(|e| PageError::Invalid(format!("unreadable form: {e}")))
        })
    }
}
