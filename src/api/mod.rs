//! The JSON API (v1): one module per resource, routes registered in [`routes`], and the
//! OpenAPI document generated from the handlers' annotations.

pub mod admin;
pub mod auth;
pub mod boards;
pub mod client_ip;
pub mod events;
pub mod health;
pub mod leagues;
pub mod quota;
pub mod ranks;
pub mod vote_cors;
pub mod writes;

use actix_web::{HttpRequest, HttpResponse, web};
use serde::Serialize;
use utoipa::{OpenApi, ToSchema};
use utoipa_swagger_ui::SwaggerUi;

use crate::domain::code::Code;
use crate::engine::error::EngineError;
use crate::engine::state::AppState;
use crate::error::ApiError;

/// The error body every endpoint answers with.
#[derive(Serialize, ToSchema)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

/// Code and message of an error; some codes add fields (see each endpoint).
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorDetail {
    /// Stable snake_case code.
    pub code: String,
    pub message: String,
}

impl From<&ApiError> for ErrorDetail {
    /// An error's code and message, for an item of a batch that fails alone.
    fn from(err: &ApiError) -> Self {
        Self {
            code: err.code().to_owned(),
            message: err.to_string(),
        }
    }
}

/// A rate-limit refusal (429).
#[derive(Serialize, ToSchema)]
pub struct RateLimitedBody {
    pub error: RateLimitedDetail,
}

/// `code` is `rate_limited`.
#[derive(Serialize, ToSchema)]
pub struct RateLimitedDetail {
    pub code: String,
    pub message: String,
    pub rule: RefusingRule,
    /// Seconds from the vote's time until the rule admits it; null when it never will
    /// (a campaign window). Also sent as the `Retry-After` header.
    pub retry_after_s: Option<i64>,
}

/// The rule that refused: of several, the one that keeps refusing longest.
#[derive(Serialize, ToSchema)]
pub struct RefusingRule {
    pub id: i64,
    pub name: String,
    /// A board rule's dimensions; a league score limit's `per` (`player`, `ip`).
    pub dimensions: Vec<String>,
    pub window: String,
    /// The limit for this vote, overrides applied.
    pub limit: i64,
}

#[derive(OpenApi)]
#[openapi(
    info(title = "Ovation", description = "Real-time voting and leaderboards.

Errors are `{\"error\": {\"code\", \"message\", …}}` with a stable snake_case code.

**503 `store_unavailable`**: Redis or SQL did not answer in time. Wait for `Retry-After`
seconds and retry. On a write (a vote, a batch) the error carries `\"outcome\": \"unknown\"`:
the write may have been applied. Retry it with the same idempotency key(s): you get the
first answer (`\"replayed\": true`) if it was applied, a fresh count if not, never two
counts. A write sent without an idempotency key cannot be retried safely.

**422 `idempotency_key_reused`**: the key was already used, by the same API key on the
same board within the idempotency TTL, for a different request. Nothing was counted. Use a
new key for every new write; reuse a key only to retry the very same request."),
    paths(
        writes::cast_vote,
        writes::cast_votes,
        writes::write_score,
        writes::write_scores,
        boards::get_board,
        boards::get_top,
        boards::get_member,
        boards::get_around,
        boards::get_history,
        boards::get_stats,
        boards::get_instances,
        events::board_events,
        quota::get_quota,
        ranks::get_ranks,
        ranks::get_tops,
        ranks::post_tops,
        admin::boards::create_board,
        admin::boards::list_boards,
        admin::boards::get_board,
        admin::boards::update_board,
        admin::boards::delete_board,
        admin::boards::archive_board,
        admin::ledger::get_ledger,
        admin::ledger::recount_board,
        admin::revocations::create_revocation,
        admin::revocations::list_revocations,
        admin::board_webhooks::create_webhook,
        admin::board_webhooks::list_webhooks,
        admin::board_webhooks::test_webhook,
        admin::board_webhooks::delete_webhook,
        admin::leagues::create_league,
        admin::leagues::list_leagues,
        admin::leagues::get_league,
        admin::leagues::update_league,
        admin::leagues::delete_league,
        admin::leagues::close_league,
        admin::leagues::rotate_webhook_secret,
        leagues::join_league,
        leagues::write_league_score,
        leagues::get_player,
        leagues::get_bracket,
        admin::members::upsert_members,
        admin::members::import_members,
        admin::members::update_member,
        admin::members::delete_member,
        admin::adjustments::create_adjustment,
        admin::rules::create_rule,
        admin::rules::list_rules,
        admin::rules::get_rule,
        admin::rules::update_rule,
        admin::rules::delete_rule,
        admin::watches::create_watch,
        admin::watches::list_watches,
        admin::watches::update_watch,
        admin::watches::delete_watch,
        admin::held::list_held,
        admin::held::review_held,
        admin::api_keys::create_api_key,
        admin::api_keys::list_api_keys,
        admin::api_keys::revoke_api_key,
        admin::identity_providers::create_provider,
        admin::identity_providers::list_providers,
        admin::identity_providers::get_provider,
        admin::identity_providers::update_provider,
        admin::identity_providers::delete_provider,
        health::healthz,
        health::readyz,
        health::metrics,
    ),
    components(schemas(ErrorBody, ErrorDetail, RateLimitedBody, RateLimitedDetail, RefusingRule)),
    modifiers(&BearerAuth, &CommonResponses, &BoardNames)
)]
pub struct ApiDoc;

/// Documents, on every `/api/v1` operation, the error statuses any of them can answer,
/// beside the route-specific ones its annotation lists: 400 for a request that cannot be
/// read, 401 and 403 for keys, 404 for an unknown route or resource, 413 and 422 for
/// bodies and values, 503 when a store does not answer.
struct CommonResponses;

impl utoipa::Modify for CommonResponses {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::path::Operation;
        use utoipa::openapi::{ContentBuilder, Ref, RefOr, ResponseBuilder};

        let error = |description: &str| {
            RefOr::T(
                ResponseBuilder::new()
                    .description(description)
                    .content(
                        "application/json",
                        ContentBuilder::new()
                            .schema(Some(Ref::from_schema_name("ErrorBody")))
                            .build(),
                    )
                    .build(),
            )
        };
        let add = |op: &mut Operation| {
            let body = op.request_body.is_some();
            let csv = op
                .request_body
                .as_ref()
                .is_some_and(|b| serde_json::to_string(b).is_ok_and(|j| j.contains("text/csv")));
            let queries = op.parameters.as_ref().is_some_and(|p| !p.is_empty());
            let mut bad_request = vec!["`invalid_query`", "`invalid_path`"];
            if csv {
                bad_request.extend(["`unsupported_content_type`", "`invalid_encoding`"]);
            } else if body {
                bad_request.extend(["`malformed_json`", "`unsupported_content_type`"]);
            }
            let mut common = vec![
                (
                    "400",
                    format!("the request cannot be read: {}", bad_request.join(", ")),
                ),
                (
                    "401",
                    "`unauthorized`: no key where one is needed, or an unknown or revoked key"
                        .to_owned(),
                ),
                (
                    "403",
                    "`forbidden`: the key lacks the scope this route needs; `key_not_allowed`: \
                    the key may not reach the board or league the request names"
                        .to_owned(),
                ),
                (
                    "404",
                    "`route_not_found`, or an unknown board, member, rule or key".to_owned(),
                ),
                (
                    "503",
                    "`store_unavailable`: Redis or SQL did not answer in time; on a write \
                    `\"outcome\": \"unknown\"` says it may have been applied (retry with the \
                    same idempotency key)"
                        .to_owned(),
                ),
            ];
            if body {
                common.push((
                    "413",
                    "`payload_too_large` and other size limits".to_owned(),
                ));
            }
            if body || queries {
                common.push((
                    "422",
                    "`invalid_field` (a value of the wrong type or out of range) \
                    and the other invalid values"
                        .to_owned(),
                ));
            }
            for (status, description) in common {
                op.responses
                    .responses
                    .entry(status.to_owned())
                    .or_insert_with(|| error(&description));
            }
        };
        for (path, item) in openapi.paths.paths.iter_mut() {
            if !path.starts_with("/api/v1/") {
                continue;
            }
            for op in [
                &mut item.get,
                &mut item.put,
                &mut item.post,
                &mut item.delete,
                &mut item.patch,
            ]
            .into_iter()
            .flatten()
            {
                add(op);
            }
        }
    }
}

/// Says, on every `/api/v1` operation whose path names a `{board}` that keeps rankings,
/// that the board may be an instance of a family (`<family>:<instance>`), with the codes
/// such a name can answer on its 404 and 422.
struct BoardNames;

impl utoipa::Modify for BoardNames {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::RefOr;

        const NAME: &str = "the board's slug, or `<family>:<instance>` for an instance of a \
            family (the instance: 1 to 64 letters, digits and `_` `.` `-`)";
        const CODES: [(&str, &str); 2] = [
            (
                "404",
                "`board_not_found` for an instance of a board that is not a family",
            ),
            (
                "422",
                "`instance_required`: a family named without an instance; \
                `invalid_instance`: an instance name of the wrong shape",
            ),
        ];
        for (path, item) in openapi.paths.paths.iter_mut() {
            let ranked = path.starts_with("/api/v1/boards/{board}")
                && !path.ends_with("/instances")
                && path != "/api/v1/boards/{board}";
            if !ranked {
                continue;
            }
            for op in [&mut item.get, &mut item.post].into_iter().flatten() {
                for param in op.parameters.iter_mut().flatten() {
                    if let RefOr::T(param) = param
                        && param.name == "board"
                    {
                        param.description = Some(NAME.to_owned());
                    }
                }
                for (status, codes) in CODES {
                    if let Some(RefOr::T(response)) = op.responses.responses.get_mut(status) {
                        response.description = format!("{}; {codes}", response.description);
                    }
                }
            }
        }
    }
}

struct BearerAuth;

impl utoipa::Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
        openapi.security = Some(vec![utoipa::openapi::security::SecurityRequirement::new(
            "bearer",
            Vec::<String>::new(),
        )]);
    }
}

/// Largest JSON body accepted (a 100-vote batch or a big member upsert fits).
const JSON_LIMIT: usize = 4 * 1024 * 1024;

/// CORS for the public read API: browsers on `origins` may GET (preflights answered),
/// sending a key or token and, resuming a live stream, `Last-Event-ID`; nothing else;
/// with no origins, no CORS headers at all.
fn cors(origins: &[String]) -> actix_web::middleware::Condition<actix_cors::Cors> {
    let cors = origins
        .iter()
        .fold(actix_cors::Cors::default(), |cors, origin| {
            cors.allowed_origin(origin)
        })
        .allowed_methods(["GET"])
        .allowed_headers([
            actix_web::http::header::AUTHORIZATION,
            actix_web::http::header::CONTENT_TYPE,
            actix_web::http::header::HeaderName::from_static("last-event-id"),
        ])
        .expose_headers([actix_web::http::header::RETRY_AFTER])
        .max_age(3600)
        // Other origins get no CORS headers (their browsers refuse the answer); the
        // request itself is served, as for any client that is not a browser.
        .block_on_origin_mismatch(false);
    actix_web::middleware::Condition::new(!origins.is_empty(), cors)
}

/// Registers every API route, the OpenAPI document and the docs page.
pub fn routes(cfg: &mut web::ServiceConfig, cors_origins: &[String]) {
    cfg.app_data(
        web::JsonConfig::default()
            .limit(JSON_LIMIT)
            .error_handler(|err, _req| json_error(err).into()),
    )
    .app_data(
        web::QueryConfig::default().error_handler(|err, _req| {
            ApiError::malformed(Code::InvalidQuery, err.to_string()).into()
        }),
    )
    .app_data(
        web::PathConfig::default().error_handler(|err, _req| {
            ApiError::malformed(Code::InvalidPath, err.to_string()).into()
        }),
    )
    .service(health::healthz)
    .service(health::readyz)
    .service(health::metrics)
    // Before the scope, whose CORS (OVATION_CORS_ORIGINS, reads) would answer it.
    .service(
        web::resource("/api/v1/boards/{board}/votes")
            .guard(actix_web::guard::Options())
            .to(vote_cors::preflight),
    )
    .service(
        web::scope("/api/v1")
            .wrap(cors(cors_origins))
            .service(writes::cast_vote)
            .service(writes::cast_votes)
            .service(writes::write_score)
            .service(writes::write_scores)
            .service(boards::get_board)
            .service(boards::get_top)
            .service(boards::get_member)
            .service(boards::get_around)
            .service(boards::get_history)
            .service(boards::get_stats)
            .service(boards::get_instances)
            .service(events::board_events)
            .service(quota::get_quota)
            .service(ranks::get_ranks)
            .service(ranks::get_tops)
            .service(ranks::post_tops)
            .service(leagues::join_league)
            .service(leagues::write_league_score)
            .service(leagues::get_player)
            .service(leagues::get_bracket)
            .configure(admin::routes)
            .route("/openapi.json", web::get().to(openapi_json))
            .default_service(web::to(not_found)),
    )
    .service(SwaggerUi::new("/docs/{_:.*}").url("/api/v1/openapi.json", ApiDoc::openapi()));
}

/// Reads a text body (such as CSV) of at most `limit` bytes, with JSON errors where
/// actix's own extractors answer plain text: 400 `unsupported_content_type` unless the
/// body is `text/*` (or unlabelled), 413 `payload_too_large`, 400 `invalid_encoding` when
/// it is not UTF-8.
pub async fn read_text(
    req: &HttpRequest,
    mut payload: web::Payload,
    limit: usize,
) -> Result<String, ApiError> {
    use futures_util::StreamExt;
    let too_large = || {
        ApiError::too_large(
            Code::PayloadTooLarge,
            format!("the body exceeds {limit} bytes"),
        )
    };
    if let Some(kind) = req.headers().get(actix_web::http::header::CONTENT_TYPE) {
        let kind = kind.to_str().unwrap_or("").trim().to_ascii_lowercase();
        if !kind.starts_with("text/") {
            return Err(ApiError::malformed(
                Code::UnsupportedContentType,
                "send Content-Type: text/csv",
            ));
        }
    }
    let declared = req
        .headers()
        .get(actix_web::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<usize>().ok());
    if declared.is_some_and(|n| n > limit) {
        return Err(too_large());
    }
    let mut body = web::BytesMut::new();
    while let Some(chunk) = payload.next().await {
        let chunk = chunk.map_err(|e| ApiError::malformed(Code::MalformedBody, e.to_string()))?;
        if body.len() + chunk.len() > limit {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    String::from_utf8(body.to_vec()).map_err(|e| {
        ApiError::malformed(Code::InvalidEncoding, format!("the body is not UTF-8: {e}"))
    })
}

/// Every API route (method, path pattern), from the OpenAPI document, with the document
/// itself and the docs page.
pub fn route_table() -> Vec<(actix_web::http::Method, String)> {
    use actix_web::http::Method;
    let mut routes = Vec::new();
    for (path, item) in ApiDoc::openapi().paths.paths {
        for (method, op) in [
            (Method::GET, &item.get),
            (Method::POST, &item.post),
            (Method::PUT, &item.put),
            (Method::PATCH, &item.patch),
            (Method::DELETE, &item.delete),
        ] {
            if op.is_some() {
                routes.push((method, path.clone()));
            }
        }
    }
    routes.push((Method::GET, "/api/v1/openapi.json".to_owned()));
    routes.push((Method::GET, "/docs/{file}".to_owned()));
    routes
}

async fn openapi_json() -> HttpResponse {
    HttpResponse::Ok().json(ApiDoc::openapi())
}

/// The OpenAPI document as `docs/openapi.json` keeps it: pretty-printed JSON.
pub fn openapi_document() -> Result<String, serde_json::Error> {
    serde_json::to_string_pretty(&ApiDoc::openapi())
}

/// A JSON answer from the read cache: `make` runs once per `key` for every request
/// within `OVATION_READ_CACHE_MS`, and each of them gets its answer.
pub(crate) async fn cached_json<T, F, Fut>(
    state: &AppState,
    key: String,
    make: F,
) -> Result<HttpResponse, ApiError>
where
    T: Serialize,
    F: FnOnce() -> Fut,
    Fut: Future<Output = Result<T, EngineError>>,
{
    let body = state
        .reads
        .get_or_make(key, || async {
            let value = make().await?;
            Ok(serde_json::to_vec(&value)
                .map_err(anyhow::Error::from)?
                .into())
        })
        .await?;
    Ok(HttpResponse::Ok()
        .content_type("application/json")
        .body(body))
}

/// Answers a request no route took: 405 with `Allow` when the path is a route that takes
/// other methods, else 404.
pub(crate) async fn not_found(req: HttpRequest) -> Result<HttpResponse, ApiError> {
    let allowed = crate::routes::allowed_methods(req.path());
    if !allowed.is_empty() {
        return Err(ApiError::MethodNotAllowed {
            message: format!(
                "{} takes {}, not {}",
                req.path(),
                list(allowed),
                req.method()
            ),
            allow: list(allowed),
        });
    }
    Err(ApiError::not_found(
        Code::RouteNotFound,
        format!("no route {} {}", req.method(), req.path()),
    ))
}

fn list(methods: &[actix_web::http::Method]) -> String {
    methods
        .iter()
        .map(actix_web::http::Method::as_str)
        .collect::<Vec<_>>()
        .join(", ")
}

fn json_error(err: actix_web::error::JsonPayloadError) -> ApiError {
    use actix_web::error::JsonPayloadError as E;
    match err {
        E::OverflowKnownLength { .. } | E::Overflow { .. } => ApiError::too_large(
            Code::PayloadTooLarge,
            format!("the body exceeds {JSON_LIMIT} bytes"),
        ),
        E::ContentType => ApiError::malformed(
            Code::UnsupportedContentType,
            "send Content-Type: application/json",
        ),
        // serde_json calls a number too big for f64 (`1e400`) a syntax error; to a client
        // it is a value out of range, like `99999999999999999999` for an integer field.
        E::Deserialize(e) if e.is_data() || e.to_string().starts_with("number out of range") => {
            ApiError::invalid(Code::InvalidField, e.to_string())
        }
        other => ApiError::malformed(Code::MalformedJson, other.to_string()),
    }
}
