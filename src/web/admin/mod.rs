//! The admin dashboard: sign-in, boards (live view, charts), members, rules, leagues, API
//! keys and the audit log. Every route but the login page needs a session ([`require_login`]).

pub mod audit;
pub mod boards;
pub mod keys;
pub mod leagues;
pub mod members;
pub mod providers;
pub mod rules;

use actix_session::{Session, SessionExt};
use actix_web::body::BoxBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::Method;
use actix_web::middleware::Next;
use actix_web::{HttpRequest, HttpResponse, ResponseError, web};
use askama::Template;
use serde::Deserialize;

use super::Router;
use super::forms::CsrfForm;
use super::session::{self, csrf_token};
use crate::api::client_ip::ClientIp;
use crate::engine::state::AppState;
use crate::engine::users::{self, LoginRefusal};
use crate::error::PageError;
use crate::i18n::Lang;

/// Paths under `/admin` that answer without a session.
const PUBLIC: &[&str] = &["/admin/login"];

/// The admin routes, relative to `/admin`.
pub fn routes(r: &mut impl Router) {
    r.add(Method::GET, "/login", login_page);
    r.add(Method::POST, "/login", login);
    r.add(Method::POST, "/logout", logout);
    r.add(Method::GET, "", home);
    r.add(Method::GET, "/", home);
    boards::routes(r);
    members::routes(r);
    rules::routes(r);
    leagues::routes(r);
    keys::routes(r);
    providers::routes(r);
    audit::routes(r);
}

/// Refuses every `/admin` request without an open session, except the login page: a
/// route added later is covered without doing anything. Each request checks the
/// server-side session in Redis, which keeps it open for the idle timeout more; an ended
/// one (idle, past its absolute end, logged out, password changed) clears the cookie.
pub async fn require_login(
    req: ServiceRequest,
    next: Next<BoxBody>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    if PUBLIC.contains(&req.path()) {
        return next.call(req).await;
    }
    let refusal = match (
        session::signed_in(&req.get_session()),
        req.app_data::<web::Data<AppState>>(),
    ) {
        (Some(ticket), Some(state)) => match users::check_session(state, &ticket).await {
            Ok(true) => return next.call(req).await,
            Ok(false) => {
                session::sign_out(&req.get_session());
                PageError::SignInRequired
            }
            Err(err) => PageError::from(err),
        },
        _ => PageError::SignInRequired,
    };
    Ok(req.into_response(refusal.error_response().map_into_boxed_body()))
}

/// Renders a template as an HTML response.
pub fn html(page: &impl Template) -> Result<HttpResponse, PageError> {
    Ok(HttpResponse::Ok()
        .content_type("text/html; charset=utf-8")
        .body(page.render()?))
}

/// Renders a template with another status than 200 (a refused form is 422).
pub fn html_with(
    page: &impl Template,
    status: actix_web::http::StatusCode,
) -> Result<HttpResponse, PageError> {
    let mut response = html(page)?;
    *response.status_mut() = status;
    Ok(response)
}

/// A 303 to `to` (after a form post without htmx); htmx follows it too.
pub fn see_other(to: &str) -> HttpResponse {
    HttpResponse::SeeOther()
        .insert_header(("Location", to))
        .finish()
}

/// Whether the request came from htmx (and wants a block, not a page).
pub fn is_htmx(req: &HttpRequest) -> bool {
    req.headers().contains_key("hx-request")
}

/// What every dashboard page needs in its layout.
pub struct Chrome {
    pub l: Lang,
    pub user: String,
    pub csrf: String,
    pub flash: Option<String>,
}

impl Chrome {
    pub fn of(session: &Session, user: &session::AdminUser) -> Self {
        Self {
            l: user.lang,
            user: user.name.clone(),
            csrf: csrf_token(session),
            flash: session::take_flash(session),
        }
    }
}

#[derive(Template)]
#[template(path = "admin/login.html")]
struct LoginPage {
    l: Lang,
    csrf: String,
    flash: Option<String>,
    error: Option<String>,
}

async fn home() -> HttpResponse {
    see_other("/admin/boards")
}

async fn login_page(session: Session, l: Lang) -> Result<HttpResponse, PageError> {
    if session::signed_in(&session).is_some() {
        return Ok(see_other("/admin/boards"));
    }
    html(&LoginPage {
        l,
        csrf: csrf_token(&session),
        flash: session::take_flash(&session),
        error: None,
    })
}

#[derive(Deserialize)]
struct LoginForm {
    username: String,
    password: String,
}

async fn login(
    state: web::Data<AppState>,
    session: Session,
    client: ClientIp,
    l: Lang,
    form: CsrfForm<LoginForm>,
) -> Result<HttpResponse, PageError> {
    let form = form.0;
    let ip = client.0;
    let outcome = users::login(&state, &form.username, &form.password, ip).await?;
    let error = match &outcome {
        Ok(()) => {
            let ticket = users::open_session(&state, &form.username).await?;
            session::sign_in(&session, &ticket)?;
            tracing::info!(user = %form.username, ip = ?ip, "dashboard sign-in");
            return Ok(see_other("/admin/boards"));
        }
        Err(LoginRefusal::BadCredentials) => l.t("login-wrong"),
        Err(LoginRefusal::Throttled) => l.t("login-throttled"),
    };
    let status = match outcome {
        Err(LoginRefusal::Throttled) => actix_web::http::StatusCode::TOO_MANY_REQUESTS,
        _ => actix_web::http::StatusCode::UNAUTHORIZED,
    };
    let page = LoginPage {
        l,
        csrf: csrf_token(&session),
        flash: None,
        error: Some(error),
    };
    html_with(&page, status)
}

#[derive(Deserialize)]
struct Empty {}

async fn logout(
    state: web::Data<AppState>,
    session: Session,
    _form: CsrfForm<Empty>,
) -> Result<HttpResponse, PageError> {
    if let Some(ticket) = session::signed_in(&session) {
        users::close_session(&state, &ticket).await?;
    }
    session::sign_out(&session);
    Ok(see_other("/admin/login"))
}
