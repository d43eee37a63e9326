//! Adjustments: a member's score changed by hand in one bucket and view, nothing else;
//! in the ledger (a recount agrees, a rebuild brings them back: see `ledger.rs`), audited,
//! idempotent, refused with a precise code and the store unchanged, and written into the
//! archive again when the bucket had been archived.

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, Utc};
use chrono_tz::Tz;
use rand::{Rng, SeedableRng};
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::harness::{TestApp, num};
use ovation::domain::period::{Bucket, Period};
use ovation::store::redis::keys::shard_of;

/// (period, bucket label, view) → member → units (display: millionths).
type Snapshot = BTreeMap<(String, String, String), BTreeMap<String, i64>>;

const TZ: &str = "Asia/Shanghai";

fn units(view: &str, score: &Value) -> i64 {
    let per = if view == "display" { 1e6 } else { 1.0 };
    (num(score) * per).round() as i64
}

/// Every calendar bucket from three days ago to now (and the one after each, where
/// carry-over goes).
fn labels(now: DateTime<Utc>) -> Vec<(String, String)> {
    let tz: Tz = TZ.parse().unwrap();
    let mut labels = std::collections::BTreeSet::new();
    for hours in 0..=72 {
        let at = now - Duration::hours(hours);
        for period in Period::CALENDAR {
            let b = Bucket::containing(period, tz, at).unwrap();
            labels.insert((period.to_string(), b.label.clone()));
            if let Some(next) = b.next(tz) {
                labels.insert((period.to_string(), next.label));
            }
        }
    }
    labels.into_iter().collect()
}

/// A `/top` answer's scores, as `snapshot` keeps them at (period, label, view).
fn ranking(snapshot: &mut Snapshot, at: (&str, &str, &str), top: &Value) {
    let entries = top["entries"].as_array().unwrap_or_else(|| panic!("{top}"));
    snapshot.insert(
        (at.0.to_owned(), at.1.to_owned(), at.2.to_owned()),
        entries
            .iter()
            .map(|e| {
                (
                    e["member"].as_str().unwrap().to_owned(),
                    units(at.2, &e["score"]),
                )
            })
            .collect(),
    );
}

/// Every ranking of `labels` in both views, the rolling window, each day's
/// participants and hourly vote count, and each member's all-time participants.
async fn snapshot(app: &TestApp, board: &str, labels: &[(String, String)]) -> (Snapshot, Value) {
    let mut rankings = Snapshot::new();
    let mut rest = Vec::new();
    for (period, label) in labels {
        for view in ["real", "display"] {
            let (_, top) = app
                .get(&format!(
                    "/api/v1/boards/{board}/top?period={period}&at={label}&view={view}&limit=100"
                ))
                .await;
            ranking(&mut rankings, (period, label, view), &top);
        }
        if period == "day" || period == "all" {
            let (_, stats) = app
                .get(&format!(
                    "/api/v1/boards/{board}/stats?period={period}&at={label}"
                ))
                .await;
            rest.push(json!([
                label,
                stats["participants"],
                crate::harness::hourly_total_since_start(&stats)
            ]));
            rankings.insert(
                (period.to_owned(), label.to_owned(), "votes".to_owned()),
                BTreeMap::from([("votes".to_owned(), stats["votes"].as_i64().unwrap())]),
            );
        }
    }
    for view in ["real", "display"] {
        let (status, top) = app
            .get(&format!(
                "/api/v1/boards/{board}/top?period=rolling:24h&view={view}&limit=100"
            ))
            .await;
        // A sharded votes board keeps no rolling window.
        if status != StatusCode::UNPROCESSABLE_ENTITY {
            ranking(&mut rankings, ("rolling:24h", "", view), &top);
        }
    }
    for m in ["m1", "m2", "m3"] {
        let (_, read) = app
            .get(&format!("/api/v1/boards/{board}/members/{m}?period=all"))
            .await;
        rest.push(json!([m, read["participants"]]));
    }
    (rankings, json!(rest))
}

/// Adds `delta` votes to a bucket's vote count in `snapshot`.
fn add_votes(snapshot: &mut Snapshot, period: &str, label: &str, delta: i64) {
    *snapshot
        .get_mut(&(period.to_owned(), label.to_owned(), "votes".to_owned()))
        .unwrap()
        .get_mut("votes")
        .unwrap() += delta;
}

/// Adds `delta` units to a member's score in one ranking of `snapshot`, as the board
/// would: a member left at 0 leaves the ranking.
fn add(snapshot: &mut Snapshot, at: (&str, &str, &str), member: &str, delta: i64) {
    let ranking = snapshot
        .entry((at.0.to_owned(), at.1.to_owned(), at.2.to_owned()))
        .or_default();
    let score = ranking.entry(member.to_owned()).or_insert(0);
    *score += delta;
    if *score == 0 {
        ranking.remove(member);
    }
}

async fn adjust(app: &TestApp, board: &str, member: &str, body: Value) -> (StatusCode, Value) {
    app.post(
        &format!("/api/v1/admin/boards/{board}/members/{member}/adjustments"),
        body,
    )
    .await
}

/// A board of every calendar period (and a rolling window, unless it is sharded) in a
/// zone of its own, a multiplier, carry-over and initial votes, fed 60 random votes over
/// the last three days (a few of them now) and one for m2 yesterday in the shard its
/// adjustments go to.
async fn voted(app: &TestApp, slug: &str, storage: Value, seed: u64) {
    let mut periods = json!(["hour", "day", "week", "month", "all"]);
    if storage["kind"] == "full" {
        periods.as_array_mut().unwrap().push(json!("rolling:24h"));
    }
    app.board(
        json!({"slug": slug, "title": "Adjust", "timezone": TZ, "periods": periods,
        "multiplier": 1.5, "carry_over": 0.1, "max_count": 9, "storage": storage}),
    )
    .await;
    let (status, body) = app
        .put(
            &format!("/api/v1/admin/boards/{slug}/members"),
            json!({"members": [{"id": "m1", "name": "One", "initial_votes": 100},
                {"id": "m2", "name": "Two"}, {"id": "m3", "name": "Three", "multiplier": 2}]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let now = Utc::now();
    for i in 0..60 {
        let mut vote = json!({"member": format!("m{}", rng.random_range(1..=3)),
            "voter": format!("u{}", rng.random_range(0..20)), "count": rng.random_range(1..=9)});
        if i % 6 != 0 {
            let ago = Duration::seconds(rng.random_range(120..3 * 86_400));
            vote["at"] = json!((now - ago).to_rfc3339());
        }
        let (status, body) = app.vote(slug, vote).await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    // An adjustment of a closed bucket goes to its member's shard, which answers 409
    // `bucket_released` while it holds none of the bucket, even when other shards do: a
    // vote for m2 yesterday in that shard, which the random votes leave empty now and then.
    let shards = storage["shards"].as_i64().unwrap_or(1);
    let voter = (0..)
        .map(|v| format!("y{v}"))
        .find(|v| shard_of(v, shards) == shard_of("m2", shards))
        .unwrap();
    let tz: Tz = TZ.parse().unwrap();
    let yesterday = Bucket::containing(Period::Day, tz, now - Duration::days(1)).unwrap();
    let at = yesterday.start.unwrap() + Duration::hours(6);
    let vote = json!({"member": "m2", "voter": voter, "at": at.to_rfc3339()});
    let (status, body) = app.vote(slug, vote).await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_adjustment_moves_one_bucket_in_the_views_it_names_and_nothing_else() {
    for (slug, storage) in [
        ("adj", json!({"kind": "full"})),
        ("adjs", json!({"kind": "sharded", "shards": 8})),
    ] {
        one_bucket_only(slug, storage).await;
    }
}

async fn one_bucket_only(slug: &str, storage: Value) {
    let seed: u64 = rand::random();
    println!("{slug}: seed {seed}");
    let app = TestApp::spawn().await;
    voted(&app, slug, storage, seed).await;
    let now = Utc::now();
    let labels = labels(now);
    let tz: Tz = TZ.parse().unwrap();
    let yesterday = Bucket::containing(Period::Day, tz, now - Duration::days(1))
        .unwrap()
        .label;
    let (mut expected, rest) = snapshot(&app, slug, &labels).await;

    // Five real votes more for m2 yesterday: the display view and every other bucket
    // stay as they were.
    let (status, body) = adjust(
        &app,
        slug,
        "m2",
        json!({"period": "day", "at": yesterday, "view": "real", "delta": 5,
            "reason": "phone votes counted by hand"}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    add(&mut expected, ("day", &yesterday, "real"), "m2", 5);
    add_votes(&mut expected, "day", &yesterday, 5);
    let m2 = expected[&("day".to_owned(), yesterday.clone(), "real".to_owned())]["m2"];
    assert_eq!(
        body,
        json!({"board": slug, "member": "m2", "period": "day", "bucket": yesterday,
            "view": "real", "delta": 5, "reason": "phone votes counted by hand",
            "real": m2, "display": null, "replayed": false})
    );
    assert_eq!(
        snapshot(&app, slug, &labels).await,
        (expected.clone(), rest.clone())
    );

    // Seven more all-time votes for m3 in both views (no `at` for `all`).
    let (status, body) = adjust(
        &app,
        slug,
        "m3",
        json!({"period": "all", "delta": 7, "reason": "stage votes"}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    add(&mut expected, ("all", "all", "real"), "m3", 7);
    add_votes(&mut expected, "all", "all", 7);
    add(&mut expected, ("all", "all", "display"), "m3", 7_000_000);
    assert_eq!(body["view"], "both");
    assert_eq!(
        snapshot(&app, slug, &labels).await,
        (expected.clone(), rest.clone())
    );

    // A member's whole real score in today's bucket taken off: it leaves that ranking.
    let today = Bucket::containing(Period::Day, tz, now).unwrap().label;
    let today_real = expected[&("day".to_owned(), today.clone(), "real".to_owned())].clone();
    let (member, score) = today_real
        .iter()
        .next()
        .map(|(m, s)| (m.clone(), *s))
        .expect("votes were cast today");
    let (status, body) = adjust(
        &app,
        slug,
        &member,
        json!({"period": "day", "at": now.to_rfc3339(), "view": "real", "delta": -score,
            "reason": "a test vote"}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body["real"], 0, "{body}");
    add(&mut expected, ("day", &today, "real"), &member, -score);
    add_votes(&mut expected, "day", &today, -score);
    assert!(!expected[&("day".to_owned(), today.clone(), "real".to_owned())].contains_key(&member));
    assert_eq!(snapshot(&app, slug, &labels).await, (expected, rest));

    // The ledger holds each adjustment with its bucket; a recount agrees with Redis.
    let entries = crate::ledger::ledger(&app, slug, 1000).await;
    let adjusted: Vec<(Value, Value, Value)> = entries
        .iter()
        .filter(|e| e["adjusts"].is_string())
        .map(|e| {
            (
                e["adjusts"].clone(),
                e["count"].clone(),
                e["display"].clone(),
            )
        })
        .collect();
    assert_eq!(
        adjusted,
        vec![
            (json!(format!("day:{yesterday}")), json!(5), json!(0)),
            (json!("all:all"), json!(7), json!(7)),
            (json!(format!("day:{today}")), json!(-score), json!(0)),
        ]
    );
    assert_eq!(entries.len(), 64);
    let (status, found) = app
        .post(
            &format!("/api/v1/admin/boards/{slug}/recount?repair=false"),
            json!({}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{found}");
    assert_eq!(
        (&found["entries"], &found["mismatches"]),
        (&json!(64), &json!([])),
        "{found}"
    );

    // Audited: who, which bucket and view, how much, why.
    let state = crate::ledger::stores(&app).await;
    let audit = ovation::store::sql::audit::list(
        &state.db,
        &ovation::store::sql::audit::AuditFilter {
            actor: None,
            action: Some("member.adjust".into()),
            target: None,
        },
        10,
    )
    .await
    .unwrap();
    assert_eq!(audit.len(), 3);
    let first = audit.last().unwrap();
    assert_eq!(first.target, format!("board {slug} member m2"));
    assert_eq!(
        serde_json::from_str::<Value>(&first.detail).unwrap(),
        json!({"period": "day", "bucket": yesterday, "view": "real", "delta": 5,
            "reason": "phone votes counted by hand"})
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_retried_adjustment_counts_once_and_a_reused_key_is_refused() {
    let app = TestApp::spawn().await;
    voted(&app, "once", json!({"kind": "full"}), 3).await;
    let body = json!({"period": "all", "view": "display", "delta": 2, "reason": "r",
        "idempotency_key": "adj-1"});
    let (status, first) = adjust(&app, "once", "m1", body.clone()).await;
    assert_eq!(status, StatusCode::CREATED, "{first}");
    for _ in 0..3 {
        let (status, again) = adjust(&app, "once", "m1", body.clone()).await;
        assert_eq!(status, StatusCode::OK, "{again}");
        let mut replay = first.clone();
        replay["replayed"] = json!(true);
        assert_eq!(again, replay);
    }
    let (_, read) = app
        .get("/api/v1/boards/once/members/m1?period=all&view=display")
        .await;
    assert_eq!(read["score"], first["display"], "counted once");
    let mut other = body.clone();
    other["delta"] = json!(3);
    let (status, refused) = adjust(&app, "once", "m1", other).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{refused}");
    assert_eq!(refused["error"]["code"], "idempotency_key_reused");
    let (_, after) = app
        .get("/api/v1/boards/once/members/m1?period=all&view=display")
        .await;
    assert_eq!(after["score"], first["display"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn adjustments_are_refused_with_a_precise_code_and_change_nothing() {
    let app = TestApp::spawn().await;
    voted(&app, "no", json!({"kind": "full"}), 9).await;
    // In the time zone `today` is reckoned in: a board in UTC is a day behind Shanghai
    // from 16:00 UTC.
    app.board(json!({"slug": "shards", "title": "Shards", "timezone": TZ,
        "storage": {"kind": "sharded", "shards": 8}}))
        .await;
    app.members("shards", &["m1"]).await;
    app.board(json!({"slug": "sc", "title": "Scores", "scoring": "scores"}))
        .await;
    app.members("sc", &["m1"]).await;
    app.board(
        json!({"slug": "fam", "title": "Rooms", "membership": "open",
        "instances": {"ttl_s": 600}}),
    )
    .await;
    let now = Utc::now();
    let labels = labels(now);
    let before = snapshot(&app, "no", &labels).await;
    let tz: Tz = TZ.parse().unwrap();
    let today = Bucket::containing(Period::Day, tz, now).unwrap().label;
    let tomorrow = Bucket::containing(Period::Day, tz, now + Duration::days(1))
        .unwrap()
        .label;
    // An hour five days back, closed, that no vote touched: Redis holds nothing of it.
    let empty_hour = Bucket::containing(Period::Hour, tz, now - Duration::days(5))
        .unwrap()
        .label;
    let (_, m2) = app
        .get(&format!(
            "/api/v1/boards/no/members/m2?period=day&at={today}&view=real"
        ))
        .await;
    let m2_today = m2["score"].as_i64().unwrap_or(0);
    let ok = json!({"period": "day", "at": today, "view": "both", "delta": 1, "reason": "r"});
    let with = |field: &str, value: Value| {
        let mut body = ok.clone();
        match value {
            Value::Null => {
                body.as_object_mut().unwrap().remove(field);
            }
            value => body[field] = value,
        }
        body
    };
    let cases = [
        (
            "no",
            "m2",
            with("at", json!("2026-W48")),
            422,
            "invalid_bucket",
        ),
        ("no", "m2", with("at", Value::Null), 422, "invalid_bucket"),
        (
            "no",
            "m2",
            with("at", json!(tomorrow)),
            422,
            "invalid_bucket",
        ),
        (
            "no",
            "m2",
            json!({"period": "rolling:24h", "delta": 1, "reason": "r"}),
            422,
            "invalid_period",
        ),
        (
            "no",
            "m2",
            with("period", json!("fortnight")),
            422,
            "invalid_period",
        ),
        (
            "no",
            "m2",
            with("view", json!("shown")),
            422,
            "invalid_view",
        ),
        ("no", "m2", with("delta", json!(0)), 422, "invalid_delta"),
        ("no", "m2", with("delta", json!(2.5)), 422, "invalid_delta"),
        (
            "no",
            "m2",
            with("delta", json!(i64::MIN)),
            422,
            "invalid_delta",
        ),
        (
            "no",
            "m2",
            with("delta", json!(1_000_000_001)),
            422,
            "invalid_delta",
        ),
        ("no", "m2", with("reason", json!(" ")), 422, "invalid_field"),
        (
            "no",
            "m2",
            with("reason", json!("\u{0}evil\u{202e}")),
            422,
            "invalid_field",
        ),
        (
            "no",
            "m2",
            with("reason", json!("del\u{7f}")),
            422,
            "invalid_field",
        ),
        (
            "no",
            "m2",
            with("idempotency_key", json!("")),
            422,
            "invalid_idempotency_key",
        ),
        (
            "no",
            "m2",
            json!({"period": "day", "at": today, "view": "real", "delta": -(m2_today + 1),
                "reason": "r"}),
            409,
            "negative_score",
        ),
        // A shard of 8 holds at most 2^53 / 8 units, a bucket other than all-time 2 *
        // 10^14 less: a billion display votes (10^15 units) do not fit.
        (
            "shards",
            "m1",
            json!({"period": "day", "at": today, "view": "display", "delta": 1_000_000_000,
                "reason": "r"}),
            422,
            "score_overflow",
        ),
        (
            "no",
            "m2",
            json!({"period": "hour", "at": empty_hour, "delta": 1, "reason": "r"}),
            409,
            "bucket_released",
        ),
        ("no", "ghost", ok.clone(), 404, "member_not_found"),
        ("nope", "m2", ok.clone(), 404, "board_not_found"),
        ("sc", "m1", ok.clone(), 409, "wrong_scoring"),
        ("fam", "m1", ok.clone(), 422, "not_for_family"),
    ];
    for (board, member, body, status, code) in cases {
        let (got, answer) = adjust(&app, board, member, body.clone()).await;
        assert_eq!(
            (got.as_u16(), answer["error"]["code"].as_str()),
            (status, Some(code)),
            "{board} {member} {body}: {answer}"
        );
    }
    assert_eq!(
        snapshot(&app, "no", &labels).await,
        before,
        "nothing changed"
    );
    let entries = crate::ledger::ledger(&app, "no", 1000).await;
    assert!(entries.iter().all(|e| e["adjusts"].is_null()), "no entry");
}

/// A bucket the archive wrote is written again with the adjustment: once its keys
/// leave Redis, reads from the archive show it.
#[tokio::test(flavor = "multi_thread")]
async fn an_adjusted_bucket_that_was_archived_is_archived_again() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "arc", "title": "Arc", "periods": ["day", "all"]}))
        .await;
    app.members("arc", &["a", "b"]).await;
    let day = Utc::now() - Duration::days(3);
    for (member, voter) in [("a", "v1"), ("a", "v2"), ("b", "v3")] {
        let (status, body) = app
            .vote(
                "arc",
                json!({"member": member, "voter": voter, "at": day.to_rfc3339()}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    let (status, report) = app
        .post("/api/v1/admin/boards/arc/archive", json!({}))
        .await;
    assert_eq!(status, StatusCode::OK, "{report}");
    let label = Bucket::containing(Period::Day, chrono_tz::UTC, day)
        .unwrap()
        .label;
    let (status, body) = adjust(
        &app,
        "arc",
        "b",
        json!({"period": "day", "at": label, "view": "real", "delta": 4, "reason": "r"}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (status, report) = app
        .post("/api/v1/admin/boards/arc/archive", json!({}))
        .await;
    assert_eq!(status, StatusCode::OK, "{report}");
    assert!(
        report["archived"]
            .as_array()
            .unwrap()
            .contains(&json!({"period": "day", "bucket": label})),
        "{report}"
    );
    // The bucket's keys leave Redis: the archive answers.
    let mut redis = crate::harness::RawRedis::connect().await;
    let keys = redis.keys(&format!("{}:*:day:{label}*", app.prefix)).await;
    assert!(!keys.is_empty());
    for key in keys {
        let _: () = redis.query(redis::cmd("DEL").arg(key)).await;
    }
    let (_, top) = app
        .get(&format!(
            "/api/v1/boards/arc/top?period=day&at={label}&view=real"
        ))
        .await;
    assert_eq!(top["archived"], true, "{top}");
    let entries: Vec<(&str, i64)> = top["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["member"].as_str().unwrap(), e["score"].as_i64().unwrap()))
        .collect();
    assert_eq!(entries, [("b", 5), ("a", 2)], "{top}");
}

/// A bucket an adjustment raised may hold more than its all-time score: a vote is
/// refused where it would take that bucket past 2^53 units, though the all-time score
/// has room (the guard checks every bucket once the headroom mark no longer holds).
#[tokio::test(flavor = "multi_thread")]
async fn a_vote_is_refused_where_it_would_take_an_adjusted_bucket_past_2_53() {
    let app = TestApp::spawn().await;
    app.board(
        json!({"slug": "edge", "title": "Edge", "periods": ["day", "all"],
        "multiplier": 1_000_000, "max_count": 1_000_000}),
    )
    .await;
    app.members("edge", &["m1"]).await;
    let today = Utc::now().format("%Y-%m-%d").to_string();
    // 7 × 10^15 display units in today's bucket, just under 2^53 − 2·10^15.
    for _ in 0..7 {
        let (status, body) = adjust(
            &app,
            "edge",
            "m1",
            json!({"period": "day", "at": today, "view": "display", "delta": 1_000_000_000,
                "reason": "r"}),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }
    let (status, refused) = adjust(
        &app,
        "edge",
        "m1",
        json!({"period": "day", "at": today, "view": "display", "delta": 1_000_000_000,
            "reason": "r"}),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{refused}");
    assert_eq!(refused["error"]["code"], "score_overflow");
    // 2 × 10^15 units: today 9 × 10^15, all-time 2 × 10^15 (the mark no longer holds).
    let (status, body) = app
        .vote("edge", json!({"member": "m1", "count": 2000}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // 10^14 more would take today to 9.1 × 10^15 > 2^53, all-time only to 2.1 × 10^15.
    let (status, body) = app
        .vote("edge", json!({"member": "m1", "count": 100}))
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(body["error"]["code"], "score_overflow");
    let (_, day) = app
        .get("/api/v1/boards/edge/members/m1?period=day&view=display")
        .await;
    assert_eq!(num(&day["score"]), 9e9);
}
