//! Held votes: watches configured per board, and votes past a watch held for review —
//! recorded in the ledger as held, counted nowhere, answered as an accepted vote is —
//! checked against a brute-force model with random voters and bursty networks.

use std::collections::BTreeMap;

use proptest::prelude::*;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::harness::{TestApp, num};
use crate::ledger::{assert_gapless, ledger, stores};
use ovation::engine::audit::{self, AuditFilter};

fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: std::sync::OnceLock<tokio::runtime::Runtime> = std::sync::OnceLock::new();
    RT.get_or_init(|| tokio::runtime::Runtime::new().unwrap())
}

async fn add_watch(app: &TestApp, board: &str, watch: Value) -> (StatusCode, Value) {
    app.post(&format!("/api/v1/admin/boards/{board}/watches"), watch)
        .await
}

/// A member's score on `board` in `period`, real view.
async fn score(app: &TestApp, board: &str, member: &str, period: &str) -> f64 {
    let (status, read) = app
        .get(&format!(
            "/api/v1/boards/{board}/members/{member}?period={period}&view=real"
        ))
        .await;
    assert_eq!(status, StatusCode::OK, "{read}");
    num(&read["score"])
}

#[tokio::test(flavor = "multi_thread")]
async fn watches_are_kept_per_board_and_refused_where_they_cannot_hold_votes() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "final", "title": "Final"})).await;
    let watch = json!({"name": "a network per member", "dimensions": ["member", "ip/24"],
        "window": "rolling:10m", "threshold": 50});
    let (status, created) = add_watch(&app, "final", watch.clone()).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let id = created["id"].as_i64().unwrap();
    assert_eq!(
        created,
        json!({"id": id, "name": "a network per member", "dimensions": ["member", "ip/24"],
            "window": "rolling:10m", "threshold": 50})
    );

    // Each refusal has its own code, and adds nothing.
    for (body, code) in [
        (
            json!({"name": "w", "dimensions": ["creator"], "window": "day", "threshold": 3}),
            "invalid_dimension",
        ),
        (
            json!({"name": "w", "dimensions": ["ip/32"], "window": "day", "threshold": 3}),
            "invalid_dimension",
        ),
        (
            json!({"name": "w", "dimensions": [], "window": "day", "threshold": 3}),
            "empty_dimensions",
        ),
        (
            json!({"name": "w", "dimensions": ["ip"], "window": "year", "threshold": 3}),
            "invalid_window",
        ),
        (
            json!({"name": "w", "dimensions": ["ip"], "window": "day", "threshold": 0}),
            "invalid_threshold",
        ),
        (
            json!({"name": "w", "dimensions": ["ip"], "window": "rolling:1h", "threshold": 100_001}),
            "invalid_threshold",
        ),
        (
            json!({"name": "w", "dimensions": ["ip"], "window": "day"}),
            "invalid_threshold",
        ),
        (
            json!({"name": " ", "dimensions": ["ip"], "window": "day", "threshold": 3}),
            "invalid_name",
        ),
    ] {
        let (status, body) = add_watch(&app, "final", body).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert_eq!(body["error"]["code"], code, "{body}");
    }
    let (status, body) = add_watch(
        &app,
        "final",
        json!({"name": "w", "dimensions": ["ip"],
        "window": "day", "threshold": 3, "limit": 4}),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(body["error"]["code"], "invalid_field", "{body}");
    let (status, body) = add_watch(&app, "nowhere", watch.clone()).await;
    assert_eq!(
        (status, body["error"]["code"].clone()),
        (StatusCode::NOT_FOUND, json!("board_not_found"))
    );

    // Boards a watch cannot run on.
    for (slug, settings, status_code, code) in [
        (
            "plain",
            json!({"ledger": false}),
            StatusCode::CONFLICT,
            "ledger_required",
        ),
        (
            "points",
            json!({"scoring": "scores"}),
            StatusCode::CONFLICT,
            "wrong_scoring",
        ),
        (
            "spread",
            json!({"storage": {"kind": "sharded", "shards": 3}}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_storage",
        ),
        (
            "rooms",
            json!({"instances": {"ttl_s": 3600}, "membership": "open"}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "not_for_family",
        ),
    ] {
        let mut board = json!({"slug": slug, "title": slug});
        board
            .as_object_mut()
            .unwrap()
            .extend(settings.as_object().unwrap().clone());
        app.board(board).await;
        let (status, body) = add_watch(&app, slug, watch.clone()).await;
        assert_eq!(status, status_code, "{slug}: {body}");
        assert_eq!(body["error"]["code"], code, "{slug}: {body}");
    }
    // The ledger stays on while a board has watches.
    let (status, body) = app
        .patch("/api/v1/admin/boards/final", json!({"ledger": false}))
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert_eq!(body["error"]["code"], "ledger_required", "{body}");

    // At most five a board.
    for n in 2..=5 {
        let (status, body) = add_watch(
            &app,
            "final",
            json!({"name": format!("w{n}"),
            "dimensions": ["ip"], "window": "hour", "threshold": n}),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }
    let (status, body) = add_watch(&app, "final", watch.clone()).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert_eq!(body["error"]["code"], "too_many_watches", "{body}");

    // Changed, listed, deleted.
    let (status, changed) = app
        .patch(
            &format!("/api/v1/admin/boards/final/watches/{id}"),
            json!({"threshold": 80, "dimensions": ["ip/48"]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{changed}");
    assert_eq!(
        (changed["threshold"].clone(), changed["dimensions"].clone()),
        (json!(80), json!(["ip/48"]))
    );
    let (status, body) = app
        .patch(
            &format!("/api/v1/admin/boards/final/watches/{id}"),
            json!({"threshold": -1}),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    let (_, listed) = app.get("/api/v1/admin/boards/final/watches").await;
    let listed = listed["watches"].as_array().unwrap();
    assert_eq!(listed.len(), 5);
    assert_eq!(listed[0], changed);
    let (status, _) = app
        .delete(&format!("/api/v1/admin/boards/final/watches/{id}"))
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    for path in [
        format!("/api/v1/admin/boards/final/watches/{id}"),
        "/api/v1/admin/boards/final/watches/x".to_owned(),
    ] {
        let (status, body) = app.delete(&path).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
        assert_eq!(body["error"]["code"], "watch_not_found", "{body}");
    }
    let (_, listed) = app.get("/api/v1/admin/boards/final/watches").await;
    assert_eq!(listed["watches"].as_array().unwrap().len(), 4);
    let state = stores(&app).await;
    let filter = AuditFilter {
        action: Some("watch.".into()),
        ..AuditFilter::default()
    };
    let logged: Vec<(String, String)> = audit::newest(&state, &filter, 50)
        .await
        .unwrap()
        .into_iter()
        .map(|e| (e.action, e.target))
        .collect();
    assert_eq!(logged.len(), 7, "{logged:?}");
    assert_eq!(
        logged[..2],
        [
            ("watch.delete".to_owned(), format!("watch {id} on final")),
            ("watch.update".to_owned(), format!("watch {id} on final")),
        ]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_vote_past_a_watch_is_held_answered_as_accepted_and_counted_nowhere() {
    for window in ["day", "rolling:1h"] {
        let app = TestApp::spawn().await;
        app.board(json!({"slug": "final", "title": "Final", "periods": ["hour", "day", "all"]}))
            .await;
        app.members("final", &["m1", "m2"]).await;
        let (status, rule) = app
            .post(
                "/api/v1/admin/boards/final/rules",
                json!({"name": "one a day", "dimensions": ["voter"], "window": "day", "limit": 1}),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{rule}");
        let (status, watch) = add_watch(
            &app,
            "final",
            json!({"name": "farm",
            "dimensions": ["member", "ip/24"], "window": window, "threshold": 3}),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{watch}");
        let watch_id = watch["id"].as_i64().unwrap();

        let vote = |voter: &str, ip: &str, member: &str| json!({"member": member, "voter": voter, "ip": ip, "idempotency_key": voter});
        let mut answers = Vec::new();
        for n in 1..=5 {
            let (status, answer) = app
                .vote(
                    "final",
                    vote(&format!("v{n}"), &format!("203.0.113.{n}"), "m1"),
                )
                .await;
            assert_eq!(status, StatusCode::OK, "{window} vote {n}: {answer}");
            answers.push(answer);
        }
        // The first three count; the fourth and fifth are held, and answer as accepted
        // votes do, with the scores as they stand.
        let all_time = |a: &Value| {
            let all = a["scores"]
                .as_array()
                .unwrap()
                .iter()
                .find(|s| s["period"] == "all")
                .unwrap();
            (num(&all["real"]), all["bucket"].clone())
        };
        let seen: Vec<f64> = answers.iter().map(|a| all_time(a).0).collect();
        assert_eq!(seen, vec![1.0, 2.0, 3.0, 3.0, 3.0], "{window}: {answers:?}");
        for a in &answers {
            assert_eq!(a["replayed"], false, "{a}");
            assert_eq!(a["scores"].as_array().unwrap().len(), 3, "{a}");
            assert_eq!(
                a.as_object().unwrap().keys().collect::<Vec<_>>(),
                answers[0].as_object().unwrap().keys().collect::<Vec<_>>()
            );
        }
        // Another network and another member are other subjects.
        let (status, other_net) = app.vote("final", vote("v6", "198.51.100.7", "m1")).await;
        assert_eq!(
            (status, all_time(&other_net).0),
            (StatusCode::OK, 4.0),
            "{other_net}"
        );
        let (status, other_member) = app.vote("final", vote("v7", "203.0.113.9", "m2")).await;
        assert_eq!((status, all_time(&other_member).0), (StatusCode::OK, 1.0));

        // A retried held vote answers its first answer and records nothing more.
        let (status, again) = app.vote("final", vote("v5", "203.0.113.5", "m1")).await;
        assert_eq!(status, StatusCode::OK, "{again}");
        assert_eq!(again["replayed"], true, "{again}");
        assert_eq!(all_time(&again).0, 3.0, "{again}");
        // A held vote consumed its rules: v4's second vote of the day is refused.
        let (status, refused) = app
            .vote(
                "final",
                json!({"member": "m2", "voter": "v4", "ip": "192.0.2.1"}),
            )
            .await;
        assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{refused}");

        for (member, expected) in [("m1", 4.0), ("m2", 1.0)] {
            for period in ["hour", "day", "all"] {
                assert_eq!(
                    score(&app, "final", member, period).await,
                    expected,
                    "{window} {member} {period}"
                );
            }
        }
        let (_, top) = app
            .get("/api/v1/boards/final/top?period=day&view=real&limit=10")
            .await;
        assert_eq!(top["total_members"], 2, "{top}");

        let entries = ledger(&app, "final", 100).await;
        assert_gapless(&entries);
        assert_eq!(entries.len(), 7, "{entries:?}");
        let held: Vec<(&str, &str, Value)> = entries
            .iter()
            .filter(|e| !e["held"].is_null())
            .map(|e| {
                (
                    e["voter"].as_str().unwrap(),
                    e["ip"].as_str().unwrap(),
                    e["held"].clone(),
                )
            })
            .collect();
        let mark = json!({"watch": watch_id, "subject": "2.m1|14.203.0.113.0/24"});
        assert_eq!(
            held,
            vec![
                ("v4", "203.0.113.4", mark.clone()),
                ("v5", "203.0.113.5", mark.clone())
            ],
            "{window}"
        );
        assert!(entries.iter().all(|e| e["ip"].is_string()), "{entries:?}");

        // A recount leaves the held votes out, and agrees with Redis.
        let (status, recount) = app
            .post("/api/v1/admin/boards/final/recount", json!({}))
            .await;
        assert_eq!(status, StatusCode::OK, "{recount}");
        assert_eq!(
            (recount["entries"].clone(), recount["mismatches"].clone()),
            (json!(7), json!([])),
            "{window}: {recount}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_revoked_held_vote_takes_nothing_out_and_a_board_without_watches_records_no_address() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "final", "title": "Final", "periods": ["day", "all"]}))
        .await;
    app.members("final", &["m1"]).await;
    app.vote(
        "final",
        json!({"member": "m1", "voter": "a", "ip": "203.0.113.1"}),
    )
    .await;
    let (status, watch) = add_watch(
        &app,
        "final",
        json!({"name": "farm",
        "dimensions": ["ip/24"], "window": "day", "threshold": 1}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{watch}");
    for voter in ["b", "b", "c"] {
        let (status, body) = app
            .vote(
                "final",
                json!({"member": "m1", "voter": voter, "ip": "203.0.113.2"}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    // The first vote with the watch on counts (1 of 1), the next two are held.
    assert_eq!(score(&app, "final", "m1", "all").await, 2.0);
    let (status, revoked) = app
        .post(
            "/api/v1/admin/boards/final/revocations",
            json!({"voter": "b", "reason": "a farm"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{revoked}");
    // b's counted vote comes out, its held one counted nowhere.
    assert_eq!(revoked["votes"], 1, "{revoked}");
    assert_eq!(score(&app, "final", "m1", "all").await, 1.0);
    assert_eq!(score(&app, "final", "m1", "day").await, 1.0);
    let entries = ledger(&app, "final", 100).await;
    assert_eq!(entries.len(), 4);
    assert!(entries[0]["ip"].is_null(), "{}", entries[0]);
    assert_eq!(entries[1]["ip"], "203.0.113.2");
    let (status, recount) = app
        .post("/api/v1/admin/boards/final/recount", json!({}))
        .await;
    assert_eq!(status, StatusCode::OK, "{recount}");
    assert_eq!(recount["mismatches"], json!([]), "{recount}");
}

/// One vote of the model: a member, a network (of three /24s) and a host in it, a count.
#[derive(Debug, Clone)]
struct Cast {
    member: u8,
    net: u8,
    host: u8,
    count: i64,
}

fn cast() -> impl Strategy<Value = Cast> {
    // Network 0 is a farm's: most votes come from it.
    (
        0u8..3,
        prop_oneof![6 => Just(0u8), 1 => Just(1u8), 1 => Just(2u8)],
        1u8..250,
        1i64..=3,
    )
        .prop_map(|(member, net, host, count)| Cast {
            member,
            net,
            host,
            count,
        })
}

/// Plays `casts` on a board watched per member and /24 with `threshold` votes a day, and
/// compares which votes are held, the scores and the recount with the model: a vote is
/// held when its subject's votes before it, held ones included, and its own pass the
/// threshold.
async fn play(casts: &[Cast], threshold: i64) {
    let app = TestApp::spawn().await;
    app.board(
        json!({"slug": "final", "title": "Final", "periods": ["day", "all"],
        "max_count": 3}),
    )
    .await;
    app.members("final", &["m0", "m1", "m2"]).await;
    let (status, watch) = add_watch(
        &app,
        "final",
        json!({"name": "farm",
        "dimensions": ["member", "ip/24"], "window": "day", "threshold": threshold}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{watch}");
    let nets = ["203.0.113", "198.51.100", "192.0.2"];
    let mut seen: BTreeMap<(u8, u8), i64> = BTreeMap::new();
    let mut counted: BTreeMap<String, i64> = BTreeMap::new();
    let mut held = Vec::new();
    for (i, c) in casts.iter().enumerate() {
        let member = format!("m{}", c.member);
        let (status, body) = app
            .vote(
                "final",
                json!({"member": member, "voter": format!("v{i}"), "count": c.count,
                    "ip": format!("{}.{}", nets[usize::from(c.net)], c.host)}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let before = seen.entry((c.member, c.net)).or_insert(0);
        let is_held = *before + c.count > threshold;
        *before += c.count;
        if is_held {
            held.push(format!("v{i}"));
        } else {
            *counted.entry(member.clone()).or_insert(0) += c.count;
        }
        let all = body["scores"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["period"] == "all")
            .unwrap()
            .clone();
        assert_eq!(
            num(&all["real"]),
            counted.get(&member).copied().unwrap_or(0) as f64,
            "vote {i} {c:?}: {body}"
        );
    }
    for m in ["m0", "m1", "m2"] {
        let expected = counted.get(m).copied().unwrap_or(0) as f64;
        assert_eq!(score(&app, "final", m, "all").await, expected, "{m}");
        assert_eq!(score(&app, "final", m, "day").await, expected, "{m}");
    }
    let entries = ledger(&app, "final", 1000).await;
    assert_eq!(entries.len(), casts.len());
    let found: Vec<String> = entries
        .iter()
        .filter(|e| !e["held"].is_null())
        .map(|e| e["voter"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(found, held);
    let (status, recount) = app
        .post("/api/v1/admin/boards/final/recount", json!({}))
        .await;
    assert_eq!(status, StatusCode::OK, "{recount}");
    assert_eq!(recount["mismatches"], json!([]), "{recount}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn exactly_the_votes_past_a_watch_are_held(
        casts in prop::collection::vec(cast(), 1..40),
        threshold in 1i64..8,
    ) {
        runtime().block_on(play(&casts, threshold));
    }
}
