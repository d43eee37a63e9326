//! Health, readiness, the OpenAPI document and the offline docs page.

use reqwest::{Method, StatusCode};

use serde_json::json;

use crate::harness::TestApp;

/// The value of the sample of `name` whose labels include every one of `labels`.
pub(crate) fn sample(text: &str, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    text.lines()
        .filter(|l| l.starts_with(&format!("{name}{{")) || l.starts_with(&format!("{name} ")))
        .find(|l| {
            labels
                .iter()
                .all(|(k, v)| l.contains(&format!("{k}=\"{v}\"")))
        })
        .and_then(|l| l.rsplit(' ').next()?.parse().ok())
}

#[tokio::test(flavor = "multi_thread")]
async fn metrics_count_writes_by_kind_and_outcome_requests_by_route_and_redis_calls() {
    let app = TestApp::spawn().await;
    let board = format!("metrics-{}", app.prefix);
    app.board(json!({"slug": board, "title": "Metrics"})).await;
    app.members(&board, &["m1"]).await;
    let (status, _) = app
        .post(
            &format!("/api/v1/admin/boards/{board}/rules"),
            json!({"name": "three a day", "dimensions": ["voter"], "window": "day", "limit": 3}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED);
    for i in 0..3 {
        let (status, _) = app
            .vote(
                &board,
                json!({"member": "m1", "voter": "u", "idempotency_key": format!("k{i}")}),
            )
            .await;
        assert_eq!(status, StatusCode::OK);
    }
    let (status, _) = app
        .vote(
            &board,
            json!({"member": "m1", "voter": "u", "idempotency_key": "k0"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = app
        .vote(&board, json!({"member": "m1", "voter": "u"}))
        .await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    let (status, _) = app
        .vote(&board, json!({"member": "ghost", "voter": "u"}))
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = app
        .vote("no-such-board-anywhere", json!({"member": "m1"}))
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    // Score writes and league writes count in the same metric, by kind.
    let scores = format!("metric-scores-{}", app.prefix);
    app.board(
        json!({"slug": scores, "title": "Scores", "scoring": "scores", "membership": "open"}),
    )
    .await;
    for key in ["s1", "s1"] {
        let (status, _) = app
            .post(
                &format!("/api/v1/boards/{scores}/scores"),
                json!({"member": "p", "op": "incr", "value": 2, "idempotency_key": key}),
            )
            .await;
        assert_eq!(status, StatusCode::OK);
    }
    let league = format!("metric-league-{}", app.prefix);
    let (status, _) = app
        .post(
            "/api/v1/admin/leagues",
            json!({"slug": league, "title": "L", "tiers": [{"name": "t", "promote": 0, "demote": 0}]}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, _) = app
        .post(
            &format!("/api/v1/leagues/{league}/join"),
            json!({"player": "p"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    for player in ["p", "nobody"] {
        let _ = app
            .post(
                &format!("/api/v1/leagues/{league}/scores"),
                json!({"player": player, "delta": 1}),
            )
            .await;
    }

    let resp = app
        .client
        .get(format!("{}/metrics", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    assert!(
        resp.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/plain")
    );
    let text = resp.text().await.unwrap();
    let votes = |labels: &[(&str, &str)]| {
        let mut all = vec![("kind", "vote"), ("target", board.as_str())];
        all.extend_from_slice(labels);
        sample(&text, "ovation_writes_total", &all)
    };
    assert_eq!(votes(&[("outcome", "accepted")]), Some(3.0));
    assert_eq!(votes(&[("outcome", "replayed")]), Some(1.0));
    assert_eq!(
        votes(&[
            ("outcome", "refused"),
            ("code", "rate_limited"),
            ("rule", "three a day")
        ]),
        Some(1.0)
    );
    assert_eq!(
        votes(&[("outcome", "refused"), ("code", "member_not_found")]),
        Some(1.0)
    );
    assert!(
        !text.contains("no-such-board-anywhere"),
        "unknown boards never become labels"
    );
    assert!(!text.contains("ghost"), "members never become labels");
    let writes = |kind: &str, target: &str, outcome: &str| {
        sample(
            &text,
            "ovation_writes_total",
            &[("kind", kind), ("target", target), ("outcome", outcome)],
        )
    };
    assert_eq!(writes("score", &scores, "accepted"), Some(1.0));
    assert_eq!(writes("score", &scores, "replayed"), Some(1.0));
    assert_eq!(writes("league_join", &league, "accepted"), Some(1.0));
    assert_eq!(writes("league_score", &league, "accepted"), Some(1.0));
    assert_eq!(
        sample(
            &text,
            "ovation_writes_total",
            &[
                ("kind", "league_score"),
                ("target", &league),
                ("code", "not_joined")
            ]
        ),
        Some(1.0)
    );
    let posts = sample(
        &text,
        "ovation_http_requests_total",
        &[
            ("method", "POST"),
            ("route", "/api/v1/boards/{board}/votes"),
            ("status", "200"),
        ],
    );
    assert!(posts.is_some_and(|n| n >= 4.0), "{posts:?}");
    assert!(text.contains(
        r#"ovation_http_request_duration_seconds_bucket{method="POST",route="/api/v1/boards/{board}/votes",le="0.001"}"#
    ));
    let scripts = sample(
        &text,
        "ovation_redis_calls_total",
        &[("op", "vote"), ("outcome", "ok")],
    );
    assert!(scripts.is_some_and(|n| n >= 4.0), "{scripts:?}");
    assert!(sample(&text, "ovation_config_reloads_total", &[("what", "board")]).is_some());
    assert!(text.contains("# HELP ovation_writes_total"));
}

#[tokio::test(flavor = "multi_thread")]
async fn health_and_readiness_answer_without_a_key() {
    let app = TestApp::spawn().await;
    let (status, body) = app.call(Method::GET, "/healthz", None, None).await;
    assert_eq!(
        (status, body["status"].as_str()),
        (StatusCode::OK, Some("ok"))
    );
    let (status, body) = app.call(Method::GET, "/readyz", None, None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        (body["redis"].as_str(), body["sql"].as_str()),
        (Some("ok"), Some("ok"))
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_openapi_document_lists_every_endpoint_and_docs_are_served_offline() {
    let app = TestApp::spawn().await;
    let (status, doc) = app
        .call(Method::GET, "/api/v1/openapi.json", None, None)
        .await;
    assert_eq!(status, StatusCode::OK);
    let paths = doc["paths"].as_object().unwrap();
    for path in [
        "/api/v1/boards/{board}/votes",
        "/api/v1/votes",
        "/api/v1/boards/{board}/top",
        "/api/v1/boards/{board}/members/{member}",
        "/api/v1/boards/{board}/members/{member}/around",
        "/api/v1/ranks",
        "/api/v1/tops",
        "/api/v1/boards/{board}/stats",
        "/api/v1/admin/boards",
        "/api/v1/admin/boards/{board}/members/import",
        "/api/v1/admin/api-keys",
        "/api/v1/admin/boards/{board}/rules",
        "/api/v1/admin/boards/{board}/rules/{id}",
        "/api/v1/boards/{board}/quota",
    ] {
        assert!(
            paths.contains_key(path),
            "{path} missing from the OpenAPI document"
        );
    }
    let refusal = &doc["paths"]["/api/v1/boards/{board}/votes"]["post"]["responses"]["429"];
    assert_eq!(
        refusal["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/RateLimitedBody"
    );
    // Every API operation documents the errors any request can meet, with the error body.
    for (path, item) in paths.iter().filter(|(p, _)| p.starts_with("/api/v1/")) {
        for (method, op) in item.as_object().unwrap() {
            for status in ["400", "401", "403", "404", "503"] {
                assert_eq!(
                    op["responses"][status]["content"]["application/json"]["schema"]["$ref"]
                        .as_str()
                        .map(|r| r.ends_with("Body")),
                    Some(true),
                    "{method} {path} documents {status}"
                );
            }
            if op.get("requestBody").is_some() {
                assert!(op["responses"]["413"].is_object(), "{method} {path} 413");
                assert!(op["responses"]["422"].is_object(), "{method} {path} 422");
            }
        }
    }
    // Every route naming a board that keeps rankings says it takes a family's instance.
    for (path, method) in [
        ("/api/v1/boards/{board}/votes", "post"),
        ("/api/v1/boards/{board}/scores", "post"),
        ("/api/v1/boards/{board}/top", "get"),
        ("/api/v1/boards/{board}/members/{member}", "get"),
        ("/api/v1/boards/{board}/members/{member}/history", "get"),
        ("/api/v1/boards/{board}/members/{member}/around", "get"),
        ("/api/v1/boards/{board}/stats", "get"),
        ("/api/v1/boards/{board}/quota", "get"),
    ] {
        let op = &doc["paths"][path][method];
        let unprocessable = op["responses"]["422"]["description"].as_str().unwrap();
        assert!(
            unprocessable.contains("`instance_required`")
                && unprocessable.contains("`invalid_instance`"),
            "{path}: {unprocessable}"
        );
        let board = op["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == "board")
            .unwrap();
        assert!(
            board["description"]
                .as_str()
                .unwrap()
                .contains("`<family>:<instance>`"),
            "{path}: {board}"
        );
    }
    let vote_503 =
        doc["paths"]["/api/v1/boards/{board}/votes"]["post"]["responses"]["503"]["description"]
            .as_str()
            .unwrap();
    assert!(vote_503.contains("same idempotency key"), "{vote_503}");
    let overview = doc["info"]["description"].as_str().unwrap();
    assert!(overview.contains("idempotency_key_reused"), "{overview}");
    assert!(overview.contains("outcome"), "{overview}");
    let resp = app
        .client
        .get(format!("{}/docs/", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    assert!(resp.text().await.unwrap().contains("swagger-ui"));
}

#[tokio::test(flavor = "multi_thread")]
async fn browsers_on_listed_origins_may_read_the_public_api_and_no_others() {
    let app = TestApp::spawn_with(crate::harness::Options {
        cors_origins: vec!["https://shop.example".to_owned()],
        ..crate::harness::Options::default()
    })
    .await;
    app.board(json!({"slug": "pub", "title": "Pub", "public_page": true}))
        .await;
    let preflight = |origin: &'static str, method: &'static str, path: &'static str| {
        let req = app
            .client
            .request(Method::OPTIONS, format!("{}{path}", app.base))
            .header("Origin", origin)
            .header("Access-Control-Request-Method", method)
            .header(
                "Access-Control-Request-Headers",
                "authorization, last-event-id",
            );
        async move { req.send().await.unwrap() }
    };
    let ok = preflight("https://shop.example", "GET", "/api/v1/boards/pub/top").await;
    assert!(ok.status().is_success(), "{}", ok.status());
    let h = ok.headers();
    assert_eq!(h["access-control-allow-origin"], "https://shop.example");
    assert!(
        h["access-control-allow-methods"]
            .to_str()
            .unwrap()
            .contains("GET")
    );
    assert!(
        h["access-control-allow-headers"]
            .to_str()
            .unwrap()
            .to_lowercase()
            .contains("authorization")
    );
    // A live stream resuming from another origin sends Last-Event-ID.
    let resume = preflight("https://shop.example", "GET", "/api/v1/boards/pub/events").await;
    assert!(resume.status().is_success(), "{}", resume.status());
    assert!(
        resume.headers()["access-control-allow-headers"]
            .to_str()
            .unwrap()
            .to_lowercase()
            .contains("last-event-id")
    );
    assert_eq!(h["access-control-max-age"], "3600");
    // Reads carry the header for that origin only.
    let read = |origin: &'static str| {
        let req = app
            .client
            .get(format!("{}/api/v1/boards/pub/top", app.base))
            .header("Origin", origin);
        async move { req.send().await.unwrap() }
    };
    let listed = read("https://shop.example").await;
    assert_eq!(listed.status(), StatusCode::OK);
    assert_eq!(
        listed.headers()["access-control-allow-origin"],
        "https://shop.example"
    );
    let other = read("https://evil.example").await;
    assert_eq!(
        other.status(),
        StatusCode::OK,
        "served, as to any non-browser client"
    );
    assert!(other.headers().get("access-control-allow-origin").is_none());
    // Votes are offered only to the board's own embed origins (none here): the
    // preflight is answered without CORS headers, which browsers take as a refusal.
    let write = preflight("https://shop.example", "POST", "/api/v1/boards/pub/votes").await;
    assert_eq!(
        write.status(),
        StatusCode::NO_CONTENT,
        "{:?}",
        write.headers()
    );
    assert!(write.headers().get("access-control-allow-origin").is_none());
    assert!(
        write
            .headers()
            .get("access-control-allow-methods")
            .is_none()
    );
    // Without OVATION_CORS_ORIGINS, no CORS at all.
    let plain = TestApp::spawn().await;
    let resp = plain
        .client
        .get(format!("{}/healthz", plain.base))
        .header("Origin", "https://shop.example")
        .send()
        .await
        .unwrap();
    assert!(resp.headers().get("access-control-allow-origin").is_none());
}
