//! Retries never count twice: a batch answers per item when Redis refuses some items,
//! only calls that did not run are sent again after a lost script cache, and a write
//! Redis did not answer is a 503 "outcome unknown" that a retry with the same key settles.

use ovation::store::redis::RedisTarget;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::harness::{Options, RedisServer, TestApp, num, shared_redis};

/// A connection without a response timeout: `DEBUG SLEEP` answers late on purpose.
async fn redis(url: &str) -> redis::aio::MultiplexedConnection {
    let config = redis::AsyncConnectionConfig::new().set_response_timeout(None);
    redis::Client::open(url)
        .unwrap()
        .get_multiplexed_async_connection_with_config(&config)
        .await
        .unwrap()
}

async fn real_score(app: &TestApp, board: &str, member: &str) -> f64 {
    let (_, m) = app
        .get(&format!(
            "/api/v1/boards/{board}/members/{member}?view=real"
        ))
        .await;
    num(&m["score"])
}

fn outcomes(body: &Value) -> Vec<(bool, Value)> {
    body["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["ok"].as_bool().unwrap(), r["error"]["code"].clone()))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_batch_answers_per_item_when_redis_refuses_one_and_a_retry_counts_nothing_twice() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "broken", "title": "Broken"}))
        .await;
    app.board(json!({"slug": "fine", "title": "Fine"})).await;
    app.members("broken", &["m1"]).await;
    app.members("fine", &["m1"]).await;
    // The first board's all-time scores key holds a string: every vote on it fails in
    // Redis (WRONGTYPE) before the script writes anything.
    let mut conn = redis(&shared_redis().url()).await;
    let _: () = redis::cmd("SET")
        .arg(format!("{}:{{b:1}}:z:r:all:all", app.prefix))
        .arg("not a zset")
        .query_async(&mut conn)
        .await
        .unwrap();
    let batch = json!({"voter": "u1", "votes": [
        {"board": "fine", "member": "m1", "idempotency_key": "a"},
        {"board": "broken", "member": "m1", "idempotency_key": "b"},
        {"board": "fine", "member": "m1", "count": 2, "idempotency_key": "c"},
    ]});
    for round in 0..2 {
        let (status, body) = app.post("/api/v1/votes", batch.clone()).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(
            outcomes(&body),
            vec![
                (true, Value::Null),
                (false, json!("internal_error")),
                (true, Value::Null)
            ],
            "{body}"
        );
        assert_eq!(body["results"][0]["replayed"], json!(round == 1));
        assert_eq!(real_score(&app, "fine", "m1").await, 3.0);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_script_cache_flushed_mid_batch_never_counts_a_vote_twice() {
    let server = RedisServer::start();
    let app = TestApp::spawn_with(Options {
        redis: RedisTarget::Single(server.url()),
        ..Options::default()
    })
    .await;
    app.board(json!({"slug": "flush", "title": "Flush", "membership": "open"}))
        .await;
    let stop = Arc::new(AtomicBool::new(false));
    let flusher = {
        let (stop, url) = (stop.clone(), server.url());
        tokio::spawn(async move {
            let mut conn = redis(&url).await;
            let mut flushes = 0;
            while !stop.load(Ordering::SeqCst) {
                let _: () = redis::cmd("SCRIPT")
                    .arg("FLUSH")
                    .query_async(&mut conn)
                    .await
                    .unwrap();
                flushes += 1;
                tokio::time::sleep(Duration::from_micros(200)).await;
            }
            flushes
        })
    };
    let mut answers = Vec::new();
    for round in 0..30 {
        let votes: Vec<Value> = (0..100)
            .map(|i| json!({"board": "flush", "member": format!("r{round}m{i}")}))
            .collect();
        let (status, body) = app
            .post("/api/v1/votes", json!({"voter": "u", "votes": votes}))
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        answers.push(body);
    }
    stop.store(true, Ordering::SeqCst);
    let flushes = flusher.await.unwrap();
    assert!(
        flushes > 30,
        "the cache was flushed during the batches ({flushes})"
    );
    let (mut counted, mut refused) = (0, 0);
    for (round, body) in answers.iter().enumerate() {
        for (i, result) in body["results"].as_array().unwrap().iter().enumerate() {
            let expected = if result["ok"] == true {
                counted += 1;
                1.0
            } else {
                assert_eq!(result["error"]["code"], "store_unavailable", "{result}");
                refused += 1;
                0.0
            };
            assert_eq!(
                real_score(&app, "flush", &format!("r{round}m{i}")).await,
                expected,
                "round {round} item {i}: {result}"
            );
        }
    }
    assert_eq!(counted + refused, 3000);
    assert!(counted > 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_vote_redis_does_not_answer_is_outcome_unknown_and_its_retry_counts_once() {
    let server = RedisServer::start();
    let app = TestApp::spawn_with(Options {
        redis: RedisTarget::Single(server.url()),
        ..Options::default()
    })
    .await;
    app.board(json!({"slug": "slow", "title": "Slow"})).await;
    app.members("slow", &["m1"]).await;
    let vote = json!({"member": "m1", "idempotency_key": "once"});
    // Warm the script cache, so the vote below is the EVALSHA that Redis runs late.
    let (status, _) = app.vote("slow", json!({"member": "m1"})).await;
    assert_eq!(status, StatusCode::OK);
    let sleeper = {
        let url = server.url();
        tokio::spawn(async move {
            let mut conn = redis(&url).await;
            let _: () = redis::cmd("DEBUG")
                .arg("SLEEP")
                .arg("1.6")
                .query_async(&mut conn)
                .await
                .unwrap();
        })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    let resp = app
        .client
        .post(format!("{}/api/v1/boards/slow/votes", app.base))
        .bearer_auth(crate::harness::MASTER_KEY)
        .json(&vote)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(resp.headers()["Retry-After"], "1");
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["code"], "store_unavailable");
    assert_eq!(body["error"]["outcome"], "unknown");
    sleeper.await.unwrap();
    // Redis ran the vote after its sleep; the retry answers it instead of counting again.
    let (status, body) = app.vote("slow", vote).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["replayed"], true);
    assert_eq!(real_score(&app, "slow", "m1").await, 2.0);
}
