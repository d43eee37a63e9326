//! A Redis that can lose votes is visible: an evicting policy makes the instance not
//! ready, a Redis that came back empty is noticed, counted and reconciled, and admin
//! changes whose Redis step failed are finished later from what SQL holds.

use ovation::store::redis::RedisTarget;
use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::harness::{Options, Proxy, ProxyMode, RedisServer, TestApp, num};

pub(crate) async fn redis(url: &str) -> redis::aio::MultiplexedConnection {
    redis::Client::open(url)
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap()
}

pub(crate) async fn readyz(app: &TestApp) -> (StatusCode, Value) {
    app.call(Method::GET, "/readyz", None, None).await
}

/// Polls `check` every 100 ms until it holds, failing after `within`.
pub(crate) async fn eventually<F, Fut>(within: Duration, what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let started = Instant::now();
    while !check().await {
        assert!(started.elapsed() < within, "{what}: not within {within:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// An app on a `redis-server` of its own, which it checks for a loss every 200 ms (keep
/// the server: dropping it stops Redis).
pub(crate) async fn app_on_own_redis() -> (RedisServer, TestApp) {
    let server = RedisServer::start();
    let app = TestApp::spawn_with(Options {
        redis: RedisTarget::Single(server.url()),
        config_check: Duration::from_millis(200),
        ..Options::default()
    })
    .await;
    (server, app)
}

/// Empties `server` as a Redis that lost its data and waits (20 s at most) until `app`
/// has found the loss, rebuilt its boards from their ledgers and is ready again.
pub(crate) async fn lose_redis_and_wait_rebuilt(app: &TestApp, server: &RedisServer) {
    let mut conn = redis(&server.url()).await;
    let _: () = redis::cmd("FLUSHALL").query_async(&mut conn).await.unwrap();
    eventually(Duration::from_secs(20), "rebuilt and ready", || {
        let app = app.clone();
        async move {
            let (status, body) = readyz(&app).await;
            status == StatusCode::OK
                && body["redis_durability"]["reset_at"].is_string()
                && body["ledger"]["rebuild"].is_null()
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_evicting_redis_is_not_ready_and_readiness_names_the_persistence() {
    let server = RedisServer::start();
    let app = TestApp::spawn_with(Options {
        redis: RedisTarget::Single(server.url()),
        ..Options::default()
    })
    .await;
    let (status, body) = readyz(&app).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["redis"], "ok");
    assert_eq!(body["redis_durability"]["maxmemory_policy"], "noeviction");
    assert_eq!(body["redis_durability"]["persistence"], "none");
    assert_eq!(body["redis_durability"]["reset_at"], Value::Null);

    let mut conn = redis(&server.url()).await;
    for policy in ["allkeys-lru", "volatile-ttl"] {
        let _: () = redis::cmd("CONFIG")
            .arg("SET")
            .arg("maxmemory-policy")
            .arg(policy)
            .query_async(&mut conn)
            .await
            .unwrap();
        let (status, body) = readyz(&app).await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
        assert_eq!(body["redis"], "evicting");
        assert!(body["message"].as_str().unwrap().contains(policy), "{body}");
    }
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory-policy")
        .arg("noeviction")
        .query_async(&mut conn)
        .await
        .unwrap();
    assert_eq!(readyz(&app).await.0, StatusCode::OK);

    // A Redis with an append-only file says so.
    let dir = tempfile::tempdir().unwrap();
    let durable = RedisServer::start_durable(crate::harness::free_port(), dir.path());
    let app = TestApp::spawn_with(Options {
        redis: RedisTarget::Single(durable.url()),
        ..Options::default()
    })
    .await;
    let (status, body) = readyz(&app).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["redis_durability"]["persistence"], "aof");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_redis_that_comes_back_empty_is_noticed_counted_and_reconciled() {
    let (server, app) = app_on_own_redis().await;
    // Without a ledger: its votes are lost with Redis (see ledger.rs for a board with one).
    app.board(json!({"slug": "reset", "title": "Reset", "ledger": false}))
        .await;
    let (status, _) = app
        .put(
            "/api/v1/admin/boards/reset/members",
            json!({"members": [{"id": "m1", "initial_votes": 5}]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    app.vote("reset", json!({"member": "m1"})).await;
    let display = || {
        let app = app.clone();
        async move {
            num(&app
                .get("/api/v1/boards/reset/members/m1?period=all")
                .await
                .1["score"])
        }
    };
    assert_eq!(display().await, 6.0);
    // Wait until the instance has set its marker (it does so at start-up).
    let mut conn = redis(&server.url()).await;
    let marker = format!("{}:marker", app.prefix);
    eventually(Duration::from_secs(5), "marker set", || {
        let (mut conn, marker) = (conn.clone(), marker.clone());
        async move {
            redis::cmd("EXISTS")
                .arg(marker)
                .query_async::<bool>(&mut conn)
                .await
                .unwrap()
        }
    })
    .await;

    let _: () = redis::cmd("FLUSHALL").query_async(&mut conn).await.unwrap();
    // The vote is gone for good; the initial votes SQL holds come back.
    eventually(
        Duration::from_secs(5),
        "initial votes applied again",
        || {
            let display = display();
            async move { display.await == 5.0 }
        },
    )
    .await;
    // The reset is noticed at the next marker check; a configuration reload may have
    // brought the initial votes back a moment before.
    eventually(Duration::from_secs(5), "the reset noticed", || {
        let app = app.clone();
        async move {
            let (status, body) = readyz(&app).await;
            status == StatusCode::OK && body["redis_durability"]["reset_at"].is_string()
        }
    })
    .await;
    let metrics = app.metrics().await;
    let resets = metrics
        .lines()
        .find_map(|l| l.strip_prefix("ovation_redis_resets_total "))
        .and_then(|v| v.parse::<f64>().ok());
    assert!(resets.is_some_and(|n| n >= 1.0), "{resets:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_member_deleted_while_redis_is_away_leaves_redis_when_it_returns() {
    let server = RedisServer::start();
    let proxy = Proxy::start(server.port).await;
    let app = TestApp::spawn_with(Options {
        redis: RedisTarget::Single(proxy.url()),
        ..Options::default()
    })
    .await;
    app.board(json!({"slug": "gone", "title": "Gone"})).await;
    app.members("gone", &["m1", "m2"]).await;
    for member in ["m1", "m1", "m2"] {
        let (status, _) = app.vote("gone", json!({"member": member})).await;
        assert_eq!(status, StatusCode::OK);
    }
    proxy.set(ProxyMode::Down);
    let (status, body) = app.delete("/api/v1/admin/boards/gone/members/m1").await;
    assert!(status.is_success(), "SQL takes the delete: {body}");
    let (_, board) = app.get("/api/v1/admin/boards/gone").await;
    let ids: Vec<&str> = board["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, vec!["m2"]);
    proxy.set(ProxyMode::Forward);
    // The removal waited in SQL and is finished in the background.
    let mut conn = redis(&server.url()).await;
    let all = format!("{}:{{b:1}}:z:r:all:all", app.prefix);
    eventually(Duration::from_secs(10), "m1 left redis", || {
        let (mut conn, all) = (conn.clone(), all.clone());
        async move {
            redis::cmd("ZSCORE")
                .arg(all)
                .arg("m1")
                .query_async::<Option<f64>>(&mut conn)
                .await
                .unwrap()
                .is_none()
        }
    })
    .await;
    let m2: Option<f64> = redis::cmd("ZSCORE")
        .arg(&all)
        .arg("m2")
        .query_async(&mut conn)
        .await
        .unwrap();
    assert_eq!(m2, Some(1.0), "the other member keeps its score");
}

#[tokio::test(flavor = "multi_thread")]
async fn start_up_brings_redis_to_what_sql_holds() {
    let first = TestApp::spawn().await;
    first.board(json!({"slug": "boot", "title": "Boot"})).await;
    let (status, _) = first
        .put(
            "/api/v1/admin/boards/boot/members",
            json!({"members": [{"id": "m1", "initial_votes": 7}, {"id": "m2", "initial_votes": 3}]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    // A second instance on the same SQL but a Redis namespace with nothing in it, as
    // after a Redis lost while every instance was down.
    let second = TestApp::spawn_with(Options {
        database: Some(std::sync::Arc::clone(&first.database)),
        ..Options::default()
    })
    .await;
    eventually(
        Duration::from_secs(5),
        "initial votes applied at start-up",
        || {
            let second = second.clone();
            async move {
                let (_, top) = second.get("/api/v1/boards/boot/top?period=all").await;
                top["entries"]
                    == json!([
                        {"rank": 1, "member": "m1", "name": "m1", "image_url": null, "score": 7},
                        {"rank": 2, "member": "m2", "name": "m2", "image_url": null, "score": 3}
                    ])
            }
        },
    )
    .await;
}
