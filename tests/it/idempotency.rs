//! Idempotency keys belong to the caller and the board, remember the request they came
//! with, and replay the first answer exactly.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::harness::{MASTER_KEY, TestApp, num};

/// Posts a vote and answers the status, the `Idempotent-Replayed` header and the raw body.
async fn vote_raw(
    app: &TestApp,
    key: &str,
    board: &str,
    body: Value,
) -> (StatusCode, bool, String) {
    let resp = app
        .client
        .post(format!("{}/api/v1/boards/{board}/votes", app.base))
        .bearer_auth(key)
        .json(&body)
        .send()
        .await
        .unwrap();
    let replayed = resp.headers().get("Idempotent-Replayed").is_some();
    (resp.status(), replayed, resp.text().await.unwrap())
}

async fn real_score(app: &TestApp, board: &str, member: &str) -> f64 {
    let (_, m) = app
        .get(&format!(
            "/api/v1/boards/{board}/members/{member}?view=real"
        ))
        .await;
    num(&m["score"])
}

#[tokio::test(flavor = "multi_thread")]
async fn a_replay_repeats_the_first_answer_byte_for_byte() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "idem", "title": "Idem", "multiplier": 2}))
        .await;
    app.members("idem", &["m1", "m2"]).await;
    let first_body = json!({"member": "m1", "voter": "u1", "count": 2, "idempotency_key": "k1"});
    let (status, replayed, first) = vote_raw(&app, MASTER_KEY, "idem", first_body.clone()).await;
    assert_eq!((status, replayed), (StatusCode::OK, false), "{first}");
    // Another vote moves the scores; the replay still answers the first scores.
    app.vote("idem", json!({"member": "m1"})).await;
    let (status, replayed, again) = vote_raw(&app, MASTER_KEY, "idem", first_body).await;
    assert_eq!((status, replayed), (StatusCode::OK, true), "{again}");
    assert_eq!(
        again,
        first.replace(r#""replayed":false"#, r#""replayed":true"#),
        "the replay is the first answer with replayed set"
    );
    assert!(first.contains(r#""member":"m1""#), "{first}");
    assert_eq!(real_score(&app, "idem", "m1").await, 3.0);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_key_reused_for_a_different_request_is_refused_and_counts_nothing() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "idem", "title": "Idem", "max_count": 5}))
        .await;
    app.members("idem", &["m1", "m2"]).await;
    let (status, _) = app
        .vote("idem", json!({"member": "m1", "idempotency_key": "k1"}))
        .await;
    assert_eq!(status, StatusCode::OK);
    for changed in [
        json!({"member": "m2", "idempotency_key": "k1"}),
        json!({"member": "m1", "count": 2, "idempotency_key": "k1"}),
        json!({"member": "m1", "voter": "u9", "idempotency_key": "k1"}),
        json!({"member": "m1", "channel": "app", "idempotency_key": "k1"}),
        json!({"member": "m1", "ip": "192.0.2.1", "idempotency_key": "k1"}),
    ] {
        let (status, body) = app.vote("idem", changed.clone()).await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (
                StatusCode::UNPROCESSABLE_ENTITY,
                Some("idempotency_key_reused")
            ),
            "{changed} -> {body}"
        );
    }
    // The same request spelled differently (count 1 given, the default) is a replay.
    let (status, body) = app
        .vote(
            "idem",
            json!({"member": "m1", "count": 1, "idempotency_key": "k1"}),
        )
        .await;
    assert_eq!(
        (status, body["replayed"].as_bool()),
        (StatusCode::OK, Some(true))
    );
    assert_eq!(real_score(&app, "idem", "m1").await, 1.0);
    assert_eq!(real_score(&app, "idem", "m2").await, 0.0);
}

#[tokio::test(flavor = "multi_thread")]
async fn keys_belong_to_their_caller_and_board() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "one", "title": "One"})).await;
    app.board(json!({"slug": "two", "title": "Two"})).await;
    app.members("one", &["m1"]).await;
    app.members("two", &["m1"]).await;
    let alice = app.key(&["vote"], None).await;
    let bob = app.key(&["vote"], None).await;
    let body = json!({"member": "m1", "idempotency_key": "order-1"});
    for (key, board) in [(&alice, "one"), (&bob, "one"), (&alice, "two")] {
        let (status, replayed, text) = vote_raw(&app, key, board, body.clone()).await;
        assert_eq!((status, replayed), (StatusCode::OK, false), "{text}");
    }
    let (status, replayed, _) = vote_raw(&app, &bob, "one", body.clone()).await;
    assert_eq!((status, replayed), (StatusCode::OK, true));
    let (status, replayed, _) = vote_raw(&app, MASTER_KEY, "one", body).await;
    assert_eq!((status, replayed), (StatusCode::OK, false));
    assert_eq!(real_score(&app, "one", "m1").await, 3.0);
    assert_eq!(real_score(&app, "two", "m1").await, 1.0);
}

#[tokio::test(flavor = "multi_thread")]
async fn batch_items_take_idempotency_keys_and_replay_per_item() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "a", "title": "A"})).await;
    app.members("a", &["m1", "m2"]).await;
    let batch = json!({"voter": "u1", "votes": [
        {"board": "a", "member": "m1", "idempotency_key": "i1"},
        {"board": "a", "member": "m2", "idempotency_key": "i2"},
        {"board": "a", "member": "m2"},
    ]});
    let (status, first) = app.post("/api/v1/votes", batch.clone()).await;
    assert_eq!(status, StatusCode::OK, "{first}");
    let (status, again) = app.post("/api/v1/votes", batch).await;
    assert_eq!(status, StatusCode::OK, "{again}");
    let replayed: Vec<Value> = again["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["replayed"].clone())
        .collect();
    assert_eq!(replayed, vec![json!(true), json!(true), json!(false)]);
    assert_eq!(again["results"][0]["scores"], first["results"][0]["scores"]);
    assert_eq!(real_score(&app, "a", "m1").await, 1.0);
    assert_eq!(real_score(&app, "a", "m2").await, 3.0);
    // The single-vote route with the same request and key is the same vote.
    let (status, body) = app
        .call(
            Method::POST,
            "/api/v1/boards/a/votes",
            Some(MASTER_KEY),
            Some(&json!({"member": "m1", "voter": "u1", "idempotency_key": "i1"})),
        )
        .await;
    assert_eq!(
        (status, body["replayed"].as_bool()),
        (StatusCode::OK, Some(true))
    );
    let (_, reused) = app
        .post(
            "/api/v1/votes",
            json!({"voter": "u2", "votes": [{"board": "a", "member": "m1", "idempotency_key": "i1"}]}),
        )
        .await;
    assert_eq!(
        reused["results"][0]["error"]["code"], "idempotency_key_reused",
        "{reused}"
    );
    assert_eq!(real_score(&app, "a", "m1").await, 1.0);
}
