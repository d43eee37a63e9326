//! Configuration changes made through one instance reach another sharing Redis and SQL.

use ovation::store::redis::RedisTarget;
use std::sync::Arc;
use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::harness::{Options, Proxy, ProxyMode, TestApp, shared_redis};

#[tokio::test(flavor = "multi_thread")]
async fn a_change_on_one_instance_is_seen_by_another_within_a_second() {
    let first = TestApp::spawn().await;
    let second = TestApp::spawn_with(Options {
        redis: RedisTarget::Single(shared_redis().url()),
        prefix: first.prefix.clone(),
        database: Some(Arc::clone(&first.database)),
        ..Options::default()
    })
    .await;

    first.board(json!({"slug": "sync", "title": "Sync"})).await;
    first.members("sync", &["m1"]).await;
    let key = first.key(&["vote"], None).await;

    let started = Instant::now();
    loop {
        let (status, _) = second
            .call(
                Method::POST,
                "/api/v1/boards/sync/votes",
                Some(&key),
                Some(&json!({"member": "m1"})),
            )
            .await;
        if status == StatusCode::OK {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "second instance still answers {status}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    first
        .patch("/api/v1/admin/boards/sync", json!({"title": "Renamed"}))
        .await;
    let started = Instant::now();
    loop {
        let (_, board) = second.get("/api/v1/admin/boards/sync").await;
        if board["title"] == "Renamed" {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "second instance still shows {}",
            board["title"]
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let (_, m) = first.get("/api/v1/boards/sync/members/m1?view=real").await;
    assert_eq!(
        m["score"], 1,
        "the vote through the second instance counts on the shared board"
    );
}

/// Two instances sharing SQL and key prefix, reaching Redis at `first_redis` and
/// `second_redis`, each checking the configuration version and its notices every `check`.
async fn two_instances(
    first_redis: String,
    second_redis: String,
    check: Duration,
) -> (TestApp, TestApp) {
    let first = TestApp::spawn_with(Options {
        redis: RedisTarget::Single(first_redis),
        config_check: check,
        ..Options::default()
    })
    .await;
    let second = TestApp::spawn_with(Options {
        redis: RedisTarget::Single(second_redis),
        prefix: first.prefix.clone(),
        database: Some(Arc::clone(&first.database)),
        config_check: check,
        ..Options::default()
    })
    .await;
    (first, second)
}

/// Creates a board and a vote key on `first`, and waits until `second` accepts the key.
async fn key_seen_by_both(first: &TestApp, second: &TestApp) -> (String, i64) {
    first.board(json!({"slug": "sync", "title": "Sync"})).await;
    first.members("sync", &["m1"]).await;
    let (status, created) = first
        .post(
            "/api/v1/admin/api-keys",
            json!({"name": "partner", "scopes": ["vote"]}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let key = created["key"].as_str().unwrap().to_owned();
    wait_for_status(second, &key, StatusCode::OK, Duration::from_secs(5)).await;
    (key, created["id"].as_i64().unwrap())
}

/// Votes through `app` with `key` until the answer has `status`, failing after `within`.
async fn wait_for_status(app: &TestApp, key: &str, status: StatusCode, within: Duration) {
    let started = Instant::now();
    loop {
        let (got, body) = app
            .call(
                Method::POST,
                "/api/v1/boards/sync/votes",
                Some(key),
                Some(&json!({"member": "m1"})),
            )
            .await;
        if got == status {
            return;
        }
        assert!(
            started.elapsed() < within,
            "still {got} after {within:?}, want {status}: {body}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_silent_notice_connection_cannot_keep_a_revoked_key_alive() {
    let proxy = Proxy::start(shared_redis().port).await;
    let (first, second) =
        two_instances(shared_redis().url(), proxy.url(), Duration::from_secs(2)).await;
    let (key, id) = key_seen_by_both(&first, &second).await;
    // The second instance's pub/sub connection stays open but carries nothing more.
    proxy.set(ProxyMode::SilenceSubscribers);
    let (status, body) = first.delete(&format!("/api/v1/admin/api-keys/{id}")).await;
    assert!(status.is_success(), "{body}");
    wait_for_status(
        &second,
        &key,
        StatusCode::UNAUTHORIZED,
        Duration::from_secs(8),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_announce_redis_did_not_take_is_retried_until_every_instance_hears_it() {
    let proxy = Proxy::start(shared_redis().port).await;
    // No periodic check runs during the test: the version the announce counts is what
    // shows the change reached Redis.
    let (first, second) =
        two_instances(proxy.url(), shared_redis().url(), Duration::from_secs(120)).await;
    let (key, id) = key_seen_by_both(&first, &second).await;
    let mut raw = redis::Client::open(shared_redis().url())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let version_key = format!("{}:config:version", first.prefix);
    let version = |raw: &mut redis::aio::MultiplexedConnection| {
        let mut raw = raw.clone();
        let key = version_key.clone();
        async move {
            redis::cmd("GET")
                .arg(key)
                .query_async::<Option<i64>>(&mut raw)
                .await
                .unwrap()
                .unwrap_or(0)
        }
    };
    let before = version(&mut raw).await;
    // The first instance cannot reach Redis while it revokes the key.
    proxy.set(ProxyMode::Down);
    let (status, body) = first.delete(&format!("/api/v1/admin/api-keys/{id}")).await;
    assert!(status.is_success(), "{body}");
    let (status, _) = first
        .call(
            Method::POST,
            "/api/v1/boards/sync/votes",
            Some(&key),
            Some(&json!({"member": "m1"})),
        )
        .await;
    assert_eq!(
        status,
        StatusCode::UNAUTHORIZED,
        "revoked at once where it was made"
    );
    // The announce waits in the first instance's retry: Redis has not counted it.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(version(&mut raw).await, before);
    proxy.set(ProxyMode::Forward);
    wait_for_status(
        &second,
        &key,
        StatusCode::UNAUTHORIZED,
        Duration::from_secs(10),
    )
    .await;
    let started = Instant::now();
    while version(&mut raw).await != before + 1 {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the retried announce never landed"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn three_instances_started_together_on_an_empty_database_all_come_up_on_one_schema() {
    let database = Arc::new(crate::harness::TestDatabase::create().await);
    let prefix = format!("mig{}", std::process::id());
    let apps = futures_util::future::join_all((0..3).map(|_| {
        TestApp::spawn_with(Options {
            prefix: prefix.clone(),
            database: Some(Arc::clone(&database)),
            ..Options::default()
        })
    }))
    .await;
    for app in &apps {
        let (status, ready) = app.get("/readyz").await;
        assert_eq!(status, StatusCode::OK, "{ready}");
    }
    apps[0]
        .board(json!({"slug": "together", "title": "Together"}))
        .await;
    // The others hear of the board through the change notice, within a second.
    for app in &apps[1..] {
        let started = Instant::now();
        loop {
            let (status, board) = app.get("/api/v1/admin/boards/together").await;
            if status == StatusCode::OK {
                assert_eq!(board["title"], "Together");
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(2),
                "another instance still answers {status} for the board"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    // Each migration applied once.
    let db = sea_orm::Database::connect(&database.url).await.unwrap();
    use sea_orm::ConnectionTrait;
    let rows = db
        .query_all_raw(sea_orm::Statement::from_string(
            db.get_database_backend(),
            "SELECT version FROM seaql_migrations",
        ))
        .await
        .unwrap();
    use migrations::MigratorTrait;
    assert_eq!(rows.len(), migrations::Migrator::migrations().len());
}
