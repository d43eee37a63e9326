//! Group commit: votes on one board in flight together share one `vote.lua` call, and
//! each still passes or fails on its own, in order, with its own answer.

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::harness::{
    HOUR, Options, RawRedis, RedisServer, TestApp, clear_of_the_turn, error_codes, hourly_total,
    num, reset_stats,
};
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
pub(crate) async fn command_calls(
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
    let conn = reset_stats(&server).await;
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
    // The batch falls in one hour, the last the stats show.
    clear_of_the_turn(HOUR, Duration::from_secs(60)).await;
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

/// Sum before you write: 64 clients vote at once on a 10-member board (hour, day and
/// all-time in both views, carry-over 0.1, multiplier 1.5) with three rules, with replays
/// among them, so calls hold many votes on the same members. The call writes each key
/// and member once, and every vote still answers what it would have alone in the order
/// the ledger shows it was counted: its member's score in each bucket is the sum of the
/// counts of that member's entries up to its own; refusals are each rule's; the ledger
/// holds exactly the counted votes.
#[tokio::test(flavor = "multi_thread")]
async fn summed_calls_answer_each_vote_as_if_applied_one_after_another() {
    let seed: u64 = rand::random();
    println!("seed {seed}");
    let server = RedisServer::start();
    let app = TestApp::spawn_with(Options {
        redis: RedisTarget::Single(server.url()),
        ..Options::default()
    })
    .await;
    app.board(
        json!({"slug": "tv", "title": "TV", "periods": ["hour", "day", "all"],
        "multiplier": 1.5, "carry_over": 0.1, "max_count": 3}),
    )
    .await;
    let members: Vec<String> = (0..10).map(|i| format!("m{i}")).collect();
    app.members(
        "tv",
        &members.iter().map(String::as_str).collect::<Vec<_>>(),
    )
    .await;
    for rule in [
        json!({"name": "voter", "dimensions": ["voter"], "window": "day", "limit": 6}),
        json!({"name": "voter and member", "dimensions": ["voter", "member"], "window": "day", "limit": 3}),
        json!({"name": "member", "dimensions": ["member"], "window": "hour", "limit": 150}),
    ] {
        let (status, body) = app.post("/api/v1/admin/boards/tv/rules", rule).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }
    let mut conn = reset_stats(&server).await;
    let clients = (0..64u64).map(|c| {
        let app = app.clone();
        tokio::spawn(async move {
            use rand::{Rng, SeedableRng};
            let mut rng = rand::rngs::StdRng::seed_from_u64(seed ^ c);
            // (vote, answer) of each vote counted; (vote, rule) of each refused.
            let (mut counted, mut refused) = (Vec::new(), Vec::new());
            let mut sent: Vec<Value> = Vec::new();
            // The first answer of each counted vote, by idempotency key.
            let mut first = std::collections::HashMap::new();
            for i in 0..6 {
                // A batch of one voter's votes goes in one call, with other requests'.
                let batch = if !sent.is_empty() && rng.random_bool(0.15) {
                    sent[rng.random_range(0..sent.len())].clone()
                } else {
                    let votes: Vec<Value> = (0..rng.random_range(1..=6))
                        .map(|k| {
                            json!({
                                "board": "tv",
                                "member": format!("m{}", rng.random_range(0..10)),
                                "count": rng.random_range(1..=3),
                                "idempotency_key": format!("c{c}-{i}-{k}"),
                            })
                        })
                        .collect();
                    let voter = format!("u{}", rng.random_range(0..80));
                    let batch = json!({"voter": voter, "votes": votes});
                    sent.push(batch.clone());
                    batch
                };
                let (status, answer) = app.post("/api/v1/votes", batch.clone()).await;
                assert_eq!(status, StatusCode::OK, "{answer}");
                let results = answer["results"].as_array().unwrap();
                for (vote, result) in batch["votes"].as_array().unwrap().iter().zip(results) {
                    let mut vote = vote.clone();
                    vote["voter"] = batch["voter"].clone();
                    let key = vote["idempotency_key"].clone();
                    match result["error"]["code"].as_str() {
                        None if result["replayed"] == false => {
                            first.insert(key.to_string(), result.clone());
                            counted.push((vote, result.clone()));
                        }
                        // A replay answers the scores its first answer gave.
                        None => {
                            let mut replayed = result.clone();
                            replayed["replayed"] = json!(false);
                            assert_eq!(Some(&replayed), first.get(&key.to_string()), "{vote}");
                        }
                        Some("rate_limited") => {
                            refused.push((vote, result["error"]["rule"]["name"].clone()))
                        }
                        Some(other) => panic!("{other}: {result}"),
                    }
                }
            }
            (counted, refused)
        })
    });
    let (mut counted, mut refused) = (Vec::new(), Vec::new());
    for client in clients {
        let (c, r) = client.await.unwrap();
        counted.extend(c);
        refused.extend(r);
    }
    let calls = command_calls(&mut conn).await;
    let votes = counted.len() as u64;
    assert!(votes > 100, "{votes} votes counted");
    // Alone, each counted vote would ZINCRBY six rankings and carry into two.
    assert!(
        calls("zincrby") < votes * 8,
        "{} ZINCRBYs for {votes} votes in {} calls: the calls summed nothing",
        calls("zincrby"),
        calls("evalsha") + calls("eval")
    );

    let entries = crate::ledger::ledger(&app, "tv", 1000).await;
    crate::ledger::assert_gapless(&entries);
    assert_eq!(entries.len(), counted.len(), "one entry per counted vote");
    // Each member's answers, by all-time real score (which each counted vote raises),
    // are its entries in ledger order.
    for member in &members {
        let counts: Vec<i64> = entries
            .iter()
            .filter(|e| e["member"] == member.as_str())
            .map(|e| e["count"].as_i64().unwrap())
            .collect();
        let mut answers: Vec<&Value> = counted
            .iter()
            .filter(|(v, _)| v["member"] == member.as_str())
            .map(|(_, a)| a)
            .collect();
        let all_real = |a: &Value| num(&a["scores"][2]["real"]);
        answers.sort_by(|a, b| all_real(a).total_cmp(&all_real(b)));
        assert_eq!(answers.len(), counts.len(), "{member}");
        for (k, answer) in answers.iter().enumerate() {
            let scores = answer["scores"].as_array().unwrap();
            for (p, score) in scores.iter().enumerate() {
                // The counts of this member's votes up to this one in the same bucket.
                let real: i64 = (0..=k)
                    .filter(|&i| answers[i]["scores"][p]["bucket"] == score["bucket"])
                    .map(|i| counts[i])
                    .sum();
                assert_eq!(num(&score["real"]), real as f64, "{member} #{k}: {answer}");
                let one_bucket = answers
                    .iter()
                    .all(|a| a["scores"][p]["bucket"] == score["bucket"]);
                if one_bucket {
                    // No carry-over came in (the test did not cross an hour or a day).
                    assert_eq!(
                        num(&score["display"]),
                        real as f64 * 1.5,
                        "{member} #{k}: {answer}"
                    );
                }
            }
        }
    }
    // Every refusal is its rule's: with what was counted, that rule's limit is passed.
    let limit = |rule: &str| match rule {
        "voter" => 6,
        "voter and member" => 3,
        "member" => 150,
        other => panic!("rule {other}"),
    };
    for (vote, rule) in &refused {
        let rule = rule.as_str().unwrap();
        let same = |e: &&Value| match rule {
            "voter" => e["voter"] == vote["voter"],
            "voter and member" => e["voter"] == vote["voter"] && e["member"] == vote["member"],
            _ => e["member"] == vote["member"],
        };
        let used: i64 = entries
            .iter()
            .filter(same)
            .map(|e| e["count"].as_i64().unwrap())
            .sum();
        assert!(
            used + vote["count"].as_i64().unwrap() > limit(rule),
            "{vote} refused by {rule} with {used} used"
        );
    }
    // No rule let more through than its limit: what each counter admitted, summed from
    // the ledger (the member rule's hour: the entries' own hour).
    let mut admitted: std::collections::HashMap<(&str, String), i64> = Default::default();
    for e in &entries {
        let count = e["count"].as_i64().unwrap();
        let (voter, member) = (e["voter"].as_str().unwrap(), e["member"].as_str().unwrap());
        let hour = e["at"].as_str().unwrap()[..13].to_owned();
        for key in [
            ("voter", voter.to_owned()),
            ("voter and member", format!("{voter}/{member}")),
            ("member", format!("{member}/{hour}")),
        ] {
            *admitted.entry(key).or_default() += count;
        }
    }
    for ((rule, subject), used) in &admitted {
        assert!(*used <= limit(rule), "{rule} {subject}: {used}");
    }
    // Participants: the board's and each member's distinct voters are the ledger's
    // (HyperLogLog estimates, exact to within one at these sizes).
    let distinct = |member: Option<&str>| {
        entries
            .iter()
            .filter(|e| member.is_none_or(|m| e["member"] == m))
            .map(|e| e["voter"].as_str().unwrap())
            .collect::<std::collections::HashSet<_>>()
            .len() as i64
    };
    let (_, top) = app.get("/api/v1/boards/tv/top?period=all").await;
    let participants = top["participants"].as_i64().unwrap();
    assert!((participants - distinct(None)).abs() <= 1, "{top}");
    for member in &members {
        let (status, read) = app
            .get(&format!("/api/v1/boards/tv/members/{member}?period=all"))
            .await;
        if distinct(Some(member)) == 0 {
            continue;
        }
        assert_eq!(status, StatusCode::OK, "{read}");
        let participants = read["participants"].as_i64().unwrap();
        assert!(
            (participants - distinct(Some(member))).abs() <= 1,
            "{member}: {read}"
        );
    }
    let (_, stats) = app.get("/api/v1/boards/tv/stats?period=all").await;
    assert_eq!(
        hourly_total(&stats),
        entries
            .iter()
            .map(|e| e["count"].as_i64().unwrap())
            .sum::<i64>()
    );
}

/// A summed call refuses a vote that would take a score past 2^53 exactly where it would
/// be refused alone: the call's earlier votes count toward the check, and the headroom
/// mark (all-time scores below 10^15) lets a vote skip it only while what the call adds
/// cannot reach 2^53.
#[tokio::test(flavor = "multi_thread")]
async fn a_summed_call_refuses_past_two_to_the_53_where_a_vote_alone_would_be() {
    let app = TestApp::spawn().await;
    app.board(
        json!({"slug": "near", "title": "Near", "multiplier": 1000000,
        "max_count": 1000, "membership": "open", "ledger": false}),
    )
    .await;
    // 999 × 10^6 × 10^6 = 9.99 × 10^14 display units a vote; nine make 8.991 × 10^15, a
    // tenth would pass 2^53 (9.007 × 10^15).
    let m1 = json!({"board": "near", "member": "m1", "count": 999});
    let mut votes = vec![m1.clone(); 5];
    votes.push(json!({"board": "near", "member": "m2", "count": 1}));
    votes.extend(vec![m1.clone(); 5]);
    let (status, body) = app
        .post("/api/v1/votes", json!({"voter": "v", "votes": votes}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let results = body["results"].as_array().unwrap();
    let all_display: Vec<Value> = results
        .iter()
        .map(|r| match r["error"]["code"].as_str() {
            Some(code) => json!(code),
            None => r["scores"].as_array().unwrap().last().unwrap()["display"].clone(),
        })
        .collect();
    let step = 999_000_000.0;
    let expected: Vec<Value> = (1..=5)
        .map(|k| json!(k as f64 * step))
        .chain([json!(1_000_000.0)])
        .chain((6..=9).map(|k| json!(k as f64 * step)))
        .chain([json!("score_overflow")])
        .collect();
    assert_eq!(
        all_display
            .iter()
            .map(|v| v.as_f64().map_or(v.clone(), |f| json!(f)))
            .collect::<Vec<_>>(),
        expected,
        "{body}"
    );
    // Alone: the same tenth is refused, and 16 more votes (1.6 × 10^13) still fit.
    let (status, body) = app
        .vote("near", json!({"member": "m1", "count": 999}))
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("score_overflow")),
        "{body}"
    );
    let (status, body) = app.vote("near", json!({"member": "m1", "count": 16})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

/// A call's votes on the same members write each ranking key and member once, and each
/// member's participants once: four votes on two members, five periods in both views,
/// make 20 ZINCRBYs (not 40) and 6 PFADDs of members' participants (not 12), and still
/// answer 1, 2 and 3 for the first member's votes in turn.
#[tokio::test(flavor = "multi_thread")]
async fn a_call_writes_each_ranking_and_participants_key_once_per_member() {
    let (_server, app, mut conn) = own_board(
        ovation::store::redis::DEFAULT_VOTE_GROUP,
        "once",
        json!({"name": "plenty", "dimensions": ["voter"], "window": "day", "limit": 100}),
    )
    .await;
    let batch = json!({"voter": "a", "votes": [
        {"board": "once", "member": "m1"},
        {"board": "once", "member": "m1"},
        {"board": "once", "member": "m2"},
        {"board": "once", "member": "m1"},
    ]});
    let (status, body) = app.post("/api/v1/votes", batch).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let all_time: Vec<(Value, f64)> = body["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let all = r["scores"].as_array().unwrap().last().unwrap().clone();
            (r["member"].clone(), num(&all["real"]))
        })
        .collect();
    assert_eq!(
        all_time,
        [
            (json!("m1"), 1.0),
            (json!("m1"), 2.0),
            (json!("m2"), 1.0),
            (json!("m1"), 3.0)
        ],
        "{body}"
    );
    let calls = command_calls(&mut conn).await;
    assert_eq!(calls("zincrby"), 20);
    // Three member buckets (hour, day, all-time) for each of two members, and the
    // board's three.
    assert_eq!(calls("pfadd"), 6 + 3);
    assert_eq!(real_score(&app, "once", "m1").await, 3.0);
}

/// A call reads its votes' idempotency records and the board's headroom mark with one
/// MGET, not one per vote, and each vote still sees the records the call's earlier votes
/// wrote: four keyed votes, the third repeating the first's key, make one MGET, and the
/// third answers the first's scores; the batch sent again replays all four with one more.
#[tokio::test(flavor = "multi_thread")]
async fn a_call_reads_its_votes_idempotency_records_with_one_mget() {
    let (_server, app, mut conn) = own_board(
        ovation::store::redis::DEFAULT_VOTE_GROUP,
        "keyed",
        json!({"name": "plenty", "dimensions": ["voter"], "window": "day", "limit": 100}),
    )
    .await;
    let batch = json!({"voter": "a", "votes": [
        {"board": "keyed", "member": "m1", "idempotency_key": "k1"},
        {"board": "keyed", "member": "m2", "idempotency_key": "k2"},
        {"board": "keyed", "member": "m1", "idempotency_key": "k1"},
        {"board": "keyed", "member": "m1", "idempotency_key": "k3"},
    ]});
    let answers = |body: &Value| -> Vec<(Value, Value, f64)> {
        body["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let all = r["scores"].as_array().unwrap().last().unwrap().clone();
                (
                    r["member"].clone(),
                    r["replayed"].clone(),
                    num(&all["real"]),
                )
            })
            .collect()
    };
    // The batch, then the same batch again: the replayed flags of each round, and the
    // MGETs Redis has run after it.
    let rounds = [([false, false, true, false], 1), ([true; 4], 2)];
    for (replayed, mgets) in rounds {
        let (status, body) = app.post("/api/v1/votes", batch.clone()).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let expected: Vec<(Value, Value, f64)> =
            [("m1", 1.0), ("m2", 1.0), ("m1", 1.0), ("m1", 2.0)]
                .into_iter()
                .zip(replayed)
                .map(|((member, score), replayed)| (json!(member), json!(replayed), score))
                .collect();
        assert_eq!(answers(&body), expected, "{body}");
        assert_eq!(command_calls(&mut conn).await("mget"), mgets);
    }
    assert_eq!(real_score(&app, "keyed", "m1").await, 2.0);
}

/// Votes whose rules differ (a member with a limit of its own) share a call under two
/// headers, interleaved; each answers in the call's order, the one counter they share
/// counts each vote under its own limit, and since both headers write the same rankings
/// keys their votes' sums are one: each member's written once for the call.
#[tokio::test(flavor = "multi_thread")]
async fn votes_of_two_headers_in_one_call_answer_in_the_order_they_came() {
    let (_server, app, mut conn) = own_board(
        ovation::store::redis::DEFAULT_VOTE_GROUP,
        "mixed",
        json!({"name": "two a day, three with m2", "dimensions": ["voter"], "window": "day",
               "limit": 2, "overrides": [{"match": {"member": "m2"}, "limit": 3}]}),
    )
    .await;
    let vote = |member: &str| json!({"board": "mixed", "member": member});
    let batch = json!({"voter": "a", "votes": [
        vote("m1"), vote("m2"), vote("m1"), vote("m2"), vote("m1"),
    ]});
    let (status, body) = app.post("/api/v1/votes", batch).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let answers: Vec<(Value, Option<f64>)> = body["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let all = r["scores"]
                .as_array()
                .and_then(|s| s.last())
                .map(|a| num(&a["real"]));
            (r["error"]["code"].clone(), all)
        })
        .collect();
    // Voter a's one counter: m1's limit of two is reached by the second vote, m2's three
    // by the third.
    assert_eq!(
        answers,
        [
            (Value::Null, Some(1.0)),
            (Value::Null, Some(1.0)),
            (json!("rate_limited"), None),
            (Value::Null, Some(2.0)),
            (json!("rate_limited"), None),
        ],
        "{body}"
    );
    let calls = command_calls(&mut conn).await;
    assert_eq!(calls("evalsha") + calls("eval"), 1);
    // Each member's sums written once, to the five periods' two views (a header's own
    // sums would have been written three times: before the second vote, the third and
    // the fifth).
    assert_eq!(calls("zincrby"), 2 * 10);
    assert_eq!(real_score(&app, "mixed", "m1").await, 1.0);
    assert_eq!(real_score(&app, "mixed", "m2").await, 2.0);
}

/// A rule's counters are read once for the call: when one window's counters cannot be
/// read, the votes that count in that window fail, and a vote of the same call counted in
/// another window (a backfilled vote of yesterday) stands.
#[tokio::test(flavor = "multi_thread")]
async fn a_window_whose_counters_cannot_be_read_fails_only_its_own_votes() {
    let (_server, app, mut conn) = own_board(
        ovation::store::redis::DEFAULT_VOTE_GROUP,
        "counted",
        json!({"name": "five a day", "dimensions": ["voter"], "window": "day", "limit": 5}),
    )
    .await;
    let (status, body) = app
        .vote("counted", json!({"member": "m1", "voter": "a"}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let today: Vec<String> = redis::cmd("KEYS")
        .arg(format!("{}*rl:*:day:*", app.prefix))
        .query_async(&mut conn)
        .await
        .unwrap();
    assert_eq!(today.len(), 1, "{today:?}");
    let _: () = redis::cmd("SET")
        .arg(&today[0])
        .arg("not a hash")
        .query_async(&mut conn)
        .await
        .unwrap();
    let yesterday = (chrono::Utc::now() - chrono::Duration::days(1)).to_rfc3339();
    let batch = json!({"voter": "a", "votes": [
        {"board": "counted", "member": "m1"},
        {"board": "counted", "member": "m2", "at": yesterday},
        {"board": "counted", "member": "m3"},
    ]});
    let (status, body) = app.post("/api/v1/votes", batch).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        error_codes(&body),
        [
            json!("internal_error"),
            Value::Null,
            json!("internal_error")
        ],
        "{body}"
    );
    assert_eq!(real_score(&app, "counted", "m1").await, 1.0);
    assert_eq!(real_score(&app, "counted", "m2").await, 1.0);
    assert_eq!(real_score(&app, "counted", "m3").await, 0.0);
}
