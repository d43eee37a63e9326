//! The page language: the `lang` cookie the switch sets, else `Accept-Language`; and the
//! switch itself, `GET /lang/{tag}?back=/path`.

use std::future::{Ready, ready};

use actix_web::cookie::{Cookie, SameSite, time::Duration};
use actix_web::http::header::ACCEPT_LANGUAGE;
use actix_web::{FromRequest, HttpRequest, HttpResponse, dev::Payload, web};
use serde::Deserialize;

use crate::error::PageError;
use crate::i18n::Lang;

const COOKIE: &str = "lang";

/// The language `req` asks for.
pub fn of(req: &HttpRequest) -> Lang {
    if let Some(lang) = req.cookie(COOKIE).and_then(|c| Lang::parse(c.value())) {
        return lang;
    }
    req.headers()
        .get(ACCEPT_LANGUAGE)
        .and_then(|v| v.to_str().ok())
        .map_or(Lang::En, Lang::negotiate)
}

impl FromRequest for Lang {
    type Error = actix_web::Error;
    type Future = Ready<Result<Self, actix_web::Error>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        ready(Ok(of(req)))
    }
}

#[derive(Deserialize)]
pub struct Switch {
    back: Option<String>,
}

/// Where the switch may lead back to: a path on this site. Anything else (another
/// site, `//host`, a backslash that some browsers read as a slash) leads to the
/// dashboard instead. A control character is refused outright: browsers drop tabs and
/// line breaks from a `Location`, so `/\t/evil.example` would become `//evil.example`.
fn same_site_path(back: Option<&str>) -> Result<&str, PageError> {
    let Some(back) = back else {
        return Ok("/admin");
    };
    if back.chars().any(char::is_control) {
        return Err(PageError::BadRequest(
            "back must be a path on this site, without control characters".into(),
        ));
    }
    let mut chars = back.chars();
    let on_site = chars.next() == Some('/')
        && !matches!(chars.next(), Some('/' | '\\'))
        && !back.contains('\\');
    Ok(if on_site { back } else { "/admin" })
}

/// Remembers the chosen language for a year and goes back to the page it was chosen on
/// (a path on this site only, so the switch cannot send anyone elsewhere).
pub async fn switch(
    tag: web::Path<String>,
    query: web::Query<Switch>,
) -> Result<HttpResponse, PageError> {
    let back = same_site_path(query.back.as_deref())?;
    let mut response = HttpResponse::SeeOther();
    response.insert_header(("Location", back));
    if let Some(lang) = Lang::parse(&tag) {
        response.cookie(
            Cookie::build(COOKIE, lang.tag())
                .path("/")
                .max_age(Duration::days(365))
                .same_site(SameSite::Lax)
                .http_only(true)
                .finish(),
        );
    }
    Ok(response.finish())
}
