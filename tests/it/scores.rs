//! Score boards: settings, operators, rules and idempotency, and the three storage
//! layouts (`full`, `top_n`, `sharded`) read through one interface.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::harness::{TestApp, hourly_total};

fn code(body: &Value) -> &str {
    body["error"]["code"].as_str().unwrap_or("")
}

#[tokio::test(flavor = "multi_thread")]
async fn score_board_settings_are_checked_and_fixed_at_creation() {
    let app = TestApp::spawn().await;
    let created = app
        .board(
            json!({"slug": "gifts", "title": "Gifts", "membership": "open", "scoring": "scores",
            "decimals": 2, "storage": {"kind": "top_n", "retain": 100}}),
        )
        .await;
    assert_eq!(created["scoring"], "scores");
    assert_eq!(created["decimals"], 2);
    assert_eq!(
        created["storage"],
        json!({"kind": "top_n", "retain": 100, "trim_at": 120})
    );
    let votes = app.board(json!({"slug": "plain", "title": "Plain"})).await;
    assert_eq!(
        (&votes["scoring"], &votes["decimals"], &votes["storage"]),
        (&json!("votes"), &json!(0), &json!({"kind": "full"}))
    );

    let refused = [
        (json!({"scoring": "points"}), "invalid_scoring"),
        (
            json!({"scoring": "scores", "decimals": 7}),
            "invalid_number",
        ),
        (
            json!({"scoring": "scores", "multiplier": 2}),
            "invalid_field",
        ),
        (
            json!({"scoring": "scores", "carry_over": 0.5}),
            "invalid_field",
        ),
        (
            json!({"scoring": "scores", "periods": ["day", "rolling:24h"],
                "storage": {"kind": "top_n", "retain": 10}}),
            "invalid_field",
        ),
        (
            json!({"scoring": "scores", "periods": ["day", "rolling:72h"],
                "storage": {"kind": "sharded", "shards": 4}}),
            "invalid_field",
        ),
        (
            json!({"storage": {"kind": "top_n", "retain": 10}}),
            "invalid_field",
        ),
        (
            json!({"storage": {"kind": "sharded", "shards": 16},
                "periods": ["day", "rolling:24h"]}),
            "invalid_field",
        ),
        (
            json!({"scoring": "scores", "storage": {"kind": "sharded", "shards": 1}}),
            "invalid_storage",
        ),
        (
            json!({"scoring": "scores", "storage": {"kind": "sharded", "shards": 257}}),
            "invalid_storage",
        ),
        (
            json!({"scoring": "scores", "storage": {"kind": "top_n", "retain": 10, "trim_at": 10}}),
            "invalid_storage",
        ),
        (
            json!({"scoring": "scores", "storage": {"kind": "heap"}}),
            "invalid_storage",
        ),
        (json!({"decimals": 2}), "invalid_field"),
    ];
    for (i, (fields, expected)) in refused.into_iter().enumerate() {
        let mut body = json!({"slug": format!("bad-{i}"), "title": "Bad"});
        body.as_object_mut()
            .unwrap()
            .extend(fields.as_object().unwrap().clone());
        let (status, answer) = app.post("/api/v1/admin/boards", body.clone()).await;
        assert_eq!(
            (status, code(&answer)),
            (StatusCode::UNPROCESSABLE_ENTITY, expected),
            "{body}"
        );
        let (status, _) = app.get(&format!("/api/v1/admin/boards/bad-{i}")).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "nothing was created");
    }

    for change in [
        json!({"scoring": "votes"}),
        json!({"decimals": 3}),
        json!({"storage": {"kind": "full"}}),
    ] {
        let (status, answer) = app
            .patch("/api/v1/admin/boards/gifts", change.clone())
            .await;
        assert_eq!(
            (status, code(&answer)),
            (StatusCode::UNPROCESSABLE_ENTITY, "invalid_field"),
            "{change}"
        );
    }
    let (status, same) = app
        .patch(
            "/api/v1/admin/boards/gifts",
            json!({"title": "Gifts 2", "scoring": "scores"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{same}");
    assert_eq!(same["storage"]["retain"], 100);

    for member in [
        json!({"id": "m1", "name": "M", "initial_votes": 5}),
        json!({"id": "m1", "name": "M", "multiplier": 2}),
    ] {
        let (status, answer) = app
            .put(
                "/api/v1/admin/boards/gifts/members",
                json!({"members": [member]}),
            )
            .await;
        assert_eq!(
            (status, code(&answer)),
            (StatusCode::UNPROCESSABLE_ENTITY, "invalid_field"),
            "{answer}"
        );
    }
}

async fn write(app: &TestApp, board: &str, body: Value) -> (StatusCode, Value) {
    app.post(&format!("/api/v1/boards/{board}/scores"), body)
        .await
}

/// "Gift value in the last 24 hours": a `full` scores board keeps rolling windows of its
/// `incr` and `decr` writes; `set` and `best` are refused there, changing nothing.
#[tokio::test(flavor = "multi_thread")]
async fn a_scores_board_keeps_rolling_windows_of_incr_and_decr() {
    let app = TestApp::spawn().await;
    app.board(
        json!({"slug": "gifts", "title": "Gifts", "membership": "open", "scoring": "scores",
        "decimals": 1, "periods": ["all", "rolling:24h", "rolling:3d"]}),
    )
    .await;
    let scores = |body: &Value| -> Vec<(String, f64)> {
        body["scores"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                let period = s["period"].as_str().unwrap().to_owned();
                (period, s["score"].as_f64().unwrap())
            })
            .collect()
    };
    let expect = |all: f64, day: f64| {
        vec![
            ("all".to_owned(), all),
            ("rolling:24h".to_owned(), day),
            ("rolling:3d".to_owned(), day),
        ]
    };
    let (status, body) = write(
        &app,
        "gifts",
        json!({"member": "ann", "op": "incr", "value": 12.5}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(scores(&body), expect(12.5, 12.5));
    // Backfilled two days: all-time and the three days count it, the last 24 hours not.
    let two_days_ago = (chrono::Utc::now() - chrono::Duration::hours(48)).to_rfc3339();
    let (status, body) = write(
        &app,
        "gifts",
        json!({"member": "ann", "op": "incr", "value": 4, "at": two_days_ago}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        scores(&body),
        vec![
            ("all".to_owned(), 16.5),
            ("rolling:24h".to_owned(), 12.5),
            ("rolling:3d".to_owned(), 16.5),
        ]
    );
    let (_, body) = write(
        &app,
        "gifts",
        json!({"member": "bob", "op": "incr", "value": 3}),
    )
    .await;
    assert_eq!(scores(&body), expect(3.0, 3.0));
    // A like taken back.
    let (_, body) = write(
        &app,
        "gifts",
        json!({"member": "bob", "op": "decr", "value": 1}),
    )
    .await;
    assert_eq!(scores(&body), expect(2.0, 2.0));
    for op in ["set", "best"] {
        let (status, body) = write(
            &app,
            "gifts",
            json!({"member": "bob", "op": op, "value": 50}),
        )
        .await;
        assert_eq!(
            (status, code(&body)),
            (StatusCode::UNPROCESSABLE_ENTITY, "operator_not_allowed"),
            "{op}: {body}"
        );
    }
    let (_, top) = app.get("/api/v1/boards/gifts/top?period=rolling:24h").await;
    let entries: Vec<(&str, f64)> = top["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["member"].as_str().unwrap(), e["score"].as_f64().unwrap()))
        .collect();
    assert_eq!(entries, [("ann", 12.5), ("bob", 2.0)], "{top}");
    // Taken back to nothing: bob leaves the window's ranking, and stays in all-time.
    let (_, body) = write(
        &app,
        "gifts",
        json!({"member": "bob", "op": "decr", "value": 2}),
    )
    .await;
    assert_eq!(scores(&body), expect(0.0, 0.0));
    let (_, top) = app.get("/api/v1/boards/gifts/top?period=rolling:24h").await;
    assert_eq!(top["entries"].as_array().unwrap().len(), 1, "{top}");
    assert_eq!(top["total_members"], 1);
    let (_, top) = app.get("/api/v1/boards/gifts/top?period=all").await;
    assert_eq!(top["total_members"], 2);

    // A board keeping nothing but a window: the window's total is checked against 2^53.
    app.board(
        json!({"slug": "recent", "title": "Recent", "membership": "open", "scoring": "scores",
        "periods": ["rolling:2h"]}),
    )
    .await;
    let max = 9_007_199_254_740_992_i64;
    // And a bucket's, as exactly: 2^53 + 1 is no double, so it is checked before adding.
    app.board(
        json!({"slug": "alltime", "title": "All time", "membership": "open", "scoring": "scores",
        "periods": ["all"]}),
    )
    .await;
    for board in ["recent", "alltime"] {
        let (status, body) = write(
            &app,
            board,
            json!({"member": "ann", "op": "incr", "value": max}),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    let (status, body) = write(
        &app,
        "alltime",
        json!({"member": "ann", "op": "incr", "value": 1}),
    )
    .await;
    assert_eq!(
        (status, code(&body)),
        (StatusCode::UNPROCESSABLE_ENTITY, "score_overflow"),
        "{body}"
    );
    let steps = [
        ("incr", 1, None),
        ("decr", max, Some(0)),
        ("decr", max, Some(-max)),
        ("decr", 1, None),
    ];
    for (op, value, total) in steps {
        let (status, body) = write(
            &app,
            "recent",
            json!({"member": "ann", "op": op, "value": value}),
        )
        .await;
        match total {
            Some(total) => {
                assert_eq!(status, StatusCode::OK, "{op} {value}: {body}");
                assert_eq!(body["scores"][0]["score"], json!(total), "{op} {value}");
            }
            None => assert_eq!(
                (status, code(&body)),
                (StatusCode::UNPROCESSABLE_ENTITY, "score_overflow"),
                "{op} {value}: {body}"
            ),
        }
    }
    let (_, top) = app.get("/api/v1/boards/recent/top?period=rolling:2h").await;
    assert_eq!(top["entries"][0]["score"], json!(-max), "{top}");
}

#[tokio::test(flavor = "multi_thread")]
async fn operators_write_exact_decimals_and_bad_input_changes_nothing() {
    let app = TestApp::spawn().await;
    app.board(
        json!({"slug": "game", "title": "Game", "membership": "open", "scoring": "scores",
        "decimals": 1, "periods": ["day", "all"]}),
    )
    .await;
    let score = |body: &Value, i: usize| body["scores"][i]["score"].clone();
    let (status, body) = write(
        &app,
        "game",
        json!({"member": "u1", "op": "incr", "value": 12.5}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["scores"][0]["period"], "day");
    assert_eq!(
        (score(&body, 0), score(&body, 1)),
        (json!(12.5), json!(12.5))
    );
    let (_, body) = write(
        &app,
        "game",
        json!({"member": "u1", "op": "incr", "value": 0.1}),
    )
    .await;
    assert_eq!(score(&body, 0), json!(12.6));
    let (_, body) = write(
        &app,
        "game",
        json!({"member": "u1", "op": "decr", "value": 12.6}),
    )
    .await;
    assert_eq!(score(&body, 0), json!(0), "exact: no float residue");
    let (_, body) = write(
        &app,
        "game",
        json!({"member": "u1", "op": "decr", "value": 3}),
    )
    .await;
    assert_eq!(score(&body, 0), json!(-3));
    let (_, body) = write(
        &app,
        "game",
        json!({"member": "u1", "op": "set", "value": 7}),
    )
    .await;
    assert_eq!(score(&body, 0), json!(7));
    let (_, body) = write(
        &app,
        "game",
        json!({"member": "u1", "op": "best", "value": 5}),
    )
    .await;
    assert_eq!(score(&body, 0), json!(7));
    let (_, body) = write(
        &app,
        "game",
        json!({"member": "u1", "op": "best", "value": 9.5}),
    )
    .await;
    assert_eq!(score(&body, 0), json!(9.5));
    write(
        &app,
        "game",
        json!({"member": "u2", "op": "set", "value": 20}),
    )
    .await;

    let refused = [
        (
            json!({"member": "u1", "op": "mul", "value": 1}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_op",
        ),
        (
            json!({"member": "u1", "op": "incr", "value": 1.25}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_value",
        ),
        (
            json!({"member": "u1", "op": "incr", "value": -1}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_value",
        ),
        (
            json!({"member": "u1", "op": "incr", "value": 1e300}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_value",
        ),
        (
            json!({"member": "u1", "op": "set", "value": 900719925474099.2}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_value",
        ),
        (
            json!({"member": "u2", "op": "incr", "value": 900_719_925_474_098_i64}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "score_overflow",
        ),
        (
            json!({"member": "u1", "op": "incr"}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_field",
        ),
    ];
    for (body, status, expected) in refused {
        let (got, answer) = write(&app, "game", body.clone()).await;
        assert_eq!(got, status, "{body}: {answer}");
        assert_eq!(code(&answer), expected, "{body}");
    }
    let (_, top) = app.get("/api/v1/boards/game/top?period=all").await;
    assert_eq!(
        top["entries"],
        json!([
            {"rank": 1, "member": "u2", "name": null, "image_url": null, "score": 20},
            {"rank": 2, "member": "u1", "name": null, "image_url": null, "score": 9.5},
        ])
    );
    let (_, real) = app
        .get("/api/v1/boards/game/top?period=all&view=real")
        .await;
    assert_eq!(real, top, "one view: real and display answer the same");
    let (_, me) = app.get("/api/v1/boards/game/members/u1?period=all").await;
    assert_eq!(
        (
            me["rank"].clone(),
            me["score"].clone(),
            me["above"]["gap"].clone()
        ),
        (json!(2), json!(9.5), json!(10.5))
    );

    // The wrong route for the board's scoring, either way.
    app.board(json!({"slug": "poll", "title": "Poll", "membership": "open"}))
        .await;
    let (status, body) = write(
        &app,
        "poll",
        json!({"member": "u1", "op": "incr", "value": 1}),
    )
    .await;
    assert_eq!(
        (status, code(&body)),
        (StatusCode::CONFLICT, "wrong_scoring")
    );
    let (status, body) = app.vote("game", json!({"member": "u1"})).await;
    assert_eq!(
        (status, code(&body)),
        (StatusCode::CONFLICT, "wrong_scoring")
    );
    let (_, after) = app.get("/api/v1/boards/game/top?period=all").await;
    assert_eq!(
        after["entries"], top["entries"],
        "nothing refused was written"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn rules_idempotency_and_batches_apply_to_score_writes() {
    let app = TestApp::spawn().await;
    for (slug, storage) in [
        ("full", json!({"kind": "full"})),
        ("kept", json!({"kind": "top_n", "retain": 2, "trim_at": 3})),
        ("split", json!({"kind": "sharded", "shards": 4})),
    ] {
        app.board(
            json!({"slug": slug, "title": slug, "membership": "open", "scoring": "scores",
            "periods": ["day", "all"], "storage": storage}),
        )
        .await;
        for rule in [
            json!({"name": "two a day", "dimensions": ["voter"], "window": "day", "limit": 2}),
            json!({"name": "one per member", "dimensions": ["voter", "member"], "window": "day", "limit": 1}),
        ] {
            let (status, body) = app
                .post(&format!("/api/v1/admin/boards/{slug}/rules"), rule)
                .await;
            assert_eq!(status, StatusCode::CREATED, "{body}");
        }
        let w = |member: &str, key: &str| json!({"member": member, "op": "incr", "value": 5, "voter": "v1", "idempotency_key": key});
        let (status, first) = write(&app, slug, w("a", "k1")).await;
        assert_eq!(status, StatusCode::OK, "{slug}: {first}");
        let (status, again) = write(&app, slug, w("a", "k1")).await;
        assert_eq!(status, StatusCode::OK, "{slug}");
        assert_eq!(again["replayed"], true);
        assert_eq!(
            again["scores"], first["scores"],
            "{slug}: the first answer again"
        );
        let (status, body) = write(&app, slug, w("a", "k2")).await;
        assert_eq!(
            (status, body["error"]["rule"]["name"].as_str()),
            (StatusCode::TOO_MANY_REQUESTS, Some("one per member")),
            "{slug}: {body}"
        );
        // The refusal by the member's rule gave back what the board's rule reserved:
        // v1 still has one write left today.
        let (status, body) = write(&app, slug, w("b", "k3")).await;
        assert_eq!(status, StatusCode::OK, "{slug}: {body}");
        let (status, body) = write(&app, slug, w("c", "k4")).await;
        assert_eq!(
            (status, body["error"]["rule"]["name"].as_str()),
            (StatusCode::TOO_MANY_REQUESTS, Some("two a day")),
            "{slug}: {body}"
        );
        // The same key with a different request (on a sharded board, for the same member:
        // the key is kept in the member's shard) is refused, also past the day's limit.
        let (status, body) = write(&app, slug, json!({"member": "a", "op": "incr", "value": 1, "voter": "v1", "idempotency_key": "k1"})).await;
        assert_eq!(
            (status, code(&body)),
            (StatusCode::UNPROCESSABLE_ENTITY, "idempotency_key_reused"),
            "{slug}: {body}"
        );

        let (status, batch) = app
            .post(
                "/api/v1/scores",
                json!({"voter": "v2", "scores": [
                    {"board": slug, "member": "d", "op": "set", "value": 8},
                    {"board": slug, "member": "e", "op": "bogus", "value": 1},
                    {"board": "nope", "member": "d", "op": "set", "value": 8},
                ]}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{batch}");
        let oks: Vec<&Value> = batch["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| &r["ok"])
            .collect();
        assert_eq!(oks, [&json!(true), &json!(false), &json!(false)]);
        assert_eq!(batch["results"][1]["error"]["code"], "invalid_op");
        assert_eq!(batch["results"][2]["error"]["code"], "board_not_found");

        let (_, top) = app
            .get(&format!("/api/v1/boards/{slug}/top?period=day"))
            .await;
        let ranked: Vec<(Value, Value, Value)> = top["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| (e["rank"].clone(), e["member"].clone(), e["score"].clone()))
            .collect();
        let expected_total = 3;
        assert_eq!(top["total_members"], expected_total, "{slug}");
        assert_eq!(top["participants"], 2, "{slug}");
        let all = vec![
            (json!(1), json!("d"), json!(8)),
            (json!(2), json!("b"), json!(5)),
            (json!(2), json!("a"), json!(5)),
        ];
        if slug == "kept" {
            assert_eq!(ranked.len(), 3, "trim_at 3 is not passed yet");
        }
        assert_eq!(ranked, all, "{slug}");
        let (_, stats) = app
            .get(&format!("/api/v1/boards/{slug}/stats?period=day"))
            .await;
        assert_eq!(
            hourly_total(&stats),
            3,
            "{slug}: written, not refused or replayed"
        );
        let refused: i64 = stats["votes_per_hour"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|h| {
                h["refused"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|r| r["votes"].as_i64().unwrap())
            })
            .sum();
        assert_eq!(refused, 2, "{slug}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn top_n_keeps_exact_scores_outside_the_ranking_and_never_lowers() {
    let app = TestApp::spawn().await;
    app.board(
        json!({"slug": "gifts", "title": "Gifts", "membership": "open", "scoring": "scores",
        "periods": ["all"], "storage": {"kind": "top_n", "retain": 2, "trim_at": 3}}),
    )
    .await;
    for (member, value) in [("a", 10), ("b", 20), ("c", 30), ("d", 40)] {
        let (status, body) = write(
            &app,
            "gifts",
            json!({"member": member, "op": "incr", "value": value}),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    // a, b, c, d: the ranking passed 3 with d and was cut back to the best 2.
    let (_, top) = app.get("/api/v1/boards/gifts/top").await;
    let members: Vec<&str> = top["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["member"].as_str().unwrap())
        .collect();
    assert_eq!(members, ["d", "c"]);
    assert_eq!(top["total_members"], 4);
    let (_, a) = app.get("/api/v1/boards/gifts/members/a").await;
    assert_eq!(
        (
            a["score"].clone(),
            a["rank"].clone(),
            a["rank_beyond"].clone()
        ),
        (json!(10), json!(null), json!(2))
    );
    assert_eq!(a["above"], json!(null));
    // a rises past c from outside: it enters with its exact score.
    write(
        &app,
        "gifts",
        json!({"member": "a", "op": "incr", "value": 25}),
    )
    .await;
    let (_, a) = app.get("/api/v1/boards/gifts/members/a").await;
    assert_eq!(
        (a["score"].clone(), a["rank"].clone()),
        (json!(35), json!(2))
    );
    assert!(a.get("rank_beyond").is_none());
    for body in [
        json!({"member": "d", "op": "decr", "value": 1}),
        json!({"member": "d", "op": "set", "value": 39}),
    ] {
        let (status, answer) = write(&app, "gifts", body.clone()).await;
        assert_eq!(
            (status, code(&answer)),
            (StatusCode::UNPROCESSABLE_ENTITY, "operator_not_allowed"),
            "{body}"
        );
    }
    let (status, _) = write(
        &app,
        "gifts",
        json!({"member": "d", "op": "set", "value": 41}),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (_, d) = app.get("/api/v1/boards/gifts/members/d").await;
    assert_eq!(
        (d["score"].clone(), d["rank"].clone()),
        (json!(41), json!(1))
    );
}
