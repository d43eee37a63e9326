//! The archive: closed buckets written to SQL once (two instances racing, a run stopped
//! half-way), their Redis keys given an expiry within retention and released on demand,
//! and reads of released buckets answered from the archive exactly as Redis answered.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, DurationRound, SecondsFormat, Utc};
use ovation::domain::ids::BoardSlug;
use ovation::engine::archive;
use reqwest::StatusCode;
use sea_orm::{ConnectionTrait, Database, Statement};
use serde_json::{Value, json};

use crate::harness::{Options, RawRedis, TestApp};

fn rfc3339(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// An instant inside the hour `hours` ago, `minutes` past it.
fn hours_ago(hours: i64, minutes: i64) -> DateTime<Utc> {
    (Utc::now() - chrono::Duration::hours(hours))
        .duration_trunc(chrono::Duration::hours(1))
        .unwrap()
        + chrono::Duration::minutes(minutes)
}

async fn vote_at(app: &TestApp, board: &str, member: &str, voter: &str, at: DateTime<Utc>) {
    let (status, body) = app
        .vote(
            board,
            json!({"member": member, "voter": voter, "at": rfc3339(at)}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

/// (period, bucket, writes) of every archived bucket, from SQL.
async fn archived_rows(app: &TestApp) -> Vec<(String, String, i64)> {
    let db = Database::connect(&app.database.url).await.unwrap();
    let rows = db
        .query_all_raw(Statement::from_string(
            db.get_database_backend(),
            "SELECT period, label, writes FROM archived_buckets ORDER BY period, label",
        ))
        .await
        .unwrap();
    rows.iter()
        .map(|r| {
            (
                r.try_get::<String>("", "period").unwrap(),
                r.try_get::<String>("", "label").unwrap(),
                i64::from(r.try_get::<i32>("", "writes").unwrap()),
            )
        })
        .collect()
}

fn refs(list: &Value) -> BTreeSet<(String, String)> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["period"].as_str().unwrap().to_owned(),
                r["bucket"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn released_buckets_read_from_the_archive_as_they_read_live() {
    let app = TestApp::spawn().await;
    app.board(
        json!({"slug": "arch", "title": "Arch", "membership": "open",
        "periods": ["hour", "day", "all"],
        "retention": {"hour": 1, "day": 2, "week": null, "month": null},
        "archive_top": 3}),
    )
    .await;
    let old = hours_ago(5 * 24, 30);
    let recent = hours_ago(3, 10);
    for (member, voters) in [("a", 3), ("b", 2), ("c", 1), ("d", 1)] {
        for v in 0..voters {
            vote_at(&app, "arch", member, &format!("v{v}"), old).await;
        }
    }
    vote_at(&app, "arch", "a", "v9", recent).await;
    vote_at(&app, "arch", "e", "v8", recent).await;
    vote_at(&app, "arch", "e", "v7", recent).await;

    let reads = [
        format!(
            "/api/v1/boards/arch/top?period=hour&at={}&view=real&limit=3",
            rfc3339(old)
        ),
        format!(
            "/api/v1/boards/arch/top?period=hour&at={}&limit=3",
            rfc3339(old)
        ),
        format!(
            "/api/v1/boards/arch/top?period=day&at={}&limit=3",
            rfc3339(old)
        ),
        format!(
            "/api/v1/boards/arch/top?period=hour&at={}&offset=1&limit=2",
            rfc3339(old)
        ),
        format!(
            "/api/v1/boards/arch/members/b/around?period=hour&at={}&radius=1",
            rfc3339(old)
        ),
        format!(
            "/api/v1/boards/arch/members/a?period=hour&at={}",
            rfc3339(old)
        ),
        format!(
            "/api/v1/boards/arch/members/b?period=day&at={}&view=real",
            rfc3339(old)
        ),
    ];
    let mut live = Vec::new();
    for path in &reads {
        let (status, body) = app.get(path).await;
        assert_eq!(status, StatusCode::OK, "{path}: {body}");
        assert!(body.get("archived").is_none(), "{path}: {body}");
        live.push(body);
    }
    let old_hour = live[0]["bucket"].as_str().unwrap().to_owned();
    let old_day = live[2]["bucket"].as_str().unwrap().to_owned();
    assert_eq!(live[0]["total_members"], 4);
    assert_eq!(live[0]["participants"], 3);

    let (status, report) = app
        .post("/api/v1/admin/boards/arch/archive", json!({}))
        .await;
    assert_eq!(status, StatusCode::OK, "{report}");
    let archived = refs(&report["archived"]);
    let (_, recent_top) = app
        .get(&format!(
            "/api/v1/boards/arch/top?period=hour&at={}",
            rfc3339(recent)
        ))
        .await;
    let recent_hour = recent_top["bucket"].as_str().unwrap().to_owned();
    for bucket in [
        ("hour".to_owned(), old_hour.clone()),
        ("day".to_owned(), old_day.clone()),
        ("hour".to_owned(), recent_hour.clone()),
    ] {
        assert!(archived.contains(&bucket), "{bucket:?} in {report}");
    }
    // Past retention: the old hour (1 day) and the old day (2 days); the recent hour
    // stays its day.
    assert_eq!(
        refs(&report["released"]),
        BTreeSet::from([
            ("hour".to_owned(), old_hour.clone()),
            ("day".to_owned(), old_day)
        ]),
        "{report}"
    );

    for (path, before) in reads.iter().zip(&live) {
        let (status, after) = app.get(path).await;
        assert_eq!(status, StatusCode::OK, "{path}: {after}");
        let mut expected = before.clone();
        expected["archived"] = json!(true);
        assert_eq!(after, expected, "{path}");
    }
    // The archive keeps the best three: c, fourth, is not in it.
    let (_, c) = app
        .get(&format!(
            "/api/v1/boards/arch/members/c?period=hour&at={}",
            rfc3339(old)
        ))
        .await;
    assert_eq!(
        (c["score"].clone(), c["rank"].clone(), c["archived"].clone()),
        (json!(0), Value::Null, json!(true)),
        "{c}"
    );

    // The old hour's keys are gone; the recent hour's expire within its retention; the
    // all-time board never expires.
    let mut redis = RawRedis::connect().await;
    let keys = redis
        .keys(&format!("{}:*:hour:{old_hour}*", app.prefix))
        .await;
    assert_eq!(keys, Vec::<String>::new());
    let recent_keys = redis
        .keys(&format!("{}:*:hour:{recent_hour}*", app.prefix))
        .await;
    assert!(!recent_keys.is_empty());
    for key in &recent_keys {
        let ttl: i64 = redis.query(redis::cmd("TTL").arg(key)).await;
        assert!((1..=86_400).contains(&ttl), "{key}: {ttl}");
    }
    for key in redis.keys(&format!("{}:*:all:all", app.prefix)).await {
        let ttl: i64 = redis.query(redis::cmd("TTL").arg(&key)).await;
        assert_eq!(ttl, -1, "{key}");
    }

    // History: archived days from SQL, live ones from Redis, newest first.
    let (status, history) = app
        .get("/api/v1/boards/arch/members/a/history?period=day&limit=7&view=real")
        .await;
    assert_eq!(status, StatusCode::OK, "{history}");
    let days = history["buckets"].as_array().unwrap();
    assert_eq!(days.len(), 7);
    let starts: Vec<&str> = days
        .iter()
        .map(|d| d["starts_at"].as_str().unwrap())
        .collect();
    assert!(starts.windows(2).all(|w| w[0] > w[1]), "{history}");
    let old_entry = days
        .iter()
        .find(|d| d["bucket"] == live[2]["bucket"])
        .unwrap();
    assert_eq!(
        (
            old_entry["rank"].clone(),
            old_entry["score"].clone(),
            old_entry["archived"].clone()
        ),
        (json!(1), json!(3), json!(true)),
        "{history}"
    );
    let today = &days[0];
    assert_eq!(today["archived"], false, "{history}");
}

#[tokio::test(flavor = "multi_thread")]
async fn two_instances_archive_each_bucket_once_resuming_a_stopped_run() {
    let first = TestApp::spawn().await;
    first
        .board(
            json!({"slug": "race", "title": "Race", "membership": "open",
            "periods": ["hour", "day", "all"]}),
        )
        .await;
    let mut expected = BTreeSet::new();
    for h in 0..12 {
        let at = hours_ago(30 + 3 * h, 5);
        vote_at(&first, "race", &format!("m{}", h % 4), "v", at).await;
        let (_, top) = first
            .get(&format!(
                "/api/v1/boards/race/top?period=hour&at={}",
                rfc3339(at)
            ))
            .await;
        expected.insert((
            "hour".to_owned(),
            top["bucket"].as_str().unwrap().to_owned(),
        ));
        let (_, top) = first
            .get(&format!(
                "/api/v1/boards/race/top?period=day&at={}",
                rfc3339(at)
            ))
            .await;
        expected.insert(("day".to_owned(), top["bucket"].as_str().unwrap().to_owned()));
    }

    // A run stopped after five buckets (its budget) leaves five archived.
    let state = ovation::startup::connect(first.settings.clone())
        .await
        .unwrap();
    let lease = state.redis.archive_lease("test", archive::LEASE);
    assert!(state.redis.take_lease(&lease).await.unwrap());
    let board = state
        .config
        .board(&BoardSlug::parse("race").unwrap())
        .unwrap();
    let done = archive::archive_board(&state, &board, &lease, Utc::now(), 5)
        .await
        .unwrap();
    assert_eq!(done.len(), 5);
    assert_eq!(archived_rows(&first).await.len(), 5);
    assert!(state.redis.release_lease(&lease).await.unwrap());

    // Two instances archiving every 100 ms finish it, each bucket written once.
    let racer = || Options {
        prefix: first.prefix.clone(),
        database: Some(Arc::clone(&first.database)),
        archive_check: Duration::from_millis(100),
        ..Options::default()
    };
    let (_second, _third) = (
        TestApp::spawn_with(racer()).await,
        TestApp::spawn_with(racer()).await,
    );
    let started = Instant::now();
    loop {
        let rows = archived_rows(&first).await;
        if rows.len() == expected.len() {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "{} of {} archived",
            rows.len(),
            expected.len()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // More runs change nothing.
    tokio::time::sleep(Duration::from_millis(600)).await;
    let rows = archived_rows(&first).await;
    let got: BTreeSet<(String, String)> = rows
        .iter()
        .map(|(p, l, _)| (p.clone(), l.clone()))
        .collect();
    assert_eq!(got, expected);
    assert!(rows.iter().all(|(_, _, writes)| *writes == 1), "{rows:?}");

    // A late write into an archived hour archives it (and its day) once more.
    let at = hours_ago(30, 20);
    vote_at(&first, "race", "late", "v2", at).await;
    let started = Instant::now();
    loop {
        let rows = archived_rows(&first).await;
        let again: Vec<_> = rows.iter().filter(|(_, _, w)| *w == 2).collect();
        if again.len() == 2 {
            assert!(rows.iter().all(|(_, _, w)| *w <= 2), "{rows:?}");
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(15), "{rows:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (_, top) = first
        .get(&format!(
            "/api/v1/boards/race/top?period=hour&at={}",
            rfc3339(at)
        ))
        .await;
    assert_eq!(top["total_members"], 2, "{top}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_task_gives_a_backfilled_buckets_keys_a_ttl_within_retention() {
    let app = TestApp::spawn_with(Options {
        archive_check: Duration::from_millis(100),
        ..Options::default()
    })
    .await;
    app.board(
        json!({"slug": "late", "title": "Late", "membership": "open",
        "periods": ["hour", "all"], "retention": {"hour": 1}}),
    )
    .await;
    let (older, newer) = (hours_ago(10 * 24, 0), hours_ago(2, 0));
    vote_at(&app, "late", "m", "v", older).await;
    vote_at(&app, "late", "m", "v", newer).await;
    let label = |at: DateTime<Utc>| {
        let app = &app;
        async move {
            let (_, top) = app
                .get(&format!(
                    "/api/v1/boards/late/top?period=hour&at={}",
                    rfc3339(at)
                ))
                .await;
            top["bucket"].as_str().unwrap().to_owned()
        }
    };
    let (older, newer) = (label(older).await, label(newer).await);
    let mut redis = RawRedis::connect().await;
    let started = Instant::now();
    let ttl_of = |bucket: String| {
        let mut redis = redis.clone();
        let pattern = format!("{}:*:z:r:hour:{bucket}", app.prefix);
        async move {
            let keys = redis.keys(&pattern).await;
            assert_eq!(keys.len(), 1, "{keys:?}");
            let ttl: i64 = redis.query(redis::cmd("TTL").arg(&keys[0])).await;
            ttl
        }
    };
    loop {
        if ttl_of(older.clone()).await > 0 && ttl_of(newer.clone()).await > 0 {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(10), "no expiry yet");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Past its retention: an hour's grace. Within it: a day after it closed at most.
    let ttl = ttl_of(older).await;
    assert!((3_500..=3_600).contains(&ttl), "{ttl}");
    let ttl = ttl_of(newer).await;
    assert!((1..=86_400).contains(&ttl), "{ttl}");
    for key in redis.keys(&format!("{}:*:all:all", app.prefix)).await {
        let ttl: i64 = redis.query(redis::cmd("TTL").arg(&key)).await;
        assert_eq!(ttl, -1, "{key}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_retention_and_history_requests_are_refused() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "r", "title": "R", "membership": "open"}))
        .await;
    for (body, code) in [
        (json!({"retention": {"hour": -1}}), "invalid_retention"),
        (json!({"retention": {"day": 0}}), "invalid_retention"),
        (json!({"retention": {"month": 36_501}}), "invalid_retention"),
        (json!({"retention": {"year": 3}}), "invalid_field"),
        (json!({"archive_top": 0}), "invalid_archive_top"),
        (json!({"archive_top": 10_001}), "invalid_archive_top"),
    ] {
        let (status, answer) = app.patch("/api/v1/admin/boards/r", body.clone()).await;
        assert_eq!(
            (status, answer["error"]["code"].as_str()),
            (StatusCode::UNPROCESSABLE_ENTITY, Some(code)),
            "{body}: {answer}"
        );
    }
    let (_, board) = app.get("/api/v1/admin/boards/r").await;
    assert_eq!(
        (board["retention"].clone(), board["archive_top"].clone()),
        (
            json!({"hour": 3, "day": 60, "week": 400, "month": 800}),
            json!(1000)
        ),
        "nothing changed: {board}"
    );
    let (status, board) = app
        .patch(
            "/api/v1/admin/boards/r",
            json!({"retention": {"week": null}}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{board}");
    assert_eq!(
        board["retention"],
        json!({"hour": 3, "day": 60, "week": null, "month": 800})
    );

    for (query, code) in [
        ("period=fortnight", "invalid_period"),
        ("period=all", "invalid_period"),
        ("period=rolling:24h", "period_not_enabled"),
        ("period=day&limit=0", "invalid_field"),
        ("period=day&limit=101", "invalid_field"),
        ("period=day&at=someday", "invalid_bucket"),
    ] {
        let (status, answer) = app
            .get(&format!("/api/v1/boards/r/members/m/history?{query}"))
            .await;
        assert_eq!(
            (status, answer["error"]["code"].as_str()),
            (StatusCode::UNPROCESSABLE_ENTITY, Some(code)),
            "{query}: {answer}"
        );
    }
    let (status, answer) = app
        .post("/api/v1/admin/boards/nope/archive", json!({}))
        .await;
    assert_eq!(
        (status, answer["error"]["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("board_not_found"))
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_late_write_into_a_released_bucket_adds_to_its_archive() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "re", "title": "Re", "membership": "open",
        "periods": ["hour", "all"], "retention": {"hour": 1}}))
        .await;
    let old = hours_ago(5 * 24, 30);
    for (member, voter) in [("a", "v1"), ("a", "v2"), ("b", "v1")] {
        vote_at(&app, "re", member, voter, old).await;
    }
    let (status, report) = app.post("/api/v1/admin/boards/re/archive", json!({})).await;
    assert_eq!(status, StatusCode::OK, "{report}");
    assert_eq!(report["released"].as_array().unwrap().len(), 1, "{report}");

    // A backfill lands in the released hour: Redis holds only it until the archive
    // runs again, then the archive holds the sum and Redis nothing.
    vote_at(&app, "re", "b", "v3", old).await;
    vote_at(&app, "re", "b", "v4", old).await;
    let (status, report) = app.post("/api/v1/admin/boards/re/archive", json!({})).await;
    assert_eq!(status, StatusCode::OK, "{report}");
    assert_eq!(report["archived"].as_array().unwrap().len(), 1, "{report}");
    assert_eq!(report["released"].as_array().unwrap().len(), 1, "{report}");
    let (_, top) = app
        .get(&format!(
            "/api/v1/boards/re/top?period=hour&at={}&view=real",
            rfc3339(old)
        ))
        .await;
    let entries: Vec<(&str, i64)> = top["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["member"].as_str().unwrap(), e["score"].as_i64().unwrap()))
        .collect();
    assert_eq!(entries, [("b", 3), ("a", 2)], "{top}");
    assert_eq!(top["archived"], true, "{top}");
    // Counts add up: an upper bound (b and v1 were there before).
    assert_eq!(
        (top["total_members"].clone(), top["participants"].clone()),
        (json!(3), json!(4))
    );
    let mut redis = RawRedis::connect().await;
    let bucket = top["bucket"].as_str().unwrap();
    assert_eq!(
        redis
            .keys(&format!("{}:*:hour:{bucket}*", app.prefix))
            .await,
        Vec::<String>::new()
    );
    // The late-write bookkeeping is spent: the mark that the bucket was found gone, and
    // the late count of an hour whose buckets are all past their retention.
    let late = redis.keys(&format!("{}:*late", app.prefix)).await;
    assert_eq!(late, Vec::<String>::new(), "emptied, so deleted");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_late_write_into_a_bucket_whose_keys_expire_before_the_archive_runs_is_archived() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "exp", "title": "Exp", "membership": "open",
        "periods": ["hour", "all"], "retention": {"hour": 30}}))
        .await;
    let old = hours_ago(2 * 24, 30);
    for voter in ["v1", "v2", "v3", "v4", "v5"] {
        vote_at(&app, "exp", "a", voter, old).await;
    }
    vote_at(&app, "exp", "b", "v1", old).await;
    let (status, report) = app
        .post("/api/v1/admin/boards/exp/archive", json!({}))
        .await;
    assert_eq!(status, StatusCode::OK, "{report}");
    assert_eq!(report["archived"].as_array().unwrap().len(), 1, "{report}");
    // The bucket's keys are about to expire (as at the end of its retention).
    let mut redis = RawRedis::connect().await;
    let (_, top) = app
        .get(&format!(
            "/api/v1/boards/exp/top?period=hour&at={}",
            rfc3339(old)
        ))
        .await;
    let label = top["bucket"].as_str().unwrap().to_owned();
    let keys = redis.keys(&format!("{}:*:hour:{label}*", app.prefix)).await;
    assert_eq!(
        keys.len(),
        5,
        "rankings in both views, voters, voters of a and b: {keys:?}"
    );
    for key in &keys {
        let _: i64 = redis.query(redis::cmd("PEXPIRE").arg(key).arg(1500)).await;
    }
    // A backfill of +2 lands before they expire, and is acknowledged.
    let (status, voted) = app
        .vote(
            "exp",
            json!({"member": "a", "voter": "v6", "count": 2, "at": rfc3339(old)}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{voted}");
    assert_eq!(voted["scores"][0]["real"], 7, "{voted}");
    tokio::time::sleep(Duration::from_millis(2000)).await;
    // Only b's voters, which the backfill did not touch, left Redis.
    let left = redis.keys(&format!("{}:*:hour:{label}*", app.prefix)).await;
    assert_eq!(left.len(), 4, "{left:?}");

    let (status, report) = app
        .post("/api/v1/admin/boards/exp/archive", json!({}))
        .await;
    assert_eq!(status, StatusCode::OK, "{report}");
    assert_eq!(
        refs(&report["archived"]),
        BTreeSet::from([("hour".to_owned(), label.clone())])
    );
    let db = Database::connect(&app.database.url).await.unwrap();
    let state_board = ovation::store::sql::boards::find_board(
        &db,
        &ovation::domain::ids::BoardSlug::parse("exp").unwrap(),
    )
    .await
    .unwrap()
    .unwrap();
    let bucket = ovation::domain::period::Bucket::parse(
        ovation::domain::period::Period::Hour,
        chrono_tz::Tz::UTC,
        &label,
    )
    .unwrap();
    let archived = ovation::store::sql::archive::read_bucket(
        &db,
        state_board.id,
        &bucket,
        ovation::domain::score::View::Real,
    )
    .await
    .unwrap()
    .unwrap();
    let entries: Vec<(&str, i64, i64)> = archived
        .entries
        .iter()
        .map(|e| (e.member.as_str(), e.units, e.voters))
        .collect();
    assert_eq!(
        entries,
        [("a", 7, 6), ("b", 1, 1)],
        "the archive holds the backfill"
    );
    assert_eq!((archived.total_members, archived.participants), (2, 6));
    // The keys the backfill held get their expiry again.
    for key in redis.keys(&format!("{}:*:hour:{label}*", app.prefix)).await {
        let ttl: i64 = redis.query(redis::cmd("TTL").arg(&key)).await;
        assert!(ttl > 0, "{key}: {ttl}");
    }
    // Nothing is left for another run to look at.
    let (status, report) = app
        .post("/api/v1/admin/boards/exp/archive", json!({}))
        .await;
    assert_eq!(status, StatusCode::OK, "{report}");
    assert_eq!(report["archived"], json!([]), "{report}");
}
