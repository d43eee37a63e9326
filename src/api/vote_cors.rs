//! CORS for votes cast from browsers: the sites a board lists in `embed_origins` may
//! `POST /api/v1/boards/{board}/votes` (a family's rooms: the family's list), with a
//! voter's token in `Authorization`. The preflight is answered for them, and every
//! answer of the route carries `Access-Control-Allow-Origin` for them, refusals
//! included, so a page can read the error code (`token_expired`: sign in again). Other
//! origins get no CORS headers, and their browsers keep the answer from the page.

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, HeaderMap, HeaderValue};
use actix_web::middleware::Next;
use actix_web::{HttpRequest, HttpResponse, web};

use crate::domain::ids::BoardName;
use crate::engine::state::AppState;

/// How long a browser may keep a preflight's answer, in seconds.
const PREFLIGHT_MAX_AGE: &str = "600";

/// The request's `Origin` when board `board` lists it in `embed_origins`.
fn allowed_origin(state: &AppState, headers: &HeaderMap, board: &str) -> Option<HeaderValue> {
    let origin = headers.get(header::ORIGIN)?;
    let text = origin.to_str().ok()?.to_ascii_lowercase();
    let config = state.config.board(&BoardName::parse(board).ok()?.slug)?;
    config
        .board
        .settings
        .embed_origins
        .contains(&text)
        .then(|| origin.clone())
}

/// Adds the CORS headers of a vote's answer for a listed origin.
pub async fn on_votes(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let origin = match (
        req.app_data::<web::Data<AppState>>(),
        req.match_info().get("board"),
    ) {
        (Some(state), Some(board)) => allowed_origin(state, req.headers(), board),
        _ => None,
    };
    let mut res = next.call(req).await?;
    let headers = res.headers_mut();
    headers.append(header::VARY, HeaderValue::from_static("Origin"));
    if let Some(origin) = origin {
        headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
        headers.insert(
            header::ACCESS_CONTROL_EXPOSE_HEADERS,
            HeaderValue::from_static("Retry-After"),
        );
    }
    Ok(res)
}

/// Answers the preflight of a vote: 204, with the CORS headers for a listed origin
/// asking to POST.
pub async fn preflight(
    state: web::Data<AppState>,
    req: HttpRequest,
    board: web::Path<String>,
) -> HttpResponse {
    let mut res = HttpResponse::NoContent();
    res.insert_header((header::VARY, "Origin"));
    let posts = req
        .headers()
        .get(header::ACCESS_CONTROL_REQUEST_METHOD)
        .is_some_and(|m| m == "POST");
    if posts && let Some(origin) = allowed_origin(&state, req.headers(), &board) {
        res.insert_header((header::ACCESS_CONTROL_ALLOW_ORIGIN, origin))
            .insert_header((header::ACCESS_CONTROL_ALLOW_METHODS, "POST"))
            .insert_header((
                header::ACCESS_CONTROL_ALLOW_HEADERS,
                "authorization, content-type",
            ))
            .insert_header((header::ACCESS_CONTROL_MAX_AGE, PREFLIGHT_MAX_AGE));
    }
    res.finish()
}
