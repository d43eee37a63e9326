//! HTML pages: the landing page (`/`), the admin dashboard (`/admin`), the public voting
//! page (`/b/{board}`) and the public page of a league bracket (`/l/{league}/{bracket}`).
//!
//! Pages are Askama templates under `templates/`, mirroring these modules; an htmx request
//! gets a block of its page, a plain form POST a 303 redirect. Every page answers with
//! strict security headers (no inline script), every state-changing form carries a CSRF
//! token, and every `/admin` route but the login page needs a session.

pub mod admin;
pub mod assets;
pub mod charts;
pub mod forms;
pub mod home;
pub mod lang;
pub mod league_page;
pub mod overlay;
pub mod public;
pub mod session;

use actix_session::SessionMiddleware;
use actix_session::config::CookieContentSecurity;
use actix_session::storage::CookieSessionStore;
use actix_web::cookie::{Key, SameSite};
use actix_web::http::Method;
use actix_web::middleware::DefaultHeaders;
use actix_web::{FromRequest, Handler, Responder, web};

/// The Content-Security-Policy of a page that frames may show only on `ancestors`
/// (`'none'`, or origins separated by spaces): no inline or foreign script.
pub fn content_security_policy(ancestors: &str) -> String {
    format!(
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' https: data:; \
         connect-src 'self'; frame-ancestors {ancestors}; base-uri 'none'; form-action 'self'; object-src 'none'"
    )
}

/// `scheme://host` as the client reached this server (through a proxy: as it forwarded
/// them): the start of an address shown to be used elsewhere.
pub fn origin_of(req: &actix_web::HttpRequest) -> String {
    let info = req.connection_info();
    format!("{}://{}", info.scheme(), info.host())
}

/// Headers on every page: no inline or foreign script, no framing, no MIME sniffing.
pub fn security_headers() -> DefaultHeaders {
    embeddable_headers().add(("X-Frame-Options", "DENY"))
}

/// The same, for pages a listed site may frame: they set their own `frame-ancestors`
/// (this CSP, with `'none'`, stands for their error pages), and no `X-Frame-Options`,
/// which cannot list sites.
fn embeddable_headers() -> DefaultHeaders {
    DefaultHeaders::new()
        .add(("Content-Security-Policy", content_security_policy("'none'")))
        .add(("X-Content-Type-Options", "nosniff"))
        .add(("Referrer-Policy", "same-origin"))
}

/// Signed and encrypted cookie sessions: HttpOnly, Secure unless
/// `OVATION_COOKIE_SECURE=false`, each surface with a cookie of its own (`name`), sent
/// only under its `path`, so one surface never reads nor replaces another's.
fn cookie_sessions(
    key: Key,
    secure: bool,
    name: &str,
    path: &str,
    same_site: SameSite,
) -> SessionMiddleware<CookieSessionStore> {
    SessionMiddleware::builder(CookieSessionStore::default(), key)
        .cookie_name(name.to_owned())
        .cookie_path(path.to_owned())
        .cookie_http_only(true)
        .cookie_same_site(same_site)
        .cookie_secure(secure)
        .cookie_content_security(CookieContentSecurity::Private)
        .build()
}

/// The dashboard's sessions: `ovation`, SameSite=Strict, under `/admin` only.
pub fn sessions(key: Key, secure: bool) -> SessionMiddleware<CookieSessionStore> {
    cookie_sessions(key, secure, "ovation", "/admin", SameSite::Strict)
}

/// The voting page's visitors: `ovation_visitor`, under `/b` only, never the dashboard's
/// session (so a visit never reads, replaces or signs out an admin, and the page's CSRF
/// token is its own). SameSite=Lax: a visitor arriving from a link on another site keeps
/// their visitor id and quotas, while a form posted from another site carries no cookie.
fn visitor_sessions(key: Key, secure: bool) -> SessionMiddleware<CookieSessionStore> {
    cookie_sessions(key, secure, "ovation_visitor", "/b", SameSite::Lax)
}

/// The embedded voting page's sessions: `ovation_embed`, under `/embed/b`, sent in
/// another site's frame (SameSite=None, which browsers accept only with Secure, so
/// embedding needs HTTPS); the CSRF token in it guards its forms as on the page itself.
fn embed_sessions(key: Key, secure: bool) -> SessionMiddleware<CookieSessionStore> {
    cookie_sessions(key, secure, "ovation_embed", "/embed/b", SameSite::None)
}

/// Registers routes from a table, so the same table can be listed (see [`route_table`]).
pub trait Router {
    fn add<F, Args>(&mut self, method: Method, path: &'static str, handler: F)
    where
        F: Handler<Args>,
        Args: FromRequest + 'static,
        F::Output: Responder + 'static;
}

impl Router for web::ServiceConfig {
    fn add<F, Args>(&mut self, method: Method, path: &'static str, handler: F)
    where
        F: Handler<Args>,
        Args: FromRequest + 'static,
        F::Output: Responder + 'static,
    {
        self.route(path, web::method(method).to(handler));
    }
}

/// Records routes instead of registering them.
#[derive(Default)]
struct Recorder(Vec<(Method, &'static str)>);

impl Router for Recorder {
    fn add<F, Args>(&mut self, method: Method, path: &'static str, _: F)
    where
        F: Handler<Args>,
        Args: FromRequest + 'static,
        F::Output: Responder + 'static,
    {
        self.0.push((method, path));
    }
}

/// Every `/admin` route as registered (method, full path with `{placeholders}`).
pub fn route_table() -> Vec<(Method, String)> {
    let mut recorder = Recorder::default();
    admin::routes(&mut recorder);
    recorder
        .0
        .into_iter()
        .map(|(m, p)| (m, format!("/admin{p}")))
        .collect()
}

/// Every page route (method, path pattern): dashboard, voting page, assets.
pub fn route_patterns() -> Vec<(Method, String)> {
    let mut public = Recorder::default();
    public::routes(&mut public);
    let mut league = Recorder::default();
    league_page::routes(&mut league);
    route_table()
        .into_iter()
        .chain(public.0.iter().map(|(m, p)| (m.clone(), format!("/b{p}"))))
        .chain(
            public
                .0
                .iter()
                .map(|(m, p)| (m.clone(), format!("/embed/b{p}"))),
        )
        .chain(league.0.iter().map(|(m, p)| (m.clone(), format!("/l{p}"))))
        .chain([
            (Method::GET, "/".to_owned()),
            (Method::GET, "/static/{file}".to_owned()),
            (Method::GET, "/lang/{tag}".to_owned()),
            (Method::GET, "/overlay/b/{board}".to_owned()),
        ])
        .collect()
}

/// Registers the pages and their assets.
pub fn routes(cfg: &mut web::ServiceConfig, key: Key, secure: bool) {
    cfg.service(
        web::resource("/")
            .wrap(security_headers())
            .route(web::get().to(home::home)),
    )
    .route("/lang/{tag}", web::get().to(lang::switch))
    .service(
        web::scope("/static")
            .wrap(security_headers())
            .configure(assets::routes),
    )
    .service(
        web::scope("/admin")
            .wrap(actix_web::middleware::from_fn(admin::require_login))
            .wrap(sessions(key.clone(), secure))
            .wrap(security_headers())
            // Dashboard pages show configuration and keys: no browser or proxy keeps them.
            .wrap(DefaultHeaders::new().add(("Cache-Control", "no-store")))
            .app_data(web::PayloadConfig::default().limit(8 * 1024 * 1024))
            .configure(admin::routes),
    )
    .service(
        web::scope("/b")
            .wrap(visitor_sessions(key.clone(), secure))
            .wrap(security_headers())
            .configure(public::routes),
    )
    .service(
        web::scope("/l")
            .wrap(security_headers())
            .configure(league_page::routes),
    )
    .service(
        web::scope("/overlay/b")
            .wrap(security_headers())
            .route("/{board}", web::get().to(overlay::overlay)),
    )
    .service(
        web::scope("/embed/b")
            .wrap(embed_sessions(key, secure))
            .wrap(embeddable_headers())
            .configure(public::routes),
    );
}
