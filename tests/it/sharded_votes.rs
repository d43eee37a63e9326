//! A `votes` board sharded by voter answers like a `full` board fed the same votes: every
//! read, every vote's answer, carry-over, multiplier and initial votes; its rules stay
//! exact under concurrency (the rules that do not count per voter are reserved in the
//! shards their subjects pick and given back when another step refuses), and admit and
//! count like a `full` board's one vote at a time; each shard keeps
//! its scores within 2^53 / shards, so their sum stays within 2^53.

use std::collections::BTreeSet;

use chrono::{DateTime, Duration, SecondsFormat, Utc};
use proptest::prelude::*;
use reqwest::StatusCode;
use serde_json::{Value, json};

use ovation::domain::limit::subject_of;
use ovation::store::redis::keys::shard_of;

use sea_orm::{ConnectionTrait, Database, Statement};

use std::sync::Arc;

use crate::harness::{Options, RawRedis, TestApp};

const SHARDS: i64 = 8;
const MEMBERS: [&str; 6] = ["m0", "m1", "m2", "m3", "m4", "m5"];
const INITIAL_VOTES: [i64; 6] = [0, 7, 0, 2, 0, 0];
const PERIODS: [&str; 4] = ["hour", "day", "week", "all"];

/// One vote of a case: voter (none for `None`), member, count, hours before now.
type Cast = (Option<u8>, usize, i64, i64);

/// `value` without its `board` fields: the two boards' answers differ only in them.
fn unnamed(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| k.as_str() != "board")
                .map(|(k, v)| (k.clone(), unnamed(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(unnamed).collect()),
        other => other.clone(),
    }
}

/// Creates the `full` board and its sharded twin, same settings and members.
async fn twins(app: &TestApp, extra: Value) {
    for (slug, storage) in [
        ("full", json!({"kind": "full"})),
        ("split", json!({"kind": "sharded", "shards": SHARDS})),
    ] {
        let mut settings = json!({"slug": slug, "title": slug, "periods": PERIODS,
            "multiplier": 1.5, "carry_over": 0.1, "storage": storage});
        settings
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        app.board(settings).await;
        let members: Vec<Value> = MEMBERS
            .iter()
            .zip(INITIAL_VOTES)
            .map(|(id, initial)| json!({"id": id, "name": id, "initial_votes": initial}))
            .collect();
        let (status, body) = app
            .put(
                &format!("/api/v1/admin/boards/{slug}/members"),
                json!({"members": members}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
}

/// Both boards' answers to `path` (with `{b}` for the board), checked equal. The two
/// reads are taken again when an hour began between them: stats answer the 48 hours
/// up to the current one.
async fn same(app: &TestApp, path: &str) -> Value {
    let hour = || Utc::now().timestamp() / 3600;
    let (fs, full, ss, split) = loop {
        let before = hour();
        let (fs, full) = app.get(&path.replace("{b}", "full")).await;
        let (ss, split) = app.get(&path.replace("{b}", "split")).await;
        if hour() == before {
            break (fs, full, ss, split);
        }
    };
    assert_eq!(fs, StatusCode::OK, "{path}: {full}");
    assert_eq!((ss, unnamed(&split)), (fs, unnamed(&full)), "{path}");
    full
}

fn stamp(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Secs, true)
}

async fn play(casts: Vec<Cast>) {
    let app = TestApp::spawn().await;
    twins(&app, json!({})).await;
    let now = Utc::now();
    // The buckets the votes counted in, per period, as the answers name them.
    let mut buckets: BTreeSet<(String, String)> = BTreeSet::new();
    for (i, (voter, member, count, hours)) in casts.iter().enumerate() {
        let at = now - Duration::hours(*hours) - Duration::seconds(i as i64);
        let mut body = json!({"member": MEMBERS[*member], "count": count, "at": stamp(at),
            "idempotency_key": format!("k{i}")});
        if let Some(v) = voter {
            body["voter"] = json!(format!("u{v}"));
        }
        // Every fourth vote is sent twice: the retry answers the first answer.
        for _ in 0..1 + usize::from(i % 4 == 0) {
            let (fs, full) = app.vote("full", body.clone()).await;
            let (ss, split) = app.vote("split", body.clone()).await;
            assert_eq!(fs, StatusCode::OK, "{full}");
            assert_eq!(
                (ss, unnamed(&split)),
                (fs, unnamed(&full)),
                "vote {i}: {body}"
            );
            for score in full["scores"].as_array().unwrap() {
                buckets.insert((
                    score["period"].as_str().unwrap().to_owned(),
                    score["bucket"].as_str().unwrap().to_owned(),
                ));
            }
        }
    }
    let mut hours_read = 0;
    for (period, label) in &buckets {
        for view in ["real", "display"] {
            let q = format!("period={period}&view={view}&at={label}");
            same(&app, &format!("/api/v1/boards/{{b}}/top?{q}")).await;
            same(
                &app,
                &format!("/api/v1/boards/{{b}}/top?{q}&offset=2&limit=2"),
            )
            .await;
            // Every member in a few hours and every longer bucket.
            if period == "hour" && hours_read >= 6 {
                continue;
            }
            hours_read += usize::from(period == "hour");
            for member in MEMBERS {
                same(&app, &format!("/api/v1/boards/{{b}}/members/{member}?{q}")).await;
                same(
                    &app,
                    &format!("/api/v1/boards/{{b}}/members/{member}/around?{q}&radius=1"),
                )
                .await;
            }
        }
        same(
            &app,
            &format!("/api/v1/boards/{{b}}/stats?period={period}&at={label}"),
        )
        .await;
    }
    for member in MEMBERS {
        same(
            &app,
            &format!("/api/v1/boards/{{b}}/members/{member}/history?period=hour&limit=100"),
        )
        .await;
    }
}

fn casts() -> impl Strategy<Value = Vec<Cast>> {
    prop::collection::vec(
        (
            prop::option::weighted(0.8, 0u8..12),
            0..MEMBERS.len(),
            1i64..4,
            0i64..30,
        ),
        1..40,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 6, ..ProptestConfig::default() })]

    #[test]
    fn a_sharded_votes_board_answers_every_read_like_a_full_one(casts in casts()) {
        tokio::runtime::Runtime::new().unwrap().block_on(play(casts));
    }
}

/// One vote of a rules case: voter (none for `None`), member, channel, address, count.
type RuledCast = (Option<u8>, usize, usize, usize, i64);

const CHANNELS: [&str; 3] = ["app", "web", "tv"];
const ADDRESSES: [&str; 4] = ["192.0.2.1", "192.0.2.2", "198.51.100.7", "203.0.113.9"];

/// Votes one at a time on a `full` board and its sharded twin, both with rules on the
/// voter (counted in the voter's shard) and on the member, the channel, the address and
/// the address with the member (counted in the shards their values pick): every vote
/// is admitted or refused alike and, admitted, answers the same scores; after them every
/// rule's counter reads the same for every subject.
async fn play_rules(casts: Vec<RuledCast>) {
    let app = TestApp::spawn().await;
    twins(&app, json!({})).await;
    let rules = [
        json!({"name": "voter", "dimensions": ["voter"], "window": "day", "limit": 3}),
        json!({"name": "member", "dimensions": ["member"], "window": "day", "limit": 7}),
        json!({"name": "channel", "dimensions": ["channel"], "window": "day", "limit": 9}),
        json!({"name": "ip", "dimensions": ["ip"], "window": "day", "limit": 5}),
        json!({"name": "ip member", "dimensions": ["ip", "member"], "window": "day", "limit": 2}),
    ];
    for board in ["full", "split"] {
        for rule in &rules {
            let (status, body) = app
                .post(&format!("/api/v1/admin/boards/{board}/rules"), rule.clone())
                .await;
            assert_eq!(status, StatusCode::CREATED, "{body}");
        }
    }
    for (i, (voter, member, channel, ip, count)) in casts.iter().enumerate() {
        let mut body = json!({"member": MEMBERS[*member], "count": count,
            "channel": CHANNELS[*channel], "ip": ADDRESSES[*ip]});
        if let Some(v) = voter {
            body["voter"] = json!(format!("u{v}"));
        }
        let (fs, full) = app.vote("full", body.clone()).await;
        let (ss, split) = app.vote("split", body.clone()).await;
        assert_eq!(ss, fs, "vote {i}: {body}: {full} / {split}");
        // Refused (429 by a rule; 422 naming no voter for the voter rule): the same code.
        match fs.as_u16() {
            200 => assert_eq!(unnamed(&split), unnamed(&full), "vote {i}: {body}"),
            429 | 422 => assert_eq!(
                split["error"]["code"], full["error"]["code"],
                "vote {i}: {body}"
            ),
            other => panic!("vote {i}: {other}: {full}"),
        }
    }
    for member in MEMBERS {
        for (channel, ip) in CHANNELS.iter().zip(ADDRESSES) {
            for voter in ["u0", "u1"] {
                let q = format!("voter={voter}&member={member}&channel={channel}&ip={ip}");
                let used = |board: &'static str| {
                    let (app, q) = (app.clone(), q.clone());
                    async move {
                        let (status, quota) =
                            app.get(&format!("/api/v1/boards/{board}/quota?{q}")).await;
                        assert_eq!(status, StatusCode::OK, "{quota}");
                        quota["rules"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .map(|r| (r["name"].clone(), r["used"].clone()))
                            .collect::<Vec<_>>()
                    }
                };
                assert_eq!(used("split").await, used("full").await, "{q}");
            }
        }
    }
    for period in PERIODS {
        same(
            &app,
            &format!("/api/v1/boards/{{b}}/top?period={period}&view=real"),
        )
        .await;
    }
}

fn ruled_casts() -> impl Strategy<Value = Vec<RuledCast>> {
    prop::collection::vec(
        (
            prop::option::weighted(0.8, 0u8..6),
            0..MEMBERS.len(),
            0..CHANNELS.len(),
            0..ADDRESSES.len(),
            1i64..3,
        ),
        1..40,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 8, ..ProptestConfig::default() })]

    #[test]
    fn rules_on_a_sharded_board_admit_and_count_like_a_full_ones(casts in ruled_casts()) {
        tokio::runtime::Runtime::new().unwrap().block_on(play_rules(casts));
    }
}

/// 40 voters each try 6 votes for one member at once: a voter may cast 4 a day (counted
/// in the voter's shard), the member may take 100 a day (counted in the shard `m1`
/// picks: reserved there before the write in a voter's other shard, and given back when
/// that shard refuses). No rule
/// admits past its limit, and every refused vote's reservation is given back: the
/// member's counter holds exactly the votes counted, so later votes fill it to exactly
/// 100. (While reservations of votes their shards will refuse are outstanding, a vote
/// may be refused at the member's limit that the same votes one at a time would admit:
/// a sharded board under-admits there, it never over-admits.)
#[tokio::test(flavor = "multi_thread")]
async fn rules_never_over_admit_and_refusals_give_reservations_back() {
    let app = TestApp::patient().await;
    app.board(json!({"slug": "r", "title": "r", "periods": ["day", "all"],
        "storage": {"kind": "sharded", "shards": SHARDS}}))
        .await;
    app.members("r", &["m1", "m2"]).await;
    for rule in [
        json!({"name": "voter", "dimensions": ["voter"], "window": "day", "limit": 4}),
        json!({"name": "member", "dimensions": ["member"], "window": "day", "limit": 100}),
    ] {
        let (status, body) = app.post("/api/v1/admin/boards/r/rules", rule).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }
    let attempts = (0..40).flat_map(|v| (0..6).map(move |k| (v, k)));
    let answers = futures_util::future::join_all(attempts.map(|(v, k)| {
        let app = app.clone();
        async move {
            let body = json!({"member": "m1", "voter": format!("u{v}"),
                "idempotency_key": format!("k{v}-{k}")});
            (v, k, app.vote("r", body).await)
        }
    }))
    .await;
    let mut per_voter = [0i64; 40];
    for (v, _, (status, body)) in &answers {
        match status.as_u16() {
            200 => per_voter[*v] += 1,
            429 => {}
            other => panic!("{other}: {body}"),
        }
    }
    let accepted: i64 = per_voter.iter().sum();
    assert!(accepted <= 100, "{per_voter:?}");
    assert!(per_voter.iter().all(|&n| n <= 4), "{per_voter:?}");
    let quota = |v: usize| {
        let app = app.clone();
        async move {
            let (status, quota) = app
                .get(&format!("/api/v1/boards/r/quota?voter=u{v}&member=m1"))
                .await;
            assert_eq!(status, StatusCode::OK, "{quota}");
            quota["rules"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["used"].as_i64().unwrap())
                .collect::<Vec<i64>>()
        }
    };
    for (v, counted) in per_voter.iter().enumerate() {
        assert_eq!(quota(v).await, vec![*counted, accepted], "u{v}");
    }
    // A retry answers its first answer and counts nothing more, in the voter's shard or
    // in the member's.
    let (v, k, (_, first)) = answers
        .iter()
        .find(|(_, _, (s, _))| *s == StatusCode::OK)
        .unwrap();
    let (status, again) = app
        .vote(
            "r",
            json!({"member": "m1", "voter": format!("u{v}"), "idempotency_key": format!("k{v}-{k}")}),
        )
        .await;
    assert_eq!(
        (status, &again["replayed"], &again["scores"]),
        (StatusCode::OK, &json!(true), &first["scores"])
    );
    assert_eq!(quota(*v).await, vec![per_voter[*v], accepted]);
    // New voters, one vote at a time, fill the member's day to exactly 100.
    let mut more = 0;
    for v in 100..300 {
        let (status, body) = app
            .vote("r", json!({"member": "m1", "voter": format!("u{v}")}))
            .await;
        match status.as_u16() {
            200 => more += 1,
            429 => assert_eq!(body["error"]["rule"]["name"], "member", "{body}"),
            other => panic!("{other}: {body}"),
        }
    }
    assert_eq!(accepted + more, 100);
    let read = same_board(&app, "/api/v1/boards/r/members/m1?period=day&view=real").await;
    assert_eq!(read["score"], json!(100), "{read}");
}

/// A retry of a counted vote answers its first answer also where its reserve step now
/// refuses (the first attempt's own count fills the address's rule), and counts nothing:
/// the rule's counter and the score stay as the first attempt left them.
#[tokio::test(flavor = "multi_thread")]
async fn a_retry_answers_its_first_answer_where_its_reserve_step_would_refuse() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "r", "title": "r", "periods": ["day"],
        "storage": {"kind": "sharded", "shards": SHARDS}}))
        .await;
    app.members("r", &["m1"]).await;
    let rule = json!({"name": "ip", "dimensions": ["ip"], "window": "day", "limit": 1});
    let (status, body) = app.post("/api/v1/admin/boards/r/rules", rule).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let ip = "192.0.2.1";
    // A voter whose shard is not the one the address's count lives in.
    let home = shard_of(&subject_of([ip]), SHARDS);
    let voter = (0..)
        .map(|v| format!("u{v}"))
        .find(|v| shard_of(v, SHARDS) != home)
        .unwrap();
    let vote = json!({"member": "m1", "voter": voter, "ip": ip, "idempotency_key": "once"});
    let (status, first) = app.vote("r", vote.clone()).await;
    assert_eq!(status, StatusCode::OK, "{first}");
    let (status, again) = app.vote("r", vote).await;
    assert_eq!(
        (status, &again["replayed"], &again["scores"]),
        (StatusCode::OK, &json!(true), &first["scores"]),
        "{again}"
    );
    let (status, quota) = app
        .get(&format!(
            "/api/v1/boards/r/quota?voter={voter}&member=m1&ip={ip}"
        ))
        .await;
    assert_eq!(status, StatusCode::OK, "{quota}");
    assert_eq!(quota["rules"][0]["used"], json!(1), "{quota}");
    let (status, refused) = app
        .vote("r", json!({"member": "m1", "voter": "other", "ip": ip}))
        .await;
    assert_eq!(
        (status, &refused["error"]["rule"]["name"]),
        (StatusCode::TOO_MANY_REQUESTS, &json!("ip")),
        "{refused}"
    );
    let read = same_board(&app, "/api/v1/boards/r/members/m1?period=day&view=real").await;
    assert_eq!(read["score"], json!(1), "{read}");
}

async fn same_board(app: &TestApp, path: &str) -> Value {
    let (status, body) = app.get(path).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

/// Each shard holds at most 2^53 / 8 units: a vote that would take its shard past that is
/// refused, the same vote in another shard is counted, and the member's score (their
/// sum) stays exact.
#[tokio::test(flavor = "multi_thread")]
async fn each_shard_keeps_its_scores_within_its_share_of_2_53() {
    let app = TestApp::spawn().await;
    app.board(
        json!({"slug": "big", "title": "big", "periods": ["all"], "multiplier": 1000,
        "max_count": 1_000_000, "storage": {"kind": "sharded", "shards": SHARDS}}),
    )
    .await;
    // Initial votes live in shard 0: 10^9 votes are 10^15 display units there, of the
    // 1,125,899,906,842,624 (2^53 / 8) it holds; a vote is 10^9 units at multiplier 1000.
    let (status, body) = app
        .put(
            "/api/v1/admin/boards/big/members",
            json!({"members": [{"id": "m", "name": "m", "initial_votes": 1_000_000_000}]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let voter_in = |shard: i64| {
        (0..)
            .map(|i| format!("v{i}"))
            .find(|v| shard_of(v, SHARDS) == shard)
            .unwrap()
    };
    for (shard, count, expected) in [
        (0, 125_900, StatusCode::UNPROCESSABLE_ENTITY),
        (0, 125_899, StatusCode::OK),
        (0, 1, StatusCode::UNPROCESSABLE_ENTITY),
        (3, 125_900, StatusCode::OK),
    ] {
        let (status, body) = app
            .vote(
                "big",
                json!({"member": "m", "voter": voter_in(shard), "count": count}),
            )
            .await;
        assert_eq!(status, expected, "shard {shard}, {count}: {body}");
        if status != StatusCode::OK {
            assert_eq!(body["error"]["code"], "score_overflow", "{body}");
        }
    }
    let read = same_board(&app, "/api/v1/boards/big/members/m?period=all&view=display").await;
    assert_eq!(read["score"], json!(1_251_799_000), "{read}");
    let read = same_board(&app, "/api/v1/boards/big/members/m?period=all&view=real").await;
    assert_eq!(read["score"], json!(251_799), "{read}");
}

/// The hash tags of the keys under `prefix`'s board `id` that belong to a shard.
async fn shard_tags(prefix: &str, id: i64) -> BTreeSet<String> {
    let mut redis = RawRedis::connect().await;
    redis
        .keys(&format!("{prefix}:{{b:{id}:s*"))
        .await
        .iter()
        .map(|key| key[key.find('{').unwrap()..=key.find('}').unwrap()].to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_board_made_before_even_placement_keeps_its_keys_and_its_storage_may_be_sent_again() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "old", "title": "Old", "membership": "open",
        "storage": {"kind": "sharded", "shards": 4}}))
        .await;
    // The app's first board.
    let id = 1;
    // A board made today: every shard's tag carries the letters that place it.
    let (status, body) = app.vote("old", json!({"member": "m", "voter": "v1"})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let tags = shard_tags(&app.prefix, id).await;
    let shard = shard_of("v1", 4);
    assert_eq!(tags.len(), 1, "{tags:?}");
    let tag = tags.first().unwrap();
    assert!(tag.starts_with(&format!("{{b:{id}:s{shard}:")), "{tag}");
    assert_eq!(
        tag.len(),
        format!("{{b:{id}:s{shard}:}}").len() + 4,
        "{tag}"
    );

    // As a board made before 2026-11-28 is stored, read by an instance started since.
    let db = Database::connect(&app.database.url).await.unwrap();
    db.execute_raw(Statement::from_string(
        db.get_database_backend(),
        "UPDATE boards SET storage = 'sharded:4' WHERE slug = 'old'".to_owned(),
    ))
    .await
    .unwrap();
    let app = TestApp::spawn_with(Options {
        prefix: app.prefix.clone(),
        database: Some(Arc::clone(&app.database)),
        ..Options::default()
    })
    .await;
    let (status, body) = app
        .patch(
            "/api/v1/admin/boards/old",
            json!({"title": "Older", "storage": {"kind": "sharded", "shards": 4}}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body["storage"],
        json!({"kind": "sharded", "shards": 4}),
        "{body}"
    );
    let (status, body) = app.vote("old", json!({"member": "m", "voter": "v1"})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let tags = shard_tags(&app.prefix, id).await;
    assert!(tags.contains(&format!("{{b:{id}:s{shard}}}")), "{tags:?}");
    let stored: Option<String> = db
        .query_one_raw(Statement::from_string(
            db.get_database_backend(),
            "SELECT storage FROM boards WHERE slug = 'old'".to_owned(),
        ))
        .await
        .unwrap()
        .map(|row| row.try_get("", "storage").unwrap());
    assert_eq!(stored.as_deref(), Some("sharded:4"));
    let (status, body) = app
        .patch(
            "/api/v1/admin/boards/old",
            json!({"storage": {"kind": "sharded", "shards": 5}}),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(body["error"]["code"], "invalid_field", "{body}");
}
