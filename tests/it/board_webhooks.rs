//! Board webhooks: rank events of a watched top posted signed, retried after a failure,
//! never to a loopback address unless allowed, sent by one instance of several; the
//! requests that add, test and delete them checked.

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::harness::{Options, RawRedis, TestApp};
use crate::webhooks::{Answer, Receiver, hooked, signed_with};

pub(crate) async fn vote(app: &TestApp, member: &str, count: i64) {
    let (status, body) = app
        .vote("final", json!({"member": member, "count": count}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

pub(crate) async fn board(app: &TestApp) {
    app.board(
        json!({"slug": "final", "title": "Final", "periods": ["day", "all"], "max_count": 100}),
    )
    .await;
    app.members("final", &["a", "b", "c"]).await;
}

pub(crate) async fn add_webhook(app: &TestApp, body: Value) -> Value {
    let (status, created) = app.post("/api/v1/admin/boards/final/webhooks", body).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    created
}

/// Waits until an instance holds the board's watch lease and has read its first top.
pub(crate) async fn watched(app: &TestApp) {
    let mut redis = RawRedis::connect().await;
    let started = Instant::now();
    while redis
        .keys(&format!("{}:*wh:lease", app.prefix))
        .await
        .is_empty()
    {
        assert!(started.elapsed() < Duration::from_secs(5), "no watcher");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The first top is read in the tick that took the lease.
    tokio::time::sleep(Duration::from_millis(300)).await;
}

/// The board's deliveries as the API lists them, newest first.
async fn deliveries(app: &TestApp) -> Vec<Value> {
    let (status, list) = app.get("/api/v1/admin/boards/final/webhooks").await;
    assert_eq!(status, StatusCode::OK, "{list}");
    list["deliveries"].as_array().unwrap().clone()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_entered_top_event_is_posted_signed_and_retried_after_a_500() {
    let receiver = Receiver::start(vec![Answer::Status(500)]).await;
    let app = TestApp::spawn_with(hooked(true)).await;
    board(&app).await;
    let created = add_webhook(
        &app,
        json!({"url": receiver.url, "period": "day", "top": 2, "events": ["entered_top"]}),
    )
    .await;
    assert_eq!(created["period"], "day");
    assert_eq!(created["view"], "display");
    assert_eq!(created["top"], 2);
    assert_eq!(created["events"], json!(["entered_top"]));
    let secret = created["secret"].as_str().unwrap().to_owned();
    watched(&app).await;

    vote(&app, "a", 3).await;
    receiver.wait_for(2, Duration::from_secs(15)).await;
    let seen = receiver.seen.lock().unwrap().clone();
    let (first, retry) = (&seen[0], &seen[1]);
    assert_eq!(first.1, retry.1, "a retry sends the same body");
    assert_eq!(first.0["x-ovation-delivery"], retry.0["x-ovation-delivery"]);
    assert!(signed_with(&retry.0, &retry.1, &[&secret]), "{:?}", retry.0);
    let body: Value = serde_json::from_str(&retry.1).unwrap();
    assert_eq!(body["type"], "rank");
    assert_eq!(body["board"], "final");
    assert_eq!(body["webhook"], created["id"]);
    assert_eq!(
        (body["period"].clone(), body["top"].clone()),
        (json!("day"), json!(2))
    );
    assert_eq!(
        body["events"],
        json!([{"type": "entered_top", "member": "a", "rank": 1, "other": null}])
    );
    // The receiver saw the retry before its answer reached the sender, which records
    // the outcome next.
    let started = std::time::Instant::now();
    let listed = loop {
        let listed = deliveries(&app).await;
        if listed.len() == 1 && listed[0]["status"] == "delivered" {
            break listed;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "never recorded as delivered: {listed:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(listed[0]["attempts"], 2);
    assert_eq!(listed[0]["last_status"], 200);

    // c enters the top, first.
    vote(&app, "c", 5).await;
    receiver.wait_for(3, Duration::from_secs(10)).await;
    let third = receiver.seen.lock().unwrap()[2].clone();
    let body: Value = serde_json::from_str(&third.1).unwrap();
    assert_eq!(
        body["events"],
        json!([{"type": "entered_top", "member": "c", "rank": 1, "other": null}])
    );
    // a passes c again: an overtaking, which this webhook does not want, is not sent.
    vote(&app, "a", 5).await;
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(receiver.count(), 3);

    // A test delivery, then deletion: nothing more is sent.
    let id = created["id"].as_i64().unwrap();
    let (status, test) = app
        .post(
            &format!("/api/v1/admin/boards/final/webhooks/{id}/test"),
            json!({}),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{test}");
    receiver.wait_for(4, Duration::from_secs(10)).await;
    let fourth = receiver.seen.lock().unwrap()[3].clone();
    let body: Value = serde_json::from_str(&fourth.1).unwrap();
    assert_eq!(
        (body["type"].clone(), body["webhook"].clone()),
        (json!("test"), json!(id))
    );
    assert_eq!(fourth.0["x-ovation-delivery"], test["delivery"].to_string());
    let (status, _) = app
        .delete(&format!("/api/v1/admin/boards/final/webhooks/{id}"))
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    vote(&app, "b", 50).await;
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(receiver.count(), 4);
    assert_eq!(deliveries(&app).await, Vec::<Value>::new());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_webhook_to_a_loopback_address_is_refused_without_allow_private() {
    let receiver = Receiver::start(Vec::new()).await;
    let app = TestApp::spawn_with(hooked(false)).await;
    board(&app).await;
    // A literal loopback or private address is refused when the webhook is added.
    for url in [
        receiver.url.clone(),
        "http://192.168.1.20/hook".to_owned(),
        "http://[::1]:9/hook".to_owned(),
        "http://169.254.169.254/latest".to_owned(),
    ] {
        let (status, body) = app
            .post("/api/v1/admin/boards/final/webhooks", json!({"url": url}))
            .await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (StatusCode::UNPROCESSABLE_ENTITY, Some("invalid_webhook")),
            "{url}: {body}"
        );
    }
    assert_eq!(deliveries(&app).await, Vec::<Value>::new());
    let (_, listed) = app.get("/api/v1/admin/boards/final/webhooks").await;
    assert_eq!(listed["webhooks"], json!([]), "{listed}");
    // A name is checked at delivery, on the address it resolves to.
    let named = format!("http://localhost:{}/hook", receiver.port);
    let created = add_webhook(&app, json!({"url": named})).await;
    let id = created["id"].as_i64().unwrap();
    let (status, body) = app
        .post(
            &format!("/api/v1/admin/boards/final/webhooks/{id}/test"),
            json!({}),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let started = Instant::now();
    let refused = loop {
        let listed = deliveries(&app).await;
        if listed[0]["attempts"].as_i64().unwrap() >= 1 {
            break listed[0].clone();
        }
        assert!(started.elapsed() < Duration::from_secs(10), "no attempt");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(refused["status"], "pending", "retried later: {refused}");
    assert_eq!(refused["last_status"], Value::Null);
    let error = refused["last_error"].as_str().unwrap();
    assert!(
        error.contains("refused to connect to localhost at 127.0.0.1: a loopback address")
            || error.contains("refused to connect to localhost at ::1: a loopback address"),
        "{error}"
    );
    assert_eq!(receiver.count(), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn of_two_instances_one_sends_each_change() {
    let receiver = Receiver::start(Vec::new()).await;
    let first = TestApp::spawn_with(hooked(true)).await;
    let second = TestApp::spawn_with(Options {
        prefix: first.prefix.clone(),
        database: Some(first.database.clone()),
        ..hooked(true)
    })
    .await;
    board(&first).await;
    add_webhook(&first, json!({"url": receiver.url, "top": 3})).await;
    watched(&first).await;
    vote(&second, "b", 2).await;
    receiver.wait_for(1, Duration::from_secs(10)).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(receiver.count(), 1, "one delivery for one change");
    let body: Value = serde_json::from_str(&receiver.seen.lock().unwrap()[0].1).unwrap();
    assert_eq!(
        body["events"],
        json!([{"type": "entered_top", "member": "b", "rank": 1, "other": null}])
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn webhook_requests_are_checked_before_anything_is_stored() {
    let app = TestApp::spawn().await;
    board(&app).await;
    app.board(json!({"slug": "rooms", "title": "Rooms", "scoring": "scores", "instances": {"ttl_s": 3600}}))
        .await;
    let url = "https://hooks.example/rank";
    for (path, body, status, code) in [
        (
            "/api/v1/admin/boards/nope/webhooks",
            json!({"url": url}),
            404,
            "board_not_found",
        ),
        (
            "/api/v1/admin/boards/final/webhooks",
            json!({"url": "ftp://x"}),
            422,
            "invalid_webhook",
        ),
        (
            "/api/v1/admin/boards/final/webhooks",
            json!({"url": url, "top": 0}),
            422,
            "invalid_field",
        ),
        (
            "/api/v1/admin/boards/final/webhooks",
            json!({"url": url, "top": 101}),
            422,
            "invalid_field",
        ),
        (
            "/api/v1/admin/boards/final/webhooks",
            json!({"url": url, "events": ["moved"]}),
            422,
            "invalid_field",
        ),
        (
            "/api/v1/admin/boards/final/webhooks",
            json!({"url": url, "events": []}),
            422,
            "invalid_field",
        ),
        (
            "/api/v1/admin/boards/final/webhooks",
            json!({"url": url, "period": "week"}),
            422,
            "period_not_enabled",
        ),
        (
            "/api/v1/admin/boards/final/webhooks",
            json!({"url": url, "view": "best"}),
            422,
            "invalid_view",
        ),
        (
            "/api/v1/admin/boards/final/webhooks",
            json!({"url": url, "extra": 1}),
            422,
            "invalid_field",
        ),
        (
            "/api/v1/admin/boards/rooms/webhooks",
            json!({"url": url}),
            422,
            "not_for_family",
        ),
        (
            "/api/v1/admin/boards/final/webhooks/99/test",
            json!({}),
            404,
            "webhook_not_found",
        ),
        (
            "/api/v1/admin/boards/final/webhooks/x/test",
            json!({}),
            404,
            "webhook_not_found",
        ),
    ] {
        let (got, answer) = app.post(path, body.clone()).await;
        assert_eq!(got.as_u16(), status, "{path} {body}: {answer}");
        assert_eq!(answer["error"]["code"], code, "{path} {body}: {answer}");
    }
    let (status, answer) = app.delete("/api/v1/admin/boards/final/webhooks/99").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(answer["error"]["code"], "webhook_not_found");
    let (_, list) = app.get("/api/v1/admin/boards/final/webhooks").await;
    assert_eq!(list, json!({"webhooks": [], "deliveries": []}));
    // At most 20 a board.
    for i in 0..20 {
        add_webhook(&app, json!({"url": format!("{url}/{i}")})).await;
    }
    let (status, answer) = app
        .post("/api/v1/admin/boards/final/webhooks", json!({"url": url}))
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{answer}");
    assert_eq!(answer["error"]["code"], "too_many_webhooks");
    let (_, list) = app.get("/api/v1/admin/boards/final/webhooks").await;
    assert_eq!(list["webhooks"].as_array().unwrap().len(), 20);
    // Other keys than the admin's may not.
    let (status, _) = app
        .client
        .get(format!("{}/api/v1/admin/boards/final/webhooks", app.base))
        .send()
        .await
        .map(|r| (r.status(), ()))
        .unwrap();
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

/// A top whose webhooks are all deleted is forgotten while the board keeps another
/// webhook: one added for it later starts from the top it finds, and is not told of the
/// changes made while nothing watched it.
#[tokio::test(flavor = "multi_thread")]
async fn a_webhook_added_again_starts_from_the_top_it_finds() {
    let receiver = Receiver::start(Vec::new()).await;
    let app = TestApp::spawn_with(hooked(true)).await;
    board(&app).await;
    let kept = add_webhook(
        &app,
        json!({"url": receiver.url, "period": "all", "top": 3, "events": ["entered_top"]}),
    )
    .await;
    let first = add_webhook(
        &app,
        json!({"url": receiver.url, "period": "day", "top": 2, "events": ["entered_top"]}),
    )
    .await;
    watched(&app).await;
    let id = first["id"].as_i64().unwrap();
    let (status, _) = app
        .delete(&format!("/api/v1/admin/boards/final/webhooks/{id}"))
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    // Wait for a tick without the deleted webhook, then change both tops.
    tokio::time::sleep(Duration::from_millis(600)).await;
    vote(&app, "b", 4).await;
    receiver.wait_for(1, Duration::from_secs(10)).await;
    let told: Value = serde_json::from_str(&receiver.seen.lock().unwrap()[0].1).unwrap();
    assert_eq!(told["webhook"], kept["id"], "{told}");
    let again = add_webhook(
        &app,
        json!({"url": receiver.url, "period": "day", "top": 2, "events": ["entered_top"]}),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(1200)).await;
    assert_eq!(
        receiver.count(),
        1,
        "b entered the day's top before the webhook came"
    );
    vote(&app, "c", 2).await;
    receiver.wait_for(3, Duration::from_secs(10)).await;
    let mut told: Vec<(Value, Value)> = receiver.seen.lock().unwrap()[1..]
        .iter()
        .map(|(_, body)| {
            let body: Value = serde_json::from_str(body).unwrap();
            (body["webhook"].clone(), body["events"].clone())
        })
        .collect();
    told.sort_by_key(|(w, _)| w.as_i64());
    assert_eq!(
        told,
        vec![
            (
                kept["id"].clone(),
                json!([{"type": "entered_top", "member": "c", "rank": 2, "other": null}])
            ),
            (
                again["id"].clone(),
                json!([{"type": "entered_top", "member": "c", "rank": 2, "other": null}])
            ),
        ]
    );
}
