//! Static files, compiled into the binary: the stylesheet, vendored htmx and its SSE
//! extension, the CSV import's file picker, the live blocks' script, the voting page's
//! sign-in and the stream overlay's script.

use actix_web::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use actix_web::{HttpResponse, web};

const APP_CSS: &str = include_str!("../../static/css/app.css");
const HTMX: &str = include_str!("../../static/vendor/htmx-2.0.4.min.js");
const HTMX_SSE: &str = include_str!("../../static/vendor/htmx-ext-sse-2.2.4.min.js");
const IMPORT_JS: &str = include_str!("../../static/js/import.js");
const LIVE_JS: &str = include_str!("../../static/js/live.js");
const SIGNIN_JS: &str = include_str!("../../static/js/signin.js");
const OVERLAY_JS: &str = include_str!("../../static/js/overlay.js");

fn serve(body: &'static str, content_type: &'static str) -> HttpResponse {
    HttpResponse::Ok()
        .insert_header((CONTENT_TYPE, content_type))
        .insert_header((CACHE_CONTROL, "public, max-age=3600"))
        .body(body)
}

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route(
        "/app.css",
        web::get().to(|| async { serve(APP_CSS, "text/css; charset=utf-8") }),
    )
    .route(
        "/htmx-2.0.4.min.js",
        web::get().to(|| async { serve(HTMX, "text/javascript; charset=utf-8") }),
    )
    .route(
        "/htmx-ext-sse-2.2.4.min.js",
        web::get().to(|| async { serve(HTMX_SSE, "text/javascript; charset=utf-8") }),
    )
    .route(
        "/import.js",
        web::get().to(|| async { serve(IMPORT_JS, "text/javascript; charset=utf-8") }),
    )
    .route(
        "/live.js",
        web::get().to(|| async { serve(LIVE_JS, "text/javascript; charset=utf-8") }),
    )
    .route(
        "/signin.js",
        web::get().to(|| async { serve(SIGNIN_JS, "text/javascript; charset=utf-8") }),
    )
    .route(
        "/overlay.js",
        web::get().to(|| async { serve(OVERLAY_JS, "text/javascript; charset=utf-8") }),
    );
}
