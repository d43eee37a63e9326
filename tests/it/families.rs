//! Board families: a board per live room, match or region, made by its first write
//! (`instances: {"ttl_s": …}`), addressed as `<family>:<instance>`.

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::harness::{Options, RawRedis, TestApp};

fn code(body: &Value) -> &str {
    body["error"]["code"].as_str().unwrap_or("")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_family_is_a_board_setting_checked_and_fixed_at_creation() {
    let app = TestApp::spawn().await;
    let family = app
        .board(
            json!({"slug": "room", "title": "Rooms", "membership": "open",
            "scoring": "scores", "instances": {"ttl_s": 604800}}),
        )
        .await;
    let settings = json!({"ttl_s": 604800, "max_live": 100000, "pages": false, "ledger_days": 90});
    assert_eq!(family["instances"], settings);
    let (status, read) = app.get("/api/v1/admin/boards/room").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(read["instances"], settings);
    let plain = app.board(json!({"slug": "plain", "title": "Plain"})).await;
    assert_eq!(plain["instances"], Value::Null);

    for (ttl, expected) in [
        (json!(0), "invalid_ttl"),
        (json!(31_536_001), "invalid_ttl"),
        (json!(-5), "invalid_ttl"),
    ] {
        let (status, body) = app
            .post(
                "/api/v1/admin/boards",
                json!({"slug": "bad", "title": "Bad", "instances": {"ttl_s": ttl}}),
            )
            .await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{ttl}: {body}");
        assert_eq!(code(&body), expected, "{ttl}: {body}");
    }
    let (status, body) = app
        .post(
            "/api/v1/admin/boards",
            json!({"slug": "bad", "title": "Bad", "instances": {"ttl": 5}}),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(code(&body), "invalid_field", "{body}");
    let (status, _) = app.get("/api/v1/admin/boards/bad").await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // Fixed at creation, both ways; the same value again is no change.
    for (board, change) in [
        ("room", json!({"instances": {"ttl_s": 60}})),
        ("room", json!({"instances": null})),
        ("plain", json!({"instances": {"ttl_s": 60}})),
    ] {
        let (status, body) = app
            .patch(&format!("/api/v1/admin/boards/{board}"), change.clone())
            .await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{change}: {body}");
        assert_eq!(code(&body), "invalid_field", "{change}: {body}");
    }
    let (status, body) = app
        .patch(
            "/api/v1/admin/boards/room",
            json!({"title": "Live rooms", "instances": {"ttl_s": 604800}}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        (&body["title"], &body["instances"]),
        (&json!("Live rooms"), &settings)
    );
}

/// Adds rule `rule` to `board`.
async fn add_rule(app: &TestApp, board: &str, rule: Value) {
    let (status, body) = app
        .post(&format!("/api/v1/admin/boards/{board}/rules"), rule)
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
}

/// A votes family with a voter rule of ten votes a day, members m1 and m2 registered
/// (the family is open: any member may be voted for).
async fn rooms(app: &TestApp, slug: &str, ttl_s: i64) {
    app.board(json!({"slug": slug, "title": "Rooms", "membership": "open",
        "periods": ["hour", "day", "all", "rolling:24h"], "instances": {"ttl_s": ttl_s}}))
        .await;
    app.members(slug, &["m1", "m2"]).await;
    add_rule(
        app,
        slug,
        json!({"name": "ten a day", "dimensions": ["voter"], "window": "day", "limit": 10}),
    )
    .await;
}

/// (member, score) of `board`'s top in the real view of `period`.
async fn ranking(app: &TestApp, board: &str, period: &str) -> Vec<(String, i64)> {
    let (status, top) = app
        .get(&format!(
            "/api/v1/boards/{board}/top?period={period}&view=real"
        ))
        .await;
    assert_eq!(status, StatusCode::OK, "{top}");
    entries(&top)
}

/// (member, score) of a top answer.
fn entries(top: &Value) -> Vec<(String, i64)> {
    top["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["member"].as_str().unwrap().to_owned(),
                e["score"].as_i64().unwrap(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn each_instance_is_made_by_its_first_write_and_keeps_its_own_rankings_and_limits() {
    let app = TestApp::spawn().await;
    rooms(&app, "room", 3600).await;

    // Never written: an empty board, not an error.
    let (status, top) = app.get("/api/v1/boards/room:a/top?period=day").await;
    assert_eq!(status, StatusCode::OK, "{top}");
    assert_eq!(
        (top["entries"].clone(), top["total_members"].clone()),
        (json!([]), json!(0))
    );
    assert_eq!(top["board"], "room:a");

    for (room, member, voter, count) in [
        ("a", "m1", "v1", 3),
        ("a", "m2", "v2", 5),
        ("b", "m2", "v1", 1),
        ("b", "guest", "v3", 7),
    ] {
        let (status, body) = app
            .vote(
                &format!("room:{room}"),
                json!({"member": member, "voter": voter, "count": count}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["board"], format!("room:{room}"));
    }
    for period in ["hour", "day", "all", "rolling:24h"] {
        assert_eq!(
            ranking(&app, "room:a", period).await,
            [("m2".into(), 5), ("m1".into(), 3)],
            "{period}"
        );
        assert_eq!(
            ranking(&app, "room:b", period).await,
            [("guest".into(), 7), ("m2".into(), 1)],
            "{period}"
        );
    }
    let (_, standing) = app
        .get("/api/v1/boards/room:b/members/m2?period=day&view=real")
        .await;
    assert_eq!(
        (standing["rank"].clone(), standing["score"].clone()),
        (json!(2), json!(1))
    );
    let (_, stats) = app.get("/api/v1/boards/room:a/stats?period=day").await;
    assert_eq!(
        (
            stats["participants"].clone(),
            stats["total_members"].clone()
        ),
        (json!(2), json!(2))
    );
    // The family itself keeps nothing.
    let (status, family) = app.get("/api/v1/boards/room").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        family["instances"],
        json!({"ttl_s": 3600, "max_live": 100000, "pages": false, "ledger_days": 90})
    );

    // Rules count per instance: v1's ten a day in room:a leave room:b's untouched.
    let (status, body) = app
        .vote("room:a", json!({"member": "m2", "voter": "v1", "count": 7}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = app
        .vote("room:a", json!({"member": "m2", "voter": "v1"}))
        .await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    assert_eq!(code(&body), "rate_limited");
    let (status, body) = app
        .vote("room:b", json!({"member": "m1", "voter": "v1"}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");

    // An idempotency key is the instance's own: the same key on another instance is
    // another write.
    for room in ["c", "d", "c"] {
        let (status, body) = app
            .vote(
                &format!("room:{room}"),
                json!({"member": "m1", "voter": "v9", "idempotency_key": "k1"}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    for room in ["c", "d"] {
        assert_eq!(
            ranking(&app, &format!("room:{room}"), "all").await,
            [("m1".into(), 1)],
            "room:{room}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_family_needs_an_instance_and_an_instance_needs_a_family() {
    let app = TestApp::spawn().await;
    rooms(&app, "room", 3600).await;
    app.board(json!({"slug": "plain", "title": "Plain", "membership": "open"}))
        .await;
    app.board(
        json!({"slug": "gifts", "title": "Gifts", "membership": "open",
        "scoring": "scores", "public_page": true, "instances": {"ttl_s": 3600, "pages": true}}),
    )
    .await;
    app.board(
        json!({"slug": "tally", "title": "Tally", "membership": "open",
        "scoring": "scores"}),
    )
    .await;
    let long = format!("room:{}", "x".repeat(65));
    let cases: Vec<(String, StatusCode, &str)> = vec![
        (
            "room".into(),
            StatusCode::UNPROCESSABLE_ENTITY,
            "instance_required",
        ),
        (
            "room:".into(),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_instance",
        ),
        (
            "room:a:b".into(),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_instance",
        ),
        (
            "room:a%20b".into(),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_instance",
        ),
        (
            "room:a%7Bb%7D".into(),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_instance",
        ),
        (long, StatusCode::UNPROCESSABLE_ENTITY, "invalid_instance"),
        // A plain board has no instances: the name names no board.
        ("plain:a".into(), StatusCode::NOT_FOUND, "board_not_found"),
        ("nope:a".into(), StatusCode::NOT_FOUND, "board_not_found"),
    ];
    for (board, status, expected) in &cases {
        let (got, body) = app
            .vote(board, json!({"member": "m1", "voter": "v1"}))
            .await;
        assert_eq!(
            (got, code(&body)),
            (*status, *expected),
            "vote {board}: {body}"
        );
        for read in [
            format!("/api/v1/boards/{board}/top"),
            format!("/api/v1/boards/{board}/members/m1"),
            format!("/api/v1/boards/{board}/members/m1/around"),
            format!("/api/v1/boards/{board}/stats"),
            format!("/api/v1/boards/{board}/members/m1/history"),
            format!("/api/v1/boards/{board}/quota?voter=v1"),
            format!("/api/v1/ranks?board={board}&members=m1"),
            format!("/api/v1/tops?boards={board}"),
        ] {
            let (got, body) = app.get(&read).await;
            assert_eq!((got, code(&body)), (*status, *expected), "{read}: {body}");
        }
        let scores = board
            .replacen("room", "gifts", 1)
            .replacen("plain", "tally", 1);
        let (got, body) = app
            .post(
                &format!("/api/v1/boards/{scores}/scores"),
                json!({"member": "m1", "op": "incr", "value": 1}),
            )
            .await;
        assert_eq!(
            (got, code(&body)),
            (*status, *expected),
            "scores {scores}: {body}"
        );
        // A voting page is a room's: any other name is no voting page.
        let page = app
            .client
            .get(format!("{}/b/{scores}", app.base))
            .send()
            .await
            .unwrap();
        assert_eq!(page.status(), StatusCode::NOT_FOUND, "/b/{scores}");
    }
    // Batch items name instances one by one.
    let (status, body) = app
        .post(
            "/api/v1/votes",
            json!({"voter": "v1", "votes": [
                {"board": "room:x", "member": "m1"},
                {"board": "room", "member": "m1"},
                {"board": "room:x y", "member": "m1"},
                {"board": "plain:x", "member": "m1"},
                {"board": "room:y", "member": "m2", "count": 2},
            ]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let results = body["results"].as_array().unwrap();
    assert_eq!(results[0]["board"], "room:x", "{body}");
    assert_eq!(code(&results[1]), "instance_required", "{body}");
    assert_eq!(code(&results[2]), "invalid_instance", "{body}");
    assert_eq!(code(&results[3]), "board_not_found", "{body}");
    assert_eq!(results[4]["board"], "room:y", "{body}");
    assert_eq!(ranking(&app, "room:y", "all").await, [("m2".into(), 2)]);
    // Nothing was written under the family's own name.
    let mut redis = RawRedis::connect().await;
    let rankings = redis.keys(&format!("{}:*:z:*", app.prefix)).await;
    assert_eq!(rankings.len(), 12, "{rankings:?}");
    let own: Vec<_> = rankings.iter().filter(|k| !k.contains(":i:")).collect();
    assert_eq!(own, Vec::<&String>::new());
}

/// Every key of instance `instance` (of any family, its shards too) with its PTTL in
/// ms (-1: none).
async fn instance_keys(app: &TestApp, instance: &str) -> Vec<(String, i64)> {
    let mut redis = RawRedis::connect().await;
    let mut keys = Vec::new();
    let mut found = redis
        .keys(&format!("{}:{{b:*:i:{instance}}}:*", app.prefix))
        .await;
    // A sharded instance's shards.
    found.extend(
        redis
            .keys(&format!("{}:{{b:*:i:{instance}:s*}}:*", app.prefix))
            .await,
    );
    for key in found {
        let ttl: i64 = redis.query(redis::cmd("PTTL").arg(&key)).await;
        keys.push((key, ttl));
    }
    keys.sort();
    keys
}

/// A rolling window's slot (or drain) key, which lives at least the window's span.
fn is_window_slot(key: &str) -> bool {
    key.contains(":w:") && !key.ends_with(":state") && !key.contains(":total:")
}

#[tokio::test(flavor = "multi_thread")]
async fn an_idle_instance_leaves_redis_by_itself_and_a_write_keeps_it() {
    let app = TestApp::spawn().await;
    rooms(&app, "room", 2).await;
    app.board(
        json!({"slug": "gifts", "title": "Gifts", "membership": "open",
        "scoring": "scores", "storage": {"kind": "sharded", "shards": 2},
        "instances": {"ttl_s": 2}}),
    )
    .await;
    add_rule(
        &app,
        "gifts",
        json!({"name": "a hundred a day", "dimensions": ["voter"], "window": "day", "limit": 100}),
    )
    .await;
    add_rule(&app, "gifts", json!({"name": "a thousand ever", "dimensions": ["voter"], "window": "campaign", "limit": 1000})).await;
    let write = |room: &'static str, member: &'static str| {
        let app = &app;
        async move {
            let (status, body) = app
                .vote(
                    &format!("room:{room}"),
                    json!({"member": member, "voter": "v1", "idempotency_key": format!("{room}-{member}")}),
                )
                .await;
            assert_eq!(status, StatusCode::OK, "{body}");
            let (status, body) = app
                .post(
                    &format!("/api/v1/boards/gifts:{room}/scores"),
                    json!({"member": member, "op": "incr", "value": 5, "voter": "v1",
                        "idempotency_key": format!("{room}-{member}")}),
                )
                .await;
            assert_eq!(status, StatusCode::OK, "{body}");
        }
    };
    write("e", "m1").await;
    write("f", "m1").await;
    // A refused write is a write too: its refusals hash expires with the instance.
    let (status, body) = app
        .vote(
            "room:e",
            json!({"member": "m1", "voter": "v1", "count": 10}),
        )
        .await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");

    // Every key a write touched has an expiry: the instance's TTL, rule counters
    // included (a day's, a campaign's: none outlives the instance), but a window slot's,
    // at least the window's span.
    for room in ["e", "f"] {
        let keys = instance_keys(&app, room).await;
        assert!(keys.len() > 20, "{keys:?}");
        for (key, ttl) in &keys {
            assert!(*ttl > 0, "{key} has no expiry");
            if !is_window_slot(key) {
                assert!(*ttl <= 2000, "{key} lives {ttl} ms");
            }
        }
        assert!(keys.iter().any(|(k, _)| k.contains(":rl:")), "{keys:?}");
        assert!(
            keys.iter().any(|(k, _)| k.contains(":campaign:")),
            "{keys:?}"
        );
        assert!(keys.iter().any(|(k, _)| k.contains(":idem:")), "{keys:?}");
        assert_eq!(
            keys.iter().any(|(k, _)| k.contains(":rf:")),
            room == "e",
            "{keys:?}"
        );
    }

    // room:e is written again before it expires; room:f is not.
    tokio::time::sleep(std::time::Duration::from_millis(1200)).await;
    write("e", "m2").await;
    tokio::time::sleep(std::time::Duration::from_millis(1300)).await;
    for (board, expected) in [
        ("room:e", vec![("m1".to_owned(), 1), ("m2".to_owned(), 1)]),
        ("room:f", vec![]),
        ("gifts:e", vec![("m1".to_owned(), 5), ("m2".to_owned(), 5)]),
        ("gifts:f", vec![]),
    ] {
        for period in ["hour", "all"] {
            let mut got = ranking(&app, board, period).await;
            got.sort();
            assert_eq!(got, expected, "{board} {period}");
        }
    }
    let (_, window) = app
        .get("/api/v1/boards/room:f/top?period=rolling:24h&view=real")
        .await;
    assert_eq!(entries(&window), []);

    // Gone for good: every key of room:f but a window's slots, which keep their own time
    // (cleared by the room's next first write); a read wrote nothing.
    let left: Vec<String> = instance_keys(&app, "f")
        .await
        .into_iter()
        .map(|(key, ttl)| {
            assert!(ttl > 0, "{key} has no expiry");
            key
        })
        .filter(|key| !is_window_slot(key))
        .collect();
    assert_eq!(left, Vec::<String>::new());

    // Written again, room:f starts from nothing: the window's old slots do not come back.
    let (status, body) = app
        .vote("room:f", json!({"member": "m1", "voter": "v2"}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    for period in ["all", "rolling:24h"] {
        assert_eq!(
            ranking(&app, "room:f", period).await,
            [("m1".to_owned(), 1)],
            "{period}"
        );
    }
    tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
    let (_, top) = app.get("/api/v1/boards/room:e/top?period=all").await;
    assert_eq!(entries(&top), []);
}

/// Every page of `family`'s listing, `limit` at a time: the instances in order, and the
/// `total` each page answered.
async fn listing(app: &TestApp, family: &str, limit: i64) -> (Vec<(String, i64)>, Vec<i64>) {
    searching(app, family, &format!("limit={limit}")).await
}

/// As [`listing`], with the query `query`.
async fn searching(app: &TestApp, family: &str, query: &str) -> (Vec<(String, i64)>, Vec<i64>) {
    let (mut seen, mut totals) = (Vec::new(), Vec::new());
    let mut cursor: Option<String> = None;
    loop {
        let mut path = format!("/api/v1/boards/{family}/instances?{query}");
        if let Some(c) = &cursor {
            path.push_str(&format!("&cursor={c}"));
        }
        let (status, page) = app.get(&path).await;
        assert_eq!(status, StatusCode::OK, "{page}");
        totals.push(page["total"].as_i64().unwrap());
        for i in page["instances"].as_array().unwrap() {
            assert!(i["last_write_at"].as_str().is_some(), "{i}");
            seen.push((
                i["instance"].as_str().unwrap().to_owned(),
                i["total_members"].as_i64().unwrap(),
            ));
        }
        match page["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_owned()),
            None => break,
        }
        assert!(seen.len() < 100, "the listing does not end: {seen:?}");
    }
    (seen, totals)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_family_lists_its_live_instances_most_recent_first() {
    let app = TestApp::spawn().await;
    rooms(&app, "room", 3600).await;
    rooms(&app, "brief", 1).await;
    for (room, members) in [("a", 1), ("b", 3), ("c", 2)] {
        for m in 0..members {
            let (status, body) = app
                .vote(
                    &format!("room:{room}"),
                    json!({"member": format!("m{m}"), "voter": "v1"}),
                )
                .await;
            assert_eq!(status, StatusCode::OK, "{body}");
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    let expected: Vec<(String, i64)> = vec![("c".into(), 2), ("b".into(), 3), ("a".into(), 1)];
    assert_eq!(listing(&app, "room", 50).await, (expected.clone(), vec![3]));
    assert_eq!(listing(&app, "room", 2).await, (expected, vec![3, 3]));
    // A write moves its instance first.
    app.vote("room:a", json!({"member": "m0", "voter": "v2"}))
        .await;
    let (order, _) = listing(&app, "room", 1).await;
    assert_eq!(
        order.iter().map(|(i, _)| i.as_str()).collect::<Vec<_>>(),
        ["a", "c", "b"]
    );
    // Instances written in one call share a time: pages still list each once.
    let votes: Vec<Value> = (0..7)
        .map(|i| json!({"board": format!("room:t{i}"), "member": "m1"}))
        .collect();
    let (status, body) = app
        .post("/api/v1/votes", json!({"voter": "v3", "votes": votes}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (all, totals) = listing(&app, "room", 2).await;
    let mut names: Vec<&str> = all.iter().map(|(i, _)| i.as_str()).collect();
    assert_eq!(names.len(), 10, "{names:?}");
    assert!(totals.iter().all(|&t| t == 10), "{totals:?}");
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), 10, "{names:?}");
    // A search pages through its matches as the listing does; `total` counts every
    // live instance.
    let (found, totals) = searching(&app, "room", "limit=3&search=t").await;
    let mut found: Vec<&str> = found.iter().map(|(i, _)| i.as_str()).collect();
    assert_eq!(totals, [10, 10, 10]);
    found.sort_unstable();
    assert_eq!(found, ["t0", "t1", "t2", "t3", "t4", "t5", "t6"]);
    assert_eq!(
        searching(&app, "room", "search=a").await,
        (vec![("a".into(), 1)], vec![10])
    );
    assert_eq!(
        searching(&app, "room", "search=zz").await,
        (vec![], vec![10])
    );

    // An instance leaves the listing when it expires: no sweep, no write needed.
    app.vote("brief:x", json!({"member": "m1", "voter": "v1"}))
        .await;
    assert_eq!(
        listing(&app, "brief", 50).await,
        (vec![("x".into(), 1)], vec![1])
    );
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    assert_eq!(listing(&app, "brief", 50).await, (vec![], vec![0]));

    app.board(json!({"slug": "plain", "title": "Plain"})).await;
    for (path, status, expected) in [
        (
            "/api/v1/boards/room/instances?limit=0",
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_field",
        ),
        (
            "/api/v1/boards/room/instances?limit=1001",
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_field",
        ),
        (
            "/api/v1/boards/room/instances?cursor=soon",
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_cursor",
        ),
        (
            "/api/v1/boards/room/instances?cursor=12:a%20b",
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_cursor",
        ),
        (
            "/api/v1/boards/room/instances?search=a*",
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_field",
        ),
        (
            "/api/v1/boards/room/instances?search=",
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_field",
        ),
        (
            "/api/v1/boards/room:a/instances",
            StatusCode::NOT_FOUND,
            "board_not_found",
        ),
        (
            "/api/v1/boards/plain/instances",
            StatusCode::NOT_FOUND,
            "board_not_found",
        ),
        (
            "/api/v1/boards/nope/instances",
            StatusCode::NOT_FOUND,
            "board_not_found",
        ),
    ] {
        let (got, body) = app.get(path).await;
        assert_eq!((got, code(&body)), (status, expected), "{path}: {body}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn deleting_a_family_deletes_every_instance_in_the_background() {
    let app = TestApp::spawn().await;
    rooms(&app, "gone", 3600).await;
    rooms(&app, "kept", 3600).await;
    for i in 0..12 {
        for family in ["gone", "kept"] {
            let (status, body) = app
                .vote(
                    &format!("{family}:r{i}"),
                    json!({"member": "m1", "voter": "v1"}),
                )
                .await;
            assert_eq!(status, StatusCode::OK, "{body}");
        }
    }
    let mut redis = RawRedis::connect().await;
    let count = |keys: Vec<String>, id: &str| {
        keys.iter()
            .filter(|k| k.contains(&format!("{{b:{id}:i:")))
            .count()
    };
    let before = redis.keys(&format!("{}:*", app.prefix)).await;
    assert!(count(before.clone(), "1") >= 12 * 10, "{before:?}");
    let kept_before = count(before, "2");
    let (status, body) = app.delete("/api/v1/admin/boards/gone").await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let keys = redis.keys(&format!("{}:*", app.prefix)).await;
        if count(keys.clone(), "1") == 0 {
            assert_eq!(count(keys.clone(), "2"), kept_before);
            assert!(!keys.iter().any(|k| k.contains("{b:1}")), "{keys:?}");
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{keys:?}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let (status, body) = app.vote("gone:r1", json!({"member": "m1"})).await;
    assert_eq!(
        (status, code(&body)),
        (StatusCode::NOT_FOUND, "board_not_found")
    );
}

/// One write of the model test: a vote to an instance of the votes family, or a score
/// to one of the scores family (sharded).
#[derive(Debug, Clone)]
struct Write {
    scores: bool,
    instance: u8,
    member: u8,
    voter: u8,
    /// Votes counted, or the score's value.
    amount: i64,
    /// A score's op: `best` (keep the higher), else `incr`.
    best: bool,
}

fn a_write() -> impl Strategy<Value = Write> {
    (
        any::<bool>(),
        0u8..10,
        0u8..6,
        0u8..8,
        1i64..40,
        any::<bool>(),
    )
        .prop_map(|(scores, instance, member, voter, amount, best)| Write {
            scores,
            instance,
            member,
            voter,
            amount,
            best,
        })
}

/// What one instance must answer: every member's score, and its distinct voters.
#[derive(Debug, Default)]
struct Room {
    scores: BTreeMap<String, i64>,
    voters: BTreeSet<String>,
}

impl Room {
    /// (member, score, rank): higher score first, then the greater member id; a rank
    /// is one more than the members scoring higher.
    fn ranking(&self) -> Vec<(String, i64, i64)> {
        let mut ranking: Vec<(String, i64)> =
            self.scores.iter().map(|(m, s)| (m.clone(), *s)).collect();
        ranking.sort_by(|a, b| b.1.cmp(&a.1).then(b.0.cmp(&a.0)));
        ranking
            .into_iter()
            .map(|(m, s)| {
                let rank = 1 + self.scores.values().filter(|o| **o > s).count() as i64;
                (m, s, rank)
            })
            .collect()
    }
}

fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: std::sync::OnceLock<tokio::runtime::Runtime> = std::sync::OnceLock::new();
    RT.get_or_init(|| tokio::runtime::Runtime::new().unwrap())
}

/// Plays `writes` over two families' instances, then reads every instance's top, each
/// member's standing and its participants, and compares them with the model.
async fn play_rooms(writes: &[Write]) {
    let app = TestApp::spawn().await;
    let families = ["votes", "gifts"];
    app.board(
        json!({"slug": "votes", "title": "Votes", "membership": "open",
        "periods": ["day", "all"], "instances": {"ttl_s": 3600}}),
    )
    .await;
    app.board(
        json!({"slug": "gifts", "title": "Gifts", "membership": "open",
        "scoring": "scores", "storage": {"kind": "sharded", "shards": 3},
        "periods": ["day", "all"], "instances": {"ttl_s": 3600}}),
    )
    .await;
    let mut model: BTreeMap<(usize, u8), Room> = BTreeMap::new();
    for w in writes {
        let family = usize::from(w.scores);
        let board = format!("{}:i{}", families[family], w.instance);
        let (member, voter) = (format!("m{}", w.member), format!("v{}", w.voter));
        let room = model.entry((family, w.instance)).or_default();
        let score = room.scores.entry(member.clone()).or_insert(0);
        let (status, body) = if w.scores {
            let op = if w.best { "best" } else { "incr" };
            *score = if w.best {
                (*score).max(w.amount)
            } else {
                *score + w.amount
            };
            app.post(
                &format!("/api/v1/boards/{board}/scores"),
                json!({"member": member, "op": op, "value": w.amount, "voter": voter}),
            )
            .await
        } else {
            *score += w.amount;
            app.vote(
                &board,
                json!({"member": member, "voter": voter, "count": w.amount}),
            )
            .await
        };
        room.voters.insert(voter);
        assert_eq!(status, StatusCode::OK, "{w:?}: {body}");
    }
    let empty = Room::default();
    for (family, slug) in families.iter().enumerate() {
        for instance in 0..10u8 {
            let room = model.get(&(family, instance)).unwrap_or(&empty);
            let board = format!("{slug}:i{instance}");
            let (status, top) = app
                .get(&format!(
                    "/api/v1/boards/{board}/top?period=all&view=real&limit=100"
                ))
                .await;
            assert_eq!(status, StatusCode::OK, "{top}");
            let got: Vec<(String, i64, i64)> = top["entries"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| {
                    (
                        e["member"].as_str().unwrap().to_owned(),
                        e["score"].as_i64().unwrap(),
                        e["rank"].as_i64().unwrap(),
                    )
                })
                .collect();
            let ranking = room.ranking();
            assert_eq!(got, ranking, "{board}");
            assert_eq!(
                (top["total_members"].as_i64(), top["participants"].as_i64()),
                (
                    Some(room.scores.len() as i64),
                    Some(room.voters.len() as i64)
                ),
                "{board}: {top}"
            );
            for (member, score, rank) in &ranking {
                let (status, standing) = app
                    .get(&format!(
                        "/api/v1/boards/{board}/members/{member}?period=all&view=real"
                    ))
                    .await;
                assert_eq!(status, StatusCode::OK, "{standing}");
                assert_eq!(
                    (standing["score"].as_i64(), standing["rank"].as_i64()),
                    (Some(*score), Some(*rank)),
                    "{board} {member}: {standing}"
                );
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn every_instance_answers_what_its_own_model_answers(
        writes in prop::collection::vec(a_write(), 1..80),
    ) {
        runtime().block_on(play_rooms(&writes));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn rules_count_exactly_per_instance_under_32_concurrent_clients() {
    let app = std::sync::Arc::new(TestApp::spawn().await);
    app.board(
        json!({"slug": "room", "title": "Rooms", "membership": "open",
        "periods": ["day", "all"], "instances": {"ttl_s": 3600}}),
    )
    .await;
    add_rule(
        &app,
        "room",
        json!({"name": "five a day", "dimensions": ["voter"], "window": "day", "limit": 5}),
    )
    .await;
    // Client c votes as voter c % 4, six times, in rooms c, c + 1, … (mod 4).
    let clients: Vec<_> = (0..32u8)
        .map(|c| {
            let app = app.clone();
            tokio::spawn(async move {
                let mut outcomes = Vec::new();
                for round in 0..6u8 {
                    let room = (c + round) % 4;
                    let (status, body) = app
                        .vote(
                            &format!("room:{room}"),
                            json!({"member": "m1", "voter": format!("v{}", c % 4)}),
                        )
                        .await;
                    outcomes.push(((room, c % 4), status, code(&body).to_owned()));
                }
                outcomes
            })
        })
        .collect();
    let mut tried: BTreeMap<(u8, u8), i64> = BTreeMap::new();
    let mut accepted: BTreeMap<(u8, u8), i64> = BTreeMap::new();
    for client in clients {
        for (pair, status, code) in client.await.unwrap() {
            *tried.entry(pair).or_default() += 1;
            match status {
                StatusCode::OK => *accepted.entry(pair).or_default() += 1,
                StatusCode::TOO_MANY_REQUESTS => assert_eq!(code, "rate_limited"),
                other => panic!("{pair:?}: {other} {code}"),
            }
        }
    }
    assert_eq!(tried.len(), 16, "{tried:?}");
    for (pair, n) in &tried {
        assert_eq!(
            accepted.get(pair).copied().unwrap_or(0),
            (*n).min(5),
            "{pair:?} of {n}"
        );
    }
    for room in 0..4u8 {
        let expected: i64 = (0..4u8).map(|v| accepted[&(room, v)]).sum();
        assert_eq!(
            ranking(&app, &format!("room:{room}"), "day").await,
            [("m1".to_owned(), expected)],
            "room:{room}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_key_limited_to_a_family_reaches_its_instances_and_no_other_board() {
    let app = TestApp::spawn().await;
    rooms(&app, "room", 3600).await;
    app.board(json!({"slug": "plain", "title": "Plain", "membership": "open"}))
        .await;
    let mut keys = Vec::new();
    for board in ["room", "plain"] {
        let (status, created) = app
            .post(
                "/api/v1/admin/api-keys",
                json!({"name": board, "scopes": ["vote", "read"], "boards": [board]}),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{created}");
        keys.push(created["key"].as_str().unwrap().to_owned());
    }
    let (rooms_key, plain_key) = (&keys[0], &keys[1]);
    let body = json!({"member": "m1", "voter": "v1"});
    let (status, answer) = app
        .call(
            reqwest::Method::POST,
            "/api/v1/boards/room:8812/votes",
            Some(rooms_key),
            Some(&body),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let (status, answer) = app
        .call(
            reqwest::Method::GET,
            "/api/v1/boards/room:8812/top?period=all&view=real",
            Some(rooms_key),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(entries(&answer), [("m1".to_owned(), 1)]);
    // Refused before the body is read: a body that is not JSON is never looked at.
    let refused = app
        .client
        .post(format!("{}/api/v1/boards/room:8812/votes", app.base))
        .bearer_auth(plain_key)
        .header("Content-Type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
    let refused: Value = refused.json().await.unwrap();
    assert_eq!(code(&refused), "key_not_allowed", "{refused}");
    for path in [
        "/api/v1/boards/room:8812/top",
        "/api/v1/boards/room/instances",
    ] {
        let (status, answer) = app
            .call(reqwest::Method::GET, path, Some(plain_key), None)
            .await;
        assert_eq!(
            (status, code(&answer)),
            (StatusCode::FORBIDDEN, "key_not_allowed"),
            "{path}: {answer}"
        );
    }
    assert_eq!(
        ranking(&app, "room:8812", "all").await,
        [("m1".to_owned(), 1)],
        "nothing more counted"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_search_looks_at_a_bounded_number_of_rooms_a_request_and_goes_on_by_cursor() {
    let app = TestApp::spawn_with(Options {
        read_cache: std::time::Duration::from_secs(60),
        ..Options::default()
    })
    .await;
    app.board(
        json!({"slug": "room", "title": "Rooms", "membership": "open",
        "public_page": true, "instances": {"ttl_s": 3600}}),
    )
    .await;
    // 12,000 live rooms in the family's listing (the first board of the test's own
    // database), newest first, and one match, the oldest of all.
    let now = chrono::Utc::now().timestamp_millis();
    let listing = format!("{}:{{b:1}}:instances", app.prefix);
    let mut zadd = redis::cmd("ZADD");
    zadd.arg(&listing);
    for i in 0..12_000_i64 {
        zadd.arg(now - i).arg(format!("r{i:05}"));
    }
    zadd.arg(now - 12_000).arg("needle");
    let mut redis = RawRedis::connect().await;
    let added: i64 = redis.query(&zadd).await;
    assert_eq!(added, 12_001);
    // Anonymous, on a public family: each request looks at 5,000 rooms at most, so the
    // match is found on the third page, the first two empty with a cursor to go on.
    let anonymous = |path: String| {
        let app = &app;
        async move {
            let resp = app
                .client
                .get(format!("{}{path}", app.base))
                .send()
                .await
                .unwrap();
            assert_eq!(resp.status(), StatusCode::OK);
            resp.json::<Value>().await.unwrap()
        }
    };
    let mut pages = Vec::new();
    let mut cursor = String::new();
    loop {
        let page = anonymous(format!(
            "/api/v1/boards/room/instances?search=needle&limit=50{cursor}"
        ))
        .await;
        assert_eq!(page["total"], 12_001, "{page}");
        pages.push(page["instances"].as_array().unwrap().len());
        match page["next_cursor"].as_str() {
            Some(next) => cursor = format!("&cursor={next}"),
            None => {
                assert_eq!(page["instances"][0]["instance"], "needle", "{page}");
                break;
            }
        }
        assert!(pages.len() < 5, "{pages:?}");
    }
    assert_eq!(pages, [0, 0, 1]);
    // A page of matches stops at its limit and goes on after its last match.
    let page = anonymous("/api/v1/boards/room/instances?search=r0000&limit=4".into()).await;
    let names: Vec<&str> = page["instances"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["instance"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["r00000", "r00001", "r00002", "r00003"]);
    assert_eq!(
        page["next_cursor"].as_str(),
        Some(format!("{}:r00003", now - 3).as_str())
    );
    // Identical searches share one answer for the read cache's time: a room listed
    // meanwhile shows only in a request not made before.
    let _: i64 = redis
        .query(redis::cmd("ZADD").arg(&listing).arg(now + 1).arg("r00000b"))
        .await;
    let again = anonymous("/api/v1/boards/room/instances?search=r0000&limit=4".into()).await;
    assert_eq!(again, page);
    let fresh = anonymous("/api/v1/boards/room/instances?search=r0000&limit=5".into()).await;
    assert_eq!(fresh["instances"][0]["instance"], "r00000b", "{fresh}");
}

/// The rooms `family` (the test's first board) lists as live, read from Redis.
async fn listed_rooms(app: &TestApp) -> i64 {
    let mut redis = RawRedis::connect().await;
    redis
        .query(redis::cmd("ZCARD").arg(format!("{}:{{b:1}}:instances", app.prefix)))
        .await
}

/// The keys of every room of the test's first board, in Redis.
async fn room_keys(app: &TestApp) -> usize {
    let mut redis = RawRedis::connect().await;
    let mut keys = redis.keys(&format!("{}:{{b:1:i:*", app.prefix)).await;
    keys.sort();
    keys.dedup();
    keys.len()
}

/// Each result's error code of a batch answer ("" for a counted write).
fn batch_codes(body: &Value) -> Vec<String> {
    body["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["error"]["code"].as_str().unwrap_or("").to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_family_opens_rooms_within_its_budget_per_creator_and_in_all() {
    let app = TestApp::spawn().await;
    let family = app
        .board(json!({"slug": "fam", "title": "Fam", "membership": "open",
            "instances": {"ttl_s": 3600, "max_live": 30}}))
        .await;
    assert_eq!(
        family["instances"],
        json!({"ttl_s": 3600, "max_live": 30, "pages": false, "ledger_days": 90})
    );
    add_rule(
        &app,
        "fam",
        json!({"name": "twenty rooms", "dimensions": ["creator"], "window": "campaign", "limit": 20}),
    )
    .await;
    add_rule(
        &app,
        "fam",
        json!({"name": "per room", "dimensions": ["ip"], "window": "day", "limit": 2}),
    )
    .await;
    // One vote-only key, 500 new rooms in five batches: 20 open, the rest are refused by
    // the family's rule and create nothing.
    let first = app.key(&["vote"], None).await;
    let mut codes = Vec::new();
    for batch in 0..5 {
        let votes: Vec<Value> = (0..100)
            .map(|i| json!({"board": format!("fam:a{}", batch * 100 + i), "member": "m1"}))
            .collect();
        let (status, body) = app
            .call(
                reqwest::Method::POST,
                "/api/v1/votes",
                Some(&first),
                Some(&json!({"voter": "v", "votes": votes})),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        if batch == 0 {
            assert_eq!(
                body["results"][20]["error"]["rule"]["name"], "twenty rooms",
                "{body}"
            );
        }
        codes.extend(batch_codes(&body));
    }
    assert_eq!(codes[..20], vec![String::new(); 20]);
    assert_eq!(codes[20..], vec!["rate_limited".to_owned(); 480]);
    assert_eq!(listed_rooms(&app).await, 20);
    let per_room = room_keys(&app).await;
    // Writing again to rooms it opened costs no opening.
    let (status, body) = app
        .call(
            reqwest::Method::POST,
            "/api/v1/boards/fam:a3/votes",
            Some(&first),
            Some(&json!({"member": "m2"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // Another key opens its own 20, but the family holds 30 rooms at most.
    let second = app.key(&["vote"], None).await;
    let votes: Vec<Value> = (0..15)
        .map(|i| json!({"board": format!("fam:b{i}"), "member": "m1"}))
        .collect();
    let (_, body) = app
        .call(
            reqwest::Method::POST,
            "/api/v1/votes",
            Some(&second),
            Some(&json!({"voter": "v", "votes": votes})),
        )
        .await;
    let codes = batch_codes(&body);
    assert_eq!(codes[..10], vec![String::new(); 10]);
    assert_eq!(codes[10..], vec!["family_full".to_owned(); 5]);
    let (status, body) = app
        .call(
            reqwest::Method::POST,
            "/api/v1/boards/fam:b99/votes",
            Some(&second),
            Some(&json!({"member": "m1"})),
        )
        .await;
    assert_eq!(
        (status, code(&body)),
        (StatusCode::CONFLICT, "family_full"),
        "{body}"
    );
    assert_eq!(listed_rooms(&app).await, 30);
    // Redis holds the 30 rooms' keys, none of a refused one.
    assert!(
        room_keys(&app).await <= 30 * per_room / 20 + 2,
        "{per_room}"
    );
    let (_, top) = app.get("/api/v1/boards/fam:b14/top?period=day").await;
    assert_eq!(entries(&top), []);
    let (_, listing) = app.get("/api/v1/boards/fam/instances?limit=1").await;
    assert_eq!(listing["total"], 30, "{listing}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_room_whose_opening_write_is_refused_opens_nothing_and_costs_no_room() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "fam", "title": "Fam", "membership": "open",
        "instances": {"ttl_s": 3600}}))
        .await;
    add_rule(
        &app,
        "fam",
        json!({"name": "two rooms", "dimensions": ["creator"], "window": "campaign", "limit": 2}),
    )
    .await;
    add_rule(
        &app,
        "fam",
        json!({"name": "channels", "dimensions": ["channel"], "window": "day", "limit": 5,
            "missing": "skip", "overrides": [{"match": {"channel": "blocked"}, "limit": 0}]}),
    )
    .await;
    // The room's own rule refuses the write that opened it: the room is taken back and
    // the creator's count given back.
    for i in 0..3 {
        let (status, body) = app
            .vote(
                &format!("fam:x{i}"),
                json!({"member": "m1", "channel": "blocked"}),
            )
            .await;
        assert_eq!(
            (status, code(&body)),
            (StatusCode::TOO_MANY_REQUESTS, "rate_limited"),
            "{body}"
        );
        assert_eq!(body["error"]["rule"]["name"], "channels", "{body}");
    }
    assert_eq!(listed_rooms(&app).await, 0);
    for i in 0..2 {
        let (status, body) = app
            .vote(&format!("fam:ok{i}"), json!({"member": "m1"}))
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    let (status, body) = app.vote("fam:ok2", json!({"member": "m1"})).await;
    assert_eq!(
        (status, body["error"]["rule"]["name"].as_str()),
        (StatusCode::TOO_MANY_REQUESTS, Some("two rooms")),
        "{body}"
    );
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("You have opened 2 new rooms in this campaign, the most one may"),
        "{body}"
    );
    assert_eq!(listed_rooms(&app).await, 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn room_rules_and_budgets_are_checked_when_set() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "fam", "title": "Fam", "instances": {"ttl_s": 600}}))
        .await;
    app.board(json!({"slug": "plain", "title": "Plain"})).await;
    for (board, rule, expected) in [
        (
            "plain",
            json!({"name": "r", "dimensions": ["creator"], "window": "minute", "limit": 5}),
            "invalid_dimension",
        ),
        (
            "fam",
            json!({"name": "r", "dimensions": ["creator", "voter"], "window": "minute", "limit": 5}),
            "invalid_dimension",
        ),
    ] {
        let (status, body) = app
            .post(&format!("/api/v1/admin/boards/{board}/rules"), rule)
            .await;
        assert_eq!(
            (status, code(&body)),
            (StatusCode::UNPROCESSABLE_ENTITY, expected),
            "{body}"
        );
    }
    // max_live, pages and ledger_days change; ttl_s does not.
    let (status, body) = app
        .patch(
            "/api/v1/admin/boards/fam",
            json!({"instances": {"max_live": 5, "pages": true}}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body["instances"],
        json!({"ttl_s": 600, "max_live": 5, "pages": true, "ledger_days": 90})
    );
    for (change, expected) in [
        (json!({"instances": {"max_live": 0}}), "invalid_field"),
        (
            json!({"instances": {"max_live": 10_000_001}}),
            "invalid_field",
        ),
        (json!({"instances": {"ledger_days": 0}}), "invalid_field"),
        (json!({"instances": {"ttl_s": 60}}), "invalid_field"),
        (json!({"instances": {"pages": "yes"}}), "invalid_field"),
    ] {
        let (status, body) = app.patch("/api/v1/admin/boards/fam", change.clone()).await;
        assert_eq!(
            (status, code(&body)),
            (StatusCode::UNPROCESSABLE_ENTITY, expected),
            "{change}: {body}"
        );
    }
    let (status, body) = app
        .post(
            "/api/v1/admin/boards",
            json!({"slug": "nottl", "title": "No TTL", "instances": {"max_live": 5}}),
        )
        .await;
    assert_eq!(
        (status, code(&body)),
        (StatusCode::UNPROCESSABLE_ENTITY, "invalid_ttl"),
        "{body}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn concurrent_writes_open_exactly_max_live_rooms() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "fam", "title": "Fam", "membership": "open",
        "instances": {"ttl_s": 3600, "max_live": 30}}))
        .await;
    let answers = futures_util::future::join_all((0..64).map(|i| {
        let app = &app;
        async move {
            app.vote(
                &format!("fam:c{i}"),
                json!({"member": "m1", "voter": format!("v{i}")}),
            )
            .await
        }
    }))
    .await;
    let opened = answers
        .iter()
        .filter(|(status, _)| *status == StatusCode::OK)
        .count();
    let full = answers
        .iter()
        .filter(|(status, body)| *status == StatusCode::CONFLICT && code(body) == "family_full")
        .count();
    assert_eq!((opened, full), (30, 34), "{answers:?}");
    assert_eq!(listed_rooms(&app).await, 30);
    let with_scores = futures_util::future::join_all((0..64).map(|i| {
        let app = &app;
        async move {
            let (_, top) = app
                .get(&format!("/api/v1/boards/fam:c{i}/top?period=all&view=real"))
                .await;
            entries(&top).len()
        }
    }))
    .await;
    assert_eq!(with_scores.iter().sum::<usize>(), 30);
}
