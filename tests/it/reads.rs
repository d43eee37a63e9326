//! Reading rankings: competition ranks, above/gap, previous/trend, pages, batches, stats.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::json;

use crate::harness::{HOUR, RawRedis, TestApp, clear_of_the_turn, hourly_total, num};

/// Day 1: a 5, b 3, c 3, d 1. Day 2: b 4, a 2, c 2.
async fn two_days(app: &TestApp) {
    app.board(json!({"slug": "r", "title": "R", "periods": ["day", "all"]}))
        .await;
    app.members("r", &["a", "b", "c", "d"]).await;
    for (member, count, at) in [
        ("a", 5, "2026-05-01T10:00:00Z"),
        ("b", 3, "2026-05-01T10:00:00Z"),
        ("c", 3, "2026-05-01T10:00:00Z"),
        ("d", 1, "2026-05-01T10:00:00Z"),
        ("b", 4, "2026-05-02T10:00:00Z"),
        ("a", 2, "2026-05-02T10:00:00Z"),
        ("c", 2, "2026-05-02T10:00:00Z"),
    ] {
        let (status, body) = app
            .vote(
                "r",
                json!({"member": member, "count": count, "at": at, "voter": member}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn ties_share_the_better_rank() {
    let app = TestApp::spawn().await;
    two_days(&app).await;
    let (_, top) = app
        .get("/api/v1/boards/r/top?period=day&at=2026-05-01")
        .await;
    let ranks: Vec<(String, i64, f64)> = top["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["member"].as_str().unwrap().to_owned(),
                e["rank"].as_i64().unwrap(),
                num(&e["score"]),
            )
        })
        .collect();
    assert_eq!(
        ranks,
        vec![
            ("a".into(), 1, 5.0),
            ("c".into(), 2, 3.0),
            ("b".into(), 2, 3.0),
            ("d".into(), 4, 1.0)
        ]
    );
    assert_eq!(top["total_members"], 4);
    assert_eq!(top["participants"], 4);
    assert_eq!(top["entries"][0]["name"], "Name a");
    assert_eq!(top["resets_at"], "2026-05-02T00:00:00Z");

    // A page that starts inside a tie still ranks by competition.
    let (_, page) = app
        .get("/api/v1/boards/r/top?period=day&at=2026-05-01&offset=2&limit=2")
        .await;
    let ranks: Vec<i64> = page["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["rank"].as_i64().unwrap())
        .collect();
    assert_eq!(ranks, vec![2, 4]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_member_shows_the_member_above_and_the_previous_bucket() {
    let app = TestApp::spawn().await;
    two_days(&app).await;
    let member = |m: &'static str| {
        let app = &app;
        async move {
            app.get(&format!(
                "/api/v1/boards/r/members/{m}?period=day&at=2026-05-02"
            ))
            .await
            .1
        }
    };
    let c = member("c").await;
    assert_eq!(c["rank"], 2);
    assert_eq!(num(&c["score"]), 2.0);
    assert_eq!(
        c["above"],
        json!({"member": "b", "rank": 1, "score": 4, "gap": 2})
    );
    assert_eq!(
        c["previous"],
        json!({"bucket": "2026-05-01", "rank": 2, "score": 3, "trend": "same"})
    );
    assert_eq!(c["participants"], 1);

    let a = member("a").await;
    assert_eq!(a["rank"], 2);
    assert_eq!(a["previous"]["trend"], "down");
    let b = member("b").await;
    assert_eq!(b["rank"], 1);
    assert_eq!(b["above"], json!(null));
    assert_eq!(b["previous"]["trend"], "up");
    let d = member("d").await;
    assert_eq!(d["rank"], json!(null));
    assert_eq!(num(&d["score"]), 0.0);
    assert_eq!(
        d["previous"],
        json!({"bucket": "2026-05-01", "rank": 4, "score": 1, "trend": "down"})
    );
    assert_eq!(
        (d["above"]["member"].as_str(), d["above"]["rank"].as_i64()),
        (Some("a"), Some(2)),
        "the lowest scorer is the next one up: {d}"
    );

    let (_, all) = app.get("/api/v1/boards/r/members/a").await;
    assert_eq!(all["period"], "all");
    assert_eq!(num(&all["score"]), 7.0);
    assert_eq!(all["previous"], json!(null));
}

#[tokio::test(flavor = "multi_thread")]
async fn around_ranks_and_tops_read_several_at_once() {
    let app = TestApp::spawn().await;
    two_days(&app).await;
    let (_, around) = app
        .get("/api/v1/boards/r/members/d/around?period=day&at=2026-05-01&radius=1")
        .await;
    let members: Vec<&str> = around["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["member"].as_str().unwrap())
        .collect();
    assert_eq!(members, vec!["b", "d"]);
    assert_eq!(around["entries"][0]["rank"], 2);
    assert_eq!(around["entries"][1]["rank"], 4);

    let (_, ranks) = app
        .get("/api/v1/ranks?board=r&members=a,d&period=all")
        .await;
    let got: Vec<(i64, f64)> = ranks["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["rank"].as_i64().unwrap(), num(&m["score"])))
        .collect();
    assert_eq!(got, vec![(1, 7.0), (4, 1.0)]);

    app.board(json!({"slug": "r2", "title": "R2", "membership": "open", "periods": ["all"]}))
        .await;
    app.vote("r2", json!({"member": "x", "count": 9})).await;
    let (status, tops) = app.get("/api/v1/tops?boards=r,r2&period=all&limit=1").await;
    assert_eq!(status, StatusCode::OK, "{tops}");
    // a and b tie at 7; Redis orders ties by member id, descending.
    assert_eq!(
        tops["tops"][0]["entries"],
        json!([{"rank": 1, "member": "b", "name": "Name b", "image_url": null, "score": 7}])
    );
    assert_eq!(tops["tops"][1]["entries"][0]["member"], "x");
}

#[tokio::test(flavor = "multi_thread")]
async fn stats_count_votes_per_hour_and_participants() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "st", "title": "St", "membership": "open"}))
        .await;
    // The votes fall in one hour, the last the stats show.
    clear_of_the_turn(HOUR, Duration::from_secs(60)).await;
    for voter in ["u1", "u2", "u1"] {
        app.vote("st", json!({"member": "m", "voter": voter, "count": 2}))
            .await;
    }
    let two_hours_ago = (chrono::Utc::now() - chrono::Duration::hours(2)).to_rfc3339();
    app.vote(
        "st",
        json!({"member": "m", "voter": "u3", "at": two_hours_ago}),
    )
    .await;
    let (status, stats) = app.get("/api/v1/boards/st/stats?period=day").await;
    assert_eq!(status, StatusCode::OK, "{stats}");
    let hours = stats["votes_per_hour"].as_array().unwrap();
    assert_eq!(hours.len(), 48);
    assert_eq!(hours[47]["votes"], 6);
    assert_eq!(hours[45]["votes"], 1);
    assert_eq!(hourly_total(&stats), 7);
    assert_eq!(stats["total_members"], 1);
    let (_, all) = app.get("/api/v1/boards/st/stats?period=all").await;
    assert_eq!(all["participants"], 3);
}

#[tokio::test(flavor = "multi_thread")]
async fn public_boards_read_without_a_key_and_private_ones_do_not() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "pub", "title": "Pub", "public_page": true}))
        .await;
    app.board(json!({"slug": "priv", "title": "Priv"})).await;
    let (status, body) = app
        .call(reqwest::Method::GET, "/api/v1/boards/pub/top", None, None)
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = app
        .call(reqwest::Method::GET, "/api/v1/boards/priv/top", None, None)
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(body["error"]["code"], "unauthorized");
    let (status, info) = app
        .call(reqwest::Method::GET, "/api/v1/boards/pub", None, None)
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(info["periods"].as_array().unwrap().len(), 5);
    assert_eq!(
        info["periods"][4],
        json!({"period": "all", "bucket": "all", "resets_at": null})
    );
}

#[tokio::test]
async fn top_pages_are_reused_for_the_read_cache_ttl_then_refreshed() {
    let app = crate::harness::TestApp::spawn_with(crate::harness::Options {
        read_cache: std::time::Duration::from_millis(300),
        ..crate::harness::Options::default()
    })
    .await;
    app.board(json!({"slug": "cached", "title": "Cached"}))
        .await;
    app.members("cached", &["m1"]).await;
    app.vote("cached", json!({"member": "m1"})).await;
    let path = "/api/v1/boards/cached/top?period=all&view=real";
    let (_, first) = app.get(path).await;
    assert_eq!(first["entries"][0]["score"], 1);
    app.vote("cached", json!({"member": "m1"})).await;
    let (_, cached) = app.get(path).await;
    assert_eq!(cached, first, "within the TTL the same page is served");
    let (_, board) = app.get("/api/v1/boards/cached").await;
    app.patch("/api/v1/admin/boards/cached", json!({"title": "Renamed"}))
        .await;
    let (_, again) = app.get("/api/v1/boards/cached").await;
    assert_eq!(
        again["title"], board["title"],
        "the board description is cached too"
    );
    tokio::time::sleep(std::time::Duration::from_millis(350)).await;
    let (_, fresh) = app.get(path).await;
    assert_eq!(fresh["entries"][0]["score"], 2);
    let (_, renamed) = app.get("/api/v1/boards/cached").await;
    assert_eq!(renamed["title"], "Renamed");
}

/// A week's and a month's participants, for the board and for each member, are the union
/// of their days' voters: also on a board that does not keep `day`, across a week that
/// straddles two months, and with votes outside the bucket left out.
#[tokio::test(flavor = "multi_thread")]
async fn week_and_month_participants_are_the_union_of_their_days() {
    let app = TestApp::spawn().await;
    for (slug, periods) in [
        ("wm", json!(["week", "month", "all"])),
        ("dwm", json!(["day", "week", "month"])),
    ] {
        app.board(json!({"slug": slug, "title": slug, "membership": "open", "periods": periods}))
            .await;
        // Week 2026-W44 runs from Monday 26 October to Sunday 1 November.
        let votes: &[(&str, &str, &str)] = &[
            ("2026-10-25T12:00:00Z", "a", "v0"), // the week before
            ("2026-10-26T08:00:00Z", "a", "v1"),
            ("2026-10-26T09:00:00Z", "b", "v1"),
            ("2026-10-28T10:00:00Z", "a", "v2"),
            ("2026-10-28T11:00:00Z", "a", "v1"),
            ("2026-10-31T23:59:59Z", "b", "v3"),
            ("2026-11-01T00:00:00Z", "a", "v4"), // November, still W44
            ("2026-11-01T05:00:00Z", "b", "v1"),
            ("2026-11-02T00:00:00Z", "a", "v5"), // W45
        ];
        for (at, member, voter) in votes {
            let (status, body) = app
                .vote(slug, json!({"member": member, "voter": voter, "at": at}))
                .await;
            assert_eq!(status, StatusCode::OK, "{body}");
        }
        let count = |path: String| {
            let app = app.clone();
            async move {
                let (status, body) = app.get(&path).await;
                assert_eq!(status, StatusCode::OK, "{path}: {body}");
                body["participants"].as_i64().unwrap()
            }
        };
        let base = format!("/api/v1/boards/{slug}");
        // W44: v1, v2, v3, v4; a: v1, v2, v4; b: v1, v3.
        assert_eq!(
            count(format!("{base}/top?period=week&at=2026-W44")).await,
            4,
            "{slug}"
        );
        assert_eq!(
            count(format!("{base}/members/a?period=week&at=2026-W44")).await,
            3
        );
        assert_eq!(
            count(format!("{base}/members/b?period=week&at=2026-W44")).await,
            2
        );
        assert_eq!(
            count(format!("{base}/stats?period=week&at=2026-W44")).await,
            4
        );
        // October: v0, v1, v2, v3; November: v4, v1, v5.
        assert_eq!(
            count(format!("{base}/top?period=month&at=2026-10")).await,
            4,
            "{slug}"
        );
        assert_eq!(
            count(format!("{base}/top?period=month&at=2026-11")).await,
            3,
            "{slug}"
        );
        assert_eq!(
            count(format!("{base}/members/a?period=month&at=2026-11")).await,
            2
        );
    }
    // Votes wrote voters by hour, day and all time only: 4 PFADDs fewer per vote.
    let mut conn = RawRedis::connect().await;
    let keys: Vec<String> = conn.keys(&format!("{}:*:p*:*", app.prefix)).await;
    let mut periods: Vec<&str> = keys.iter().filter_map(|k| k.split(':').nth(4)).collect();
    periods.sort_unstable();
    periods.dedup();
    assert_eq!(periods, ["all", "day"], "{keys:?}");
}

/// `POST /tops`: several boards, each its own period, view, bucket and size; each read
/// answers exactly what `/top` answers, and a bad read answers its own error beside the
/// others. The call is refused only as a whole: no reads, more than 50, a read twice.
#[tokio::test(flavor = "multi_thread")]
async fn posted_tops_read_each_board_its_own_way_and_fail_alone() {
    let app = TestApp::spawn().await;
    two_days(&app).await;
    app.board(
        json!({"slug": "r2", "title": "R2", "membership": "open", "periods": ["hour", "all"]}),
    )
    .await;
    // The votes and both reads of the hour fall in one hour.
    clear_of_the_turn(HOUR, Duration::from_secs(30)).await;
    app.vote("r2", json!({"member": "x", "count": 9})).await;
    app.vote("r2", json!({"member": "y", "count": 4})).await;
    let (status, body) = app
        .post(
            "/api/v1/tops",
            json!({"reads": [
                {"board": "r", "period": "day", "at": "2026-05-01"},
                {"board": "r2", "period": "all", "view": "real", "limit": 1},
                {"board": "nope"},
                {"board": "r", "period": "fortnight"},
                {"board": "r", "period": "all", "limit": 1001},
                {"board": "r", "period": "day", "at": "2026-05-02", "limit": 2},
                {"board": "r2", "period": "hour"},
            ]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let results = body["results"].as_array().unwrap();
    assert_eq!(results.len(), 7, "{body}");
    for (i, path) in [
        (0, "/api/v1/boards/r/top?period=day&at=2026-05-01&limit=10"),
        (1, "/api/v1/boards/r2/top?period=all&view=real&limit=1"),
        (5, "/api/v1/boards/r/top?period=day&at=2026-05-02&limit=2"),
        (6, "/api/v1/boards/r2/top?period=hour&limit=10"),
    ] {
        let (status, top) = app.get(path).await;
        assert_eq!(status, StatusCode::OK, "{top}");
        assert_eq!(results[i], top, "read {i}");
    }
    let errors: Vec<(serde_json::Value, serde_json::Value)> = [2, 3, 4]
        .iter()
        .map(|&i| {
            (
                results[i]["board"].clone(),
                results[i]["error"]["code"].clone(),
            )
        })
        .collect();
    assert_eq!(
        errors,
        [
            (json!("nope"), json!("board_not_found")),
            (json!("r"), json!("invalid_period")),
            (json!("r"), json!("invalid_field")),
        ]
    );
    assert_eq!(results[1]["entries"][0]["member"], "x");
    // Without a key, a board without a public page answers as `/top` would, alone.
    app.board(json!({"slug": "open", "title": "Open", "periods": ["all"], "public_page": true}))
        .await;
    let (status, body) = app
        .call(
            reqwest::Method::POST,
            "/api/v1/tops",
            None,
            Some(&json!({"reads": [{"board": "r"}, {"board": "open"}]})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, alone) = app
        .call(reqwest::Method::GET, "/api/v1/boards/r/top", None, None)
        .await;
    assert_ne!(status, StatusCode::OK, "{alone}");
    assert!(alone["error"]["code"].is_string(), "{alone}");
    assert_eq!(
        body["results"][0]["error"]["code"], alone["error"]["code"],
        "{body}"
    );
    assert_eq!(body["results"][1]["board"], "open", "{body}");

    let refused = |reads: serde_json::Value, status: StatusCode, code: &str| {
        let app = &app;
        let code = code.to_owned();
        async move {
            let (got, body) = app.post("/api/v1/tops", json!({"reads": reads})).await;
            assert_eq!(
                (got, body["error"]["code"].as_str()),
                (status, Some(code.as_str())),
                "{body}"
            );
        }
    };
    refused(json!([]), StatusCode::UNPROCESSABLE_ENTITY, "invalid_field").await;
    let many: Vec<serde_json::Value> = (0..51).map(|i| json!({"board": format!("x{i}")})).collect();
    refused(
        json!(many),
        StatusCode::PAYLOAD_TOO_LARGE,
        "too_many_boards",
    )
    .await;
    refused(
        json!([{"board": "r", "period": "day", "at": "2026-05-01"},
               {"board": "r", "period": "day", "at": "2026-05-01T23:00:00Z", "limit": 3}]),
        StatusCode::UNPROCESSABLE_ENTITY,
        "duplicate_board",
    )
    .await;
    refused(
        json!([{"board": "r", "size": 3}]),
        StatusCode::UNPROCESSABLE_ENTITY,
        "invalid_field",
    )
    .await;
}

#[tokio::test]
async fn tops_names_each_board_once_and_at_most_fifty_and_is_reused() {
    let app = TestApp::spawn_with(crate::harness::Options {
        read_cache: std::time::Duration::from_secs(60),
        ..Default::default()
    })
    .await;
    for slug in ["a", "b"] {
        app.board(json!({"slug": slug, "title": slug, "periods": ["all"], "public_page": true}))
            .await;
        app.members(slug, &["m1"]).await;
    }
    let (status, _) = app.vote("a", json!({"member": "m1", "count": 2})).await;
    assert_eq!(status, StatusCode::OK);
    let anonymous = |path: String| {
        let app = &app;
        async move { app.call(reqwest::Method::GET, &path, None, None).await }
    };
    let (status, body) = anonymous("/api/v1/tops?boards=a,b,a".into()).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("duplicate_board")),
        "{body}"
    );
    let names = |n: usize| {
        (0..n)
            .map(|i| format!("x{i}"))
            .collect::<Vec<_>>()
            .join(",")
    };
    let (status, body) = anonymous(format!("/api/v1/tops?boards={}", names(51))).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::PAYLOAD_TOO_LARGE, Some("too_many_boards")),
        "{body}"
    );
    let (status, body) = app.get(&format!("/api/v1/tops?boards={}", names(50))).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("board_not_found")),
        "fifty pass the count: {body}"
    );
    let scores = |body: &serde_json::Value| -> Vec<f64> {
        body["tops"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                t["entries"]
                    .as_array()
                    .unwrap()
                    .first()
                    .map_or(0.0, |e| num(&e["score"]))
            })
            .collect()
    };
    let (status, first) = anonymous("/api/v1/tops?boards=a,b".into()).await;
    assert_eq!(status, StatusCode::OK, "{first}");
    assert_eq!(scores(&first), [2.0, 0.0]);
    let (status, _) = app.vote("b", json!({"member": "m1", "count": 5})).await;
    assert_eq!(status, StatusCode::OK);
    let (_, again) = anonymous("/api/v1/tops?boards=a,b".into()).await;
    assert_eq!(
        again, first,
        "the same call within the cache's life is reused"
    );
    let (_, other) = anonymous("/api/v1/tops?boards=b,a".into()).await;
    assert_eq!(scores(&other), [5.0, 2.0], "another call reads afresh");
}

#[tokio::test(flavor = "multi_thread")]
async fn percentiles_and_top_shares_match_a_model_with_ties_on_every_layout() {
    use proptest::strategy::{Strategy, ValueTree};
    let app = TestApp::spawn().await;
    let mut runner = proptest::test_runner::TestRunner::default();
    let members: Vec<String> = (0..12).map(|i| format!("m{i:02}")).collect();
    let ids: Vec<&str> = members.iter().map(String::as_str).collect();
    for case in 0..6 {
        // Scores 0 to 4, so ties are common and some members have none.
        let scores = proptest::collection::vec(0i64..5, 12)
            .new_tree(&mut runner)
            .unwrap()
            .current();
        let boards = [
            (format!("pv{case}"), json!({"kind": "full"}), false),
            (
                format!("pq{case}"),
                json!({"kind": "sharded", "shards": 4}),
                false,
            ),
            (
                format!("ps{case}"),
                json!({"kind": "sharded", "shards": 3}),
                true,
            ),
        ];
        for (slug, storage, scores_board) in &boards {
            let scoring = if *scores_board { "scores" } else { "votes" };
            app.board(
                json!({"slug": slug, "title": slug, "periods": ["all"], "max_count": 10,
                "scoring": scoring, "storage": storage}),
            )
            .await;
            app.members(slug, &ids).await;
            for (member, score) in members.iter().zip(&scores) {
                if *score == 0 {
                    continue;
                }
                let (status, body) = if *scores_board {
                    app.post(
                        &format!("/api/v1/boards/{slug}/scores"),
                        json!({"member": member, "op": "incr", "value": score}),
                    )
                    .await
                } else {
                    app.vote(slug, json!({"member": member, "count": score}))
                        .await
                };
                assert_eq!(status, StatusCode::OK, "{body}");
            }
            let total = scores.iter().filter(|s| **s > 0).count() as i64;
            for (member, score) in members.iter().zip(&scores) {
                let (status, read) = app
                    .get(&format!(
                        "/api/v1/boards/{slug}/members/{member}?period=all"
                    ))
                    .await;
                assert_eq!(status, StatusCode::OK, "{read}");
                let want = if *score == 0 {
                    json!(null)
                } else {
                    let lower = scores.iter().filter(|s| **s > 0 && *s < score).count() as f64;
                    json!(((lower * 10_000.0 / total as f64).round()) / 100.0)
                };
                assert_eq!(read["percentile"], want, "{slug} {member} of {scores:?}");
            }
            for percent in ["1", "10", "25", "33.33", "50", "100"] {
                let (status, top) = app
                    .get(&format!(
                        "/api/v1/boards/{slug}/top?period=all&percent={percent}"
                    ))
                    .await;
                assert_eq!(status, StatusCode::OK, "{top}");
                let hundredths: i64 = (percent.parse::<f64>().unwrap() * 100.0).round() as i64;
                let want = (hundredths * total + 9_999) / 10_000;
                assert_eq!(
                    top["entries"].as_array().unwrap().len() as i64,
                    want,
                    "{slug} {percent} % of {total}"
                );
            }
        }
    }
    let (status, body) = app
        .get("/api/v1/boards/pv0/top?period=all&percent=1&limit=5")
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(body["error"]["field"], "percent");
    for bad in ["0", "100.5", "1.005", "-3"] {
        let (status, body) = app
            .get(&format!("/api/v1/boards/pv0/top?period=all&percent={bad}"))
            .await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{bad}: {body}");
        assert_eq!(body["error"]["code"], "invalid_field", "{bad}: {body}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn member_reads_and_stats_answer_the_votes_of_the_bucket_whatever_the_view() {
    use proptest::strategy::{Strategy, ValueTree};
    let app = TestApp::spawn().await;
    let mut runner = proptest::test_runner::TestRunner::default();
    let now = chrono::Utc::now();
    let members = ["a", "b", "c", "d"];
    for case in 0..4 {
        // (days ago, member, count, voter)
        let votes = proptest::collection::vec((0i64..3, 0usize..4, 1i64..6, 0usize..5), 1..25)
            .new_tree(&mut runner)
            .unwrap()
            .current();
        let slug = format!("people{case}");
        // A zone whose days begin on the half hour too.
        let zone = if case % 2 == 0 { "UTC" } else { "Asia/Kolkata" };
        let tz: chrono_tz::Tz = zone.parse().unwrap();
        app.board(
            json!({"slug": slug, "title": slug, "periods": ["day", "all"], "timezone": zone,
            "multiplier": 3, "carry_over": 0.5, "max_count": 10}),
        )
        .await;
        let list: Vec<_> = members
            .iter()
            .map(|m| json!({"id": m, "name": m, "initial_votes": if *m == "a" { 7 } else { 0 }}))
            .collect();
        let (status, body) = app
            .put(
                &format!("/api/v1/admin/boards/{slug}/members"),
                json!({"members": list}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let day_of = |ago: i64| {
            ovation::domain::period::Bucket::containing(
                ovation::domain::period::Period::Day,
                tz,
                now - chrono::Duration::days(ago),
            )
            .unwrap()
            .label
        };
        for (ago, who, count, voter) in &votes {
            let at = (now - chrono::Duration::days(*ago)).to_rfc3339();
            let (status, body) = app
                .vote(
                    &slug,
                    json!({"member": members[*who], "count": count, "at": at,
                        "voter": format!("v{voter}")}),
                )
                .await;
            assert_eq!(status, StatusCode::OK, "{body}");
        }
        for ago in 0..3 {
            let day = day_of(ago);
            let in_day = |v: &&(i64, usize, i64, usize)| day_of(v.0) == day;
            for (i, m) in members.iter().enumerate() {
                let want: i64 = votes
                    .iter()
                    .filter(in_day)
                    .filter(|v| v.1 == i)
                    .map(|v| v.2)
                    .sum();
                for view in ["display", "real"] {
                    let (status, read) = app
                        .get(&format!(
                            "/api/v1/boards/{slug}/members/{m}?period=day&at={day}&view={view}"
                        ))
                        .await;
                    assert_eq!(status, StatusCode::OK, "{read}");
                    assert_eq!(
                        read["votes"],
                        json!(want),
                        "{m} on {day} ({view}) of {votes:?}"
                    );
                }
            }
            // The bucket's votes and its people: different counts.
            let (status, stats) = app
                .get(&format!("/api/v1/boards/{slug}/stats?period=day&at={day}"))
                .await;
            assert_eq!(status, StatusCode::OK, "{stats}");
            let voters: std::collections::BTreeSet<usize> =
                votes.iter().filter(in_day).map(|v| v.3).collect();
            assert_eq!(
                (&stats["votes"], &stats["participants"]),
                (
                    &json!(votes.iter().filter(in_day).map(|v| v.2).sum::<i64>()),
                    &json!(voters.len())
                ),
                "{day} of {votes:?}"
            );
        }
        for (i, m) in members.iter().enumerate() {
            let want: i64 = votes.iter().filter(|v| v.1 == i).map(|v| v.2).sum();
            let (_, read) = app
                .get(&format!(
                    "/api/v1/boards/{slug}/members/{m}?period=all&view=display"
                ))
                .await;
            // Initial votes and carry-over show in the display score, never in votes.
            assert_eq!(read["votes"], json!(want), "{m} all time of {votes:?}");
        }
        let (_, stats) = app
            .get(&format!("/api/v1/boards/{slug}/stats?period=all"))
            .await;
        assert_eq!(
            stats["votes"],
            json!(votes.iter().map(|v| v.2).sum::<i64>()),
            "{stats}"
        );
    }
    // A scores board counts points, not votes.
    app.board(json!({"slug": "points", "title": "Points", "scoring": "scores"}))
        .await;
    app.members("points", &["a"]).await;
    let (status, _) = app
        .post(
            "/api/v1/boards/points/scores",
            json!({"member": "a", "op": "incr", "value": 4}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let (_, read) = app.get("/api/v1/boards/points/members/a").await;
    assert_eq!(read["votes"], json!(null), "{read}");
    let (_, stats) = app.get("/api/v1/boards/points/stats").await;
    assert_eq!(stats["votes"], json!(null), "{stats}");
}

/// A bucket's `votes` is answered where the board counted all of them: not for a bucket
/// that began before the board counted votes per bucket (a board made before the count
/// existed), nor for a rolling window.
#[tokio::test(flavor = "multi_thread")]
async fn stats_answer_no_votes_where_the_board_did_not_count_them_all() {
    use sea_orm::{ConnectionTrait, Database, Statement};
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "older", "title": "Older", "timezone": "UTC",
        "periods": ["day", "all", "rolling:24h"]}))
        .await;
    app.members("older", &["a"]).await;
    let now = chrono::Utc::now();
    let today = now.format("%Y-%m-%d").to_string();
    let yesterday = (now - chrono::Duration::days(1))
        .format("%Y-%m-%d")
        .to_string();
    for at in [now, now - chrono::Duration::days(1)] {
        let (status, body) = app
            .vote(
                "older",
                json!({"member": "a", "count": 2, "at": at.to_rfc3339()}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    let votes = |period: &str, at: &str| {
        let app = app.clone();
        let path = format!("/api/v1/boards/older/stats?period={period}&at={at}");
        async move { app.get(&path).await.1["votes"].clone() }
    };
    assert_eq!(votes("day", &yesterday).await, json!(2));
    assert_eq!(votes("all", "all").await, json!(4));
    // As if the board had been made before the count: it counts from today on.
    let start_of_today = now
        .date_naive()
        .and_hms_opt(0, 0, 0)
        .unwrap()
        .and_utc()
        .timestamp_millis();
    let db = Database::connect(&app.database.url).await.unwrap();
    db.execute_raw(Statement::from_string(
        db.get_database_backend(),
        format!("UPDATE boards SET votes_counted_from_ms = {start_of_today} WHERE slug = 'older'"),
    ))
    .await
    .unwrap();
    let (status, body) = app
        .patch(
            "/api/v1/admin/boards/older",
            json!({"title": "Older still"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(votes("day", &today).await, json!(2));
    assert_eq!(votes("day", &yesterday).await, json!(null));
    assert_eq!(votes("all", "all").await, json!(null));
    let (status, rolling) = app
        .get("/api/v1/boards/older/stats?period=rolling:24h")
        .await;
    assert_eq!(status, StatusCode::OK, "{rolling}");
    assert_eq!(rolling["votes"], json!(null), "{rolling}");
}
