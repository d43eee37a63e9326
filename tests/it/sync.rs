//! Configuration changes made through one instance reach another sharing Redis and SQL.

use std::sync::Arc;
use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::harness::{Options, TestApp, shared_redis};

#[tokio::test(flavor = "multi_thread")]
async fn a_change_on_one_instance_is_seen_by_another_within_a_second() {
    let first = TestApp::spawn().await;
    let second = TestApp::spawn_with(Options {
        redis_url: shared_redis().url(),
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
