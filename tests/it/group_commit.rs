//! Group commit: votes on one board in flight together share one `vote.lua` call, and
//! each still passes or fails on its own, in order, with its own answer.

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::harness::{Options, RawRedis, RedisServer, TestApp, hourly_total, num};
use ovation::store::redis::RedisTarget;

async fn real_score(app: &TestApp, board: &str, member: &str) -> f64 {
    let (_, m) = app
        .get(&format!(
            "/api/v1/boards/{board}/members/{member}?view=real"
        ))
        .await;
    num(&m["score"])
}

/// Each command's calls since the Redis's statistics were reset, less those that failed
/// (a script call refused with NOSCRIPT, the first on a fresh Redis, ran nothing).
async fn command_calls(
    conn: &mut redis::aio::MultiplexedConnection,
) -> impl Fn(&str) -> u64 + use<> {
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(conn)
        .await
        .unwrap();
    move |command: &str| {
        let field = |line: &str, name: &str| -> u64 {
            line.split([':', ','])
                .find_map(|f| f.strip_prefix(name)?.parse().ok())
                .unwrap_or(0)
        };
        info.lines()
            .filter(|l| l.starts_with(&format!("cmdstat_{command}:")))
            .map(|l| field(l, "calls=") - field(l, "failed_calls="))
            .sum()
    }
}

/// How many script calls (EVALSHA and EVAL) a Redis has run since its statistics were
/// reset.
async fn script_calls(conn: &mut redis::aio::MultiplexedConnection) -> u64 {
    let calls = command_calls(conn).await;
    calls("evalsha") + calls("eval")
}

/// An app on a Redis of its own (so its command statistics are the app's alone) with
/// the largest vote group `vote_group`, an open board `slug` with one rule and no ledger,
/// and a connection to that Redis, its statistics just reset.
async fn own_board(
    vote_group: usize,
    slug: &str,
    rule: Value,
) -> (RedisServer, TestApp, redis::aio::MultiplexedConnection) {
    let server = RedisServer::start();
    let app = TestApp::spawn_with(Options {
        redis: RedisTarget::Single(server.url()),
        vote_group,
        ..Options::default()
    })
    .await;
    // No ledger: its drain would run scripts of its own.
    app.board(json!({"slug": slug, "title": slug, "membership": "open", "ledger": false}))
        .await;
    let (status, body) = app
        .post(&format!("/api/v1/admin/boards/{slug}/rules"), rule)
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let mut conn = redis::Client::open(server.url())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let _: () = redis::cmd("CONFIG")
        .arg("RESETSTAT")
        .query_async(&mut conn)
        .await
        .unwrap();
    (server, app, conn)
}

/// 200 single-vote requests at once from 40 voters (five each) on a board that admits
/// three votes per voter a day; answers (accepted, refused, script calls Redis ran).
async fn burst(vote_group: usize) -> (usize, usize, u64) {
    let (_server, app, mut conn) = own_board(
        vote_group,
        "burst",
        json!({"name": "three a day", "dimensions": ["voter"], "window": "day", "limit": 3}),
    )
    .await;
    let mut requests = Vec::new();
    for i in 0..200 {
        let app = app.clone();
        requests.push(tokio::spawn(async move {
            let body = json!({"member": format!("m{}", i % 7), "voter": format!("u{}", i % 40)});
            (i % 40, app.vote("burst", body).await)
        }));
    }
    let mut per_voter = [0; 40];
    let (mut accepted, mut refused) = (0, 0);
    for r in requests {
        let (voter, (status, body)) = r.await.unwrap();
        match status {
            StatusCode::OK => {
                accepted += 1;
                per_voter[voter] += 1;
            }
            StatusCode::TOO_MANY_REQUESTS => {
                assert_eq!(body["error"]["code"], "rate_limited", "{body}");
                refused += 1;
            }
            other => panic!("unexpected {other}: {body}"),
        }
    }
    let calls = script_calls(&mut conn).await;
    assert_eq!(per_voter, [3; 40], "each voter counted exactly three times");
    let mut total = 0.0;
    for m in 0..7 {
        total += real_score(&app, "burst", &format!("m{m}")).await;
    }
    assert_eq!(
        total, 120.0,
        "the members' scores hold exactly the accepted votes"
    );
    // Group commit adds a call's voters and hourly counts once for all its votes.
    let (_, stats) = app.get("/api/v1/boards/burst/stats?period=all").await;
    assert_eq!(stats["participants"], 40, "{stats}");
    assert_eq!(hourly_total(&stats), 120, "{stats}");
    (accepted, refused, calls)
}

#[tokio::test(flavor = "multi_thread")]
async fn votes_in_flight_on_one_board_share_calls_and_each_answers_its_own() {
    let (accepted, refused, calls) = burst(ovation::store::redis::DEFAULT_VOTE_GROUP).await;
    assert_eq!((accepted, refused), (120, 80));
    assert!(
        calls < 200,
        "200 votes in flight together took {calls} script calls"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_vote_group_of_one_sends_each_request_alone() {
    let (accepted, refused, calls) = burst(1).await;
    assert_eq!((accepted, refused), (120, 80));
    assert_eq!(calls, 200);
}

/// A batch's votes on one board go in one call: each sees the ones before it (an
/// idempotency key used twice replays, a rule counts what came first), and a vote that
/// fails in Redis fails alone.
#[tokio::test(flavor = "multi_thread")]
async fn the_votes_of_one_call_keep_their_order_and_fail_alone() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "order", "title": "Order", "membership": "open"}))
        .await;
    for rule in [
        json!({"name": "three per voter", "dimensions": ["voter"], "window": "day", "limit": 3}),
        json!({"name": "member log", "dimensions": ["member"], "window": "rolling:1h", "limit": 1000}),
    ] {
        let (status, body) = app.post("/api/v1/admin/boards/order/rules", rule).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }
    let (status, body) = app
        .vote("order", json!({"member": "broken", "voter": "v0"}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // The member's rolling log now holds a string: a vote on it fails in Redis
    // (WRONGTYPE) while its rules are read, before anything is written.
    let mut raw = RawRedis::connect().await;
    let logs = raw
        .keys(&format!("{}:*rl:*:log:*broken*", app.prefix))
        .await;
    assert_eq!(logs.len(), 1, "{logs:?}");
    raw.query::<()>(redis::cmd("SET").arg(&logs[0]).arg("not a log"))
        .await;

    let batch = json!({"voter": "u1", "votes": [
        {"board": "order", "member": "m1", "idempotency_key": "k"},
        {"board": "order", "member": "m1", "idempotency_key": "k"},
        {"board": "order", "member": "broken"},
        {"board": "order", "member": "m2", "count": 2},
        {"board": "order", "member": "m3"},
    ]});
    let (status, body) = app.post("/api/v1/votes", batch).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let results: Vec<(Value, Value, Value)> = body["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["ok"].clone(),
                r["replayed"].clone(),
                r["error"]["code"].clone(),
            )
        })
        .collect();
    assert_eq!(
        results,
        vec![
            (json!(true), json!(false), Value::Null),
            (json!(true), json!(true), Value::Null),
            (json!(false), Value::Null, json!("internal_error")),
            (json!(true), json!(false), Value::Null),
            (json!(false), Value::Null, json!("rate_limited")),
        ],
        "{body}"
    );
    assert_eq!(real_score(&app, "order", "m1").await, 1.0);
    assert_eq!(real_score(&app, "order", "broken").await, 1.0);
    assert_eq!(real_score(&app, "order", "m2").await, 2.0);
    assert_eq!(real_score(&app, "order", "m3").await, 0.0);
}

/// The writes a call's votes share (the votes per hour, the board's participants) are
/// made once for the call and hold exactly its admitted votes: a refused vote adds no
/// count, a vote two hours back counts in its own hour; a shared write that fails answers
/// its error for each vote that wrote to it, as a command of the vote's own would.
#[tokio::test(flavor = "multi_thread")]
async fn the_votes_of_one_call_share_their_board_wide_writes() {
    let (_server, app, mut conn) = own_board(
        ovation::store::redis::DEFAULT_VOTE_GROUP,
        "shared",
        json!({"name": "two per member", "dimensions": ["member"], "window": "day", "limit": 2}),
    )
    .await;
    let now = chrono::Utc::now();
    let two_hours_ago = now - chrono::Duration::hours(2);
    // The board's buckets that vote counts its voter in (UTC, the board's time zone): its
    // hour, and its day when that is yesterday.
    let its_own = 1 + u64::from(two_hours_ago.date_naive() != now.date_naive());
    let two_hours_ago = two_hours_ago.to_rfc3339();
    let batch = json!({"voter": "a", "votes": [
        {"board": "shared", "member": "m1", "count": 2},
        {"board": "shared", "member": "m1"},
        {"board": "shared", "member": "m2"},
        {"board": "shared", "member": "m3", "at": two_hours_ago},
    ]});
    let (status, body) = app.post("/api/v1/votes", batch).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        error_codes(&body),
        [Value::Null, json!("rate_limited"), Value::Null, Value::Null],
        "{body}"
    );
    // Three admitted votes, each adding its voter to its member's hour, day and all-time
    // participants (9 PFADDs), and the call adding the voter once to each of the board's
    // buckets they count in: this hour, day and all-time (3), and the older vote's own.
    let calls = command_calls(&mut conn).await;
    assert_eq!(calls("pfadd"), 9 + 3 + its_own);
    assert_eq!(calls("evalsha") + calls("eval"), 1);
    let (status, stats) = app.get("/api/v1/boards/shared/stats?period=all").await;
    assert_eq!(status, StatusCode::OK, "{stats}");
    assert_eq!(stats["participants"], 1, "{stats}");
    let hours = stats["votes_per_hour"].as_array().unwrap();
    assert_eq!(
        (hours[47]["votes"].clone(), hours[45]["votes"].clone()),
        (json!(3), json!(1)),
        "{stats}"
    );
    assert_eq!(hourly_total(&stats), 4);

    let vph: Vec<String> = redis::cmd("KEYS")
        .arg(format!("{}*vph", app.prefix))
        .query_async(&mut conn)
        .await
        .unwrap();
    assert_eq!(vph.len(), 1, "{vph:?}");
    let _: () = redis::cmd("SET")
        .arg(&vph[0])
        .arg("not a hash")
        .query_async(&mut conn)
        .await
        .unwrap();
    let batch = json!({"voter": "b", "votes": [
        {"board": "shared", "member": "m4"},
        {"board": "shared", "member": "m5"},
    ]});
    let (status, body) = app.post("/api/v1/votes", batch).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        error_codes(&body),
        [json!("internal_error"), json!("internal_error")],
        "{body}"
    );
}

fn error_codes(body: &Value) -> Vec<Value> {
    body["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["error"]["code"].clone())
        .collect()
}

/// A Redis that stops answering holds no vote much longer than twice the timeout (its
/// wait in the queue, then its own call), however many queue behind the calls in flight:
/// a vote that waited past the timeout answers 503 unsent.
#[tokio::test(flavor = "multi_thread")]
async fn votes_queued_behind_a_redis_that_hangs_answer_503_within_the_timeout() {
    let server = RedisServer::start();
    let app = TestApp::spawn_with(Options {
        redis: RedisTarget::Single(server.url()),
        ..Options::default()
    })
    .await;
    app.board(json!({"slug": "hang", "title": "Hang", "membership": "open"}))
        .await;
    let (status, body) = app.vote("hang", json!({"member": "m1"})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let config = redis::AsyncConnectionConfig::new().set_response_timeout(None);
    let mut conn = redis::Client::open(server.url())
        .unwrap()
        .get_multiplexed_async_connection_with_config(&config)
        .await
        .unwrap();
    let sleeper = tokio::spawn(async move {
        let _: () = redis::cmd("DEBUG")
            .arg("SLEEP")
            .arg(5)
            .query_async(&mut conn)
            .await
            .unwrap();
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    let started = Instant::now();
    let mut requests = Vec::new();
    for i in 0..300 {
        let app = app.clone();
        requests.push(tokio::spawn(async move {
            let (status, body) = app
                .vote("hang", json!({"member": format!("m{}", i % 9)}))
                .await;
            (status, body, started.elapsed())
        }));
    }
    let mut slowest = Duration::ZERO;
    for r in requests {
        let (status, body, took) = r.await.unwrap();
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (StatusCode::SERVICE_UNAVAILABLE, Some("store_unavailable")),
            "{body}"
        );
        slowest = slowest.max(took);
    }
    // The timeout is 1 s; 300 votes sent at two calls of 32 a second would take 5 s (and
    // the last would count, Redis awake again).
    assert!(slowest < Duration::from_millis(3500), "took {slowest:?}");
    sleeper.await.unwrap();
}
