//! Webhook deliveries: signed over time, delivery id and body (with the previous secret
//! too for a day after a rotation), retried until 2xx and given up after three days;
//! never redirected, never to a loopback or private address unless allowed, and sent
//! apart from season closes, so a receiver that hangs delays no close.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hmac::{Hmac, Mac};
use reqwest::StatusCode;
use sea_orm::{ActiveModelTrait, Set};
use serde_json::{Value, json};
use sha2::Sha256;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::harness::{Options, RawRedis, TestApp};
use crate::league_play::{add, close, code, create, join, league, score};
use ovation::domain::league::Delivery;

/// A request's headers (lowercase names) and body.
pub type Request = (BTreeMap<String, String>, String);

/// How a receiver answers one request.
#[derive(Debug, Clone)]
pub enum Answer {
    Status(u16),
    /// 302 to this URL.
    Redirect(String),
    /// Reads the request and never answers.
    Hang,
}

/// An HTTP receiver that answers its requests as `answers` says, in order, then 200;
/// it keeps every request's headers and body.
pub struct Receiver {
    pub url: String,
    pub port: u16,
    pub seen: Arc<Mutex<Vec<Request>>>,
}

impl Receiver {
    pub async fn start(answers: Vec<Answer>) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen: Arc<Mutex<Vec<Request>>> = Arc::default();
        let kept = Arc::clone(&seen);
        tokio::spawn(async move {
            loop {
                let Ok((mut socket, _)) = listener.accept().await else {
                    return;
                };
                let kept = Arc::clone(&kept);
                let answers = answers.clone();
                tokio::spawn(async move {
                    let request = read_request(&mut socket).await;
                    let answer = {
                        let mut seen = kept.lock().unwrap();
                        seen.push(request);
                        answers
                            .get(seen.len() - 1)
                            .cloned()
                            .unwrap_or(Answer::Status(200))
                    };
                    let head = match answer {
                        Answer::Status(code) => format!("HTTP/1.1 {code} Answer\r\n"),
                        Answer::Redirect(to) => format!("HTTP/1.1 302 Found\r\nlocation: {to}\r\n"),
                        Answer::Hang => {
                            tokio::time::sleep(Duration::from_secs(3600)).await;
                            return;
                        }
                    };
                    let _ = socket
                        .write_all(
                            format!("{head}content-length: 0\r\nconnection: close\r\n\r\n")
                                .as_bytes(),
                        )
                        .await;
                });
            }
        });
        Self {
            url: format!("http://127.0.0.1:{port}/hook"),
            port,
            seen,
        }
    }

    pub fn count(&self) -> usize {
        self.seen.lock().unwrap().len()
    }

    pub async fn wait_for(&self, n: usize, within: Duration) {
        let started = Instant::now();
        while self.count() < n {
            assert!(
                started.elapsed() < within,
                "{} of {n} requests",
                self.count()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

async fn read_request(socket: &mut tokio::net::TcpStream) -> Request {
    let mut data = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = socket.read(&mut buf).await.unwrap_or(0);
        if n == 0 {
            return (BTreeMap::new(), String::new());
        }
        data.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&data).to_string();
        let Some((head, body)) = text.split_once("\r\n\r\n") else {
            continue;
        };
        let headers: BTreeMap<String, String> = head
            .lines()
            .skip(1)
            .filter_map(|l| l.split_once(": "))
            .map(|(k, v)| (k.to_ascii_lowercase(), v.to_owned()))
            .collect();
        let length: usize = headers
            .get("content-length")
            .and_then(|l| l.parse().ok())
            .unwrap_or(0);
        if body.len() >= length {
            return (headers, body.to_owned());
        }
    }
}

pub fn hooked(allow_private: bool) -> Options {
    Options {
        league_check: Duration::from_millis(100),
        webhook_allow_private: allow_private,
        ..Options::default()
    }
}

/// The league's deliveries, newest first, read from SQL.
async fn deliveries(app: &TestApp, slug: &str) -> Vec<Delivery> {
    let (state, league) = app.league_in_sql(slug).await;
    ovation::store::sql::leagues::deliveries(&state.db, league.id)
        .await
        .unwrap()
}

/// Waits until the league's newest delivery has had `attempts` attempts.
async fn attempted(app: &TestApp, slug: &str, attempts: i32) -> Delivery {
    let started = Instant::now();
    loop {
        let newest = deliveries(app, slug).await.into_iter().next();
        if let Some(d) = newest.filter(|d| d.attempts >= attempts) {
            return d;
        }
        assert!(started.elapsed() < Duration::from_secs(15), "no attempt");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A league with one player who played, closed once: one delivery to `url`.
async fn closed_once(app: &TestApp, slug: &str, url: &str) -> Value {
    let created = create(app, league(slug, 4, Some(url.to_owned()))).await;
    join(app, slug, "p1").await;
    add(app, slug, "p1", 3).await;
    close(app, slug, false).await;
    created
}

/// The `v1` signatures of a `t=…,v1=…` header, checked against its own `t`.
pub fn signed_with(headers: &BTreeMap<String, String>, body: &str, secrets: &[&str]) -> bool {
    let header = &headers["x-ovation-signature"];
    let mut parts = header.split(',');
    let t = parts.next().unwrap().strip_prefix("t=").unwrap();
    let id = &headers["x-ovation-delivery"];
    let got: Vec<&str> = parts.map(|p| p.strip_prefix("v1=").unwrap()).collect();
    let want: Vec<String> = secrets
        .iter()
        .map(|secret| {
            let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).unwrap();
            mac.update(format!("{t}.{id}.{body}").as_bytes());
            hex::encode(mac.finalize().into_bytes())
        })
        .collect();
    let age = chrono::Utc::now().timestamp() - t.parse::<i64>().unwrap();
    got == want && (0..60).contains(&age)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_close_is_posted_signed_to_the_webhook_until_it_answers_2xx_once() {
    let receiver = Receiver::start(vec![Answer::Status(500), Answer::Status(503)]).await;
    let app = TestApp::spawn_with(hooked(true)).await;
    let created = create(&app, league("hooked", 4, Some(receiver.url.clone()))).await;
    let secret = created["webhook_secret"].as_str().unwrap().to_owned();
    for i in 1..=3 {
        join(&app, "hooked", &format!("p{i}")).await;
    }
    add(&app, "hooked", "p2", 5).await;
    let report = close(&app, "hooked", false).await;

    receiver.wait_for(3, Duration::from_secs(20)).await;
    // Retries are 1 s then 2 s apart: a fourth attempt would have come by now.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let seen = receiver.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 3, "{seen:?}");
    for (headers, body) in &seen {
        assert_eq!(
            headers["x-ovation-delivery"],
            seen[0].0["x-ovation-delivery"]
        );
        assert!(signed_with(headers, body, &[&secret]), "{headers:?}");
        let sent: Value = serde_json::from_str(body).unwrap();
        assert_eq!(sent, report);
    }
    let d = &deliveries(&app, "hooked").await[0];
    assert_eq!(
        (d.attempts, d.last_status, d.delivered_at.is_some()),
        (3, Some(200), true),
        "{d:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_redirect_is_a_failed_attempt_and_is_not_followed() {
    let target = Receiver::start(Vec::new()).await;
    let receiver = Receiver::start(vec![Answer::Redirect(target.url.clone()); 10]).await;
    let app = TestApp::spawn_with(hooked(true)).await;
    closed_once(&app, "moved", &receiver.url).await;
    let d = attempted(&app, "moved", 2).await;
    assert_eq!(d.last_status, Some(302), "{d:?}");
    assert_eq!(d.delivered_at, None);
    assert!(
        d.last_error
            .as_deref()
            .is_some_and(|e| e.contains("redirects are not followed")),
        "{d:?}"
    );
    assert_eq!(target.count(), 0, "the redirect's target is never called");
}

#[tokio::test(flavor = "multi_thread")]
async fn loopback_and_private_receivers_are_refused_unless_allowed() {
    let receiver = Receiver::start(Vec::new()).await;
    let app = TestApp::spawn_with(hooked(false)).await;
    // A literal address is refused when the league is created or changed, and nothing
    // is stored.
    for url in [
        receiver.url.clone(),
        format!("http://[::ffff:127.0.0.1]:{}/hook", receiver.port),
        "http://10.0.0.7/hook".to_owned(),
        "http://[fe80::1]/hook".to_owned(),
        "http://0.0.0.0/hook".to_owned(),
    ] {
        let (status, answer) = app
            .post(
                "/api/v1/admin/leagues",
                league("literal", 4, Some(url.clone())),
            )
            .await;
        assert_eq!(
            (status, answer["error"]["code"].as_str()),
            (StatusCode::UNPROCESSABLE_ENTITY, Some("invalid_webhook")),
            "{url}: {answer}"
        );
    }
    let (status, _) = app.get("/api/v1/admin/leagues/literal").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    create(&app, league("changed", 4, None)).await;
    let (status, answer) = app
        .patch(
            "/api/v1/admin/leagues/changed",
            json!({"webhook_url": receiver.url}),
        )
        .await;
    assert_eq!(
        (status, answer["error"]["code"].as_str()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("invalid_webhook")),
        "{answer}"
    );
    // A name that resolves to such an address is checked where the connection is made,
    // so a name that changes its answer cannot slip past.
    for (slug, url) in [("named", format!("http://localhost:{}/hook", receiver.port))] {
        closed_once(&app, slug, &url).await;
        let d = attempted(&app, slug, 1).await;
        assert_eq!((d.last_status, d.delivered_at), (None, None), "{d:?}");
        assert!(
            d.last_error
                .as_deref()
                .is_some_and(|e| e.contains("loopback address (OVATION_WEBHOOK_ALLOW_PRIVATE")),
            "{slug}: {d:?}"
        );
    }
    assert_eq!(receiver.count(), 0);
    // Allowed, the same receiver is reached.
    let allowed = TestApp::spawn_with(hooked(true)).await;
    closed_once(
        &allowed,
        "allowed",
        &format!("http://localhost:{}/hook", receiver.port),
    )
    .await;
    receiver.wait_for(1, Duration::from_secs(10)).await;
    // A URL is at most 2048 bytes, http or https, without credentials.
    for url in [
        format!("https://hooks.example/{}", "a".repeat(2048)),
        "https://user:secret@hooks.example/".to_owned(),
        "gopher://hooks.example/".to_owned(),
    ] {
        let (status, answer) = app
            .post("/api/v1/admin/leagues", league("longurl", 4, Some(url)))
            .await;
        assert_eq!(
            (status, answer["error"]["code"].as_str()),
            (StatusCode::UNPROCESSABLE_ENTITY, Some("invalid_webhook"))
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_receiver_that_hangs_delays_no_close() {
    let hanging = Receiver::start(vec![Answer::Hang; 20]).await;
    let app = TestApp::spawn_with(hooked(true)).await;
    // Three deliveries to a receiver that never answers.
    create(&app, league("slow", 4, Some(hanging.url.clone()))).await;
    for _ in 0..3 {
        join(&app, "slow", "p1").await;
        close(&app, "slow", false).await;
    }
    hanging.wait_for(3, Duration::from_secs(10)).await;
    // Another league's season ends meanwhile: the task closes it within a moment.
    create(&app, league("quick", 4, None)).await;
    join(&app, "quick", "p1").await;
    let mut raw = RawRedis::connect().await;
    let (_, quick) = app.league_in_sql("quick").await;
    let record = format!("{}:{{l:{}}}:season", app.prefix, quick.id);
    let past = chrono::Utc::now().timestamp_millis() - 1000;
    let () = raw
        .query(redis::cmd("HSET").arg(&record).arg("ends").arg(past))
        .await;
    let ended = Instant::now();
    assert_eq!(join(&app, "quick", "p1").await["season"], 2);
    while code(&score(&app, "quick", json!({"player": "p1", "delta": 1})).await)
        != (StatusCode::OK, None)
    {
        assert!(
            ended.elapsed() < Duration::from_secs(1),
            "the close waited on the hanging receiver"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(hanging.count(), 3, "each attempt waits its timeout");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rotated_secret_signs_beside_the_new_one_for_a_day() {
    let receiver = Receiver::start(Vec::new()).await;
    let app = TestApp::spawn_with(hooked(true)).await;
    let created = create(&app, league("rotating", 4, Some(receiver.url.clone()))).await;
    let old = created["webhook_secret"].as_str().unwrap().to_owned();
    assert_eq!(created["previous_secret_until"], Value::Null);
    let (status, rotated) = app
        .post("/api/v1/admin/leagues/rotating/webhook-secret", json!({}))
        .await;
    assert_eq!(status, StatusCode::OK, "{rotated}");
    let new = rotated["webhook_secret"].as_str().unwrap().to_owned();
    assert_ne!(new, old);
    let until =
        chrono::DateTime::parse_from_rfc3339(rotated["previous_secret_until"].as_str().unwrap())
            .unwrap();
    let day = until.signed_duration_since(chrono::Utc::now());
    assert!(
        day > chrono::TimeDelta::hours(23) && day <= chrono::TimeDelta::hours(24),
        "{day}"
    );
    join(&app, "rotating", "p1").await;
    close(&app, "rotating", false).await;
    receiver.wait_for(1, Duration::from_secs(10)).await;
    let (headers, body) = receiver.seen.lock().unwrap()[0].clone();
    assert!(signed_with(&headers, &body, &[&new, &old]), "{headers:?}");
    let (_, league) = app.get("/api/v1/admin/leagues/rotating").await;
    assert_eq!(league["webhook_secret"], new.as_str());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_delivery_failing_for_three_days_is_given_up_and_can_be_sent_again() {
    let receiver = Receiver::start(vec![Answer::Status(500)]).await;
    let app = TestApp::spawn_with(hooked(true)).await;
    closed_once(&app, "stale", &receiver.url).await;
    let first = attempted(&app, "stale", 1).await;
    assert_eq!(first.gave_up_at, None);
    // Made four days ago: the next failure is the last.
    let (state, league) = app.league_in_sql("stale").await;
    ovation::store::sql::entities::webhook_delivery::ActiveModel {
        id: Set(first.id),
        created_at: Set((chrono::Utc::now() - chrono::TimeDelta::days(4)).naive_utc()),
        ..Default::default()
    }
    .update(&state.db)
    .await
    .unwrap();
    let receiver_fails = Receiver::start(vec![Answer::Status(500); 10]).await;
    ovation::store::sql::entities::webhook_delivery::ActiveModel {
        id: Set(first.id),
        url: Set(receiver_fails.url.clone()),
        ..Default::default()
    }
    .update(&state.db)
    .await
    .unwrap();
    let gave_up = attempted(&app, "stale", 2).await;
    assert!(gave_up.gave_up_at.is_some(), "{gave_up:?}");
    assert_eq!(gave_up.last_status, Some(500));
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(receiver_fails.count(), 1, "no attempt after giving up");
    assert_eq!(deliveries(&app, "stale").await[0].attempts, 2);
    // Sent again by hand (the dashboard's button), to a receiver that takes it now.
    ovation::store::sql::entities::webhook_delivery::ActiveModel {
        id: Set(first.id),
        url: Set(receiver.url.clone()),
        ..Default::default()
    }
    .update(&state.db)
    .await
    .unwrap();
    assert!(
        ovation::store::sql::leagues::retry_delivery(&state.db, league.id, first.id)
            .await
            .unwrap()
    );
    let sent = attempted(&app, "stale", 3).await;
    assert_eq!(
        (
            sent.last_status,
            sent.delivered_at.is_some(),
            sent.gave_up_at
        ),
        (Some(200), true, None),
        "{sent:?}"
    );
}
