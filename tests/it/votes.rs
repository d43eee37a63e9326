//! Casting votes: exact counts under concurrency, carry-over, idempotency, backfill, batches.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::harness::{TestApp, num};

fn scores_by_period(body: &Value) -> Vec<(String, f64, f64)> {
    body["scores"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["period"].as_str().unwrap().to_owned(),
                num(&s["real"]),
                num(&s["display"]),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn five_thousand_votes_from_200_concurrent_clients_count_exactly() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "stars", "title": "Stars", "multiplier": 3}))
        .await;
    app.members("stars", &["m1"]).await;

    let mut clients = Vec::new();
    for client in 0..200 {
        let app = app.clone();
        clients.push(tokio::spawn(async move {
            for i in 0..25 {
                let voter = format!("u{}", (client * 25 + i) % 1000);
                let (status, body) = app
                    .vote("stars", json!({"member": "m1", "voter": voter}))
                    .await;
                assert_eq!(status, StatusCode::OK, "{body}");
            }
        }));
    }
    for c in clients {
        c.await.unwrap();
    }

    for period in ["hour", "day", "week", "month", "all"] {
        // The board is new, so its previous bucket holds votes only when the test ran
        // across the bucket's start (08:00, say): then the votes are split between the
        // two, and so are the voters, whose counts cannot be added.
        let earlier = |read: &Value| {
            read["previous"]["score"]
                .as_f64()
                .filter(|score| *score > 0.0)
        };
        let (_, real) = app
            .get(&format!(
                "/api/v1/boards/stars/members/m1?period={period}&view=real"
            ))
            .await;
        let split = earlier(&real);
        assert_eq!(
            num(&real["score"]) + split.unwrap_or(0.0),
            5000.0,
            "{period}: {real}"
        );
        assert_eq!(real["rank"], 1);
        let (_, display) = app
            .get(&format!("/api/v1/boards/stars/members/m1?period={period}"))
            .await;
        assert_eq!(
            num(&display["score"]) + earlier(&display).unwrap_or(0.0),
            15000.0,
            "{period}: {display}"
        );
        if split.is_some() {
            continue;
        }
        let participants = display["participants"].as_i64().unwrap();
        assert!(
            (970..=1030).contains(&participants),
            "{period}: {participants} participants for 1000 voters"
        );
        let (_, top) = app
            .get(&format!("/api/v1/boards/stars/top?period={period}"))
            .await;
        let board_participants = top["participants"].as_i64().unwrap();
        assert!(
            (970..=1030).contains(&board_participants),
            "{period}: {board_participants}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn carry_over_starts_the_next_day_at_r_times_the_display_votes() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "carry", "title": "Carry", "multiplier": 2, "carry_over": 0.1, "periods": ["day", "all"]}))
        .await;
    app.members("carry", &["a", "b"]).await;
    for (member, count) in [("a", 7), ("b", 3)] {
        let (status, body) = app
            .vote(
                "carry",
                json!({"member": member, "count": count, "at": "2026-03-16T12:00:00Z"}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    let (_, next) = app
        .get("/api/v1/boards/carry/top?period=day&at=2026-03-17")
        .await;
    let entries = next["entries"].as_array().unwrap();
    assert_eq!(num(&entries[0]["score"]), 1.4, "{next}");
    assert_eq!(entries[0]["member"], "a");
    assert_eq!(num(&entries[1]["score"]), 0.6);

    let (_, real_next) = app
        .get("/api/v1/boards/carry/top?period=day&at=2026-03-17&view=real")
        .await;
    assert_eq!(
        real_next["entries"],
        json!([]),
        "the real view carries nothing"
    );
    let (_, day) = app
        .get("/api/v1/boards/carry/top?period=day&at=2026-03-16")
        .await;
    assert_eq!(num(&day["entries"][0]["score"]), 14.0);

    // A vote on the next day adds to the inherited score.
    let (status, voted) = app
        .vote(
            "carry",
            json!({"member": "b", "count": 1, "at": "2026-03-17T08:00:00Z"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{voted}");
    assert_eq!(
        (
            num(&voted["scores"][0]["display"]),
            num(&voted["scores"][0]["real"])
        ),
        (2.6, 1.0),
        "{voted}"
    );
    let (_, next) = app
        .get("/api/v1/boards/carry/members/b?period=day&at=2026-03-17")
        .await;
    assert_eq!(num(&next["score"]), 2.6);
}

#[tokio::test(flavor = "multi_thread")]
async fn one_idempotency_key_from_50_concurrent_requests_counts_once() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "idem", "title": "Idem", "multiplier": 2}))
        .await;
    app.members("idem", &["m1"]).await;
    let mut requests = Vec::new();
    for _ in 0..50 {
        let app = app.clone();
        requests.push(tokio::spawn(async move {
            let (status, body) = app
                .vote(
                    "idem",
                    json!({"member": "m1", "count": 3, "idempotency_key": "order-42"}),
                )
                .await;
            assert_eq!(status, StatusCode::OK, "{body}");
            body
        }));
    }
    let mut replayed = 0;
    for r in requests {
        let body = r.await.unwrap();
        assert_eq!(
            body["scores"][4],
            json!({"period": "all", "bucket": "all", "real": 3, "display": 6}),
            "{body}"
        );
        if body["replayed"] == true {
            replayed += 1;
        }
    }
    assert_eq!(replayed, 49);
    let (_, m) = app.get("/api/v1/boards/idem/members/m1?view=real").await;
    assert_eq!(num(&m["score"]), 3.0);
}

#[tokio::test(flavor = "multi_thread")]
async fn backfilled_votes_land_in_local_buckets_across_dst_week_years_and_months() {
    let app = TestApp::spawn().await;
    app.board(
        json!({"slug": "ny", "title": "NY", "timezone": "America/New_York", "membership": "open"}),
    )
    .await;
    let votes = [
        "2024-11-03T01:30:00-04:00", // first 01:xx, EDT
        "2024-11-03T01:30:00-05:00", // second 01:xx, EST
        "2024-11-03T01:45:00-05:00",
        "2024-03-10T03:15:00-04:00", // after the spring-forward gap
        "2021-01-03T23:30:00-05:00", // Sunday: ISO week 2020-W53, but month 2021-01
        "2020-12-31T23:30:00-05:00", // still 2020-12 locally though 2021 in UTC
    ];
    for at in votes {
        let (status, body) = app.vote("ny", json!({"member": "m", "at": at})).await;
        assert_eq!(status, StatusCode::OK, "{at}: {body}");
    }
    let score = |period: &'static str, at: &'static str| {
        let app = &app;
        async move {
            let (status, body) = app
                .get(&format!(
                    "/api/v1/boards/ny/members/m?period={period}&at={at}&view=real"
                ))
                .await;
            assert_eq!(status, StatusCode::OK, "{body}");
            num(&body["score"])
        }
    };
    assert_eq!(score("hour", "2024-11-03T01-04:00").await, 1.0);
    assert_eq!(score("hour", "2024-11-03T01-05:00").await, 2.0);
    assert_eq!(score("day", "2024-11-03").await, 3.0);
    assert_eq!(score("hour", "2024-03-10T03").await, 1.0);
    assert_eq!(score("week", "2020-W53").await, 2.0);
    assert_eq!(score("month", "2021-01").await, 1.0);
    assert_eq!(score("month", "2020-12").await, 1.0);
    assert_eq!(score("day", "2021-01-03").await, 1.0);

    let (status, body) = app
        .get("/api/v1/boards/ny/top?period=hour&at=2024-11-03T01")
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(body["error"]["code"], "ambiguous_bucket");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_batch_counts_its_valid_items_and_answers_in_order() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "a", "title": "A"})).await;
    app.board(json!({"slug": "b", "title": "B", "membership": "open"}))
        .await;
    app.members("a", &["m1"]).await;
    let (status, body) = app
        .post(
            "/api/v1/votes",
            json!({"voter": "u1", "votes": [
                {"board": "a", "member": "m1", "count": 2},
                {"board": "nope", "member": "m1"},
                {"board": "a", "member": "ghost"},
                {"board": "a", "member": "m1", "count": 0},
                {"board": "b", "member": "anyone", "count": 5},
                {"board": "a"},
                {"board": "a", "member": "bad id!"},
            ]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let results = body["results"].as_array().unwrap();
    let outcome: Vec<(bool, Value)> = results
        .iter()
        .map(|r| (r["ok"].as_bool().unwrap(), r["error"]["code"].clone()))
        .collect();
    assert_eq!(
        outcome,
        vec![
            (true, Value::Null),
            (false, json!("board_not_found")),
            (false, json!("member_not_found")),
            (false, json!("invalid_count")),
            (true, Value::Null),
            (false, json!("invalid_item")),
            (false, json!("invalid_member_id")),
        ]
    );
    assert_eq!(scores_by_period(&results[0])[4], ("all".into(), 2.0, 2.0));
    let (_, a) = app.get("/api/v1/boards/a/members/m1?view=real").await;
    assert_eq!(num(&a["score"]), 2.0);
    let (_, b) = app.get("/api/v1/boards/b/members/anyone?view=real").await;
    assert_eq!(num(&b["score"]), 5.0);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_vote_answers_new_scores_for_every_enabled_period() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "s", "title": "S", "periods": ["day", "all"], "multiplier": 1.5, "timezone": "Asia/Shanghai"}))
        .await;
    app.put(
        "/api/v1/admin/boards/s/members",
        json!({"members": [{"id": "m1", "multiplier": 4}, {"id": "m2"}]}),
    )
    .await;
    let (status, body) = app
        .vote(
            "s",
            json!({"member": "m1", "count": 2, "at": "2019-03-17T12:33:00+08:00"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body,
        json!({"board": "s", "member": "m1", "replayed": false, "scores": [
            {"period": "day", "bucket": "2019-03-17", "real": 2, "display": 8},
            {"period": "all", "bucket": "all", "real": 2, "display": 8},
        ]})
    );
    let (_, body) = app
        .vote(
            "s",
            json!({"member": "m2", "count": 1, "at": "2019-03-17T16:30:00Z"}),
        )
        .await;
    assert_eq!(
        body["scores"][0],
        json!({"period": "day", "bucket": "2019-03-18", "real": 1, "display": 1.5})
    );
}
