//! The vote ledger: every counted write recorded once, in order, gapless, moved to SQL by
//! the drain (with two instances draining, and after a drain stopped between its commit
//! and its trim, or a Redis that lost its place), and read back by auditors.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use rand::{Rng, SeedableRng};
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::harness::{MASTER_KEY, Options, RawRedis, TestApp, error_codes, num};
use ovation::domain::ids::BoardSlug;
use ovation::domain::ledger::{Entry, Recorded};
use ovation::domain::scoring::Op;
use ovation::engine::config::BoardConfig;
use ovation::engine::state::AppState;
use ovation::store::redis::HEAD_CALL;
use ovation::store::sql::entities::ledger_record;
use ovation::store::sql::ledger::{self as sql, LedgerOf};
use sea_orm::{EntityTrait, QueryOrder, QuerySelect};

/// Every entry of `board`'s ledger, read page by page (`limit` a page), once nothing is
/// pending.
pub(crate) async fn ledger(app: &TestApp, board: &str, limit: usize) -> Vec<Value> {
    drained(app, board).await;
    let (mut entries, mut after) = (Vec::new(), 0);
    loop {
        let (status, page) = app
            .get(&format!(
                "/api/v1/admin/boards/{board}/ledger?after={after}&limit={limit}"
            ))
            .await;
        assert_eq!(status, StatusCode::OK, "{page}");
        let got = page["entries"].as_array().unwrap();
        assert!(got.len() <= limit, "{page}");
        entries.extend(got.iter().cloned());
        match page["next_after"].as_i64() {
            Some(next) => after = next,
            None => return entries,
        }
    }
}

/// Waits until `board`'s ledger has nothing pending in Redis.
async fn drained(app: &TestApp, board: &str) {
    for _ in 0..300 {
        let (status, page) = app
            .get(&format!("/api/v1/admin/boards/{board}/ledger?limit=1"))
            .await;
        assert_eq!(status, StatusCode::OK, "{page}");
        if page["pending"] == 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the ledger of {board} was not drained in 15 s");
}

pub(crate) fn assert_gapless(entries: &[Value]) {
    let seqs: Vec<i64> = entries.iter().map(|e| e["seq"].as_i64().unwrap()).collect();
    let expected: Vec<i64> = (1..=entries.len() as i64).collect();
    assert_eq!(seqs, expected, "seq runs 1, 2, 3, … without a gap");
}

/// Whether a vote that answered `status` and `answer` counted: a replay did not, and a
/// refusal is a rate limit's.
fn counts(status: StatusCode, answer: &Value) -> bool {
    match status {
        StatusCode::OK => answer["replayed"] == false,
        StatusCode::TOO_MANY_REQUESTS => {
            assert_eq!(answer["error"]["code"], "rate_limited", "{answer}");
            false
        }
        other => panic!("{other}: {answer}"),
    }
}

/// What every client task found, together.
async fn gather<T>(clients: impl IntoIterator<Item = tokio::task::JoinHandle<Vec<T>>>) -> Vec<T> {
    let mut all = Vec::new();
    for client in clients {
        all.extend(client.await.unwrap());
    }
    all
}

/// (member, voter, count) of each entry or vote (a vote without a count counts 1),
/// counted.
fn tally<'a>(
    entries: impl IntoIterator<Item = &'a Value>,
) -> BTreeMap<(String, String, i64), usize> {
    let mut tally = BTreeMap::new();
    for e in entries {
        let key = (
            e["member"].as_str().unwrap().to_owned(),
            e["voter"].as_str().unwrap_or("").to_owned(),
            e["count"].as_i64().unwrap_or(1),
        );
        *tally.entry(key).or_insert(0) += 1;
    }
    tally
}

/// Each of `members`' all-time real score on `board` is the sum of its ledger entries.
async fn assert_scores_are_sums(app: &TestApp, board: &str, entries: &[Value], members: &[&str]) {
    for m in members {
        let sum: i64 = entries
            .iter()
            .filter(|e| e["member"] == *m)
            .map(|e| e["count"].as_i64().unwrap())
            .sum();
        let (_, read) = app
            .get(&format!(
                "/api/v1/boards/{board}/members/{m}?period=all&view=real"
            ))
            .await;
        assert_eq!(num(&read["score"]), sum as f64, "{board} {m}: {read}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_ledger_holds_exactly_the_counted_votes_of_32_clients_gapless() {
    let seed: u64 = rand::random();
    println!("seed {seed}");
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "led", "title": "Ledger", "max_count": 5}))
        .await;
    app.members("led", &["m1", "m2", "m3"]).await;
    let (status, body) = app
        .post(
            "/api/v1/admin/boards/led/rules",
            json!({"name": "four a day", "dimensions": ["voter"], "window": "day", "limit": 4}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let clients = (0..32u64).map(|c| {
        let app = app.clone();
        tokio::spawn(async move {
            let mut rng = rand::rngs::StdRng::seed_from_u64(seed ^ c);
            let mut counted = Vec::new();
            let mut sent: Vec<Value> = Vec::new();
            for i in 0..12 {
                // A replay of an earlier keyed vote now and then: it counts nothing more.
                let body = if !sent.is_empty() && rng.random_bool(0.2) {
                    sent[rng.random_range(0..sent.len())].clone()
                } else {
                    let body = json!({
                        "member": format!("m{}", rng.random_range(1..=3)),
                        "voter": format!("u{}", rng.random_range(0..40)),
                        "count": rng.random_range(1..=3),
                        "idempotency_key": format!("c{c}-{i}"),
                    });
                    sent.push(body.clone());
                    body
                };
                let (status, answer) = app.vote("led", body.clone()).await;
                if counts(status, &answer) {
                    counted.push(body);
                }
            }
            counted
        })
    });
    let counted = gather(clients).await;
    let entries = ledger(&app, "led", 7).await;
    assert_gapless(&entries);
    assert_eq!(
        tally(&entries),
        tally(&counted),
        "the ledger is the counted votes"
    );
    assert_scores_are_sums(&app, "led", &entries, &["m1", "m2", "m3"]).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn two_instances_draining_at_once_store_each_entry_once() {
    let first = TestApp::spawn_with(Options {
        ledger_drain: Duration::from_millis(10),
        ..Options::default()
    })
    .await;
    first
        .board(json!({"slug": "twice", "title": "Twice", "membership": "open"}))
        .await;
    let second = TestApp::spawn_with(Options {
        prefix: first.prefix.clone(),
        database: Some(first.database.clone()),
        ledger_drain: Duration::from_millis(10),
        ..Options::default()
    })
    .await;
    let writers = (0..16).map(|c| {
        let app = if c % 2 == 0 {
            first.clone()
        } else {
            second.clone()
        };
        tokio::spawn(async move {
            for i in 0..25 {
                let (status, body) = app
                    .vote(
                        "twice",
                        json!({"member": format!("m{}", i % 4), "voter": format!("c{c}v{i}")}),
                    )
                    .await;
                assert_eq!(status, StatusCode::OK, "{body}");
            }
        })
    });
    for w in writers {
        w.await.unwrap();
    }
    let entries = ledger(&second, "twice", 1000).await;
    assert_gapless(&entries);
    let voters: HashSet<&str> = entries
        .iter()
        .map(|e| e["voter"].as_str().unwrap())
        .collect();
    assert_eq!((entries.len(), voters.len()), (400, 400));
}

/// An app with the open board `slug`, whose own drain runs once at start, then not for
/// an hour: the test drains.
async fn undrained(slug: &str) -> TestApp {
    let app = TestApp::spawn_with(Options {
        ledger_drain: Duration::from_secs(3600),
        ..Options::default()
    })
    .await;
    app.board(json!({"slug": slug, "title": slug, "membership": "open"}))
        .await;
    app
}

/// The board `slug` as `state` knows it, and its ledger in SQL.
fn board_ledger(state: &AppState, slug: &str) -> (Arc<BoardConfig>, LedgerOf<'static>) {
    let board = state
        .config
        .board(&BoardSlug::parse(slug).unwrap())
        .unwrap();
    let of = LedgerOf::board(board.board.id);
    (board, of)
}

/// The test's own view of the app's stores, as another instance would build it.
pub(crate) async fn stores(app: &TestApp) -> ovation::engine::state::AppState {
    ovation::startup::connect(app.settings.clone())
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_drain_stopped_between_commit_and_trim_resumes_without_duplicates() {
    let app = undrained("stop").await;
    for i in 0..30 {
        app.vote("stop", json!({"member": "m1", "voter": format!("a{i}")}))
            .await;
    }
    let state = stores(&app).await;
    let (board, of) = board_ledger(&state, "stop");
    // A drain that committed the first 30 entries and stopped before trimming them.
    let head = state.redis.ledger_head(&board.keys, 1000).await.unwrap();
    assert_eq!(head.length, 30);
    let entries: Vec<Entry> = head
        .entries
        .iter()
        .map(|t| Entry::decode(t).unwrap())
        .collect();
    let last = entries.last().unwrap().id;
    sql::append(&state.db, of, 0, None, last, &texts(&entries))
        .await
        .unwrap();
    for i in 0..20 {
        app.vote("stop", json!({"member": "m2", "voter": format!("b{i}")}))
            .await;
    }
    ovation::engine::ledger::drain_all(&state, "resumer").await;
    let stored = ledger(&app, "stop", 1000).await;
    assert_gapless(&stored);
    let voters: Vec<&str> = stored
        .iter()
        .map(|e| e["voter"].as_str().unwrap())
        .collect();
    let expected: Vec<String> = (0..30)
        .map(|i| format!("a{i}"))
        .chain((0..20).map(|i| format!("b{i}")))
        .collect();
    assert_eq!(
        voters, expected,
        "each entry once, in the order it was counted"
    );

    // Redis goes back in time (a failover to a replica that missed the trim): entries SQL
    // holds are at the head again, and Redis no longer remembers the last trim.
    let mut raw = RawRedis::connect().await;
    let ledger_key = board.keys.ledger();
    let again: Vec<String> = entries[20..].iter().map(Entry::encode).collect();
    let _: () = raw
        .query(redis::cmd("RPUSH").arg(&ledger_key).arg(&again))
        .await;
    let _: () = raw
        .query(redis::cmd("DEL").arg(board.keys.ledger_trimmed()))
        .await;
    app.vote("stop", json!({"member": "m3", "voter": "c0"}))
        .await;
    ovation::engine::ledger::drain_all(&state, "resumer").await;
    let stored = ledger(&app, "stop", 1000).await;
    assert_gapless(&stored);
    assert_eq!(
        stored.len(),
        51,
        "the repeated entries are not stored twice"
    );
    assert_eq!(stored[50]["voter"], "c0");
}

/// The drain reads a ledger's head a few hundred entries a call: across calls it reads
/// what one call would, and a head trimmed between two calls (another drain's trim) is
/// read anew whole, never a piece of the old head joined to a piece of the new.
#[tokio::test(flavor = "multi_thread")]
async fn the_head_read_in_calls_is_the_head_one_call_reads_even_when_trimmed_between() {
    let app = undrained("heads").await;
    let state = stores(&app).await;
    let (board, _) = board_ledger(&state, "heads");
    let key = board.keys.ledger();
    let mut raw = RawRedis::connect().await;
    let texts: Vec<String> = (0..2 * HEAD_CALL + 100).map(|i| format!("e{i}")).collect();
    let _: () = raw.query(redis::cmd("RPUSH").arg(&key).arg(&texts)).await;

    for count in [1, HEAD_CALL, HEAD_CALL + 1, 2 * HEAD_CALL + 50, 4000] {
        let head = state.redis.ledger_head(&board.keys, count).await.unwrap();
        let expected = &texts[..count.min(texts.len())];
        assert_eq!(head.entries, expected, "{count} entries asked for");
        assert_eq!(head.length, texts.len() as u64);
    }

    // The first call's worth, then another drain trims 100 entries before the next call.
    let first = state
        .redis
        .ledger_head(&board.keys, HEAD_CALL)
        .await
        .unwrap();
    let _: () = raw
        .query(redis::cmd("LTRIM").arg(&key).arg(100).arg(-1))
        .await;
    let head = state
        .redis
        .ledger_head_continued(&board.keys, first, 4000)
        .await
        .unwrap();
    assert_eq!(
        head.entries,
        &texts[100..],
        "the head as it is after the trim"
    );
    assert_eq!(head.length, (texts.len() - 100) as u64);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_ledger_setting_defaults_by_kind_and_turning_it_off_keeps_what_is_stored() {
    let app = TestApp::spawn().await;
    let votes = app
        .board(json!({"slug": "v", "title": "V", "membership": "open"}))
        .await;
    assert_eq!(votes["ledger"], true);
    let scores = app
        .board(json!({"slug": "s", "title": "S", "scoring": "scores", "membership": "open"}))
        .await;
    assert_eq!(scores["ledger"], false);
    let family = app
        .board(json!({"slug": "f", "title": "F", "membership": "open", "instances": {"ttl_s": 60}}))
        .await;
    assert_eq!(family["ledger"], false);
    // A family without one: its instances' writes leave no entry.
    let (status, body) = app
        .vote("f:x", json!({"member": "m1", "voter": "u1"}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(ledger(&app, "f:x", 10).await, Vec::<Value>::new());
    let (status, body) = app
        .patch("/api/v1/admin/boards/f", json!({"ledger": true}))
        .await;
    assert_eq!(
        (status, &body["ledger"]),
        (StatusCode::OK, &json!(true)),
        "{body}"
    );
    let (status, body) = app
        .vote("f:x", json!({"member": "m1", "voter": "u2"}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let entries = ledger(&app, "f:x", 10).await;
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!(entries[0]["voter"], "u2");
    for (path, status, code) in [
        (
            "/api/v1/admin/boards/f/ledger",
            StatusCode::UNPROCESSABLE_ENTITY,
            "instance_required",
        ),
        (
            "/api/v1/admin/boards/f:x%20y/ledger",
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_instance",
        ),
        (
            "/api/v1/admin/boards/v:x/ledger",
            StatusCode::NOT_FOUND,
            "board_not_found",
        ),
    ] {
        let (got, body) = app.get(path).await;
        assert_eq!(
            (got, body["error"]["code"].as_str()),
            (status, Some(code)),
            "{path}: {body}"
        );
    }

    app.vote("v", json!({"member": "m1", "voter": "u1"})).await;
    let (status, body) = app
        .patch("/api/v1/admin/boards/v", json!({"ledger": false}))
        .await;
    assert_eq!(
        (status, body["ledger"].clone()),
        (StatusCode::OK, json!(false))
    );
    app.vote("v", json!({"member": "m1", "voter": "u2"})).await;
    let (status, body) = app
        .post(
            "/api/v1/scores",
            json!({"scores": [{"board": "s", "member": "p1", "op": "incr", "value": 5}]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let stored = ledger(&app, "v", 100).await;
    assert_eq!(stored.len(), 1, "{stored:?}");
    assert_eq!(stored[0]["voter"], "u1");
    assert!(ledger(&app, "s", 100).await.is_empty());
    let (_, read) = app
        .get("/api/v1/boards/v/members/m1?period=all&view=real")
        .await;
    assert_eq!(read["score"], 2, "votes still count with the ledger off");
}

#[tokio::test(flavor = "multi_thread")]
async fn score_writes_are_recorded_with_their_operator_on_every_layout() {
    let app = TestApp::spawn().await;
    // (the board created, the board written, its storage, its instances): the last an
    // instance of a sharded family, whose shards keep a ledger each.
    for (created, slug, storage, instances) in [
        ("full", "full", json!({"kind": "full"}), Value::Null),
        (
            "sharded",
            "sharded",
            json!({"kind": "sharded", "shards": 4}),
            Value::Null,
        ),
        (
            "fam",
            "fam:x",
            json!({"kind": "sharded", "shards": 4}),
            json!({"ttl_s": 600}),
        ),
    ] {
        app.board(
            json!({"slug": created, "title": created, "scoring": "scores", "decimals": 1,
            "membership": "open", "storage": storage, "ledger": true, "instances": instances}),
        )
        .await;
        let writes: Vec<Value> = (0..24)
            .map(|i| {
                let op = ["incr", "set", "best"][i % 3];
                json!({"board": slug, "member": format!("w{i}"), "op": op,
                    "value": i as f64 + 0.5})
            })
            .collect();
        let (status, body) = app.post("/api/v1/scores", json!({"scores": writes})).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert!(
            body["results"]
                .as_array()
                .unwrap()
                .iter()
                .all(|r| r.get("error").is_none()),
            "{body}"
        );
        let stored = ledger(&app, slug, 10).await;
        assert_gapless(&stored);
        let mut got: Vec<(String, String, f64)> = stored
            .iter()
            .map(|e| {
                assert_eq!((e["count"].clone(), e.get("display")), (json!(1), None));
                (
                    e["member"].as_str().unwrap().to_owned(),
                    e["op"].as_str().unwrap().to_owned(),
                    num(&e["value"]),
                )
            })
            .collect();
        got.sort_by(|a, b| a.0.cmp(&b.0));
        let mut expected: Vec<(String, String, f64)> = (0..24)
            .map(|i| {
                (
                    format!("w{i}"),
                    ["incr", "set", "best"][i % 3].to_owned(),
                    i as f64 + 0.5,
                )
            })
            .collect();
        expected.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(got, expected, "{slug}");
    }
}

/// Entries of every shape a write leaves (a vote with and without a voter, channel and
/// terminal; a score write with its operator; an adjustment of one bucket), with ids at
/// both ends of their range and text that JSON escapes, read back from SQL exactly as the
/// drain stored them: each backend takes a batch its own way (SQLite as one JSON array,
/// PostgreSQL as arrays per column, MariaDB as a VALUES list).
#[tokio::test(flavor = "multi_thread")]
async fn entries_of_every_shape_read_back_from_sql_as_stored() {
    let app = undrained("shapes").await;
    let state = stores(&app).await;
    let (_, of) = board_ledger(&state, "shapes");
    let vote = Entry {
        id: i64::MIN,
        at: 1_764_000_000_000,
        recorded: 1_764_000_000_123,
        member: "m1".into(),
        voter: None,
        channel: None,
        terminal: None,
        count: 1,
        op: None,
        value: None,
        display: 1_000_000,
        carry: 0,
        adjusts: None,
        ip: None,
        held: None,
        releases: None,
    };
    let entries = vec![
        vote.clone(),
        Entry {
            id: i64::MAX,
            member: "成员 \"7\" \\ x".into(),
            voter: Some("用户 7|x 😀 \u{1}".into()),
            channel: Some("app".into()),
            terminal: Some("ios".into()),
            count: 3,
            display: 4_500_000,
            carry: 450_000,
            ..vote.clone()
        },
        Entry {
            id: (1 << 53) + 1,
            op: Some(Op::Best),
            value: Some(-12_345),
            display: 0,
            ..vote.clone()
        },
        Entry {
            id: -7,
            count: -5,
            display: -5_000_000,
            adjusts: Some("day:2026-11-27".into()),
            ip: None,
            held: None,
            releases: None,
            ..vote
        },
    ];
    sql::append(&state.db, of, 0, None, i64::MIN + 1, &texts(&entries))
        .await
        .unwrap();
    // Each row holds its entry as the text it was, beside the columns read from it.
    let rows: Vec<(i64, i64, Option<String>, String)> = ledger_record::Entity::find()
        .select_only()
        .columns([
            ledger_record::Column::EntryId,
            ledger_record::Column::AtMs,
            ledger_record::Column::Voter,
            ledger_record::Column::Entry,
        ])
        .order_by_asc(ledger_record::Column::Seq)
        .into_tuple()
        .all(&state.db)
        .await
        .unwrap();
    let columns: Vec<(i64, i64, Option<String>, String)> = entries
        .iter()
        .map(|e| (e.id, e.at, e.voter.clone(), e.encode()))
        .collect();
    assert_eq!(rows, columns);
    let stored = sql::page(&state.db, of, 0, 10).await.unwrap();
    let expected: Vec<Recorded> = entries
        .into_iter()
        .zip(1..)
        .map(|(entry, seq)| Recorded {
            seq,
            entry,
            revoked: None,
        })
        .collect();
    assert_eq!(stored, expected);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_auditor_streams_the_whole_ledger_as_ndjson_and_sees_what_is_pending() {
    let app = TestApp::spawn().await;
    app.board(
        json!({"slug": "audit", "title": "Audit", "membership": "open",
        "multiplier": 1.5, "carry_over": 0.1}),
    )
    .await;
    for i in 0..25 {
        app.vote(
            "audit",
            json!({"member": format!("m{}", i % 3), "voter": format!("u{i}"), "count": 2,
                "channel": "app", "terminal": "ios"}),
        )
        .await;
    }
    let pages = ledger(&app, "audit", 4).await;
    assert_eq!(pages.len(), 25);
    assert_eq!(
        (
            pages[0]["display"].clone(),
            pages[0]["carry"].clone(),
            pages[0]["channel"].clone(),
            pages[0]["terminal"].clone()
        ),
        (json!(3), json!(0.3), json!("app"), json!("ios"))
    );
    let resp = app
        .client
        .get(format!(
            "{}/api/v1/admin/boards/audit/ledger?after=5",
            app.base
        ))
        .bearer_auth(MASTER_KEY)
        .header("Accept", "application/x-ndjson")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(
        resp.headers()["content-type"].to_str().unwrap(),
        "application/x-ndjson"
    );
    assert_eq!(resp.headers()["x-ledger-pending"], "0");
    let text = resp.text().await.unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines, pages[5..].to_vec());

    // With the drain stopped, votes wait in Redis and are counted as pending.
    let paused = TestApp::spawn_with(Options {
        ledger_drain: Duration::from_secs(3600),
        ..Options::default()
    })
    .await;
    paused
        .board(json!({"slug": "wait", "title": "Wait", "membership": "open"}))
        .await;
    for i in 0..3 {
        paused
            .vote("wait", json!({"member": "m1", "voter": format!("u{i}")}))
            .await;
    }
    let (status, page) = paused.get("/api/v1/admin/boards/wait/ledger").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        page,
        json!({"entries": [], "next_after": null, "pending": 3})
    );
    for bad in ["after=-1", "limit=0", "limit=10001"] {
        let (status, body) = paused
            .get(&format!("/api/v1/admin/boards/wait/ledger?{bad}"))
            .await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (StatusCode::UNPROCESSABLE_ENTITY, Some("invalid_field")),
            "{bad}: {body}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_lag_is_in_readyz_and_metrics() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "lag", "title": "Lag", "membership": "open"}))
        .await;
    app.vote("lag", json!({"member": "m1"})).await;
    drained(&app, "lag").await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (status, ready) = app.get("/readyz").await;
    assert_eq!(status, StatusCode::OK, "{ready}");
    assert_eq!(
        ready["ledger"],
        json!({"lag_s": 0.0, "pending": 0, "rebuild": null, "gaps": []})
    );
    let metrics = app.metrics().await;
    assert!(
        metrics.contains("ovation_ledger_lag_seconds{board=\"lag\"} 0"),
        "{metrics}"
    );
    assert!(
        metrics.contains("ovation_ledger_drained_total{board=\"lag\"} 1"),
        "{metrics}"
    );
}

/// The storage of a `votes` board: `full`, or sharded by voter.
const FULL: fn() -> Value = || json!({"kind": "full"});
const SHARDED: fn() -> Value = || json!({"kind": "sharded", "shards": 8});

/// A board of every calendar period in a zone of its own, a multiplier, carry-over and
/// initial votes, kept in `storage`, fed 150 votes backfilled over the last ten days and
/// a few now.
async fn recountable(app: &TestApp, slug: &str, seed: u64, storage: Value) {
    app.board(
        json!({"slug": slug, "title": "Recount", "timezone": "Asia/Shanghai",
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
    let now = chrono::Utc::now();
    for i in 0..150 {
        let mut vote = json!({"member": format!("m{}", rng.random_range(1..=3)),
            "voter": format!("u{}", rng.random_range(0..30)), "count": rng.random_range(1..=9)});
        if i % 10 != 0 {
            let ago = chrono::Duration::seconds(rng.random_range(60..10 * 86_400));
            vote["at"] = json!((now - ago).to_rfc3339());
        }
        let (status, body) = app.vote(slug, vote).await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
}

/// Display units as the API shows them: whole votes as integers.
fn votes(units: f64) -> Value {
    let v = units / 1e6;
    if v.fract() == 0.0 {
        json!(v as i64)
    } else {
        json!(v)
    }
}

async fn recount(app: &TestApp, slug: &str, repair: bool) -> Value {
    let (status, body) = app
        .post(
            &format!("/api/v1/admin/boards/{slug}/recount?repair={repair}"),
            json!({}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

#[tokio::test(flavor = "multi_thread")]
async fn a_recount_agrees_with_redis_then_finds_and_repairs_what_was_tampered_with() {
    let seed: u64 = rand::random();
    println!("seed {seed}");
    let app = TestApp::spawn().await;
    recountable(&app, "rc", seed, FULL()).await;
    let clean = recount(&app, "rc", false).await;
    assert_eq!(
        (
            clean["entries"].clone(),
            clean["mismatches"].clone(),
            clean["skipped"].clone()
        ),
        (json!(150), json!([]), json!(0)),
        "{clean}"
    );
    // Every bucket the votes touched (and carried into), both views, is compared.
    assert!(clean["buckets"].as_u64().unwrap() >= 2 * 5, "{clean}");

    // Tampering: a closed day's real score, the all-time display board, a stranger in an
    // hour.
    let state = stores(&app).await;
    let board = state
        .config
        .board(&BoardSlug::parse("rc").unwrap())
        .unwrap();
    let tz = board.board.settings.timezone;
    let (_, day_top) = app
        .get("/api/v1/boards/rc/top?period=all&view=real&limit=1")
        .await;
    let leader = day_top["entries"][0]["member"].as_str().unwrap().to_owned();
    let all = ovation::domain::period::Bucket::all();
    let old_day = ovation::domain::period::Bucket::containing(
        ovation::domain::period::Period::Day,
        tz,
        chrono::Utc::now() - chrono::Duration::days(12),
    )
    .unwrap();
    let hour = ovation::domain::period::Bucket::containing(
        ovation::domain::period::Period::Hour,
        tz,
        chrono::Utc::now(),
    )
    .unwrap();
    use ovation::domain::score::View;
    let mut raw = RawRedis::connect().await;
    let live_all: f64 = raw
        .query(
            redis::cmd("ZSCORE")
                .arg(board.keys.scores(View::Display, &all))
                .arg(&leader),
        )
        .await;
    let _: () = raw
        .query(
            redis::cmd("ZINCRBY")
                .arg(board.keys.scores(View::Display, &all))
                .arg(2_000_000)
                .arg(&leader),
        )
        .await;
    let _: () = raw
        .query(
            redis::cmd("ZADD")
                .arg(board.keys.scores(View::Real, &old_day))
                .arg(4)
                .arg("m2"),
        )
        .await;
    let _: () = raw
        .query(
            redis::cmd("ZADD")
                .arg(board.keys.scores(View::Real, &hour))
                .arg(7)
                .arg("ghost"),
        )
        .await;
    let found = recount(&app, "rc", false).await;
    let mut mismatches = found["mismatches"].as_array().unwrap().clone();
    mismatches.sort_by_key(|m| m["period"].as_str().unwrap().to_owned());
    assert_eq!(
        mismatches,
        vec![
            json!({"period": "all", "bucket": "all", "view": "display", "member": leader,
                "live": votes(live_all + 2e6), "recounted": votes(live_all), "repaired": false}),
            json!({"period": "day", "bucket": old_day.label, "view": "real", "member": "m2",
                "live": 4, "recounted": 0, "repaired": false}),
            json!({"period": "hour", "bucket": hour.label, "view": "real", "member": "ghost",
                "live": 7, "recounted": 0, "repaired": false}),
        ],
        "{found}"
    );
    let repaired = recount(&app, "rc", true).await;
    assert_eq!(
        (repaired["mismatched"].clone(), repaired["repaired"].clone()),
        (json!(3), json!(3)),
        "{repaired}"
    );
    let again = recount(&app, "rc", false).await;
    assert_eq!(again["mismatches"], json!([]), "{again}");
    let (_, read) = app
        .get(&format!("/api/v1/boards/rc/members/{leader}?period=all"))
        .await;
    assert_eq!(num(&read["score"]), live_all / 1e6);
    let audit = ovation::store::sql::audit::list(
        &state.db,
        &ovation::store::sql::audit::AuditFilter {
            actor: None,
            action: Some("board.recount".into()),
            target: None,
        },
        10,
    )
    .await
    .unwrap();
    assert_eq!(audit.len(), 1, "a repair is audited, a comparison is not");
    assert_eq!(
        (audit[0].target.as_str(), audit[0].detail.as_str()),
        ("board rc", r#"{"entries":150,"mismatched":3,"repaired":3}"#)
    );
}

/// A sharded board is recounted shard by shard (each vote in its voter's shard, initial
/// votes in the first): a part that differs is named with its shard, and repaired there.
#[tokio::test(flavor = "multi_thread")]
async fn a_sharded_board_recounts_each_shard_and_repairs_the_one_tampered_with() {
    use ovation::domain::period::Bucket;
    use ovation::domain::score::View;
    let app = TestApp::spawn().await;
    recountable(&app, "rcs", 5, SHARDED()).await;
    let clean = recount(&app, "rcs", false).await;
    assert_eq!(
        (&clean["entries"], &clean["mismatches"], &clean["skipped"]),
        (&json!(150), &json!([]), &json!(0)),
        "{clean}"
    );
    let (_, before) = app.get("/api/v1/boards/rcs/members/m2?period=all").await;
    let state = stores(&app).await;
    let board = state
        .config
        .board(&BoardSlug::parse("rcs").unwrap())
        .unwrap();
    let key = board.keys.shards()[3].scores(View::Display, &Bucket::all());
    let mut raw = RawRedis::connect().await;
    let part: Option<f64> = raw.query(redis::cmd("ZSCORE").arg(&key).arg("m2")).await;
    let part = part.unwrap_or(0.0);
    let _: () = raw
        .query(redis::cmd("ZINCRBY").arg(&key).arg(2_000_000).arg("m2"))
        .await;
    let found = recount(&app, "rcs", false).await;
    assert_eq!(
        found["mismatches"],
        json!([{"period": "all", "bucket": "all", "view": "display", "member": "m2",
            "live": votes(part + 2e6), "recounted": votes(part), "repaired": false,
            "shard": 3}]),
        "{found}"
    );
    let repaired = recount(&app, "rcs", true).await;
    assert_eq!(repaired["repaired"], json!(1), "{repaired}");
    assert_eq!(recount(&app, "rcs", false).await["mismatches"], json!([]));
    let (_, after) = app.get("/api/v1/boards/rcs/members/m2?period=all").await;
    assert_eq!(after, before);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_recount_while_votes_go_on_reports_nothing_that_is_not_wrong() {
    for storage in [FULL(), SHARDED()] {
        recount_while_voting(storage).await;
    }
}

async fn recount_while_voting(storage: Value) {
    let app = TestApp::spawn().await;
    recountable(&app, "busy", 7, storage).await;
    let voting = {
        let app = app.clone();
        tokio::spawn(async move {
            for i in 0..300 {
                app.vote(
                    "busy",
                    json!({"member": format!("m{}", i % 3 + 1), "voter": format!("l{i}")}),
                )
                .await;
            }
        })
    };
    for _ in 0..3 {
        let found = recount(&app, "busy", true).await;
        assert_eq!(
            (found["mismatches"].clone(), found["repaired"].clone()),
            (json!([]), json!(0)),
            "{found}"
        );
    }
    voting.await.unwrap();
    let found = recount(&app, "busy", false).await;
    assert_eq!(found["entries"], 450, "{found}");
    assert_eq!(found["mismatches"], json!([]), "{found}");
}

/// One vote the test cast: (voter, member, count, at).
type Cast = (String, String, i64, chrono::DateTime<chrono::Utc>);

#[tokio::test(flavor = "multi_thread")]
async fn a_revocation_takes_a_voters_votes_out_of_every_bucket_view_carry_and_count() {
    revocation(FULL()).await;
}

/// On a sharded board the voter's votes all live in the voter's shard.
#[tokio::test(flavor = "multi_thread")]
async fn a_revocation_on_a_sharded_board_takes_the_votes_out_of_the_voters_shard() {
    revocation(SHARDED()).await;
}

async fn revocation(storage: Value) {
    use ovation::domain::period::{Bucket, Period};
    let seed: u64 = rand::random();
    println!("seed {seed}");
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let app = TestApp::spawn().await;
    app.board(
        json!({"slug": "rv", "title": "Revoke", "timezone": "Europe/Berlin",
        "multiplier": 1.5, "carry_over": 0.1, "max_count": 5, "membership": "open",
        "storage": storage}),
    )
    .await;
    let now = chrono::Utc::now();
    let mut cast: Vec<Cast> = Vec::new();
    for i in 0..120 {
        let voter = if i % 3 == 0 {
            "bot".to_owned()
        } else {
            format!("u{}", rng.random_range(0..12))
        };
        let member = format!("m{}", rng.random_range(1..=3));
        let count = rng.random_range(1..=5);
        let at = now - chrono::Duration::seconds(rng.random_range(0..4 * 86_400));
        let (status, body) = app
            .vote(
                "rv",
                json!({"member": member, "voter": voter, "count": count, "at": at.to_rfc3339()}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        cast.push((voter, member, count, at));
    }
    // The bot's votes of the last two days go; its older ones stay.
    let from = now - chrono::Duration::days(2);
    let (status, revoked) = app
        .post(
            "/api/v1/admin/boards/rv/revocations",
            json!({"voter": "bot", "from": from.to_rfc3339(), "to": null, "reason": "a bot farm"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{revoked}");
    let gone = |c: &Cast| c.0 == "bot" && c.3 >= from;
    let mut by_member = BTreeMap::new();
    for c in cast.iter().filter(|c| gone(c)) {
        *by_member.entry(c.1.clone()).or_insert(0) += c.2;
    }
    assert_eq!(
        (
            revoked["votes"].as_i64(),
            revoked["by_member"].clone(),
            revoked["reason"].clone()
        ),
        (
            Some(by_member.values().sum::<i64>()),
            json!(by_member),
            json!("a bot farm")
        ),
        "{revoked}"
    );
    let kept: Vec<&Cast> = cast.iter().filter(|c| !gone(c)).collect();

    // Every bucket of every period, both views with carry-over, against the votes kept.
    let tz: chrono_tz::Tz = "Europe/Berlin".parse().unwrap();
    for period in [
        Period::Hour,
        Period::Day,
        Period::Week,
        Period::Month,
        Period::All,
    ] {
        let mut model: BTreeMap<(String, String), (i64, i64)> = BTreeMap::new();
        for (_, member, count, at) in &kept {
            let bucket = Bucket::containing(period, tz, *at).unwrap();
            let e = model
                .entry((bucket.label.clone(), member.clone()))
                .or_default();
            e.0 += count;
            // Display in hundredths: 1.5 a vote, 0.15 carried.
            e.1 += count * 150;
            if let Some(next) = bucket.next(tz) {
                model.entry((next.label, member.clone())).or_default().1 += count * 15;
            }
        }
        for ((label, member), (real, display_hundredths)) in &model {
            if period == Period::Hour && rng.random_range(0..4) != 0 {
                continue;
            }
            for (view, expected) in [
                ("real", *real as f64),
                ("display", *display_hundredths as f64 / 100.0),
            ] {
                let (status, read) = app
                    .get(&format!(
                        "/api/v1/boards/rv/members/{member}?period={period}&at={label}&view={view}"
                    ))
                    .await;
                assert_eq!(status, StatusCode::OK, "{read}");
                let score = read["score"].as_f64().unwrap_or(0.0);
                assert!(
                    (score - expected).abs() < 1e-9,
                    "{period} {label} {member} {view}: {score} != {expected}"
                );
            }
        }
    }
    // Participants: the distinct voters left in each day; its votes, those kept.
    for day in 0..4 {
        let at = now - chrono::Duration::days(day);
        let bucket = Bucket::containing(Period::Day, tz, at).unwrap();
        let in_day: Vec<&&Cast> = kept
            .iter()
            .filter(|c| Bucket::containing(Period::Day, tz, c.3).unwrap() == bucket)
            .collect();
        let voters: HashSet<&str> = in_day.iter().map(|c| c.0.as_str()).collect();
        let (_, stats) = app
            .get(&format!(
                "/api/v1/boards/rv/stats?period=day&at={}",
                bucket.label
            ))
            .await;
        assert_eq!(
            (stats["participants"].as_u64(), stats["votes"].as_i64()),
            (
                Some(voters.len() as u64),
                Some(in_day.iter().map(|c| c.2).sum())
            ),
            "{} {stats}",
            bucket.label
        );
    }
    for m in ["m1", "m2", "m3"] {
        let voters: HashSet<&str> = kept
            .iter()
            .filter(|c| c.1 == m)
            .map(|c| c.0.as_str())
            .collect();
        let (_, read) = app
            .get(&format!("/api/v1/boards/rv/members/{m}?period=all"))
            .await;
        assert_eq!(
            read["participants"].as_u64(),
            Some(voters.len() as u64),
            "{m}: {read}"
        );
    }
    let recounted = recount(&app, "rv", false).await;
    assert_eq!(recounted["mismatches"], json!([]), "{recounted}");
    assert_eq!(
        recounted["entries"].as_u64(),
        Some(kept.len() as u64),
        "{recounted}"
    );

    // Once: a repeat strikes out nothing more; both are listed, newest first.
    let (status, again) = app
        .post(
            "/api/v1/admin/boards/rv/revocations",
            json!({"voter": "bot", "from": from.to_rfc3339(), "reason": "again"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{again}");
    assert_eq!(
        (again["votes"].clone(), again["by_member"].clone()),
        (json!(0), json!({}))
    );
    let (_, list) = app.get("/api/v1/admin/boards/rv/revocations").await;
    let reasons: Vec<&str> = list["revocations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["reason"].as_str().unwrap())
        .collect();
    assert_eq!(reasons, ["again", "a bot farm"]);
    let stored = ledger(&app, "rv", 1000).await;
    let struck = stored.iter().filter(|e| e.get("revoked").is_some()).count();
    assert_eq!(struck, cast.iter().filter(|c| gone(c)).count());
    for (bad, code) in [
        (json!({"voter": "", "reason": "x"}), "invalid_voter"),
        (json!({"voter": "bot", "reason": ""}), "invalid_field"),
        (
            json!({"voter": "bot", "reason": "\u{0}evil\u{202e}"}),
            "invalid_field",
        ),
        (
            json!({"voter": "bot", "reason": "two\nlines"}),
            "invalid_field",
        ),
        (
            json!({"voter": "bot", "reason": "c1\u{85}"}),
            "invalid_field",
        ),
        (
            json!({"voter": "bot", "reason": "isolate\u{2068}"}),
            "invalid_field",
        ),
        (
            json!({"voter": "bot", "reason": "x", "from": "yesterday"}),
            "invalid_timestamp",
        ),
        (
            json!({"voter": "bot", "reason": "x", "from": now.to_rfc3339(), "to": from.to_rfc3339()}),
            "invalid_window",
        ),
    ] {
        let (status, body) = app
            .post("/api/v1/admin/boards/rv/revocations", bad.clone())
            .await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (StatusCode::UNPROCESSABLE_ENTITY, Some(code)),
            "{bad}: {body}"
        );
    }
    // Nothing was stored by the refused ones.
    let (_, list) = app.get("/api/v1/admin/boards/rv/revocations").await;
    assert_eq!(
        list["revocations"].as_array().map(Vec::len),
        Some(2),
        "{list}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_late_grace_takes_votes_stamped_before_the_end_from_a_vote_key() {
    let app = TestApp::spawn().await;
    let now = chrono::Utc::now();
    let ended = now - chrono::Duration::minutes(10);
    let settings = |slug: &str, grace: i64| {
        json!({"slug": slug, "title": slug, "membership": "open", "late_grace_s": grace,
            "starts_at": (now - chrono::Duration::days(1)).to_rfc3339(), "ends_at": ended.to_rfc3339()})
    };
    let graced = app.board(settings("graced", 3600)).await;
    assert_eq!(graced["late_grace_s"], 3600);
    app.board(settings("strict", 0)).await;
    let (status, body) = app
        .post("/api/v1/admin/boards", settings("too-long", 3601))
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("invalid_field")),
        "{body}"
    );
    let key = app.key(&["vote"], None).await;
    let vote = |board: &'static str, at: Option<chrono::DateTime<chrono::Utc>>| {
        let mut body = json!({"member": "m1", "voter": "late"});
        if let Some(at) = at {
            body["at"] = json!(at.to_rfc3339());
        }
        let (app, key) = (app.clone(), key.clone());
        async move {
            let (status, body) = app
                .call(
                    reqwest::Method::POST,
                    &format!("/api/v1/boards/{board}/votes"),
                    Some(&key),
                    Some(&body),
                )
                .await;
            (status, body["error"]["code"].as_str().map(str::to_owned))
        }
    };
    let before_end = ended - chrono::Duration::minutes(5);
    assert_eq!(
        vote("graced", Some(before_end)).await,
        (StatusCode::OK, None)
    );
    assert_eq!(
        vote("graced", None).await,
        (StatusCode::CONFLICT, Some("campaign_ended".to_owned())),
        "a vote stamped now is after the end"
    );
    assert_eq!(
        vote("graced", Some(ended + chrono::Duration::minutes(1))).await,
        (StatusCode::CONFLICT, Some("campaign_ended".to_owned()))
    );
    assert_eq!(
        vote("graced", Some(now - chrono::Duration::hours(2))).await,
        (StatusCode::FORBIDDEN, Some("forbidden".to_owned())),
        "older than the grace: only a backfill key may"
    );
    assert_eq!(
        vote("strict", Some(before_end)).await,
        (StatusCode::FORBIDDEN, Some("forbidden".to_owned())),
        "no grace: as before"
    );
    let stored = ledger(&app, "graced", 10).await;
    assert_eq!(stored.len(), 1);
    let at: chrono::DateTime<chrono::Utc> = stored[0]["at"].as_str().unwrap().parse().unwrap();
    let recorded: chrono::DateTime<chrono::Utc> =
        stored[0]["recorded_at"].as_str().unwrap().parse().unwrap();
    assert_eq!(at.timestamp_millis(), before_end.timestamp_millis());
    assert!(recorded > ended, "recorded when it arrived, after the end");
}

/// Every read the rebuild must bring back: each touched bucket's ranking in both views,
/// each day's participants, each member's all-time participants, the votes per hour.
async fn reads(app: &TestApp, board: &str, labels: &[(String, String)]) -> Vec<Value> {
    let mut out = Vec::new();
    for (period, label) in labels {
        for view in ["real", "display"] {
            let (_, top) = app
                .get(&format!(
                    "/api/v1/boards/{board}/top?period={period}&at={label}&view={view}&limit=100"
                ))
                .await;
            out.push(json!([period, label, view, top["entries"]]));
        }
        if period == "day" {
            let (_, stats) = app
                .get(&format!(
                    "/api/v1/boards/{board}/stats?period=day&at={label}"
                ))
                .await;
            out.push(json!([
                label,
                stats["participants"],
                stats["votes"],
                crate::harness::hourly_total_since_start(&stats)
            ]));
        }
    }
    for m in ["m1", "m2", "m3"] {
        let (_, read) = app
            .get(&format!("/api/v1/boards/{board}/members/{m}?period=all"))
            .await;
        out.push(json!([m, read["participants"]]));
    }
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn a_board_redis_lost_is_rebuilt_from_its_ledger_before_the_instance_is_ready() {
    lost_and_rebuilt(FULL()).await;
}

/// Each shard is found lost and rebuilt from the entries of its voters.
#[tokio::test(flavor = "multi_thread")]
async fn a_sharded_board_redis_lost_is_rebuilt_shard_by_shard() {
    lost_and_rebuilt(SHARDED()).await;
}

async fn lost_and_rebuilt(storage: Value) {
    use crate::durability::{app_on_own_redis, lose_redis_and_wait_rebuilt};
    use ovation::domain::period::{Bucket, Period};
    let (server, app) = app_on_own_redis().await;
    recountable(&app, "lost", 11, storage).await;
    // A revoked vote stays out after the rebuild.
    let (status, body) = app
        .post(
            "/api/v1/admin/boards/lost/revocations",
            json!({"voter": "u3", "reason": "test"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    // Adjustments come back in their buckets alone.
    let now = chrono::Utc::now().to_rfc3339();
    for (member, adjustment) in [
        (
            "m2",
            json!({"period": "day", "at": now, "view": "real", "delta": 3}),
        ),
        (
            "m1",
            json!({"period": "all", "view": "display", "delta": -1}),
        ),
        ("m3", json!({"period": "week", "at": now, "delta": 4})),
    ] {
        let mut adjustment = adjustment;
        adjustment["reason"] = json!("test");
        let (status, body) = app
            .post(
                &format!("/api/v1/admin/boards/lost/members/{member}/adjustments"),
                adjustment,
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }
    let stored = ledger(&app, "lost", 1000).await;
    let tz: chrono_tz::Tz = "Asia/Shanghai".parse().unwrap();
    let mut labels = std::collections::BTreeSet::new();
    for e in &stored {
        let at: chrono::DateTime<chrono::Utc> = e["at"].as_str().unwrap().parse().unwrap();
        for period in [
            Period::Hour,
            Period::Day,
            Period::Week,
            Period::Month,
            Period::All,
        ] {
            let b = Bucket::containing(period, tz, at).unwrap();
            labels.insert((period.to_string(), b.label.clone()));
            if let Some(next) = b.next(tz) {
                labels.insert((period.to_string(), next.label));
            }
        }
    }
    let labels: Vec<(String, String)> = labels.into_iter().collect();
    let before = reads(&app, "lost", &labels).await;

    lose_redis_and_wait_rebuilt(&app, &server).await;
    let after = reads(&app, "lost", &labels).await;
    assert_eq!(after, before, "every read is back");
    // A vote of Redis's new life counts once, beside the rebuilt ones.
    app.vote("lost", json!({"member": "m2", "voter": "new"}))
        .await;
    let stored_after = ledger(&app, "lost", 1000).await;
    assert_eq!(stored_after.len(), stored.len() + 1);
    assert_gapless(&stored_after);
    let found = recount(&app, "lost", false).await;
    assert_eq!(found["mismatches"], json!([]), "{found}");
}

/// A family with a ledger (`room`, open membership, `ttl_s` 600).
async fn ledger_family(app: &TestApp) {
    let family = app
        .board(
            json!({"slug": "room", "title": "Rooms", "membership": "open",
            "instances": {"ttl_s": 600}, "ledger": true}),
        )
        .await;
    assert_eq!(family["ledger"], true, "{family}");
}

#[tokio::test(flavor = "multi_thread")]
async fn each_instance_of_a_family_keeps_its_own_gapless_ledger_of_its_counted_votes() {
    let seed: u64 = rand::random();
    println!("seed {seed}");
    let app = TestApp::spawn().await;
    ledger_family(&app).await;
    let (status, body) = app
        .post(
            "/api/v1/admin/boards/room/rules",
            json!({"name": "three a day", "dimensions": ["voter"], "window": "day", "limit": 3}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let rooms = ["r0", "r1", "r2", "r3"];
    let clients = (0..16u64).map(|c| {
        let app = app.clone();
        tokio::spawn(async move {
            let mut rng = rand::rngs::StdRng::seed_from_u64(seed ^ c);
            // (room, body) of each vote counted.
            let mut counted: Vec<(String, Value)> = Vec::new();
            let mut sent: Vec<(String, Value)> = Vec::new();
            for i in 0..10 {
                if rng.random_bool(0.25) {
                    // One voter's batch over several rooms: one call, one answer each.
                    let voter = format!("u{}", rng.random_range(0..12));
                    let items: Vec<(String, Value)> = (0..3)
                        .map(|k| {
                            let room = rooms[rng.random_range(0..rooms.len())].to_owned();
                            let body = json!({
                                "board": format!("room:{room}"),
                                "member": format!("m{}", rng.random_range(1..=3)),
                                "idempotency_key": format!("c{c}-{i}-{k}"),
                            });
                            (room, body)
                        })
                        .collect();
                    let votes: Vec<Value> = items.iter().map(|(_, b)| b.clone()).collect();
                    let (status, answer) = app
                        .post("/api/v1/votes", json!({"voter": voter, "votes": votes}))
                        .await;
                    assert_eq!(status, StatusCode::OK, "{answer}");
                    for ((room, body), result) in
                        items.into_iter().zip(answer["results"].as_array().unwrap())
                    {
                        match result["error"]["code"].as_str() {
                            None => {
                                let mut body = body;
                                body["voter"] = json!(voter);
                                counted.push((room, body))
                            }
                            Some(code) => assert_eq!(code, "rate_limited", "{result}"),
                        }
                    }
                    continue;
                }
                let (room, body) = if !sent.is_empty() && rng.random_bool(0.2) {
                    sent[rng.random_range(0..sent.len())].clone()
                } else {
                    let room = rooms[rng.random_range(0..rooms.len())].to_owned();
                    let body = json!({
                        "member": format!("m{}", rng.random_range(1..=3)),
                        "voter": format!("u{}", rng.random_range(0..12)),
                        "count": rng.random_range(1..=2),
                        "idempotency_key": format!("c{c}-{i}"),
                    });
                    sent.push((room.clone(), body.clone()));
                    (room, body)
                };
                let (status, answer) = app.vote(&format!("room:{room}"), body.clone()).await;
                if counts(status, &answer) {
                    counted.push((room, body));
                }
            }
            counted
        })
    });
    let counted = gather(clients).await;
    for room in rooms {
        let board = format!("room:{room}");
        let entries = ledger(&app, &board, 5).await;
        assert_gapless(&entries);
        let votes = counted.iter().filter(|(r, _)| r == room).map(|(_, v)| v);
        assert_eq!(
            tally(&entries),
            tally(votes),
            "{board}: the ledger is its counted votes"
        );
        assert_scores_are_sums(&app, &board, &entries, &["m1", "m2", "m3"]).await;
    }
    // An instance never written has an empty ledger.
    let (status, page) = app.get("/api/v1/admin/boards/room:never/ledger").await;
    assert_eq!(status, StatusCode::OK, "{page}");
    assert_eq!(
        page,
        json!({"entries": [], "next_after": null, "pending": 0})
    );
    // A family's ledgers are its instances': it is not recounted nor revoked from whole.
    for (status, body) in [
        app.post("/api/v1/admin/boards/room/recount", json!({}))
            .await,
        app.post(
            "/api/v1/admin/boards/room/revocations",
            json!({"voter": "u1", "reason": "bots"}),
        )
        .await,
        app.get("/api/v1/admin/boards/room/revocations").await,
    ] {
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (StatusCode::UNPROCESSABLE_ENTITY, Some("not_for_family")),
            "{body}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_drain_finds_instances_by_their_note_and_notes_those_a_write_could_not() {
    // The app's own drain runs once at start, then not for an hour: the test drains.
    let app = TestApp::spawn_with(Options {
        ledger_drain: Duration::from_secs(3600),
        ..Options::default()
    })
    .await;
    ledger_family(&app).await;
    for (room, votes) in [("a", 3), ("b", 2), ("c", 1)] {
        for i in 0..votes {
            let (status, body) = app
                .vote(
                    &format!("room:{room}"),
                    json!({"member": "m1", "voter": format!("v{i}")}),
                )
                .await;
            assert_eq!(status, StatusCode::OK, "{body}");
        }
    }
    let state = stores(&app).await;
    let family = state
        .config
        .board(&BoardSlug::parse("room").unwrap())
        .unwrap();
    let noted = |dirty: Vec<(String, i64)>| -> Vec<String> {
        let mut names: Vec<String> = dirty.into_iter().map(|(i, _)| i).collect();
        names.sort();
        names
    };
    let dirty = state.redis.ledger_dirty(&family.keys, 10).await.unwrap();
    assert_eq!(noted(dirty), ["a", "b", "c"]);
    // b's note did not reach Redis, and the instance that wrote it knows; c's is lost
    // with nobody knowing (its writer went down too).
    let mut raw = RawRedis::connect().await;
    let _: () = raw
        .query(
            redis::cmd("ZREM")
                .arg(family.keys.ledger_dirty())
                .arg("b")
                .arg("c"),
        )
        .await;
    state.backlogs.unnoted(
        family.board.id,
        &["b"],
        chrono::Utc::now().timestamp_millis(),
    );
    ovation::engine::ledger::drain_all(&state, "drainer").await;
    assert_eq!(
        noted(state.redis.ledger_dirty(&family.keys, 10).await.unwrap()),
        Vec::<String>::new()
    );
    let a = ledger(&app, "room:a", 10).await;
    assert_gapless(&a);
    assert_eq!(a.len(), 3);
    let b = ledger(&app, "room:b", 10).await;
    assert_gapless(&b);
    let voters: Vec<&str> = b.iter().map(|e| e["voter"].as_str().unwrap()).collect();
    assert_eq!(voters, ["v0", "v1"]);
    // The last entry trimmed is remembered as long as the instance lives.
    let pttl: i64 = raw
        .query(redis::cmd("PTTL").arg(family.keys.instance("a", 600_000).ledger_trimmed()))
        .await;
    assert!(0 < pttl && pttl <= 600_000, "{pttl}");
    // c's entry waits in Redis, counted as pending, until c's next write notes it.
    let (_, page) = app.get("/api/v1/admin/boards/room:c/ledger").await;
    assert_eq!(
        (&page["entries"], &page["pending"]),
        (&json!([]), &json!(1)),
        "{page}"
    );
    app.vote("room:c", json!({"member": "m1", "voter": "v9"}))
        .await;
    ovation::engine::ledger::drain_all(&state, "drainer").await;
    let c = ledger(&app, "room:c", 10).await;
    assert_gapless(&c);
    let voters: Vec<&str> = c.iter().map(|e| e["voter"].as_str().unwrap()).collect();
    assert_eq!(voters, ["v0", "v9"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn readyz_counts_every_room_whose_ledger_waits_not_one_pass_of_them() {
    let app = TestApp::spawn().await;
    app.board(
        json!({"slug": "rooms", "title": "Rooms", "membership": "open",
        "ledger": true, "instances": {"ttl_s": 3600}}),
    )
    .await;
    // The first board of the test's own database.
    let id = 1;
    // Another drain holds the family's lease: this instance's passes only look.
    let mut redis = RawRedis::connect().await;
    let _: () = redis
        .query(
            redis::cmd("SET")
                .arg(format!("{}:{{b:{id}}}:lg:lease", app.prefix))
                .arg("another instance")
                .arg("PX")
                .arg(120_000),
        )
        .await;
    // 1,200 rooms: more than one pass of the drain looks at (1,000).
    let rooms = 1200;
    for batch in 0..rooms / 100 {
        let votes: Vec<Value> = (0..100)
            .map(|i| json!({"board": format!("rooms:r{}", batch * 100 + i), "member": "m1"}))
            .collect();
        let (status, body) = app
            .post("/api/v1/votes", json!({"voter": "v", "votes": votes}))
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert!(
            body["results"]
                .as_array()
                .unwrap()
                .iter()
                .all(|r| r.get("error").is_none()),
            "{body}"
        );
    }
    let started = std::time::Instant::now();
    loop {
        let (_, ready) = app.get("/readyz").await;
        if ready["ledger"]["pending"] == rooms {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "pending never counted every room: {ready}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let metrics = app.metrics().await;
    assert!(
        metrics.contains(&format!(
            "ovation_ledger_pending{{board=\"rooms\"}} {rooms}"
        )),
        "{metrics}"
    );
}

/// `n` ledger entries of one voter each, ids 1 to `n`, stored in SQL as the drain would.
async fn stored_entries(state: &AppState, of: LedgerOf<'_>, n: i64) {
    let mut from = None;
    for start in (1..=n).step_by(10_000) {
        let batch: Vec<Entry> = (start..(start + 10_000).min(n + 1))
            .map(|id| Entry {
                id,
                at: 1_764_000_000_000 + id,
                recorded: 1_764_000_000_000 + id,
                member: format!("member-{}", id % 50),
                voter: Some(format!("voter-{id:012}-of-a-long-running-campaign")),
                channel: Some("app".into()),
                terminal: Some("ios".into()),
                count: 1,
                op: None,
                value: None,
                display: 1_000_000,
                carry: 0,
                adjusts: None,
                ip: None,
                held: None,
                releases: None,
            })
            .collect();
        let last = batch.last().unwrap().id;
        sql::append(&state.db, of, 0, from, last, &texts(&batch))
            .await
            .unwrap();
        from = Some(last);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn slow_exports_are_bounded_and_never_starve_readyz_or_admin_writes() {
    let app = TestApp::spawn_with(Options {
        ledger_drain: Duration::from_secs(3600),
        exports_max: 2,
        stall_timeout: Duration::from_secs(2),
        ..Options::default()
    })
    .await;
    app.board(json!({"slug": "big", "title": "Big", "membership": "open"}))
        .await;
    let state = stores(&app).await;
    let (_, of) = board_ledger(&state, "big");
    let total = 100_000;
    stored_entries(&state, of, total).await;
    let export = || {
        app.client
            .get(format!("{}/api/v1/admin/boards/big/ledger", app.base))
            .bearer_auth(MASTER_KEY)
            .header("Accept", "application/x-ndjson")
            .send()
    };
    // Ten readers that read nothing after the status line.
    let answers = futures_util::future::join_all((0..10).map(|_| export())).await;
    let mut stalled = Vec::new();
    let mut refused = 0;
    for answer in answers {
        let resp = answer.unwrap();
        match resp.status() {
            StatusCode::OK => stalled.push(resp),
            StatusCode::SERVICE_UNAVAILABLE => {
                assert_eq!(resp.headers()["retry-after"], "5");
                let body: Value = resp.json().await.unwrap();
                assert_eq!(body["error"]["code"], "too_many_exports", "{body}");
                refused += 1;
            }
            other => panic!("an export answered {other}"),
        }
    }
    assert_eq!((stalled.len(), refused), (2, 8));
    // Meanwhile the instance is ready, takes admin writes and serves ledger pages.
    let (status, ready) = app.get("/readyz").await;
    assert_eq!(
        (status, &ready["sql"]),
        (StatusCode::OK, &json!("ok")),
        "{ready}"
    );
    let (status, body) = app
        .post(
            "/api/v1/admin/boards",
            json!({"slug": "during", "title": "During the exports"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (status, page) = app.get("/api/v1/admin/boards/big/ledger?limit=2").await;
    assert_eq!(status, StatusCode::OK, "{page}");
    assert_eq!(page["next_after"], 2, "{page}");
    // The stalled readers are left after the stall timeout, and their places freed: an
    // export that reads gets every entry.
    let started = std::time::Instant::now();
    let whole = loop {
        let resp = export().await.unwrap();
        if resp.status() == StatusCode::OK {
            break resp.bytes().await.unwrap();
        }
        assert_eq!(resp.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the stalled exports kept their places"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let lines: Vec<Value> = whole
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect();
    assert_eq!(lines.len() as i64, total);
    assert_eq!(lines.last().unwrap()["seq"], total);
    // What a stalled reader gets when it reads at last is cut short, never a body that
    // looks whole.
    for resp in stalled {
        assert!(
            resp.bytes().await.is_err(),
            "a stalled export ended as if whole"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_expired_rooms_ledger_leaves_sql_after_its_familys_ledger_days() {
    let app = TestApp::spawn_with(Options {
        archive_check: Duration::from_millis(200),
        ..Options::default()
    })
    .await;
    app.board(
        json!({"slug": "rooms", "title": "Rooms", "membership": "open",
        "ledger": true, "instances": {"ttl_s": 60, "ledger_days": 1}}),
    )
    .await;
    for room in ["old", "new"] {
        for voter in ["a", "b"] {
            app.vote(
                &format!("rooms:{room}"),
                json!({"member": "m1", "voter": voter}),
            )
            .await;
        }
    }
    for room in ["old", "new"] {
        assert_eq!(ledger(&app, &format!("rooms:{room}"), 10).await.len(), 2);
    }
    // room "old" was last drained a TTL and a day ago (and a minute more).
    let state = stores(&app).await;
    let long_ago = chrono::Utc::now().timestamp_millis() - (60 + 86_400 + 60) * 1000;
    use sea_orm::ConnectionTrait;
    state
        .db
        .execute_unprepared(&format!(
            "UPDATE ledger_cursors SET updated_ms = {long_ago} WHERE instance = 'old'"
        ))
        .await
        .unwrap();
    let started = std::time::Instant::now();
    loop {
        let (status, page) = app
            .get("/api/v1/admin/boards/rooms:old/ledger?limit=10")
            .await;
        assert_eq!(status, StatusCode::OK, "{page}");
        if page["entries"] == json!([]) {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "the expired room's ledger stayed: {page}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let cursors: Vec<(String,)> = {
        let rows = state
            .db
            .query_all_raw(sea_orm::Statement::from_string(
                state.db.get_database_backend(),
                "SELECT instance FROM ledger_cursors ORDER BY instance",
            ))
            .await
            .unwrap();
        rows.iter()
            .map(|r| (r.try_get_by_index::<String>(0).unwrap(),))
            .collect()
    };
    assert_eq!(cursors, [("new".to_owned(),)]);
    assert_eq!(ledger(&app, "rooms:new", 10).await.len(), 2);
}

/// A step of the voter index's model test: entries appended to the ledger (each one's
/// voter, `None` for an entry naming none), or the index taking up to `max` `seq`s when
/// it is at least `min` behind.
#[derive(Debug, Clone)]
enum IndexStep {
    Append(Vec<Option<u8>>),
    Index { min: i64, max: i64 },
}

fn index_steps() -> impl proptest::strategy::Strategy<Value = Vec<IndexStep>> {
    use proptest::prelude::*;
    prop::collection::vec(
        prop_oneof![
            prop::collection::vec(prop::option::of(0u8..4), 1..30).prop_map(IndexStep::Append),
            (1i64..40, 1i64..40).prop_map(|(min, max)| IndexStep::Index { min, max }),
        ],
        1..20,
    )
}

/// An entry numbered `id` of `voter`'s (`None`: naming none).
fn entry_of(id: i64, voter: Option<u8>) -> Entry {
    Entry {
        id,
        at: 1_764_000_000_000 + id,
        recorded: 1_764_000_000_000 + id,
        member: format!("m{}", id % 3),
        voter: voter.map(|v| format!("v{v}")),
        channel: None,
        terminal: None,
        count: 1 + id % 2,
        op: None,
        value: None,
        display: 1_000_000,
        carry: 0,
        adjusts: None,
        ip: None,
        held: None,
        releases: None,
    }
}

/// `entries` as the drain hands them to SQL.
fn texts(entries: &[Entry]) -> Vec<sql::NewEntry<'_>> {
    entries.iter().map(sql::NewEntry::of).collect()
}

/// Stores `rows` (entries, each with the revocation that struck it out) in `of`'s ledger
/// as 0.2 and earlier stored them: `ledger_entries`, one column per field, numbered
/// 1, 2, 3, ….
async fn insert_columns(
    db: &sea_orm::DatabaseConnection,
    of: LedgerOf<'_>,
    rows: &[(Entry, Option<i64>)],
) {
    use sea_orm::ConnectionTrait;
    use sea_orm::sea_query::{Alias, Query};
    let mut insert = Query::insert();
    insert.into_table(Alias::new("ledger_entries")).columns(
        [
            "board_id",
            "instance",
            "seq",
            "entry_id",
            "at_ms",
            "recorded_ms",
            "member",
            "voter",
            "channel",
            "terminal",
            "count",
            "op",
            "value",
            "display",
            "carry",
            "adjusts",
            "revoked",
        ]
        .map(Alias::new),
    );
    for ((e, revoked), seq) in rows.iter().zip(1i64..) {
        insert.values_panic([
            of.board_id.into(),
            of.instance.into(),
            seq.into(),
            e.id.into(),
            e.at.into(),
            e.recorded.into(),
            e.member.clone().into(),
            e.voter.clone().into(),
            e.channel.clone().into(),
            e.terminal.clone().into(),
            e.count.into(),
            e.op.map(|o| o.as_str().to_owned()).into(),
            e.value.into(),
            e.display.into(),
            e.carry.into(),
            e.adjusts.clone().into(),
            (*revoked).into(),
        ]);
    }
    db.execute(&insert).await.unwrap();
}

/// A fresh database with every migration applied, or those up to `upto` (a count).
async fn migrated(
    upto: Option<u32>,
) -> (crate::harness::TestDatabase, sea_orm::DatabaseConnection) {
    use migrations::MigratorTrait;
    let database = crate::harness::TestDatabase::create().await;
    let db = ovation::store::sql::connect(&database.url, 4)
        .await
        .unwrap();
    migrations::Migrator::up(&db, upto).await.unwrap();
    (database, db)
}

/// The voter index against a model: whatever the entries and however far the index has
/// been taken, a voter's `seq`s are exactly the entries naming the voter, the index is
/// behind by exactly the `seq`s it has not taken, and a revocation and a voter's votes
/// read the same entries.
async fn voter_index_model(steps: Vec<IndexStep>) {
    use ovation::store::sql::ledger_voters;
    let (_database, db) = migrated(None).await;
    let of = LedgerOf::board(7);
    let (mut voters, mut mark, mut cursor): (Vec<Option<u8>>, i64, Option<i64>) =
        (Vec::new(), 0, None);
    for step in steps {
        match step {
            IndexStep::Append(new) => {
                let first = voters.len() as i64 + 1;
                let entries: Vec<Entry> = new
                    .iter()
                    .enumerate()
                    .map(|(i, v)| entry_of(first + i as i64, *v))
                    .collect();
                let last = entries.last().unwrap().id;
                sql::append(&db, of, 0, cursor, last, &texts(&entries))
                    .await
                    .unwrap();
                cursor = Some(last);
                voters.extend(new);
            }
            IndexStep::Index { min, max } => {
                let took = ledger_voters::index_next(&db, of, min, max).await.unwrap();
                let behind = voters.len() as i64 - mark;
                let expected = if behind >= min { behind.min(max) } else { 0 };
                assert_eq!(took, expected);
                mark += took;
            }
        }
        assert_eq!(
            ledger_voters::behind(&db, of).await.unwrap(),
            voters.len() as i64 - mark
        );
        for v in 0..4u8 {
            let expected: Vec<i64> = (1..=voters.len() as i64)
                .filter(|seq| voters[*seq as usize - 1] == Some(v))
                .collect();
            assert_eq!(
                ledger_voters::seqs_of(&db, of, &format!("v{v}"))
                    .await
                    .unwrap(),
                expected,
                "voter v{v}, index at {mark} of {}",
                voters.len()
            );
        }
    }
    let of_v1: Vec<i64> = (1..=voters.len() as i64)
        .filter(|seq| voters[*seq as usize - 1] == Some(1))
        .collect();
    let counted: i64 = of_v1.iter().map(|seq| 1 + seq % 2).sum();
    let votes = sql::voter_votes(&db, of, "v1").await.unwrap();
    assert_eq!(votes.iter().map(|(_, c, _)| c).sum::<i64>(), counted);
    let request = ovation::domain::ledger::RevocationRequest::new(
        ovation::domain::ids::VoterId::parse("v1").unwrap(),
        None,
        None,
        "model".into(),
    )
    .unwrap();
    let (revocation, struck) = sql::revoke(&db, of, &request, "test").await.unwrap();
    assert_eq!(struck.iter().map(|e| e.id).collect::<Vec<_>>(), of_v1);
    assert_eq!(revocation.votes, counted);
    let votes = sql::voter_votes(&db, of, "v1").await.unwrap();
    assert_eq!(votes.iter().map(|(_, _, s)| s).sum::<i64>(), counted);
    assert_eq!(votes.iter().map(|(_, c, _)| c).sum::<i64>(), 0);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 12, ..Default::default() })]

    #[test]
    fn the_voter_index_finds_exactly_each_voters_entries_however_far_it_has_been_taken(
        steps in index_steps()
    ) {
        tokio::runtime::Runtime::new().unwrap().block_on(voter_index_model(steps));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn upgrading_indexes_the_voters_of_the_entries_already_stored() {
    use migrations::MigratorTrait;
    use ovation::store::sql::ledger_voters;
    // The migrations before the voter index's own.
    let (_database, db) = migrated(Some(24)).await;
    let of = LedgerOf::board(3);
    let entries: Vec<Entry> = (1..=40)
        .map(|id| entry_of(id, Some((id % 3) as u8)))
        .collect();
    let rows: Vec<(Entry, Option<i64>)> = entries.into_iter().map(|e| (e, None)).collect();
    insert_columns(&db, of, &rows).await;
    migrations::Migrator::up(&db, None).await.unwrap();
    assert_eq!(ledger_voters::behind(&db, of).await.unwrap(), 0);
    // The mark reaches the last entry: each voter's entries are found in the index.
    for v in 0..3 {
        let expected: Vec<i64> = (1..=40).filter(|id| id % 3 == v).collect();
        assert_eq!(
            ledger_voters::seqs_of(&db, of, &format!("v{v}"))
                .await
                .unwrap(),
            expected
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn upgrading_keeps_every_entry_stored_in_columns_whole_with_its_revocation() {
    use migrations::MigratorTrait;
    use ovation::store::sql::ledger_voters;
    // The migrations before the ledger's rows hold their entries whole.
    let (_database, db) = migrated(Some(25)).await;
    let of = LedgerOf {
        board_id: 4,
        instance: "room-7",
    };
    let vote = Entry {
        id: i64::MIN + 1,
        at: 1_764_000_000_123,
        recorded: 1_764_000_000_456,
        member: "m\"1\\é 歌".into(),
        voter: Some("v-1".into()),
        channel: Some("app".into()),
        terminal: Some("ios".into()),
        count: 3,
        op: None,
        value: None,
        display: 3_300_000,
        carry: 330_000,
        adjusts: None,
        ip: None,
        held: None,
        releases: None,
    };
    let rows = vec![
        (vote.clone(), None),
        (
            Entry {
                id: i64::MAX,
                voter: None,
                channel: None,
                terminal: None,
                count: 1,
                op: Some(Op::Set),
                value: Some(-42),
                display: 0,
                carry: 0,
                ..vote.clone()
            },
            None,
        ),
        (
            Entry {
                id: 9,
                ..vote.clone()
            },
            Some(5),
        ),
        (
            Entry {
                id: -7,
                count: -5,
                display: -5_000_000,
                carry: 0,
                adjusts: Some("day:2026-11-27".into()),
                ip: None,
                held: None,
                releases: None,
                ..vote
            },
            None,
        ),
    ];
    insert_columns(&db, of, &rows).await;
    migrations::Migrator::up(&db, None).await.unwrap();
    let expected: Vec<Recorded> = rows
        .iter()
        .zip(1..)
        .map(|((entry, revoked), seq)| Recorded {
            seq,
            entry: entry.clone(),
            revoked: *revoked,
        })
        .collect();
    assert_eq!(sql::page(&db, of, 0, 10).await.unwrap(), expected);
    assert_eq!(sql::counted(&db, of).await.unwrap(), 3);
    assert_eq!(sql::last_seq(&db, of).await.unwrap(), 4);
    assert_eq!(sql::seq_of(&db, of, i64::MAX).await.unwrap(), Some(2));
    assert_eq!(
        ledger_voters::seqs_of(&db, of, "v-1").await.unwrap(),
        vec![1, 3, 4]
    );
    assert_eq!(
        sql::voter_votes(&db, of, "v-1").await.unwrap(),
        vec![("m\"1\\é 歌".to_owned(), -2, 3)]
    );
}

/// Waits until the voter index of `of` reaches its last entry; panics after 15 s.
async fn indexed(state: &AppState, of: LedgerOf<'_>) {
    for _ in 0..300 {
        if ovation::store::sql::ledger_voters::behind(&state.db, of)
            .await
            .unwrap()
            == 0
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the voter index of {of:?} did not reach its last entry in 15 s");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_voter_index_catches_up_once_a_board_is_quiet_and_after_each_rooms_drain() {
    use ovation::store::sql::ledger_voters;
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "quiet", "title": "quiet", "membership": "open"}))
        .await;
    ledger_family(&app).await;
    for i in 0..6 {
        let voter = format!("q{}", i % 2);
        app.vote("quiet", json!({"member": "m1", "voter": voter}))
            .await;
        app.vote("room:r1", json!({"member": "m1", "voter": voter}))
            .await;
    }
    drained(&app, "quiet").await;
    drained(&app, "room:r1").await;
    let state = stores(&app).await;
    let (_, of) = board_ledger(&state, "quiet");
    indexed(&state, of).await;
    let family = board_ledger(&state, "room").1;
    let room = LedgerOf {
        board_id: family.board_id,
        instance: "r1",
    };
    indexed(&state, room).await;
    for of in [of, room] {
        assert_eq!(
            ledger_voters::seqs_of(&state.db, of, "q1").await.unwrap(),
            vec![2, 4, 6]
        );
    }
}

/// A drain pass reads a board's ledger a batch at a time up to the end it finds, and
/// stops at the first short batch rather than reading again: a busy board is taken in
/// full batches, one SQL transaction each, not in one small transaction after another.
#[tokio::test(flavor = "multi_thread")]
async fn a_drain_pass_takes_full_batches_and_stops_at_the_first_short_one() {
    use crate::group_commit::command_calls;
    use crate::harness::{RedisServer, reset_stats};
    let server = RedisServer::start();
    let app = TestApp::spawn_with(Options {
        redis: ovation::store::redis::RedisTarget::Single(server.url()),
        ledger_drain: Duration::from_secs(3600),
        ..Options::default()
    })
    .await;
    app.board(json!({"slug": "full", "title": "full", "membership": "open"}))
        .await;
    let votes = ovation::engine::ledger::BATCH + 5;
    for first in (0..votes).step_by(100) {
        let batch: Vec<Value> = (first..votes.min(first + 100))
            .map(|i| json!({"board": "full", "member": format!("m{}", i % 7)}))
            .collect();
        let (status, body) = app.post("/api/v1/votes", json!({"votes": batch})).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert!(
            body["results"]
                .as_array()
                .unwrap()
                .iter()
                .all(|r| r["ok"] == true),
            "{body}"
        );
    }
    let state = stores(&app).await;
    let (_, of) = board_ledger(&state, "full");
    let mut conn = reset_stats(&server).await;
    ovation::engine::ledger::drain_all(&state, "drainer").await;
    assert_eq!(sql::last_seq(&state.db, of).await.unwrap(), votes as i64);
    // What waits, looked at before and after; then the full batch, `HEAD_CALL` entries
    // a call, and the short one in one call.
    let full_batch = ovation::engine::ledger::BATCH.div_ceil(HEAD_CALL) as u64;
    assert_eq!(command_calls(&mut conn).await("lrange"), 2 + full_batch + 1);
}

/// A summed call whose scores fail to write (the all-time rankings key holds a string)
/// answers an error for each of its votes and leaves none of them in the ledger: a retry
/// once the key is repaired counts each vote once, in the rankings and in the ledger.
#[tokio::test(flavor = "multi_thread")]
async fn votes_whose_sums_fail_to_write_leave_no_entry_in_the_ledger() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "torn", "title": "Torn", "membership": "open"}))
        .await;
    // A vote alone writes the board's headroom mark, so the summed votes below read no
    // ranking before they write their sums.
    let (status, body) = app.vote("torn", json!({"member": "m0"})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // The first board of a fresh database has id 1.
    let all_time = format!("{}:{{b:1}}:z:r:all:all", app.prefix);
    let kept = format!("{all_time}:kept");
    let mut raw = RawRedis::connect().await;
    raw.query::<()>(redis::cmd("RENAME").arg(&all_time).arg(&kept))
        .await;
    raw.query::<()>(redis::cmd("SET").arg(&all_time).arg("not a zset"))
        .await;
    let batch = json!({"voter": "v1", "votes": [
        {"board": "torn", "member": "m1", "idempotency_key": "a"},
        {"board": "torn", "member": "m1", "idempotency_key": "b"},
        {"board": "torn", "member": "m2", "idempotency_key": "c"},
    ]});
    let (status, body) = app.post("/api/v1/votes", batch.clone()).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        error_codes(&body),
        vec![json!("internal_error"); 3],
        "{body}"
    );

    raw.query::<()>(redis::cmd("RENAME").arg(&kept).arg(&all_time))
        .await;
    let (status, body) = app.post("/api/v1/votes", batch).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(error_codes(&body), vec![Value::Null; 3], "{body}");
    let all_time_real = |m: &str| {
        let path = format!("/api/v1/boards/torn/members/{m}?period=all&view=real");
        let app = &app;
        async move { num(&app.get(&path).await.1["score"]) }
    };
    assert_eq!(
        (all_time_real("m1").await, all_time_real("m2").await),
        (2.0, 1.0)
    );
    let entries = ledger(&app, "torn", 100).await;
    assert_gapless(&entries);
    let members: Vec<&str> = entries
        .iter()
        .map(|e| e["member"].as_str().unwrap())
        .collect();
    assert_eq!(members, ["m0", "m1", "m1", "m2"]);
}
