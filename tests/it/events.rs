//! Live rankings as server-sent events: the top on connect and after votes, rank events,
//! errors answered as JSON before any stream starts, and Redis reads that do not grow
//! with subscribers.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::harness::{MASTER_KEY, RedisServer, TestApp, reset_stats};

/// A live stream being read: its events as (name, data), split from the body's bytes.
struct Events {
    body: reqwest::Response,
    buffer: String,
}

impl Events {
    async fn open(app: &TestApp, path: &str) -> Self {
        let resp = app
            .client
            .get(format!("{}{path}", app.base))
            .bearer_auth(MASTER_KEY)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::OK);
        assert_eq!(
            resp.headers()["content-type"].to_str().unwrap(),
            "text/event-stream"
        );
        Self {
            body: resp,
            buffer: String::new(),
        }
    }

    /// The next event (comments skipped), waiting at most `wait`.
    async fn next(&mut self, wait: Duration) -> Option<(String, Value)> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let mut name = None;
                let mut data = None;
                for line in block.lines() {
                    if let Some(n) = line.strip_prefix("event: ") {
                        name = Some(n.to_owned());
                    } else if let Some(d) = line.strip_prefix("data: ") {
                        data = Some(serde_json::from_str(d).unwrap());
                    }
                }
                match (name, data) {
                    (Some(name), Some(data)) => return Some((name, data)),
                    _ => continue,
                }
            }
            let chunk = tokio::time::timeout_at(deadline, self.body.chunk())
                .await
                .ok()?
                .unwrap()?;
            self.buffer.push_str(std::str::from_utf8(&chunk).unwrap());
        }
    }

    /// The next batch of changes: its `top` and the `rank` events after it.
    async fn next_top(&mut self) -> (Value, Vec<Value>) {
        let (name, top) = self
            .next(Duration::from_secs(5))
            .await
            .expect("a top within 5 s");
        assert_eq!(name, "top", "{top}");
        // The batch's rank events follow its top in the same chunk.
        let mut ranks = Vec::new();
        while let Some(end) = self.buffer.find("\n\n") {
            if !self.buffer[..end].starts_with("event: rank") {
                break;
            }
            ranks.push(self.next(Duration::from_millis(10)).await.unwrap().1);
        }
        (top, ranks)
    }
}

/// `/top`'s answer as the stream's top shows it: bucket, and each entry's rank, member,
/// name and score.
async fn top_of(app: &TestApp, board: &str, top: i64) -> Value {
    let (status, page) = app
        .get(&format!(
            "/api/v1/boards/{board}/top?period=day&limit={top}"
        ))
        .await;
    assert_eq!(status, StatusCode::OK, "{page}");
    let entries: Vec<Value> = page["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| json!({"rank": e["rank"], "member": e["member"], "name": e["name"], "score": e["score"]}))
        .collect();
    json!({"bucket": page["bucket"], "entries": entries})
}

async fn vote(app: &TestApp, board: &str, member: &str, count: i64) {
    let (status, body) = app
        .vote(board, json!({"member": member, "count": count}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_subscriber_sees_the_top_on_connect_then_each_change_with_its_rank_events() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "live", "title": "Live", "periods": ["day", "all"], "max_count": 50}))
        .await;
    app.members("live", &["a", "b", "c", "d"]).await;
    vote(&app, "live", "a", 5).await;
    vote(&app, "live", "b", 3).await;
    vote(&app, "live", "c", 1).await;
    let mut events = Events::open(&app, "/api/v1/boards/live/events?period=day&top=2").await;
    let (first, _) = events.next_top().await;
    assert_eq!(first, top_of(&app, "live", 2).await);

    // c passes a and b: it enters the top at 1, b leaves it, c overtook a.
    vote(&app, "live", "c", 9).await;
    let (top, ranks) = events.next_top().await;
    assert_eq!(top, top_of(&app, "live", 2).await);
    assert_eq!(
        ranks,
        vec![
            json!({"type": "entered_top", "member": "c", "rank": 1, "other": null}),
            json!({"type": "left_top", "member": "b", "rank": 2, "other": null}),
        ]
    );
    // a passes c back.
    vote(&app, "live", "a", 6).await;
    let (top, ranks) = events.next_top().await;
    assert_eq!(top, top_of(&app, "live", 2).await);
    assert_eq!(
        ranks,
        vec![json!({"type": "overtook", "member": "a", "rank": 1, "other": "c"})]
    );
    // Votes below the top change nothing it shows: no event.
    vote(&app, "live", "d", 1).await;
    assert!(
        events.next(Duration::from_millis(600)).await.is_none(),
        "no event without a change"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn many_changes_within_an_interval_come_as_one_top() {
    let app = TestApp::spawn_with(crate::harness::Options {
        events_interval: Duration::from_millis(1000),
        ..crate::harness::Options::default()
    })
    .await;
    app.board(json!({"slug": "burst", "title": "Burst", "periods": ["day"]}))
        .await;
    app.members("burst", &["a", "b"]).await;
    let mut events = Events::open(&app, "/api/v1/boards/burst/events?period=day").await;
    events.next_top().await;
    tokio::time::sleep(Duration::from_millis(150)).await;
    for i in 0..20 {
        vote(&app, "burst", ["a", "b"][i % 2], 1).await;
    }
    let (top, _) = events.next_top().await;
    assert_eq!(top, top_of(&app, "burst", 10).await, "the top after all 20");
    assert!(
        events.next(Duration::from_millis(1500)).await.is_none(),
        "one top for the burst"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bad_stream_request_is_a_json_error_before_any_stream() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "closed", "title": "Closed", "periods": ["day"]}))
        .await;
    for (path, key, status, code) in [
        (
            "/api/v1/boards/nope/events",
            Some(MASTER_KEY),
            404,
            "board_not_found",
        ),
        ("/api/v1/boards/closed/events", None, 401, "unauthorized"),
        (
            "/api/v1/boards/closed/events?period=week",
            Some(MASTER_KEY),
            422,
            "period_not_enabled",
        ),
        (
            "/api/v1/boards/closed/events?top=0",
            Some(MASTER_KEY),
            422,
            "invalid_field",
        ),
        (
            "/api/v1/boards/closed/events?top=101",
            Some(MASTER_KEY),
            422,
            "invalid_field",
        ),
    ] {
        let (got, body) = app.call(reqwest::Method::GET, path, key, None).await;
        assert_eq!(
            (got.as_u16(), body["error"]["code"].as_str()),
            (status, Some(code)),
            "{path}: {body}"
        );
    }
}

/// Redis commands per second (on the app's own Redis `server`) while `n` subscribers
/// follow one top under votes.
async fn redis_rate(app: &TestApp, server: &RedisServer, n: usize) -> f64 {
    let mut streams = Vec::new();
    for _ in 0..n {
        streams.push(Events::open(app, "/api/v1/boards/fan/events?period=day").await);
    }
    let mut raw = reset_stats(server).await;
    let started = std::time::Instant::now();
    for i in 0..10 {
        vote(app, "fan", ["a", "b"][i % 2], 1).await;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(&mut raw)
        .await
        .unwrap();
    drop(streams);
    let calls: f64 = info
        .lines()
        .filter(|l| {
            l.starts_with("cmdstat_")
                && !l.starts_with("cmdstat_config")
                && !l.starts_with("cmdstat_info")
        })
        .filter_map(|l| {
            l.split("calls=")
                .nth(1)?
                .split(',')
                .next()?
                .parse::<f64>()
                .ok()
        })
        .sum();
    calls / started.elapsed().as_secs_f64()
}

#[tokio::test(flavor = "multi_thread")]
async fn redis_reads_grow_with_tops_watched_not_with_subscribers() {
    let server = RedisServer::start();
    let app = TestApp::spawn_with(crate::harness::Options {
        redis: ovation::store::redis::RedisTarget::Single(server.url()),
        ..crate::harness::Options::default()
    })
    .await;
    app.board(json!({"slug": "fan", "title": "Fan", "periods": ["day"]}))
        .await;
    app.members("fan", &["a", "b"]).await;
    let few = redis_rate(&app, &server, 10).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let many = redis_rate(&app, &server, 300).await;
    assert!(
        many < few * 1.5,
        "{many:.0} commands/s with 300 subscribers, {few:.0} with 10"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn stopping_the_instance_ends_its_streams_at_once() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "bye", "title": "Bye", "periods": ["day"]}))
        .await;
    let mut events = Events::open(&app, "/api/v1/boards/bye/events?period=day").await;
    events.next_top().await;
    let started = std::time::Instant::now();
    let stopping = tokio::spawn({
        let stopper = app.stopper.clone();
        async move { stopper.stop().await }
    });
    // The stream ends (no heartbeat, no event) well before the 30 s shutdown timeout.
    assert!(events.next(Duration::from_secs(10)).await.is_none());
    tokio::time::timeout(Duration::from_secs(10), stopping)
        .await
        .expect("the server stopped")
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

/// A family instance streams its own top: a vote in another room changes nothing it
/// shows.
#[tokio::test(flavor = "multi_thread")]
async fn a_room_of_a_family_streams_its_own_top() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "room", "title": "Room", "periods": ["day"],
        "membership": "open", "instances": {"ttl_s": 600}}))
        .await;
    let mut events = Events::open(&app, "/api/v1/boards/room:r1/events?period=day").await;
    let (first, _) = events.next_top().await;
    assert_eq!(first["entries"], json!([]));
    vote(&app, "room:r2", "elsewhere", 3).await;
    assert!(events.next(Duration::from_millis(600)).await.is_none());
    vote(&app, "room:r1", "here", 2).await;
    let (top, ranks) = events.next_top().await;
    assert_eq!(
        (
            top["entries"][0]["member"].clone(),
            top["entries"][0]["score"].clone()
        ),
        (json!("here"), json!(2))
    );
    assert_eq!(
        ranks,
        vec![json!({"type": "entered_top", "member": "here", "rank": 1, "other": null})]
    );
}
