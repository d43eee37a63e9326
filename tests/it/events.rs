//! Live rankings as server-sent events: the top on connect and after votes, rank events,
//! errors answered as JSON before any stream starts, and Redis reads that do not grow
//! with subscribers.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::harness::{MASTER_KEY, RedisServer, TestApp, reset_stats};

/// A live stream being read: its events as (name, data), split from the body's bytes,
/// and the last `id` it carried.
pub struct Events {
    body: reqwest::Response,
    buffer: String,
    last_id: Option<String>,
}

impl Events {
    async fn open(app: &TestApp, path: &str) -> Self {
        Self::resume(app, path, None).await
    }

    /// The stream at `path`, resumed from `last_id` (`Last-Event-ID`) when given.
    async fn resume(app: &TestApp, path: &str, last_id: Option<&str>) -> Self {
        let mut req = app
            .client
            .get(format!("{}{path}", app.base))
            .bearer_auth(MASTER_KEY);
        if let Some(id) = last_id {
            req = req.header("Last-Event-ID", id);
        }
        Self::of(req.send().await.unwrap())
    }

    /// The stream `resp` answers.
    pub fn of(resp: reqwest::Response) -> Self {
        assert_eq!(resp.status(), StatusCode::OK);
        assert_eq!(
            resp.headers()["content-type"].to_str().unwrap(),
            "text/event-stream"
        );
        Self {
            body: resp,
            buffer: String::new(),
            last_id: None,
        }
    }

    /// The next event (comments skipped) with its JSON, waiting at most `wait`.
    async fn next(&mut self, wait: Duration) -> Option<(String, Value)> {
        let (name, data) = self.next_text(wait).await?;
        Some((name, serde_json::from_str(&data).unwrap()))
    }

    /// The next event (comments skipped) with its data lines joined as a browser joins
    /// them, waiting at most `wait`.
    pub async fn next_text(&mut self, wait: Duration) -> Option<(String, String)> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let mut name = None;
                let mut data: Option<Vec<&str>> = None;
                for line in block.lines() {
                    if let Some(n) = line.strip_prefix("event: ") {
                        name = Some(n.to_owned());
                    } else if let Some(d) = line.strip_prefix("data: ") {
                        data.get_or_insert_default().push(d);
                    } else if let Some(id) = line.strip_prefix("id: ") {
                        self.last_id = Some(id.to_owned());
                    }
                }
                match (name, data) {
                    (Some(name), Some(data)) => return Some((name, data.join("\n"))),
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

/// The events of a stream until it is quiet for 400 ms, each with the last id seen after
/// it.
async fn drain(events: &mut Events) -> Vec<(String, Value, Option<String>)> {
    let mut got = Vec::new();
    while let Some((name, data)) = events.next(Duration::from_millis(400)).await {
        got.push((name, data, events.last_id.clone()));
    }
    got
}

/// An id's sequence and number (`{epoch}-{seq}`).
fn id_parts(id: &str) -> (&str, u64) {
    let (epoch, seq) = id.split_once('-').expect("epoch-seq");
    (epoch, seq.parse().unwrap())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stream_resumed_from_its_last_id_gets_exactly_what_it_missed() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "resume", "title": "Resume", "periods": ["day"]}))
        .await;
    app.members("resume", &["a", "b", "c"]).await;
    vote(&app, "resume", "a", 3).await;
    let path = "/api/v1/boards/resume/events?period=day&top=2";
    // A witness stays connected throughout.
    let mut witness = Events::open(&app, path).await;
    witness.next_top().await;
    let mut broken = Events::open(&app, path).await;
    broken.next_top().await;
    let first_id = broken.last_id.clone().expect("the first top carries an id");
    assert_eq!(witness.last_id.as_ref(), Some(&first_id));
    vote(&app, "resume", "b", 1).await;
    broken.next_top().await;
    let left_at = broken.last_id.clone().unwrap();
    assert_eq!(
        id_parts(&left_at),
        (id_parts(&first_id).0, id_parts(&first_id).1 + 1)
    );
    drop(broken);
    witness.next_top().await;
    // Three changes, each in its own interval, while the stream is away.
    for (member, count) in [("c", 5), ("b", 9), ("a", 20)] {
        vote(&app, "resume", member, count).await;
        witness.next_top().await;
    }
    let witness_id = witness.last_id.clone().unwrap();
    // Resumed: the three changes as the witness got them (events, data and ids), no
    // fresh top first.
    let mut resumed = Events::resume(&app, path, Some(&left_at)).await;
    let missed = drain(&mut resumed).await;
    let tops: Vec<&Value> = missed
        .iter()
        .filter(|(name, ..)| name == "top")
        .map(|(_, data, _)| data)
        .collect();
    assert_eq!(tops.len(), 3, "{missed:?}");
    assert_eq!(*tops[2], top_of(&app, "resume", 2).await);
    assert_eq!(missed.last().unwrap().2.as_ref(), Some(&witness_id));
    let mut again = Events::resume(&app, path, Some(&left_at)).await;
    assert_eq!(drain(&mut again).await, missed, "the same id resumes alike");
    let ranks: Vec<&Value> = missed
        .iter()
        .filter(|(name, ..)| name == "rank")
        .map(|(_, data, _)| data)
        .collect();
    assert_eq!(
        ranks,
        [
            &json!({"type": "entered_top", "member": "c", "rank": 1, "other": null}),
            &json!({"type": "left_top", "member": "b", "rank": 2, "other": null}),
            &json!({"type": "entered_top", "member": "b", "rank": 1, "other": null}),
            &json!({"type": "left_top", "member": "a", "rank": 2, "other": null}),
            &json!({"type": "entered_top", "member": "a", "rank": 1, "other": null}),
            &json!({"type": "left_top", "member": "c", "rank": 2, "other": null}),
        ]
    );
    // Resumed from the last id: nothing is sent until the next change, which follows on.
    let mut current = Events::resume(&app, path, Some(&witness_id)).await;
    assert!(drain(&mut current).await.is_empty());
    vote(&app, "resume", "c", 30).await;
    let (top, _) = current.next_top().await;
    assert_eq!(top, top_of(&app, "resume", 2).await);
    let next = current.last_id.clone().unwrap();
    assert_eq!(
        id_parts(&next),
        (id_parts(&witness_id).0, id_parts(&witness_id).1 + 1)
    );
    // An id this instance does not hold (malformed, of another sequence, or ahead of it)
    // starts afresh: the top now, with the current id.
    let (epoch, seq) = id_parts(&next);
    for id in ["nonsense", "1-1", &format!("{epoch}-{}", seq + 1)] {
        let mut fresh = Events::resume(&app, path, Some(id)).await;
        let got = drain(&mut fresh).await;
        assert_eq!(
            got,
            vec![(
                "top".to_owned(),
                top_of(&app, "resume", 2).await,
                Some(next.clone())
            )],
            "{id}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_lone_stream_that_broke_resumes_within_the_grace() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "lone", "title": "Lone", "periods": ["day"]}))
        .await;
    app.members("lone", &["a", "b"]).await;
    let path = "/api/v1/boards/lone/events?period=day";
    let mut events = Events::open(&app, path).await;
    events.next_top().await;
    let left_at = events.last_id.clone().unwrap();
    drop(events);
    // Its watcher has no subscriber now, for several intervals, and a change comes.
    tokio::time::sleep(Duration::from_millis(500)).await;
    vote(&app, "lone", "a", 1).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut resumed = Events::resume(&app, path, Some(&left_at)).await;
    let got = drain(&mut resumed).await;
    let (epoch, seq) = id_parts(&left_at);
    assert_eq!(
        got,
        vec![
            ("top".to_owned(), top_of(&app, "lone", 10).await, None),
            (
                "rank".to_owned(),
                json!({"type": "entered_top", "member": "a", "rank": 1, "other": null}),
                Some(format!("{epoch}-{}", seq + 1))
            ),
        ]
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
    let calls = commands_since_reset(&mut raw).await;
    drop(streams);
    calls / started.elapsed().as_secs_f64()
}

/// Commands a Redis ran since its statistics were reset (`raw`'s `reset_stats`), its
/// CONFIG and INFO apart.
async fn commands_since_reset(raw: &mut redis::aio::MultiplexedConnection) -> f64 {
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(raw)
        .await
        .unwrap();
    info.lines()
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
        .sum()
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
    let many = redis_rate(&app, &server, 1000).await;
    assert!(
        many < few * 1.5,
        "{many:.0} commands/s with 1,000 subscribers, {few:.0} with 10"
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
    // A room is streamed once written.
    vote(&app, "room:r1", "first", 1).await;
    let mut events = Events::open(&app, "/api/v1/boards/room:r1/events?period=day").await;
    let (first, _) = events.next_top().await;
    assert_eq!(
        first["entries"],
        json!([{"rank": 1, "member": "first", "name": null, "score": 1}])
    );
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
    assert_eq!(top["entries"][1]["member"], "first", "{top}");
    assert_eq!(
        ranks,
        vec![json!({"type": "entered_top", "member": "here", "rank": 1, "other": null})]
    );
}

/// The text of `GET path` (a page or a block).
async fn text_of(app: &TestApp, path: &str) -> String {
    let resp = app
        .client
        .get(format!("{}{path}", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK, "{path}");
    resp.text().await.unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_voting_page_streams_its_ranking_block_on_connect_and_on_each_change() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "show", "title": "Show", "periods": ["day", "all"], "public_page": true, "max_count": 50}))
        .await;
    app.members("show", &["a", "b"]).await;
    vote(&app, "show", "a", 2).await;
    let mut stream = Events::open(&app, "/b/show/stream?period=all").await;
    let (name, first) = stream.next_text(Duration::from_secs(5)).await.unwrap();
    assert_eq!(name, "ranking");
    assert_eq!(first, text_of(&app, "/b/show/ranking?period=all").await);
    assert!(first.contains(r#"<li id="m-a">"#), "{first}");
    assert!(first.find("m-a").unwrap() < first.find("m-b").unwrap());

    vote(&app, "show", "b", 5).await;
    let (name, moved) = stream.next_text(Duration::from_secs(5)).await.unwrap();
    assert_eq!(name, "ranking");
    assert_eq!(moved, text_of(&app, "/b/show/ranking?period=all").await);
    assert!(
        moved.find("m-b").unwrap() < moved.find("m-a").unwrap(),
        "b leads now: {moved}"
    );
    assert!(moved.contains("5 votes"), "{moved}");
    // Nothing changed: nothing more is sent.
    assert_eq!(stream.next_text(Duration::from_millis(500)).await, None);

    // The embed streams its own block (its forms post to the embed's routes).
    let (status, body) = app
        .patch(
            "/api/v1/admin/boards/show",
            json!({"embed_origins": ["https://shop.example"]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let mut embed = Events::open(&app, "/embed/b/show/stream?period=all").await;
    let (_, block) = embed.next_text(Duration::from_secs(5)).await.unwrap();
    assert_eq!(
        block,
        text_of(&app, "/embed/b/show/ranking?period=all").await
    );
    assert!(block.contains(r#"action="/embed/b/show/vote""#), "{block}");
    // A board without a public page has no stream.
    app.board(json!({"slug": "private", "title": "Private"}))
        .await;
    let resp = app
        .client
        .get(format!("{}/b/private/stream", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::NOT_FOUND);
}

#[tokio::test(flavor = "multi_thread")]
async fn streams_beyond_the_instance_cap_are_refused_until_one_closes() {
    let app = TestApp::spawn_with(crate::harness::Options {
        events_max_streams: 1,
        ..Default::default()
    })
    .await;
    app.board(json!({"slug": "cap", "title": "Cap", "public_page": true}))
        .await;
    app.members("cap", &["a"]).await;
    let first = Events::open(&app, "/api/v1/boards/cap/events").await;
    for path in ["/api/v1/boards/cap/events", "/b/cap/stream"] {
        let resp = app
            .client
            .get(format!("{}{path}", app.base))
            .bearer_auth(MASTER_KEY)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::SERVICE_UNAVAILABLE, "{path}");
        assert_eq!(resp.headers()["retry-after"], "5", "{path}");
        if path.starts_with("/api") {
            let body: Value = resp.json().await.unwrap();
            assert_eq!(body["error"]["code"], "too_many_streams", "{body}");
        }
    }
    drop(first);
    // The server notices the closed connection when it next writes to it (a heartbeat
    // or a change); a change comes within an interval.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        vote(&app, "cap", "a", 1).await;
        let resp = app
            .client
            .get(format!("{}/b/cap/stream", app.base))
            .send()
            .await
            .unwrap();
        if resp.status() == StatusCode::OK {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the slot never came back"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stalled_subscriber_is_dropped_while_others_keep_receiving() {
    let app = TestApp::spawn_with(crate::harness::Options {
        events_interval: Duration::from_millis(50),
        stall_timeout: Duration::from_secs(2),
        ..Default::default()
    })
    .await;
    app.board(json!({"slug": "busy", "title": "Busy", "max_count": 1000}))
        .await;
    // Long member ids make each top large, so the stalled reader's buffers fill fast.
    let members: Vec<String> = (0..100)
        .map(|i| format!("{i:03}-{}", "x".repeat(60)))
        .collect();
    let ids: Vec<&str> = members.iter().map(String::as_str).collect();
    app.members("busy", &ids).await;
    let subscribers = |metrics: String| {
        metrics
            .lines()
            .find_map(|l| l.strip_prefix("ovation_event_subscribers{board=\"busy\"} "))
            .map(|v| v.parse::<f64>().unwrap())
            .unwrap_or(0.0)
    };
    // The stalled subscriber asks, with a small receive buffer, and never reads.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let addr: std::net::SocketAddr = app.base.trim_start_matches("http://").parse().unwrap();
    let mut stalled = socket.connect(addr).await.unwrap();
    tokio::io::AsyncWriteExt::write_all(
        &mut stalled,
        format!(
            "GET /api/v1/boards/busy/events?top=100 HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {MASTER_KEY}\r\n\r\n"
        )
        .as_bytes(),
    )
    .await
    .unwrap();
    let mut healthy = Events::open(&app, "/api/v1/boards/busy/events?top=100").await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while subscribers(app.metrics().await) < 2.0 {
        assert!(tokio::time::Instant::now() < deadline, "two subscribers");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    let mut round = 0usize;
    let mut received = 0;
    while subscribers(app.metrics().await) > 1.0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the stalled subscriber was never dropped"
        );
        // Every member moves, so each interval has a new top; the healthy one reads it.
        for (i, member) in members.iter().enumerate() {
            vote(&app, "busy", member, 1 + ((i + round) % 7) as i64).await;
        }
        round += 1;
        while healthy.next(Duration::from_millis(1)).await.is_some() {
            received += 1;
        }
    }
    assert_eq!(
        subscribers(app.metrics().await),
        1.0,
        "only the stalled one left"
    );
    // Its connection is closed.
    let mut rest = Vec::new();
    let read = tokio::time::timeout(
        Duration::from_secs(5),
        tokio::io::AsyncReadExt::read_to_end(&mut stalled, &mut rest),
    )
    .await
    .expect("the stalled connection ends");
    assert!(
        read.is_err() || rest.len() < 10_000_000,
        "a reset or an end, not an endless stream"
    );
    // The healthy subscriber still receives changes.
    vote(&app, "busy", &members[99], 500).await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        let (name, data) = healthy
            .next(Duration::from_secs(5))
            .await
            .expect("more events");
        received += 1;
        if name == "top" && data["entries"][0]["member"] == json!(members[99]) {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the last vote never showed"
        );
    }
    assert!(received > 10, "{received}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rolling_window_streams_its_top_too() {
    let app = TestApp::spawn().await;
    app.board(
        json!({"slug": "roll", "title": "Roll", "periods": ["rolling:24h"], "max_count": 50}),
    )
    .await;
    app.members("roll", &["a", "b"]).await;
    vote(&app, "roll", "a", 2).await;
    let mut events = Events::open(&app, "/api/v1/boards/roll/events?period=rolling:24h").await;
    let (first, _) = events.next_top().await;
    assert_eq!(first["entries"][0]["member"], "a");
    vote(&app, "roll", "b", 3).await;
    let (moved, ranks) = events.next_top().await;
    assert_eq!(
        moved["entries"],
        json!([
            {"rank": 1, "member": "b", "name": "Name b", "score": 3},
            {"rank": 2, "member": "a", "name": "Name a", "score": 2}
        ])
    );
    assert_eq!(
        ranks,
        vec![json!({"type": "entered_top", "member": "b", "rank": 1, "other": null})]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn rooms_never_written_are_not_streamed_and_top_sizes_share_one_read() {
    let server = RedisServer::start();
    let app = TestApp::spawn_with(crate::harness::Options {
        redis: ovation::store::redis::RedisTarget::Single(server.url()),
        ..crate::harness::Options::default()
    })
    .await;
    app.board(
        json!({"slug": "fam", "title": "Fam", "membership": "open", "public_page": true,
        "periods": ["day"], "instances": {"ttl_s": 3600}}),
    )
    .await;
    app.board(
        json!({"slug": "pub", "title": "Pub", "membership": "open", "public_page": true,
        "periods": ["day"]}),
    )
    .await;
    for (member, count) in [("a", 3), ("b", 2), ("c", 1)] {
        vote(&app, "pub", member, count).await;
    }
    // 200 rooms never written: no stream, no watcher, whoever asks.
    for i in 0..200 {
        let (status, body) = app
            .call(
                reqwest::Method::GET,
                &format!("/api/v1/boards/fam:ghost{i}/events"),
                None,
                None,
            )
            .await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (StatusCode::NOT_FOUND, Some("instance_not_live")),
            "{body}"
        );
    }
    // A room once written is streamed.
    vote(&app, "fam:live", "a", 1).await;
    let mut live = Events::open(&app, "/api/v1/boards/fam:live/events?period=day").await;
    let (first, _) = live.next_top().await;
    assert_eq!(first["entries"][0]["member"], "a", "{first}");
    // 100 subscribers of one board, each with its own top size.
    let mut streams = Vec::new();
    for top in 1..=100_i64 {
        let mut s = Events::open(
            &app,
            &format!("/api/v1/boards/pub/events?period=day&top={top}"),
        )
        .await;
        let (first, _) = s.next_top().await;
        assert_eq!(first, top_of(&app, "pub", top).await, "top={top}");
        streams.push(s);
    }
    let mut raw = reset_stats(&server).await;
    let started = std::time::Instant::now();
    vote(&app, "pub", "c", 5).await;
    // Each size gets its own top of the moment, and its own rank events.
    for (top, s) in streams.iter_mut().enumerate().take(4) {
        let top = top as i64 + 1;
        let (now, ranks) = s.next_top().await;
        assert_eq!(now, top_of(&app, "pub", top).await, "top={top}");
        let entered: Vec<&Value> = ranks
            .iter()
            .filter(|r| r["type"] == "entered_top")
            .collect();
        assert_eq!(entered.len(), usize::from(top < 3), "top={top}: {ranks:?}");
    }
    tokio::time::sleep(Duration::from_secs(2).saturating_sub(started.elapsed())).await;
    let rate = commands_since_reset(&mut raw).await / started.elapsed().as_secs_f64();
    // Two watchers (pub, fam:live) at 10 reads a second, the drain and the config check:
    // about 100 commands a second; a watcher per size, or per ghost room, would be
    // thousands.
    assert!(rate < 500.0, "{rate:.0} commands/s");
    drop(streams);
}
