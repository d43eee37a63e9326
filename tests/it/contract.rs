//! Every route against bad requests: a malformed body, a wrong content type, a wrong or
//! missing key, a key without the scope and out-of-range numbers each get their exact
//! status and code, and change nothing.

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::harness::{MASTER_KEY, TestApp, num};

/// A route with a JSON body: method, concrete path, a valid body and the scope it needs.
struct BodyRoute {
    method: Method,
    path: &'static str,
    body: Value,
    scope: &'static str,
}

fn body_routes() -> Vec<BodyRoute> {
    let route = |method: Method, path, body, scope| BodyRoute {
        method,
        path,
        body,
        scope,
    };
    vec![
        route(
            Method::POST,
            "/api/v1/boards/c/votes",
            json!({"member": "m1"}),
            "vote",
        ),
        route(
            Method::POST,
            "/api/v1/votes",
            json!({"votes": [{"board": "c", "member": "m1"}]}),
            "vote",
        ),
        route(
            Method::POST,
            "/api/v1/boards/c/scores",
            json!({"member": "m1", "op": "incr", "value": 1}),
            "vote",
        ),
        route(
            Method::POST,
            "/api/v1/scores",
            json!({"scores": [{"board": "c", "member": "m1", "op": "incr", "value": 1}]}),
            "vote",
        ),
        route(
            Method::POST,
            "/api/v1/admin/boards",
            json!({"slug": "new", "title": "New"}),
            "admin",
        ),
        route(
            Method::PATCH,
            "/api/v1/admin/boards/c",
            json!({"title": "T"}),
            "admin",
        ),
        route(
            Method::POST,
            "/api/v1/admin/leagues",
            json!({"slug": "new", "title": "New", "tiers": [{"name": "t", "promote": 0, "demote": 0}]}),
            "admin",
        ),
        route(
            Method::PATCH,
            "/api/v1/admin/leagues/l",
            json!({"title": "T"}),
            "admin",
        ),
        route(
            Method::PUT,
            "/api/v1/admin/boards/c/members",
            json!({"members": [{"id": "m2"}]}),
            "admin",
        ),
        route(
            Method::PATCH,
            "/api/v1/admin/boards/c/members/m1",
            json!({"name": "N"}),
            "admin",
        ),
        route(
            Method::POST,
            "/api/v1/admin/boards/c/rules",
            json!({"name": "r", "dimensions": ["voter"], "window": "day", "limit": 5}),
            "admin",
        ),
        route(
            Method::PATCH,
            "/api/v1/admin/boards/c/rules/1",
            json!({"limit": 6}),
            "admin",
        ),
        route(
            Method::POST,
            "/api/v1/admin/api-keys",
            json!({"name": "k", "scopes": ["read"]}),
            "admin",
        ),
    ]
}

/// Routes without a body: method, path and the scope they need (`read` routes are
/// public on a public board, so board `c` is private).
fn bodiless_routes() -> Vec<(Method, &'static str)> {
    vec![
        (Method::GET, "/api/v1/boards/c"),
        (Method::GET, "/api/v1/boards/c/top"),
        (Method::GET, "/api/v1/boards/c/members/m1"),
        (Method::GET, "/api/v1/boards/c/members/m1/around"),
        (Method::GET, "/api/v1/boards/c/members/m1/history"),
        (Method::GET, "/api/v1/boards/c/stats"),
        (Method::GET, "/api/v1/boards/c/quota"),
        (Method::GET, "/api/v1/ranks?board=c&members=m1"),
        (Method::GET, "/api/v1/tops?boards=c"),
        (Method::GET, "/api/v1/admin/boards"),
        (Method::GET, "/api/v1/admin/boards/c"),
        (Method::GET, "/api/v1/admin/boards/c/rules"),
        (Method::GET, "/api/v1/admin/boards/c/rules/1"),
        (Method::GET, "/api/v1/admin/api-keys"),
        (Method::DELETE, "/api/v1/admin/boards/c/rules/1"),
        (Method::DELETE, "/api/v1/admin/boards/c/members/m1"),
        (Method::DELETE, "/api/v1/admin/api-keys/1"),
        (Method::POST, "/api/v1/admin/boards/c/archive"),
        (Method::GET, "/api/v1/admin/leagues"),
        (Method::GET, "/api/v1/admin/leagues/l"),
        (Method::DELETE, "/api/v1/admin/leagues/l"),
        (Method::DELETE, "/api/v1/admin/boards/c"),
    ]
}

/// A private closed board `c` with member `m1`, rule 1 and API key 1, and a league `l`.
async fn app_with_board() -> TestApp {
    let app = TestApp::spawn().await;
    let (status, body) = app
        .post(
            "/api/v1/admin/leagues",
            json!({"slug": "l", "title": "L", "tiers": [{"name": "t", "promote": 0, "demote": 0}]}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    app.board(json!({"slug": "c", "title": "C", "max_count": 10}))
        .await;
    app.members("c", &["m1"]).await;
    let (status, body) = app
        .post(
            "/api/v1/admin/boards/c/rules",
            json!({"name": "r", "dimensions": ["member"], "window": "day", "limit": 1000}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    app.key(&["vote"], None).await;
    app
}

async fn send(
    app: &TestApp,
    method: Method,
    path: &str,
    key: Option<&str>,
    content_type: Option<&str>,
    body: Option<String>,
) -> (StatusCode, Value) {
    let mut req = app.client.request(method, format!("{}{path}", app.base));
    if let Some(key) = key {
        req = req.bearer_auth(key);
    }
    if let Some(kind) = content_type {
        req = req.header("Content-Type", kind);
    }
    if let Some(body) = body {
        req = req.body(body);
    }
    let resp = req.send().await.unwrap();
    let status = resp.status();
    let text = resp.text().await.unwrap();
    let value = serde_json::from_str(&text)
        .unwrap_or_else(|_| panic!("{path} answered {status} with a non-JSON body: {text}"));
    (status, value)
}

/// Key, content type, body, and the status and code they must get.
type Case<'a> = (
    Option<&'a str>,
    Option<&'a str>,
    String,
    StatusCode,
    &'a str,
);

fn code(body: &Value) -> Option<&str> {
    body["error"]["code"].as_str()
}

/// Scores and configuration that a refused request must leave as they were.
async fn snapshot(app: &TestApp) -> Value {
    let (_, board) = app.get("/api/v1/admin/boards/c").await;
    let (_, top) = app.get("/api/v1/boards/c/top?view=real").await;
    let (_, rules) = app.get("/api/v1/admin/boards/c/rules").await;
    let (_, keys) = app.get("/api/v1/admin/api-keys").await;
    let (_, leagues) = app.get("/api/v1/admin/leagues").await;
    json!({"board": board, "top": top["entries"], "rules": rules, "keys": keys, "leagues": leagues})
}

#[tokio::test(flavor = "multi_thread")]
async fn every_json_route_refuses_malformed_bodies_wrong_content_types_and_wrong_keys() {
    let app = app_with_board().await;
    let read_only = app.key(&["read"], None).await;
    let before = snapshot(&app).await;
    for route in body_routes() {
        let path = route.path;
        let valid = route.body.to_string();
        let cases: [Case<'_>; 6] = [
            (
                Some(MASTER_KEY),
                Some("application/json"),
                "not json".to_owned(),
                StatusCode::BAD_REQUEST,
                "malformed_json",
            ),
            (
                Some(MASTER_KEY),
                Some("text/plain"),
                valid.clone(),
                StatusCode::BAD_REQUEST,
                "unsupported_content_type",
            ),
            (
                Some(MASTER_KEY),
                None,
                valid.clone(),
                StatusCode::BAD_REQUEST,
                "unsupported_content_type",
            ),
            (
                Some("not-a-key"),
                Some("application/json"),
                r#"{"member": "#.to_owned(),
                StatusCode::UNAUTHORIZED,
                "unauthorized",
            ),
            (
                None,
                Some("application/json"),
                valid.clone(),
                StatusCode::UNAUTHORIZED,
                "unauthorized",
            ),
            (
                Some(read_only.as_str()),
                Some("application/json"),
                valid.clone(),
                StatusCode::FORBIDDEN,
                "forbidden",
            ),
        ];
        for (key, kind, body, status, expected) in cases {
            let (got, answer) = send(&app, route.method.clone(), path, key, kind, Some(body)).await;
            assert_eq!(
                (got, code(&answer)),
                (status, Some(expected)),
                "{} {path} ({} scope) key {key:?} type {kind:?} -> {answer}",
                route.method,
                route.scope,
            );
        }
    }
    for (method, path) in bodiless_routes() {
        let (got, answer) = send(&app, method.clone(), path, Some("not-a-key"), None, None).await;
        assert_eq!(
            (got, code(&answer)),
            (StatusCode::UNAUTHORIZED, Some("unauthorized")),
            "{method} {path} -> {answer}"
        );
        let scoped = if path.starts_with("/api/v1/admin") {
            &read_only
        } else {
            &app.key(&["vote"], None).await
        };
        let (got, answer) = send(&app, method.clone(), path, Some(scoped), None, None).await;
        assert_eq!(
            (got, code(&answer)),
            (StatusCode::FORBIDDEN, Some("forbidden")),
            "{method} {path} -> {answer}"
        );
    }
    let mut after = snapshot(&app).await;
    // Keys made above for the scope checks are the only difference.
    after["keys"] = before["keys"].clone();
    assert_eq!(after, before);
}

#[tokio::test(flavor = "multi_thread")]
async fn out_of_range_numbers_get_their_codes_and_change_nothing() {
    let app = app_with_board().await;
    let before = snapshot(&app).await;
    let huge = "1e400";
    let cases: Vec<(Method, &str, String, StatusCode, &str)> = vec![
        (
            Method::POST,
            "/api/v1/boards/c/votes",
            r#"{"member": "m1", "count": 11}"#.into(),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_count",
        ),
        (
            Method::POST,
            "/api/v1/boards/c/votes",
            r#"{"member": "m1", "count": 0}"#.into(),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_count",
        ),
        (
            Method::POST,
            "/api/v1/boards/c/votes",
            r#"{"member": "m1", "count": 1.5}"#.into(),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_field",
        ),
        (
            Method::POST,
            "/api/v1/boards/c/votes",
            format!(r#"{{"member": "m1", "count": {huge}}}"#),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_field",
        ),
        (
            Method::POST,
            "/api/v1/boards/c/votes",
            r#"{"member": "m1", "count": 99999999999999999999}"#.into(),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_field",
        ),
        (
            Method::POST,
            "/api/v1/boards/c/votes",
            r#"{"member": "m1", "at": "1969-12-31T23:59:59Z"}"#.into(),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_timestamp",
        ),
        (
            Method::POST,
            "/api/v1/boards/c/votes",
            r#"{"member": "m1", "at": "9999-12-31T23:59:59Z"}"#.into(),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_timestamp",
        ),
        (
            Method::POST,
            "/api/v1/votes",
            r#"{"votes": [{"board": "c", "member": "m1", "count": -1}]}"#.into(),
            StatusCode::OK,
            "",
        ),
        (
            Method::POST,
            "/api/v1/admin/boards",
            r#"{"slug": "n", "title": "N", "multiplier": 1e400}"#.into(),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_field",
        ),
        (
            Method::POST,
            "/api/v1/admin/boards",
            r#"{"slug": "n", "title": "N", "multiplier": 1000001}"#.into(),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_number",
        ),
        (
            Method::POST,
            "/api/v1/admin/boards",
            r#"{"slug": "n", "title": "N", "carry_over": 1.5}"#.into(),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_number",
        ),
        (
            Method::POST,
            "/api/v1/admin/boards",
            r#"{"slug": "n", "title": "N", "max_count": 0}"#.into(),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_max_count",
        ),
        (
            Method::POST,
            "/api/v1/admin/boards",
            r#"{"slug": "n", "title": "N", "starts_at": "0001-01-01T00:00:00Z"}"#.into(),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_timestamp",
        ),
        (
            Method::PATCH,
            "/api/v1/admin/boards/c",
            r#"{"max_count": 9223372036854775807}"#.into(),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_max_count",
        ),
        (
            Method::PUT,
            "/api/v1/admin/boards/c/members",
            r#"{"members": [{"id": "m2", "initial_votes": -1}]}"#.into(),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_members",
        ),
        (
            Method::PUT,
            "/api/v1/admin/boards/c/members",
            r#"{"members": [{"id": "m2", "initial_votes": 1e400}]}"#.into(),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_field",
        ),
        (
            Method::PATCH,
            "/api/v1/admin/boards/c/members/m1",
            r#"{"multiplier": -2}"#.into(),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_number",
        ),
        (
            Method::POST,
            "/api/v1/admin/boards/c/rules",
            r#"{"name": "r", "dimensions": ["voter"], "window": "day", "limit": 0}"#.into(),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_limit",
        ),
        (
            Method::POST,
            "/api/v1/admin/boards/c/rules",
            r#"{"name": "r", "dimensions": ["voter"], "window": "rolling:1h", "limit": 100001}"#
                .into(),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_limit",
        ),
        (
            Method::PATCH,
            "/api/v1/admin/boards/c/rules/1",
            r#"{"limit": 1e400}"#.into(),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_field",
        ),
        (
            Method::GET,
            "/api/v1/boards/c/top?limit=0",
            String::new(),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_field",
        ),
        (
            Method::GET,
            "/api/v1/boards/c/top?offset=99999999999999999999",
            String::new(),
            StatusCode::BAD_REQUEST,
            "invalid_query",
        ),
        (
            Method::GET,
            "/api/v1/boards/c/members/m1/around?radius=1000",
            String::new(),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_field",
        ),
        (
            Method::GET,
            "/api/v1/tops?boards=c&limit=-1",
            String::new(),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_field",
        ),
        (
            Method::GET,
            "/api/v1/boards/c/top?period=day&at=10000-01-01",
            String::new(),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_bucket",
        ),
        (
            Method::GET,
            "/api/v1/tops?boards=",
            String::new(),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_field",
        ),
        (
            Method::GET,
            "/api/v1/ranks?board=c&members=,",
            String::new(),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_field",
        ),
    ];
    for (method, path, body, status, expected) in cases {
        let (kind, body) = if method == Method::GET {
            (None, None)
        } else {
            (Some("application/json"), Some(body))
        };
        let (got, answer) = send(
            &app,
            method.clone(),
            path,
            Some(MASTER_KEY),
            kind,
            body.clone(),
        )
        .await;
        assert_eq!(got, status, "{method} {path} {body:?} -> {answer}");
        if expected.is_empty() {
            assert_eq!(
                answer["results"][0]["error"]["code"], "invalid_count",
                "{answer}"
            );
        } else {
            assert_eq!(
                code(&answer),
                Some(expected),
                "{method} {path} {body:?} -> {answer}"
            );
        }
    }
    assert_eq!(snapshot(&app).await, before);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_csv_import_answers_json_errors_and_checks_the_key_before_reading() {
    let app = app_with_board().await;
    let path = "/api/v1/admin/boards/c/members/import";
    let csv = "id,name\nm9,Nine\n".to_owned();
    for (key, kind, body, status, expected) in [
        (
            Some(MASTER_KEY),
            Some("application/json"),
            csv.clone(),
            StatusCode::BAD_REQUEST,
            "unsupported_content_type",
        ),
        (
            Some("not-a-key"),
            Some("text/csv"),
            csv.clone(),
            StatusCode::UNAUTHORIZED,
            "unauthorized",
        ),
        (
            None,
            Some("text/csv"),
            csv.clone(),
            StatusCode::UNAUTHORIZED,
            "unauthorized",
        ),
        (
            Some(MASTER_KEY),
            Some("text/csv"),
            "id,name\n".to_owned() + &"x".repeat(17 * 1024 * 1024),
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
        ),
    ] {
        let (got, answer) = send(&app, Method::POST, path, key, kind, Some(body)).await;
        assert_eq!((got, code(&answer)), (status, Some(expected)), "{answer}");
    }
    let resp = app
        .client
        .post(format!("{}{path}", app.base))
        .bearer_auth(MASTER_KEY)
        .header("Content-Type", "text/csv")
        .body(b"id,name\nm9,N\xff\xfe\n".to_vec())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    let answer: Value = resp.json().await.unwrap();
    assert_eq!(code(&answer), Some("invalid_encoding"));
    let (_, board) = app.get("/api/v1/admin/boards/c").await;
    assert!(!board.to_string().contains("m9"), "nothing imported");

    // A caller without a key is refused before its 16 MiB upload is read: the body below
    // never finishes, and the answer still comes.
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let addr = app.base.trim_start_matches("http://").to_owned();
    let mut conn = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: text/csv\r\nContent-Length: {}\r\n\r\nid,name\n",
        16 * 1024 * 1024
    );
    conn.write_all(head.as_bytes()).await.unwrap();
    let mut answer = vec![0u8; 4096];
    let n = tokio::time::timeout(Duration::from_secs(5), conn.read(&mut answer))
        .await
        .expect("answered without waiting for the body")
        .unwrap();
    let answer = String::from_utf8_lossy(&answer[..n]);
    assert!(answer.starts_with("HTTP/1.1 401"), "{answer}");
    assert!(answer.contains(r#""code":"unauthorized""#), "{answer}");
}

#[tokio::test(flavor = "multi_thread")]
async fn initial_votes_past_two_to_the_53_are_refused_whole() {
    let app = app_with_board().await;
    app.members("c", &["m2", "m3"]).await;
    let (status, body) = app
        .patch("/api/v1/admin/boards/c", json!({"multiplier": 1_000_000}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // 900 votes of 10 at ×1,000,000 put m2 at 9,000,000,000 display votes, close to the
    // bound of 2^53 millionths (9,007,199,254.74 votes).
    for _ in 0..900 {
        let (status, body) = app
            .vote(
                "c",
                json!({"member": "m2", "count": 10, "skip_limits": true}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    let display = |m: &str| {
        let app = app.clone();
        let path = format!("/api/v1/boards/c/members/{m}?period=all");
        async move { num(&app.get(&path).await.1["score"]) }
    };
    assert_eq!(display("m2").await, 9_000_000_000.0);
    let (status, body) = app
        .put(
            "/api/v1/admin/boards/c/members",
            json!({"members": [{"id": "m3", "initial_votes": 7}, {"id": "m2", "initial_votes": 8_000_000}]}),
        )
        .await;
    assert_eq!(
        (status, code(&body)),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("score_overflow")),
        "{body}"
    );
    assert_eq!(
        (display("m2").await, display("m3").await),
        (9_000_000_000.0, 0.0)
    );
    let (status, body) = app
        .put(
            "/api/v1/admin/boards/c/members",
            json!({"members": [{"id": "m3", "initial_votes": 7}, {"id": "m2", "initial_votes": 7_000_000}]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        (display("m2").await, display("m3").await),
        (9_007_000_000.0, 7.0)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_wrong_method_is_405_with_allow_and_an_unknown_path_404() {
    let app = app_with_board().await;
    for (method, path, allow) in [
        (Method::POST, "/api/v1/boards/c/top", "GET"),
        (Method::PUT, "/api/v1/admin/boards/c", "GET, PATCH, DELETE"),
        (Method::GET, "/api/v1/votes", "POST"),
        (Method::DELETE, "/api/v1/admin/api-keys", "GET, POST"),
    ] {
        let resp = app
            .client
            .request(method.clone(), format!("{}{path}", app.base))
            .bearer_auth(MASTER_KEY)
            .send()
            .await
            .unwrap();
        assert_eq!(
            resp.status(),
            StatusCode::METHOD_NOT_ALLOWED,
            "{method} {path}"
        );
        assert_eq!(resp.headers()["allow"], allow, "{method} {path}");
        let body: Value = resp.json().await.unwrap();
        assert_eq!(code(&body), Some("method_not_allowed"));
    }
    let (status, body) = send(
        &app,
        Method::GET,
        "/api/v1/nowhere/at/all",
        Some(MASTER_KEY),
        None,
        None,
    )
    .await;
    assert_eq!(
        (status, code(&body)),
        (StatusCode::NOT_FOUND, Some("route_not_found"))
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_openapi_examples_work_as_sent() {
    let app = TestApp::spawn().await;
    let (_, doc) = app.get("/api/v1/openapi.json").await;
    let example = |schema: &str| doc["components"]["schemas"][schema]["example"].clone();
    for (method, path, schema, status) in [
        (
            Method::POST,
            "/api/v1/admin/boards",
            "BoardRequest",
            StatusCode::CREATED,
        ),
        (
            Method::PUT,
            "/api/v1/admin/boards/stars/members",
            "UpsertMembersRequest",
            StatusCode::OK,
        ),
        (
            Method::POST,
            "/api/v1/admin/boards/stars/rules",
            "RuleRequest",
            StatusCode::CREATED,
        ),
        (
            Method::POST,
            "/api/v1/admin/api-keys",
            "CreateApiKeyRequest",
            StatusCode::CREATED,
        ),
        (
            Method::POST,
            "/api/v1/boards/stars/votes",
            "CastVoteRequest",
            StatusCode::OK,
        ),
        (
            Method::POST,
            "/api/v1/votes",
            "CastVotesRequest",
            StatusCode::OK,
        ),
    ] {
        let body = example(schema);
        assert!(body.is_object(), "{schema} has an example");
        let (got, answer) = app
            .call(method.clone(), path, Some(MASTER_KEY), Some(&body))
            .await;
        assert_eq!(
            got, status,
            "{method} {path} with the {schema} example -> {answer}"
        );
        if let Some(results) = answer["results"].as_array() {
            assert!(results.iter().all(|r| r["ok"] == true), "{answer}");
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn ranks_answer_every_member_and_mark_the_unknown_ones() {
    let app = app_with_board().await;
    app.vote("c", json!({"member": "m1"})).await;
    let (status, body) = app
        .get("/api/v1/ranks?board=c&members=m1,ghost,bad%20id&view=real")
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let members = body["members"].as_array().unwrap();
    assert_eq!(members.len(), 3);
    assert_eq!(
        (members[0]["member"].as_str(), members[0]["rank"].as_i64()),
        (Some("m1"), Some(1))
    );
    assert_eq!(members[1]["member"], "ghost");
    assert_eq!(members[1]["error"]["code"], "member_not_found");
    assert_eq!(members[2]["member"], "bad id");
    assert_eq!(members[2]["error"]["code"], "invalid_member_id");
}
