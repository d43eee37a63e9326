//! Held votes: watches configured per board, and votes past a watch held for review —
//! recorded in the ledger as held, counted nowhere, answered as an accepted vote is —
//! checked against a brute-force model with random voters and bursty networks.

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::harness::{TestApp, num};
use crate::ledger::{assert_gapless, ledger, stores};
use ovation::engine::audit::{self, AuditFilter};
use ovation::store::redis::keys::shard_of;

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

/// What a board shows of `members` in each of `periods`, both views: the top (members
/// and scores), its member and participant counts, and each member's participants and
/// votes.
async fn standings(app: &TestApp, board: &str, periods: &[&str], members: &[&str]) -> Vec<Value> {
    let mut seen = Vec::new();
    for period in periods {
        for view in ["real", "display"] {
            let (status, top) = app
                .get(&format!(
                    "/api/v1/boards/{board}/top?period={period}&view={view}&limit=100"
                ))
                .await;
            assert_eq!(status, StatusCode::OK, "{top}");
            let entries: Vec<Value> = top["entries"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| json!([e["member"], e["score"], e["rank"]]))
                .collect();
            seen.push(json!({"period": period, "view": view, "entries": entries,
                "total_members": top["total_members"], "participants": top["participants"]}));
            for m in members {
                let (_, read) = app
                    .get(&format!(
                        "/api/v1/boards/{board}/members/{m}?period={period}&view={view}"
                    ))
                    .await;
                seen.push(json!({"period": period, "view": view, "member": m,
                    "score": read["score"], "participants": read["participants"],
                    "votes": read["votes"]}));
            }
        }
    }
    seen
}

/// A vote's answer's all-time score, real view.
fn all_time(answer: &Value) -> f64 {
    let all = answer["scores"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["period"] == "all")
        .unwrap();
    num(&all["real"])
}

/// The voters of the held entries among ledger `entries`.
fn held_voters(entries: &[Value]) -> BTreeSet<String> {
    entries
        .iter()
        .filter(|e| !e["held"].is_null())
        .map(|e| e["voter"].as_str().unwrap().to_owned())
        .collect()
}

async fn review(app: &TestApp, board: &str, body: Value) -> (StatusCode, Value) {
    app.post(&format!("/api/v1/admin/boards/{board}/held/reviews"), body)
        .await
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
            json!({"name": "w", "dimensions": ["ip"], "window": "rolling:1h", "threshold": 1_000_000_001}),
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

/// On a `full` board, and on a board sharded by voter (where the watch counts in the
/// shard its subject picks and the vote is held in its voter's).
#[tokio::test(flavor = "multi_thread")]
async fn a_vote_past_a_watch_is_held_answered_as_accepted_and_counted_nowhere() {
    let layouts = [
        json!({"kind": "full"}),
        json!({"kind": "sharded", "shards": 3}),
    ];
    for (window, storage) in ["day", "rolling:1h"]
        .into_iter()
        .flat_map(|w| layouts.iter().map(move |s| (w, s)))
    {
        let app = TestApp::spawn().await;
        app.board(
            json!({"slug": "final", "title": "Final", "periods": ["hour", "day", "all"],
            "storage": storage}),
        )
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
            assert_eq!(
                status,
                StatusCode::OK,
                "{window} {storage} vote {n}: {answer}"
            );
            answers.push(answer);
        }
        // The first three count; the fourth and fifth are held, and answer as accepted
        // votes do, with the scores as they stand.
        let seen: Vec<f64> = answers.iter().map(all_time).collect();
        assert_eq!(
            seen,
            vec![1.0, 2.0, 3.0, 3.0, 3.0],
            "{window} {storage}: {answers:?}"
        );
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
            (status, all_time(&other_net)),
            (StatusCode::OK, 4.0),
            "{other_net}"
        );
        let (status, other_member) = app.vote("final", vote("v7", "203.0.113.9", "m2")).await;
        assert_eq!((status, all_time(&other_member)), (StatusCode::OK, 1.0));

        // A retried held vote answers its first answer and records nothing more.
        let (status, again) = app.vote("final", vote("v5", "203.0.113.5", "m1")).await;
        assert_eq!(status, StatusCode::OK, "{again}");
        assert_eq!(again["replayed"], true, "{again}");
        assert_eq!(all_time(&again), 3.0, "{again}");
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
                    "{window} {storage} {member} {period}"
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
        let mut held: Vec<(&str, &str, Value)> = entries
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
        // A sharded board's ledger lists each shard's entries together.
        held.sort_by_key(|h| h.0);
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
            "{window} {storage}: {recount}"
        );
    }
}

/// On a sharded board a vote its voter's shard refuses gives back what its watch counted
/// in another shard, and a watch of `voter` counts in the voter's shard with the vote:
/// over a calendar day and over a rolling hour (a subject's tenths, one counter).
#[tokio::test(flavor = "multi_thread")]
async fn a_sharded_board_gives_a_refused_votes_watch_count_back() {
    for window in ["day", "rolling:1h"] {
        refused_and_given_back(window).await;
    }
}

async fn refused_and_given_back(window: &str) {
    let app = TestApp::spawn().await;
    app.board(
        json!({"slug": "final", "title": "Final", "periods": ["day", "all"],
        "storage": {"kind": "sharded", "shards": 4}}),
    )
    .await;
    app.members("final", &["m1", "m2"]).await;
    let (status, rule) = app
        .post(
            "/api/v1/admin/boards/final/rules",
            json!({"name": "three a day", "dimensions": ["voter", "member"], "window": "day",
                "limit": 3}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{rule}");
    let mut ids = Vec::new();
    for (name, dimensions, threshold) in [
        ("net", json!(["ip/24"]), 4),
        ("repeat", json!(["voter"]), 3),
    ] {
        let (status, watch) = add_watch(
            &app,
            "final",
            json!({"name": name, "dimensions": dimensions, "window": window, "threshold": threshold}),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{watch}");
        ids.push(watch["id"].as_i64().unwrap());
    }
    let vote = |voter: &str, ip: &str, member: &str, count: i64| json!({"member": member, "voter": voter, "ip": ip, "count": count});
    // A voter whose shard is not the one the network's count lives in.
    let u1 = ["u1", "u5", "u6", "u7", "u8", "u9"]
        .into_iter()
        .find(|v| shard_of(v, 4) != shard_of("14.203.0.113.0/24", 4))
        .unwrap();
    // u1 fills its rule; its next vote is refused in its shard, after "net" counted it.
    let (status, first) = app.vote("final", vote(u1, "203.0.113.1", "m1", 3)).await;
    assert_eq!(
        (status, all_time(&first)),
        (StatusCode::OK, 3.0),
        "{window}: {first}"
    );
    let (status, refused) = app.vote("final", vote(u1, "203.0.113.1", "m1", 1)).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{window}: {refused}");
    // So "net" holds 3 of 4, and u2's vote counts; u3's takes the network past 4.
    let (status, second) = app.vote("final", vote("u2", "203.0.113.2", "m1", 1)).await;
    assert_eq!(
        (status, all_time(&second)),
        (StatusCode::OK, 4.0),
        "{window}: {second}"
    );
    let (status, third) = app.vote("final", vote("u3", "203.0.113.3", "m2", 1)).await;
    assert_eq!(
        (status, all_time(&third)),
        (StatusCode::OK, 0.0),
        "{window}: {third}"
    );
    // "repeat" counts u4's votes in u4's shard: its fourth is held.
    for (n, member, expected) in [
        (1, "m1", 5.0),
        (2, "m1", 6.0),
        (3, "m2", 1.0),
        (4, "m2", 1.0),
    ] {
        let (status, answer) = app
            .vote("final", vote("u4", "198.51.100.4", member, 1))
            .await;
        assert_eq!(
            (status, all_time(&answer)),
            (StatusCode::OK, expected),
            "{window} vote {n}: {answer}"
        );
    }
    let entries = ledger(&app, "final", 100).await;
    let mut held: Vec<(&str, i64)> = entries
        .iter()
        .filter(|e| !e["held"].is_null())
        .map(|e| {
            (
                e["voter"].as_str().unwrap(),
                e["held"]["watch"].as_i64().unwrap(),
            )
        })
        .collect();
    held.sort();
    assert_eq!(
        held,
        vec![("u3", ids[0]), ("u4", ids[1])],
        "{window}: {entries:?}"
    );
    assert_eq!(entries.len(), 7, "{window}: {entries:?}");
    assert_eq!(score(&app, "final", "m1", "day").await, 6.0);
    assert_eq!(score(&app, "final", "m2", "day").await, 1.0);
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
/// threshold. Then every flagged subject is released (`release`) or dropped, and the
/// board shows what a twin without watches shows, fed every vote (released) or only
/// those never held (dropped): tallies, ranks, participants and carry-over. Both boards
/// are `full`, or `sharded` in three shards by voter (the watch then counts in the shard
/// its subject picks, apart from most votes' own).
async fn play(casts: &[Cast], threshold: i64, release: bool, sharded: bool) {
    let app = TestApp::spawn().await;
    let storage = if sharded {
        json!({"kind": "sharded", "shards": 3})
    } else {
        json!({"kind": "full"})
    };
    for slug in ["final", "twin"] {
        app.board(
            json!({"slug": slug, "title": slug, "periods": ["hour", "day", "all"],
            "max_count": 3, "multiplier": 3, "carry_over": 0.25, "storage": storage}),
        )
        .await;
        app.members(slug, &["m0", "m1", "m2"]).await;
    }
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
        let vote = json!({"member": member, "voter": format!("v{i}"), "count": c.count,
            "ip": format!("{}.{}", nets[usize::from(c.net)], c.host)});
        let (status, body) = app.vote("final", vote.clone()).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let before = seen.entry((c.member, c.net)).or_insert(0);
        let is_held = *before + c.count > threshold;
        *before += c.count;
        if release || !is_held {
            let (status, twin) = app.vote("twin", vote).await;
            assert_eq!(status, StatusCode::OK, "{twin}");
        }
        if is_held {
            held.push(format!("v{i}"));
        } else {
            *counted.entry(member.clone()).or_insert(0) += c.count;
        }
        assert_eq!(
            all_time(&body),
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
    // A sharded board's ledger lists each shard's entries together: compare as sets.
    let found = held_voters(&entries);
    assert_eq!(found, held.iter().cloned().collect::<BTreeSet<_>>());
    let (status, recount) = app
        .post("/api/v1/admin/boards/final/recount", json!({}))
        .await;
    assert_eq!(status, StatusCode::OK, "{recount}");
    assert_eq!(recount["mismatches"], json!([]), "{recount}");

    let (_, queue) = app.get("/api/v1/admin/boards/final/held").await;
    let action = if release { "release" } else { "drop" };
    let mut reviewed = 0;
    for f in queue["subjects"].as_array().unwrap() {
        let (status, done) = review(
            &app,
            "final",
            json!({"watch": f["watch"],
            "subject": f["subject"], "action": action}),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{done}");
        assert_eq!(done["votes"], f["held"], "{done}");
        reviewed += done["votes"].as_i64().unwrap();
    }
    let held_votes: i64 = casts
        .iter()
        .enumerate()
        .filter(|(i, _)| held.contains(&format!("v{i}")))
        .map(|(_, c)| c.count)
        .sum();
    assert_eq!(reviewed, held_votes);
    let periods = ["hour", "day", "all"];
    let members = ["m0", "m1", "m2"];
    assert_eq!(
        standings(&app, "final", &periods, &members).await,
        standings(&app, "twin", &periods, &members).await,
        "{action}"
    );
    let (status, recount) = app
        .post("/api/v1/admin/boards/final/recount", json!({}))
        .await;
    assert_eq!(status, StatusCode::OK, "{recount}");
    assert_eq!(recount["mismatches"], json!([]), "{recount}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    #[test]
    fn exactly_the_votes_past_a_watch_are_held_and_a_review_settles_them_exactly(
        casts in prop::collection::vec(cast(), 1..40),
        threshold in 1i64..8,
        release in any::<bool>(),
        sharded in any::<bool>(),
    ) {
        runtime().block_on(play(&casts, threshold, release, sharded));
    }
}

/// Plays votes `(seconds after the last, network, count)` on a board watched per /24
/// over a rolling 10 minutes, their times an hour and more ago and crossing the window's
/// 10-minute periods, and compares which are held with the model: a vote counts in
/// its minute (a tenth of the window) and the nine after it, and is held when its
/// network's count there, held votes included, and its own pass the threshold.
async fn play_rolling(gaps: &[(i64, u8, i64)], threshold: i64, sharded: bool) {
    let app = TestApp::spawn().await;
    let storage = if sharded {
        json!({"kind": "sharded", "shards": 3})
    } else {
        json!({"kind": "full"})
    };
    app.board(
        json!({"slug": "roll", "title": "roll", "periods": ["hour", "all"],
        "max_count": 3, "storage": storage}),
    )
    .await;
    app.members("roll", &["m1"]).await;
    let (status, watch) = add_watch(
        &app,
        "roll",
        json!({"name": "farm", "dimensions": ["ip/24"], "window": "rolling:10m",
        "threshold": threshold}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{watch}");
    let now = chrono::Utc::now().timestamp();
    // Five minutes into a 10-minute period, two hours ago.
    let mut at = now - now.rem_euclid(600) - 7200 + 300;
    let nets = ["203.0.113", "198.51.100"];
    let mut cast: Vec<(i64, u8, i64)> = Vec::new();
    let mut held = BTreeSet::new();
    for (i, &(gap, net, count)) in gaps.iter().enumerate() {
        at += gap;
        let slot = at.div_euclid(60);
        let before: i64 = cast
            .iter()
            .filter(|&&(s, n, _)| n == net && s > slot - 10)
            .map(|&(_, _, c)| c)
            .sum();
        if before + count > threshold {
            held.insert(format!("v{i}"));
        }
        cast.push((slot, net, count));
        let when = chrono::DateTime::from_timestamp(at, 0)
            .unwrap()
            .to_rfc3339();
        let (status, body) = app
            .vote(
                "roll",
                json!({"member": "m1", "voter": format!("v{i}"), "count": count,
                "ip": format!("{}.7", nets[usize::from(net)]), "at": when}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "vote {i} at {when}: {body}");
    }
    let entries = ledger(&app, "roll", 1000).await;
    assert_eq!(entries.len(), gaps.len());
    let found = held_voters(&entries);
    assert_eq!(found, held, "{gaps:?}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn a_rolling_watch_counts_each_vote_for_ten_tenths_of_its_window(
        gaps in prop::collection::vec((0i64..150, 0u8..2, 1i64..=3), 1..40),
        threshold in 1i64..10,
        sharded in any::<bool>(),
    ) {
        runtime().block_on(play_rolling(&gaps, threshold, sharded));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_queue_shows_flagged_subjects_and_a_review_releases_or_drops_them_exactly() {
    let app = TestApp::spawn().await;
    let settings = |slug: &str| {
        json!({"slug": slug, "title": slug, "periods": ["hour", "day", "week", "all"],
            "multiplier": 2, "carry_over": 0.1})
    };
    app.board(settings("final")).await;
    app.board(settings("twin")).await;
    for board in ["final", "twin"] {
        app.members(board, &["m1", "m2"]).await;
    }
    let (status, watch) = add_watch(
        &app,
        "final",
        json!({"name": "one network",
        "dimensions": ["ip/24"], "window": "day", "threshold": 2}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{watch}");
    let watch_id = watch["id"].as_i64().unwrap();
    let votes = [
        ("v1", "m1"),
        ("v2", "m1"),
        ("v3", "m1"),
        ("v4", "m2"),
        ("v5", "m2"),
    ];
    for (n, (voter, member)) in votes.iter().enumerate() {
        let ip = format!("203.0.113.{}", n + 1);
        let body = json!({"member": member, "voter": voter, "ip": ip});
        let (status, answer) = app.vote("final", body.clone()).await;
        assert_eq!(status, StatusCode::OK, "{answer}");
        // The twin counts what the final counts once v3's vote is released and the
        // m2 votes dropped.
        if *voter != "v4" && *voter != "v5" {
            let (status, answer) = app.vote("twin", body).await;
            assert_eq!(status, StatusCode::OK, "{answer}");
        }
    }
    let (status, queue) = app.get("/api/v1/admin/boards/final/held").await;
    assert_eq!(status, StatusCode::OK, "{queue}");
    let subjects = queue["subjects"].as_array().unwrap();
    assert_eq!(subjects.len(), 1, "{queue}");
    let subject = "14.203.0.113.0/24";
    let flagged = &subjects[0];
    assert_eq!(
        (
            flagged["watch"].clone(),
            flagged["watch_name"].clone(),
            flagged["subject"].clone(),
            flagged["values"].clone(),
            flagged["held"].clone(),
            flagged["released"].clone(),
            flagged["dropped"].clone(),
            flagged["members"].clone(),
            flagged["voters"].clone(),
            flagged["ips"].clone(),
        ),
        (
            json!(watch_id),
            json!("one network"),
            json!(subject),
            json!({"ip/24": "203.0.113.0/24"}),
            json!(3),
            json!(0),
            json!(0),
            json!({"m1": 1, "m2": 2}),
            json!(["v3", "v4", "v5"]),
            json!(["203.0.113.3", "203.0.113.4", "203.0.113.5"]),
        ),
        "{queue}"
    );
    // As instants: RFC 3339 text drops a whole second's fraction, so the texts of two
    // instants do not sort as the instants do.
    let instant = |field: &str| {
        chrono::DateTime::parse_from_rfc3339(flagged[field].as_str().unwrap()).unwrap()
    };
    assert!(instant("first_at") <= instant("last_at"), "{queue}");

    // Refusals change nothing.
    for (body, status, code) in [
        (
            json!({"watch": watch_id, "subject": "2.m9", "action": "drop"}),
            StatusCode::NOT_FOUND,
            "subject_not_found",
        ),
        (
            json!({"watch": watch_id + 1, "subject": subject, "action": "drop"}),
            StatusCode::NOT_FOUND,
            "subject_not_found",
        ),
        (
            json!({"watch": watch_id, "subject": subject, "member": "m9", "action": "drop"}),
            StatusCode::NOT_FOUND,
            "subject_not_found",
        ),
        (
            json!({"watch": watch_id, "subject": subject, "action": "count"}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_field",
        ),
        (
            json!({"watch": watch_id, "subject": subject, "member": "no way", "action": "drop"}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_member_id",
        ),
    ] {
        let (got, answer) = review(&app, "final", body).await;
        assert_eq!(
            (got, answer["error"]["code"].clone()),
            (status, json!(code)),
            "{answer}"
        );
    }
    let (_, unchanged) = app.get("/api/v1/admin/boards/final/held").await;
    assert_eq!(unchanged, queue);

    // m1's held vote is released, m2's are dropped.
    let (status, released) = review(
        &app,
        "final",
        json!({"watch": watch_id,
        "subject": subject, "member": "m1", "action": "release"}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{released}");
    assert_eq!(
        (
            released["action"].clone(),
            released["votes"].clone(),
            released["member"].clone()
        ),
        (json!("release"), json!(1), json!("m1"))
    );
    let (status, dropped) = review(
        &app,
        "final",
        json!({"watch": watch_id,
        "subject": subject, "action": "drop"}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{dropped}");
    assert_eq!(dropped["votes"], 2, "{dropped}");
    for action in ["release", "drop"] {
        let (status, again) = review(
            &app,
            "final",
            json!({"watch": watch_id,
            "subject": subject, "action": action}),
        )
        .await;
        assert_eq!(status, StatusCode::CONFLICT, "{again}");
        assert_eq!(again["error"]["code"], "already_reviewed", "{again}");
    }

    let periods = ["hour", "day", "week", "all"];
    assert_eq!(
        standings(&app, "final", &periods, &["m1", "m2"]).await,
        standings(&app, "twin", &periods, &["m1", "m2"]).await
    );
    assert_eq!(score(&app, "final", "m1", "all").await, 3.0);

    let (_, queue) = app.get("/api/v1/admin/boards/final/held").await;
    let flagged = &queue["subjects"][0];
    assert_eq!(
        (
            flagged["held"].clone(),
            flagged["released"].clone(),
            flagged["dropped"].clone(),
            flagged["members"].clone()
        ),
        (json!(0), json!(1), json!(2), json!({})),
        "{queue}"
    );

    // The ledger keeps the held votes and the release, which names v3's held entry.
    let entries = ledger(&app, "final", 100).await;
    assert_gapless(&entries);
    assert_eq!(entries.len(), 6, "{entries:?}");
    let released_entry = &entries[5];
    assert_eq!(released_entry["voter"], "v3");
    assert!(released_entry["held"].is_null(), "{released_entry}");
    assert_eq!(released_entry["at"], entries[2]["at"], "{entries:?}");
    assert_eq!(released_entry["releases"], entries[2]["id"], "{entries:?}");
    let state = stores(&app).await;
    let slug = ovation::domain::ids::BoardSlug::parse("final").unwrap();
    let board = state.config.board(&slug).unwrap();
    let of = ovation::store::sql::ledger::LedgerOf::board(board.board.id);
    let recorded = ovation::store::sql::ledger::page(&state.db, of, 0, 10)
        .await
        .unwrap();
    assert_eq!(recorded[5].entry.releases, Some(recorded[2].entry.id));
    let (status, recount) = app
        .post("/api/v1/admin/boards/final/recount", json!({}))
        .await;
    assert_eq!(status, StatusCode::OK, "{recount}");
    assert_eq!(
        (recount["entries"].clone(), recount["mismatches"].clone()),
        (json!(6), json!([])),
        "{recount}"
    );
    let filter = AuditFilter {
        action: Some("held.".into()),
        ..AuditFilter::default()
    };
    let logged: Vec<String> = audit::newest(&state, &filter, 10)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.action)
        .collect();
    assert_eq!(logged, ["held.drop", "held.release"]);
}

/// The value of the series of `metric` whose labels include each of `labels`.
fn series(metrics: &str, metric: &str, labels: &[&str]) -> Option<f64> {
    metrics
        .lines()
        .filter(|l| l.starts_with(&format!("{metric}{{")))
        .find(|l| labels.iter().all(|label| l.contains(label)))
        .and_then(|l| l.rsplit(' ').next()?.parse().ok())
}

#[tokio::test(flavor = "multi_thread")]
async fn held_votes_survive_a_redis_that_lost_the_board_and_are_counted_in_metrics() {
    use crate::durability::{app_on_own_redis, lose_redis_and_wait_rebuilt};
    let layouts = [
        ("campaign", json!({"kind": "full"})),
        ("rolling:1h", json!({"kind": "sharded", "shards": 3})),
    ];
    for (window, storage) in layouts {
        lost_and_rebuilt(window, storage).await;
    }

    async fn lost_and_rebuilt(window: &str, storage: Value) {
        let (server, app) = app_on_own_redis().await;
        for slug in ["lost", "twin"] {
            app.board(
                json!({"slug": slug, "title": slug, "periods": ["hour", "day", "all"],
            "carry_over": 0.5, "storage": storage}),
            )
            .await;
            app.members(slug, &["m1", "m2"]).await;
        }
        let (status, watch) = add_watch(
            &app,
            "lost",
            json!({"name": "per network",
        "dimensions": ["ip/24"], "window": window, "threshold": 2}),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{watch}");
        let watch_id = watch["id"].as_i64().unwrap();
        let watch_label = format!("watch=\"{watch_id}\"");
        let labels = ["board=\"lost\"", watch_label.as_str()];
        // Metrics are the process's: the case before this one counted in the same series.
        let counted = |metrics: &str, name: &str, state: Option<&str>| {
            let mut with = labels.to_vec();
            with.extend(state);
            series(metrics, name, &with).unwrap_or(0.0)
        };
        let at_start = app.metrics().await;
        let held_before = counted(
            &at_start,
            "ovation_held_votes_total",
            Some("state=\"held\""),
        );
        let flagged_before = counted(&at_start, "ovation_flagged_subjects_total", None);
        let released_before = counted(
            &at_start,
            "ovation_held_votes_total",
            Some("state=\"released\""),
        );
        for n in 1..=6 {
            let member = if n % 2 == 0 { "m2" } else { "m1" };
            let vote = json!({"member": member, "voter": format!("v{n}"), "count": 2,
            "ip": format!("203.0.113.{n}")});
            let (status, body) = app.vote("lost", vote.clone()).await;
            assert_eq!(status, StatusCode::OK, "{body}");
            // Only the first vote fits the threshold of 2.
            if n == 1 {
                app.vote("twin", vote).await;
            }
        }
        let metrics = app.metrics().await;
        assert_eq!(
            counted(&metrics, "ovation_held_votes_total", Some("state=\"held\"")) - held_before,
            10.0,
            "{metrics}"
        );
        assert_eq!(
            counted(&metrics, "ovation_flagged_subjects_total", None) - flagged_before,
            1.0,
            "{metrics}"
        );
        let periods = ["hour", "day", "all"];
        let members = ["m1", "m2"];
        let before = standings(&app, "lost", &periods, &members).await;
        assert_eq!(before, standings(&app, "twin", &periods, &members).await);

        // What reached SQL comes back: every entry has before Redis loses them.
        assert_eq!(ledger(&app, "lost", 100).await.len(), 6);
        assert_eq!(ledger(&app, "twin", 100).await.len(), 1);
        lose_redis_and_wait_rebuilt(&app, &server).await;
        assert_eq!(standings(&app, "lost", &periods, &members).await, before);
        let (_, queue) = app.get("/api/v1/admin/boards/lost/held").await;
        assert_eq!(queue["subjects"][0]["held"], 10, "{queue}");
        // Released after the rebuild, the held votes count as if never held.
        let (status, done) = review(
            &app,
            "lost",
            json!({"watch": watch_id,
        "subject": queue["subjects"][0]["subject"], "action": "release"}),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{done}");
        for n in 2..=6 {
            let member = if n % 2 == 0 { "m2" } else { "m1" };
            let (status, body) = app
                .vote(
                    "twin",
                    json!({"member": member, "voter": format!("v{n}"), "count": 2,
                "ip": format!("203.0.113.{n}")}),
                )
                .await;
            assert_eq!(status, StatusCode::OK, "{body}");
        }
        assert_eq!(
            standings(&app, "lost", &periods, &members).await,
            standings(&app, "twin", &periods, &members).await
        );
        let metrics = app.metrics().await;
        assert_eq!(
            counted(
                &metrics,
                "ovation_held_votes_total",
                Some("state=\"released\"")
            ) - released_before,
            10.0,
            "{metrics}"
        );
        // The watch's count came back with the board: the network stays past its
        // threshold, and its next vote is held.
        let (status, body) = app
            .vote(
                "lost",
                json!({"member": "m1", "voter": "v7", "count": 2, "ip": "203.0.113.7"}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let entries = ledger(&app, "lost", 100).await;
        let last = entries.iter().find(|e| e["voter"] == "v7").unwrap();
        assert_eq!(
            last["held"]["watch"], watch_id,
            "{window} {storage}: {last}"
        );
        assert_eq!(
            standings(&app, "lost", &periods, &members).await,
            standings(&app, "twin", &periods, &members).await
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn held_votes_left_unreviewed_past_the_retention_are_dropped_and_audited() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "final", "title": "Final", "periods": ["day", "all"]}))
        .await;
    app.members("final", &["m1"]).await;
    let (status, watch) = add_watch(
        &app,
        "final",
        json!({"name": "farm",
        "dimensions": ["ip/24"], "window": "day", "threshold": 1}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{watch}");
    for n in 1..=3 {
        app.vote(
            "final",
            json!({"member": "m1", "voter": format!("v{n}"),
            "ip": format!("192.0.2.{n}")}),
        )
        .await;
    }
    let (_, queue) = app.get("/api/v1/admin/boards/final/held").await;
    assert_eq!(queue["subjects"][0]["held"], 2, "{queue}");
    let state = stores(&app).await;
    let now = chrono::Utc::now();
    // Within the retention (30 days here) nothing goes.
    let soon = now + chrono::Duration::days(29);
    assert_eq!(
        ovation::engine::held::expire(&state, soon).await.unwrap(),
        0
    );
    let later = now + chrono::Duration::days(31);
    assert_eq!(
        ovation::engine::held::expire(&state, later).await.unwrap(),
        2
    );
    assert_eq!(
        ovation::engine::held::expire(&state, later).await.unwrap(),
        0
    );
    let (_, queue) = app.get("/api/v1/admin/boards/final/held").await;
    assert_eq!(
        (
            queue["subjects"][0]["held"].clone(),
            queue["subjects"][0]["dropped"].clone()
        ),
        (json!(0), json!(2)),
        "{queue}"
    );
    assert_eq!(score(&app, "final", "m1", "all").await, 1.0);
    let filter = AuditFilter {
        action: Some("held.expire".into()),
        ..AuditFilter::default()
    };
    let logged = audit::newest(&state, &filter, 10).await.unwrap();
    assert_eq!(logged.len(), 1, "{logged:?}");
    assert_eq!(logged[0].actor, "held vote retention");
    assert!(
        logged[0].detail.contains("\"votes\":2"),
        "{}",
        logged[0].detail
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_board_may_tell_voters_their_vote_is_held_for_review() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "final", "title": "Final", "periods": ["day", "all"]}))
        .await;
    app.members("final", &["m1"]).await;
    let (status, board) = app
        .patch("/api/v1/admin/boards/final", json!({"tell_held": true}))
        .await;
    assert_eq!(status, StatusCode::OK, "{board}");
    let (_, read) = app.get("/api/v1/boards/final").await;
    assert_eq!(read["tell_held"], true, "{read}");
    let (status, watch) = add_watch(
        &app,
        "final",
        json!({"name": "farm",
        "dimensions": ["ip"], "window": "day", "threshold": 1}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{watch}");
    let vote = |key: &str| json!({"member": "m1", "ip": "192.0.2.7", "idempotency_key": key});
    let (status, counted) = app.vote("final", vote("a")).await;
    assert_eq!(status, StatusCode::OK, "{counted}");
    assert!(counted.get("held").is_none(), "{counted}");
    let (status, held) = app.vote("final", vote("b")).await;
    assert_eq!(status, StatusCode::OK, "{held}");
    assert_eq!(
        (held["held"].clone(), held["replayed"].clone()),
        (json!(true), json!(false))
    );
    let (status, again) = app.vote("final", vote("b")).await;
    assert_eq!(status, StatusCode::OK, "{again}");
    assert_eq!(
        (again["held"].clone(), again["replayed"].clone()),
        (json!(true), json!(true))
    );
    assert_eq!(again["scores"], held["scores"]);
    // The first vote's replay was never held.
    let (_, first) = app.vote("final", vote("a")).await;
    assert!(first.get("held").is_none(), "{first}");
    assert_eq!(score(&app, "final", "m1", "all").await, 1.0);
}

#[tokio::test(flavor = "multi_thread")]
async fn held_votes_and_their_watch_counts_survive_a_redis_crash_with_aof() {
    use crate::harness::{Options, RedisServer, free_port};
    use ovation::store::redis::RedisTarget;
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut redis = RedisServer::start_durable(port, dir.path());
    let app = TestApp::spawn_with(Options {
        redis: RedisTarget::Single(redis.url()),
        // The held votes' entries wait in Redis when it crashes.
        ledger_drain: std::time::Duration::from_secs(3600),
        ..Options::default()
    })
    .await;
    app.board(json!({"slug": "final", "title": "Final", "periods": ["day", "all"]}))
        .await;
    app.members("final", &["m1"]).await;
    let (status, watch) = add_watch(
        &app,
        "final",
        json!({"name": "farm",
        "dimensions": ["ip/24"], "window": "day", "threshold": 2}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{watch}");
    let vote =
        |n: u8| json!({"member": "m1", "voter": format!("v{n}"), "ip": format!("192.0.2.{n}")});
    for n in 1..=4 {
        let (status, body) = app.vote("final", vote(n)).await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    redis.crash();
    let _redis = RedisServer::start_durable(port, dir.path());
    // The watch still counts the subject past its threshold: the next vote is held too.
    let mut answered = None;
    for _ in 0..100 {
        let (status, body) = app.vote("final", vote(5)).await;
        if status == StatusCode::OK {
            answered = Some(body);
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(
        answered.is_some(),
        "the vote after the restart was answered"
    );
    assert_eq!(score(&app, "final", "m1", "all").await, 2.0);
    let (status, queue) = app.get("/api/v1/admin/boards/final/held").await;
    assert_eq!(status, StatusCode::OK, "{queue}");
    assert_eq!(
        (
            queue["subjects"][0]["held"].clone(),
            queue["subjects"][0]["voters"].clone()
        ),
        (json!(3), json!(["v3", "v4", "v5"])),
        "{queue}"
    );
    let entries = ledger(&app, "final", 100).await;
    assert_gapless(&entries);
    assert_eq!(entries.len(), 5);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_release_leaves_out_the_votes_of_a_member_disabled_since() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "final", "title": "Final", "periods": ["day", "all"]}))
        .await;
    app.members("final", &["m1", "m2"]).await;
    let (status, watch) = add_watch(
        &app,
        "final",
        json!({"name": "farm",
        "dimensions": ["ip/24"], "window": "day", "threshold": 1}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{watch}");
    for (n, member) in ["m1", "m1", "m2"].iter().enumerate() {
        app.vote(
            "final",
            json!({"member": member, "voter": format!("v{n}"),
            "ip": format!("192.0.2.{n}")}),
        )
        .await;
    }
    let (status, body) = app
        .patch(
            "/api/v1/admin/boards/final/members/m2",
            json!({"enabled": false}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (_, queue) = app.get("/api/v1/admin/boards/final/held").await;
    let (status, done) = review(
        &app,
        "final",
        json!({"watch": watch["id"],
        "subject": queue["subjects"][0]["subject"], "action": "release"}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{done}");
    assert_eq!(done["votes"], 2, "{done}");
    assert_eq!(score(&app, "final", "m1", "all").await, 2.0);
    // m2's vote was left out; the queue reads on.
    let (status, queue) = app.get("/api/v1/admin/boards/final/held").await;
    assert_eq!(status, StatusCode::OK, "{queue}");
    assert_eq!(queue["subjects"][0]["released"], 2, "{queue}");
    let entries = ledger(&app, "final", 100).await;
    assert_eq!(
        entries.len(),
        4,
        "three votes and m1's release: {entries:?}"
    );
}

#[tokio::test]
async fn counter_hashes_are_hash_tables_and_a_rolling_watch_packs_its_ring() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "final", "title": "Final", "periods": ["day", "all"]}))
        .await;
    app.members("final", &["m1"]).await;
    let (status, rule) = app
        .post(
            "/api/v1/admin/boards/final/rules",
            json!({"name": "a day", "dimensions": ["voter"], "window": "day", "limit": 100}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{rule}");
    let (status, watch) = add_watch(
        &app,
        "final",
        json!({"name": "net", "dimensions": ["ip/24"], "window": "rolling:10m", "threshold": 100}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{watch}");
    for count in [1, 2] {
        let (status, body) = app
            .vote(
                "final",
                json!({"member": "m1", "voter": "u1", "ip": "203.0.113.1", "count": count}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    let slot_now = chrono::Utc::now().timestamp_millis() / 60_000;
    let mut conn = crate::harness::RawRedis::connect().await;
    // Both hashes hold a subject and the mark whose long value keeps them hash tables
    // (a listpack is scanned field by field on every read).
    let rule_keys = conn.keys(&format!("{}*:rl:*", app.prefix)).await;
    let watch_keys = conn
        .keys(&format!("{}*:wt:*:rolling:10m:*", app.prefix))
        .await;
    assert_eq!(
        (rule_keys.len(), watch_keys.len()),
        (1, 1),
        "{rule_keys:?} {watch_keys:?}"
    );
    for key in rule_keys.iter().chain(&watch_keys) {
        let encoding: String = conn
            .query(redis::cmd("OBJECT").arg("ENCODING").arg(key))
            .await;
        let fields: i64 = conn.query(redis::cmd("HLEN").arg(key)).await;
        let mark: String = conn.query(redis::cmd("HGET").arg(key).arg("~")).await;
        assert_eq!((encoding.as_str(), fields), ("hashtable", 2), "{key}");
        assert!(mark.len() > 64, "{key}: {mark}");
    }
    let counted: String = conn
        .query(redis::cmd("HGET").arg(&rule_keys[0]).arg("2.u1"))
        .await;
    assert_eq!(counted, "3");
    // The ring: little-endian doubles base (the newest slot), total, then each slot's
    // count from the newest.
    let ring: Vec<u8> = conn
        .query(
            redis::cmd("HGET")
                .arg(&watch_keys[0])
                .arg("14.203.0.113.0/24"),
        )
        .await;
    assert_eq!(ring.len() % 8, 0, "{ring:?}");
    let numbers: Vec<f64> = ring
        .chunks(8)
        .map(|b| f64::from_le_bytes(b.try_into().unwrap()))
        .collect();
    assert!(
        (slot_now - 1..=slot_now).contains(&(numbers[0] as i64)),
        "{numbers:?} at slot {slot_now}"
    );
    assert_eq!(numbers[1], 3.0, "{numbers:?}");
    assert_eq!(numbers[2..].iter().sum::<f64>(), 3.0, "{numbers:?}");
}
