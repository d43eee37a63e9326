//! Bad input gets a precise error and changes nothing; Redis outages answer 503 quickly
//! and heal without a restart.

use ovation::store::redis::RedisTarget;
use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::harness::{Options, RawRedis, RedisServer, TestApp, num};

async fn raw_post(app: &TestApp, path: &str, body: &'static str) -> (StatusCode, Value) {
    let resp = app
        .client
        .post(format!("{}{path}", app.base))
        .bearer_auth(crate::harness::MASTER_KEY)
        .header("Content-Type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    (resp.status(), resp.json().await.unwrap())
}

async fn closed_board(app: &TestApp) {
    app.board(json!({"slug": "f", "title": "F", "max_count": 10}))
        .await;
    app.members("f", &["m1"]).await;
}

async fn real_score(app: &TestApp) -> f64 {
    let (_, m) = app.get("/api/v1/boards/f/members/m1?view=real").await;
    num(&m["score"])
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_votes_are_refused_with_stable_codes_and_count_nothing() {
    let app = TestApp::spawn().await;
    closed_board(&app).await;
    let (status, body) = raw_post(&app, "/api/v1/boards/f/votes", "{\"member\": ").await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("malformed_json"))
    );

    let long = "m".repeat(65);
    for (board, body, status, code) in [
        (
            "nope",
            json!({"member": "m1"}),
            StatusCode::NOT_FOUND,
            "board_not_found",
        ),
        (
            "f",
            json!({"member": "ghost"}),
            StatusCode::NOT_FOUND,
            "member_not_found",
        ),
        (
            "f",
            json!({"member": "m1", "count": 0}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_count",
        ),
        (
            "f",
            json!({"member": "m1", "count": -5}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_count",
        ),
        (
            "f",
            json!({"member": "m1", "count": 11}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_count",
        ),
        (
            "f",
            json!({"member": "m1", "count": 1e300}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_field",
        ),
        (
            "f",
            json!({"member": "m1", "count": "1"}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_field",
        ),
        (
            "f",
            json!({"member": long}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_member_id",
        ),
        (
            "f",
            json!({"member": "m 1"}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_member_id",
        ),
        (
            "f",
            json!({"member": "m1", "at": "yesterday"}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_timestamp",
        ),
        (
            "f",
            json!({"member": "m1", "at": "2999-01-01T00:00:00Z"}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_timestamp",
        ),
        (
            "f",
            json!({"member": "m1", "voter": "a\u{7}b"}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_voter",
        ),
        (
            "f",
            json!({"member": "m1", "channel": "a b"}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_channel",
        ),
        (
            "f",
            json!({"member": "m1", "extra": 1}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_field",
        ),
    ] {
        let (got, resp) = app.vote(board, body.clone()).await;
        assert_eq!(
            (got, resp["error"]["code"].as_str()),
            (status, Some(code)),
            "{body} -> {resp}"
        );
        assert!(
            resp["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty())
        );
    }
    assert_eq!(real_score(&app).await, 0.0);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_oversized_batch_counts_nothing() {
    let app = TestApp::spawn().await;
    closed_board(&app).await;
    let votes: Vec<Value> = (0..101)
        .map(|_| json!({"board": "f", "member": "m1"}))
        .collect();
    let (status, body) = app.post("/api/v1/votes", json!({"votes": votes})).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::PAYLOAD_TOO_LARGE, Some("batch_too_large"))
    );
    let (status, body) = app.post("/api/v1/votes", json!({"votes": []})).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("empty_batch"))
    );
    assert_eq!(real_score(&app).await, 0.0);
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_read_parameters_are_refused() {
    let app = TestApp::spawn().await;
    closed_board(&app).await;
    for (path, status, code) in [
        (
            "/api/v1/boards/f/top?period=year",
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_period",
        ),
        (
            "/api/v1/boards/f/top?period=day&at=soon",
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_bucket",
        ),
        (
            "/api/v1/boards/f/top?period=week&at=2021-W53",
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_bucket",
        ),
        (
            "/api/v1/boards/f/top?limit=1001",
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_field",
        ),
        (
            "/api/v1/boards/f/top?limit=ten",
            StatusCode::BAD_REQUEST,
            "invalid_query",
        ),
        (
            "/api/v1/boards/f/top?view=fake",
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_view",
        ),
        (
            "/api/v1/boards/f/members/ghost",
            StatusCode::NOT_FOUND,
            "member_not_found",
        ),
        (
            "/api/v1/boards/nope/top",
            StatusCode::NOT_FOUND,
            "board_not_found",
        ),
        ("/api/v1/nowhere", StatusCode::NOT_FOUND, "route_not_found"),
    ] {
        let (got, body) = app.get(path).await;
        assert_eq!(
            (got, body["error"]["code"].as_str()),
            (status, Some(code)),
            "{path} -> {body}"
        );
    }
    app.patch("/api/v1/admin/boards/f", json!({"periods": ["all"]}))
        .await;
    let (status, body) = app.get("/api/v1/boards/f/top?period=day").await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("period_not_enabled"))
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn far_future_buckets_and_huge_pages_are_refused_anonymously_on_public_boards() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "pub", "title": "Pub", "public_page": true}))
        .await;
    app.members("pub", &["m1"]).await;
    let reads = [
        "/api/v1/boards/pub/top?",
        "/api/v1/boards/pub/members/m1?",
        "/api/v1/boards/pub/members/m1/around?",
        "/api/v1/boards/pub/stats?",
        "/api/v1/ranks?board=pub&members=m1&",
        "/api/v1/tops?boards=pub&",
    ];
    for read in reads {
        for at in [
            "period=month&at=262142-12",
            "period=week&at=262142-W52",
            "period=day&at=262142-12-31",
            "period=hour&at=262142-12-31T05",
            "period=month&at=9999-12",
            "period=day&at=1969-12-31",
            "period=day&at=1969-12-31T23:00:00Z",
        ] {
            let path = format!("{read}{at}");
            let (status, body) = app.call(Method::GET, &path, None, None).await;
            assert_eq!(
                (status, body["error"]["code"].as_str()),
                (StatusCode::UNPROCESSABLE_ENTITY, Some("invalid_bucket")),
                "{path} -> {body}"
            );
        }
    }
    let (status, body) = app
        .call(
            Method::GET,
            "/api/v1/boards/pub/top?period=day&at=9999-12-30",
            None,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["resets_at"], "9999-12-31T00:00:00Z");

    for (path, field) in [
        (
            "/api/v1/boards/pub/top?offset=9223372036854775000",
            "offset",
        ),
        ("/api/v1/boards/pub/top?offset=1000000001", "offset"),
        ("/api/v1/boards/pub/top?offset=-1", "offset"),
        ("/api/v1/boards/pub/top?limit=0", "limit"),
        ("/api/v1/boards/pub/top?limit=9223372036854775000", "limit"),
        ("/api/v1/tops?boards=pub&limit=1001", "limit"),
        ("/api/v1/boards/pub/members/m1/around?radius=101", "radius"),
        (
            "/api/v1/boards/pub/members/m1/around?radius=-9223372036854775000",
            "radius",
        ),
    ] {
        let (status, body) = app.call(Method::GET, path, None, None).await;
        assert_eq!(
            (
                status,
                body["error"]["code"].as_str(),
                body["error"]["field"].as_str()
            ),
            (
                StatusCode::UNPROCESSABLE_ENTITY,
                Some("invalid_field"),
                Some(field)
            ),
            "{path} -> {body}"
        );
    }
    let (status, body) = app
        .call(
            Method::GET,
            "/api/v1/boards/pub/top?offset=1000000000",
            None,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["entries"], json!([]));
}

#[tokio::test(flavor = "multi_thread")]
async fn votes_need_a_key_with_the_right_scopes() {
    let app = TestApp::spawn().await;
    closed_board(&app).await;
    let body = json!({"member": "m1"});
    let (status, resp) = app
        .call(Method::POST, "/api/v1/boards/f/votes", None, Some(&body))
        .await;
    assert_eq!(
        (status, resp["error"]["code"].as_str()),
        (StatusCode::UNAUTHORIZED, Some("unauthorized"))
    );
    let (status, resp) = app
        .call(
            Method::POST,
            "/api/v1/boards/f/votes",
            Some("ovk_wrong"),
            Some(&body),
        )
        .await;
    assert_eq!(
        (status, resp["error"]["code"].as_str()),
        (StatusCode::UNAUTHORIZED, Some("unauthorized"))
    );
    let reader = app.key(&["read"], None).await;
    let (status, resp) = app
        .call(
            Method::POST,
            "/api/v1/boards/f/votes",
            Some(&reader),
            Some(&body),
        )
        .await;
    assert_eq!(
        (status, resp["error"]["code"].as_str()),
        (StatusCode::FORBIDDEN, Some("forbidden"))
    );
    let voter = app.key(&["vote"], None).await;
    let backfill = json!({"member": "m1", "at": "2026-01-01T00:00:00Z"});
    let (status, resp) = app
        .call(
            Method::POST,
            "/api/v1/boards/f/votes",
            Some(&voter),
            Some(&backfill),
        )
        .await;
    assert_eq!(
        (status, resp["error"]["code"].as_str()),
        (StatusCode::FORBIDDEN, Some("forbidden"))
    );
    let (status, _) = app
        .call(
            Method::POST,
            "/api/v1/boards/f/votes",
            Some(&voter),
            Some(&body),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(real_score(&app).await, 1.0);
}

#[tokio::test(flavor = "multi_thread")]
async fn votes_outside_the_campaign_window_are_refused() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "w", "title": "W", "membership": "open",
        "starts_at": "2026-01-01T00:00:00Z", "ends_at": "2026-02-01T00:00:00Z"}))
        .await;
    let (status, body) = app
        .vote("w", json!({"member": "m", "at": "2025-12-31T23:59:59Z"}))
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::CONFLICT, Some("campaign_not_started"))
    );
    let (status, body) = app.vote("w", json!({"member": "m"})).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::CONFLICT, Some("campaign_ended"))
    );
    let (status, _) = app
        .vote("w", json!({"member": "m", "at": "2026-01-15T00:00:00Z"}))
        .await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread")]
async fn scores_past_two_to_the_53_are_refused_whole() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "big", "title": "Big", "multiplier": 1000000, "max_count": 1000000}))
        .await;
    app.put(
        "/api/v1/admin/boards/big/members",
        json!({"members": [{"id": "m1", "initial_votes": 1000000000}]}),
    )
    .await;
    // Display units: 1e9 initial votes = 1e15; each vote of 1e6 × 1e6 adds 1e18.
    let (status, body) = app
        .vote("big", json!({"member": "m1", "count": 1000000}))
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("score_overflow"))
    );
    let (_, m) = app
        .get("/api/v1/boards/big/members/m1?period=day&view=real")
        .await;
    assert_eq!(m["rank"], json!(null), "nothing was written");
}

/// The value of the one board's headroom mark under `prefix`, if it has one.
async fn headroom_mark(raw: &mut RawRedis, prefix: &str) -> Option<String> {
    let keys = raw.keys(&format!("{prefix}:{{b:*}}:headroom")).await;
    match keys.first() {
        Some(key) => raw.query(redis::cmd("GET").arg(key)).await,
        None => None,
    }
}

/// Votes below 10^15 units each skip the 2^53 check while every all-time score is below
/// 10^15 (the board's headroom mark); once a score reaches 10^15 the check is back, so a
/// member climbing by ordinary votes is still refused exactly where it would pass 2^53.
/// Initial votes remove the mark, so the next vote looks at the leaders again.
#[tokio::test(flavor = "multi_thread")]
async fn scores_climbing_to_two_to_the_53_by_ordinary_votes_are_refused_whole() {
    let app = TestApp::spawn().await;
    app.board(
        json!({"slug": "climb", "title": "Climb", "multiplier": 1000000,
        "max_count": 1000, "membership": "open"}),
    )
    .await;
    let mut raw = RawRedis::connect().await;
    let display = |m: &str| {
        let app = app.clone();
        let path = format!("/api/v1/boards/climb/members/{m}?period=all");
        async move { num(&app.get(&path).await.1["score"]) }
    };
    // 999 × 10^6 × 10^6 = 9.99 × 10^14 display units a vote: 15 digits.
    let vote = json!({"member": "m1", "count": 999});
    let (status, body) = app.vote("climb", vote.clone()).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        headroom_mark(&mut raw, &app.prefix).await.as_deref(),
        Some("1")
    );
    for n in 2..=9 {
        let (status, body) = app.vote("climb", vote.clone()).await;
        assert_eq!(status, StatusCode::OK, "vote {n}: {body}");
        assert_eq!(
            headroom_mark(&mut raw, &app.prefix).await.as_deref(),
            Some("0"),
            "vote {n}"
        );
    }
    assert_eq!(display("m1").await, 8_991_000_000.0);
    // 8.991 × 10^15 + 9.99 × 10^14 passes 2^53 (9.007 × 10^15).
    let (status, body) = app.vote("climb", vote.clone()).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("score_overflow")),
        "{body}"
    );
    assert_eq!(display("m1").await, 8_991_000_000.0);

    let (status, body) = app
        .put(
            "/api/v1/admin/boards/climb/members",
            json!({"members": [{"id": "m2", "initial_votes": 5}]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        headroom_mark(&mut raw, &app.prefix).await,
        None,
        "initial votes remove the mark"
    );
    let (status, body) = app.vote("climb", json!({"member": "m2", "count": 1})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        headroom_mark(&mut raw, &app.prefix).await.as_deref(),
        Some("0"),
        "the next vote looked at the leaders again"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn redis_down_answers_503_quickly_and_heals_after_an_empty_restart() {
    let mut redis = RedisServer::start();
    let port = redis.port;
    let app = TestApp::spawn_with(Options {
        redis: RedisTarget::Single(redis.url()),
        prefix: "down".into(),
        ..Options::default()
    })
    .await;
    closed_board(&app).await;
    let (status, _) = app.vote("f", json!({"member": "m1"})).await;
    assert_eq!(status, StatusCode::OK);

    redis.stop();
    for _ in 0..3 {
        let started = Instant::now();
        let (status, body) = app.vote("f", json!({"member": "m1"})).await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (StatusCode::SERVICE_UNAVAILABLE, Some("store_unavailable"))
        );
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "took {:?}",
            started.elapsed()
        );
    }
    let (status, _) = app.get("/api/v1/boards/f/top").await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    let (status, ready) = app.call(Method::GET, "/readyz", None, None).await;
    assert_eq!(
        (status, ready["redis"].as_str()),
        (StatusCode::SERVICE_UNAVAILABLE, Some("unavailable"))
    );

    // Back, empty: no data, no cached scripts.
    let _redis = RedisServer::start_on(port);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (status, body) = app.vote("f", json!({"member": "m1"})).await;
        if status == StatusCode::OK {
            assert_eq!(
                body["scores"][4]["real"], 1,
                "the restarted Redis started empty: {body}"
            );
            break;
        }
        assert!(
            Instant::now() < deadline,
            "did not recover: {status} {body}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (status, _) = app.call(Method::GET, "/readyz", None, None).await;
    assert_eq!(status, StatusCode::OK);
}
