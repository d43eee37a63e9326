//! Trending periods against the formula, on a real redis-server: random votes (and a
//! scores board's `incr` and `decr`) at random times, backfilled by up to 200 hours, with
//! idle gaps long enough to make writes rescale the stored scores; every read (both views,
//! every member's standing) equals Σ increment × 2^((t − now)/half-life) within a
//! relative 1e-9, and ranks by it. A forced rescale leaves every read unchanged. Then the
//! same through the API.

use chrono::{DateTime, Utc};
use proptest::prelude::*;
use redis::AsyncCommands;
use reqwest::StatusCode;
use serde_json::{Value, json};

use ovation::domain::period::{Bucket, HalfLife, parse_instant};
use ovation::domain::score::{Increment, View};
use ovation::domain::scoring::{Op as ScoreOperator, Storage};
use ovation::store::redis::{
    BoardKeys, RedisStore, ScoreCall, ScoreReply, Spread, StandingQuery, TrendPageQuery, VoteCall,
    VoteReply, WriteFacts,
};

use crate::harness::{TestApp, num, runtime, shared_redis, store_on_shared_redis};

/// What the board counts: votes (1 real, 3 display units each), or a scores board's
/// `incr` and `decr` (a count below 0 is a `decr`), the same in both views.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Votes,
    Scores,
}

#[derive(Debug, Clone)]
enum Op {
    /// Time moves on by `after_s`, then a write stamped `late_s` earlier.
    Write {
        after_s: i64,
        late_s: i64,
        member: u8,
        count: i64,
    },
    /// Time moves on by `after_s`, then every view and standing is read.
    Read { after_s: i64 },
}

fn op(kind: Kind) -> impl Strategy<Value = Op> {
    let count = match kind {
        Kind::Votes => (1i64..=9).boxed(),
        Kind::Scores => prop_oneof![1i64..=9, -9i64..=-1].boxed(),
    };
    prop_oneof![
        4 => (
            // Mostly minutes apart, sometimes days: gaps past 64 half-lives rescale.
            prop_oneof![0i64..3_600, 0i64..400_000],
            prop_oneof![Just(0i64), 0i64..720_000],
            0u8..6,
            count,
        )
            .prop_map(|(after_s, late_s, member, count)| Op::Write {
                after_s,
                late_s,
                member,
                count,
            }),
        1 => (0i64..200_000).prop_map(|after_s| Op::Read { after_s }),
    ]
}

/// Every write so far: (member, time in ms, real units, display units).
type Model = Vec<(String, i64, f64, f64)>;

/// The formula's score of each member at `now_ms` in `view`, and the sum of the
/// magnitudes of its terms (what a relative error is measured against).
fn expected(model: &Model, h: HalfLife, view: View, now_ms: i64) -> Vec<(String, f64, f64)> {
    let mut scores: Vec<(String, f64, f64)> = Vec::new();
    for (member, t, real, display) in model {
        let units = match view {
            View::Real => *real,
            View::Display => *display,
        };
        let term = units * ((t - now_ms) as f64 / h.ms() as f64).exp2();
        match scores.iter_mut().find(|(m, _, _)| m == member) {
            Some(s) => {
                s.1 += term;
                s.2 += term.abs();
            }
            None => scores.push((member.clone(), term, term.abs())),
        }
    }
    scores
}

/// `answer` is within a relative 1e-9 of `want`, whose terms add up to `magnitude`.
fn close(answer: f64, want: f64, magnitude: f64) -> bool {
    (answer - want).abs() <= 1e-9 * magnitude + 1e-300
}

/// The fresh board `id` under the tests' trending prefix.
fn board(store: &RedisStore, id: i64) -> BoardKeys {
    store
        .keys()
        .board(id, Storage::Full, Spread::Voters, chrono_tz::Tz::UTC)
}

/// Writes `count` for `member` at `at_ms` into trending period `h`.
async fn write(
    store: &RedisStore,
    board: &BoardKeys,
    kind: Kind,
    h: HalfLife,
    member: &str,
    count: i64,
    at_ms: i64,
) {
    let write = WriteFacts::at(member, Some("fan"), at_ms);
    let trends = [h];
    match kind {
        Kind::Votes => {
            let call = VoteCall {
                board,
                targets: &[],
                increment: Increment {
                    real: count,
                    display: count * 3,
                    carry: 0,
                },
                write,
                windows: &[],
                trends: &trends,
            };
            let reply = store.cast_votes(&[call]).await.unwrap().remove(0).unwrap();
            assert_eq!(reply, VoteReply::Written(Vec::new()));
        }
        Kind::Scores => {
            let call = ScoreCall {
                board,
                buckets: &[],
                op: if count < 0 {
                    ScoreOperator::Decr
                } else {
                    ScoreOperator::Incr
                },
                value: count.abs(),
                write,
                windows: &[],
                trends: &trends,
            };
            let reply = store
                .write_scores(&[call])
                .await
                .unwrap()
                .remove(0)
                .unwrap();
            assert_eq!(reply, ScoreReply::Written(Vec::new()));
        }
    }
}

/// Every member's decayed score at `now_ms` in `view`, best first, and each member's
/// standing read alone: (member, score, rank).
async fn read(
    store: &RedisStore,
    board: &BoardKeys,
    h: HalfLife,
    view: View,
    now_ms: i64,
) -> Vec<(String, f64, i64)> {
    let query = TrendPageQuery {
        board,
        half_life: h,
        view,
        offset: 0,
        limit: 1000,
        anchor: None,
        now_ms,
    };
    let page = store.trend_pages(&[query]).await.unwrap().remove(0);
    assert_eq!(page.total_members, page.entries.len() as i64);
    let bucket = Bucket::trending(h);
    let queries: Vec<StandingQuery> = page
        .entries
        .iter()
        .map(|(m, _)| StandingQuery {
            board,
            bucket: &bucket,
            previous: None,
            view,
            member: m,
        })
        .collect();
    let standings = store.trend_standings(&queries, now_ms).await.unwrap();
    page.entries
        .iter()
        .zip(standings)
        .enumerate()
        .map(|(i, ((member, score), standing))| {
            // A member read alone answers what the page answers.
            assert_eq!(standing.score, Some(*score), "{member}");
            assert_eq!(standing.votes, None);
            // Its rank counts the members above it. Stored scores that decay to the same
            // double (ties of subnormal scores, hundreds of half-lives old) keep their
            // stored order, so a member tied on the page ranks within its tie.
            let rank = standing.rank.unwrap();
            let higher = page.entries.iter().filter(|(_, s)| s > score).count() as i64;
            let level = page.entries.iter().filter(|(_, s)| s >= score).count() as i64;
            assert!(
                (higher + 1..=level).contains(&rank),
                "{member} at {i}: rank {rank}, {higher} above, {level} at or above"
            );
            (member.clone(), *score, rank)
        })
        .collect()
}

/// Checks a read against the formula: every member's score within a relative 1e-9, and
/// the order the formula's (members closer than the error bound may come either way).
fn check(read: &[(String, f64, i64)], want: &[(String, f64, f64)]) {
    assert_eq!(read.len(), want.len(), "{read:?} vs {want:?}");
    for (member, score, _) in read {
        let (_, w, magnitude) = want.iter().find(|(m, _, _)| m == member).unwrap();
        assert!(close(*score, *w, *magnitude), "{member}: {score} vs {w}");
    }
    for pair in read.windows(2) {
        let (a, b) = (&pair[0].0, &pair[1].0);
        let wa = want.iter().find(|(m, _, _)| m == a).unwrap();
        let wb = want.iter().find(|(m, _, _)| m == b).unwrap();
        assert!(
            wa.1 >= wb.1 - 1e-9 * (wa.2 + wb.2) - 1e-300,
            "{a} above {b}: {want:?}"
        );
    }
}

static BOARDS: std::sync::atomic::AtomicI64 = std::sync::atomic::AtomicI64::new(1);

async fn play(kind: Kind, h: HalfLife, ops: &[Op]) {
    let store = store_on_shared_redis("tt:");
    let board = board(
        &store,
        BOARDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
    );
    let per_display = match kind {
        Kind::Votes => 3.0,
        Kind::Scores => 1.0,
    };
    let mut now = parse_instant("2026-10-01T00:00:00Z").unwrap();
    let mut model: Model = Vec::new();
    for op in ops {
        match op {
            Op::Write {
                after_s,
                late_s,
                member,
                count,
            } => {
                now += chrono::Duration::seconds(*after_s);
                let at = (now - chrono::Duration::seconds(*late_s)).timestamp_millis();
                let member = format!("m{member}");
                write(&store, &board, kind, h, &member, *count, at).await;
                let c = *count as f64;
                model.push((member, at, c, c * per_display));
            }
            Op::Read { after_s } => {
                now += chrono::Duration::seconds(*after_s);
                read_both(&store, &board, h, &model, now).await;
            }
        }
    }
    read_both(&store, &board, h, &model, now).await;
}

async fn read_both(
    store: &RedisStore,
    board: &BoardKeys,
    h: HalfLife,
    model: &Model,
    now: DateTime<Utc>,
) {
    let now_ms = now.timestamp_millis();
    for view in [View::Real, View::Display] {
        let got = read(store, board, h, view, now_ms).await;
        check(&got, &expected(model, h, view, now_ms));
    }
}

/// Casts every write of `writes` ((member, count, ms before `now`)) as one call (group
/// commit sums them), then reads both views at `now` against the formula.
async fn play_one_call(h: HalfLife, writes: &[(u8, i64, i64)]) {
    let store = store_on_shared_redis("tt:");
    let board = board(
        &store,
        BOARDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
    );
    let now = parse_instant("2026-10-01T00:00:00Z").unwrap();
    let trends = [h];
    let members: Vec<String> = writes.iter().map(|(m, _, _)| format!("m{m}")).collect();
    let calls: Vec<VoteCall> = writes
        .iter()
        .zip(&members)
        .map(|((_, count, late_ms), member)| VoteCall {
            board: &board,
            targets: &[],
            increment: Increment {
                real: *count,
                display: count * 3,
                carry: 0,
            },
            write: WriteFacts::at(member, Some("fan"), now.timestamp_millis() - late_ms),
            windows: &[],
            trends: &trends,
        })
        .collect();
    for reply in store.cast_votes(&calls).await.unwrap() {
        assert_eq!(reply.unwrap(), VoteReply::Written(Vec::new()));
    }
    let model: Model = writes
        .iter()
        .zip(members)
        .map(|((_, count, late_ms), member)| {
            let c = *count as f64;
            (member, now.timestamp_millis() - late_ms, c, 3.0 * c)
        })
        .collect();
    read_both(&store, &board, h, &model, now).await;
}

fn half_life() -> impl Strategy<Value = HalfLife> {
    prop_oneof![Just(1u16), Just(6), 1u16..=720].prop_map(|h| HalfLife::new(h).unwrap())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn trending_votes_decay_as_the_formula_says(
        h in half_life(),
        ops in prop::collection::vec(op(Kind::Votes), 1..40),
    ) {
        runtime().block_on(play(Kind::Votes, h, &ops));
    }

    #[test]
    fn trending_votes_summed_in_one_call_decay_as_the_formula_says(
        h in prop_oneof![Just(1u16), 1u16..=48].prop_map(|h| HalfLife::new(h).unwrap()),
        // Up to 200 hours apart: a later vote of the call may rescale what the earlier
        // ones summed.
        writes in prop::collection::vec((0u8..5, 1i64..=9, 0i64..720_000_000), 1..40),
    ) {
        runtime().block_on(play_one_call(h, &writes));
    }

    #[test]
    fn trending_scores_decay_as_the_formula_says(
        h in half_life(),
        ops in prop::collection::vec(op(Kind::Scores), 1..40),
    ) {
        runtime().block_on(play(Kind::Scores, h, &ops));
    }
}

#[tokio::test]
async fn a_rescale_leaves_every_read_unchanged() {
    let store = store_on_shared_redis("tt:");
    let board = board(
        &store,
        BOARDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
    );
    let h = HalfLife::new(1).unwrap();
    let start = parse_instant("2026-10-01T00:00:00Z")
        .unwrap()
        .timestamp_millis();
    let minute = 60_000;
    for (i, count) in [5, 3, 8, 1, 8, 2, 7].into_iter().enumerate() {
        let at = start + i as i64 * 17 * minute;
        write(&store, &board, Kind::Votes, h, &format!("m{i}"), count, at).await;
    }
    let origin = board.trend(h).origin();
    let mut conn = redis::Client::open(shared_redis().url())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let first: i64 = conn.get(&origin).await.unwrap();
    assert_eq!(first, start);
    let now_ms = start + 3 * 3_600_000;
    let before = [
        read(&store, &board, h, View::Real, now_ms).await,
        read(&store, &board, h, View::Display, now_ms).await,
    ];
    // A write 65 half-lives after the origin moves it to its own time and rescales.
    let later = start + 65 * 3_600_000;
    write(&store, &board, Kind::Votes, h, "late", 1, later).await;
    let moved: i64 = conn.get(&origin).await.unwrap();
    assert_eq!(moved, later);
    let after = [
        read(&store, &board, h, View::Real, now_ms).await,
        read(&store, &board, h, View::Display, now_ms).await,
    ];
    for (before, after) in before.iter().zip(&after) {
        // The late write, read 62 hours before it was made, weighs 2^62 and leads; the
        // others keep their scores and their order beneath it.
        assert_eq!((after[0].0.as_str(), after[0].2), ("late", 1));
        assert_eq!(before.len() + 1, after.len());
        for ((m0, s0, r0), (m1, s1, r1)) in before.iter().zip(&after[1..]) {
            assert_eq!((m0, r0 + 1), (m1, *r1), "ranks unchanged");
            assert!((s0 - s1).abs() <= 1e-9 * s0.abs(), "{m0}: {s0} then {s1}");
        }
    }
}

/// Now, to the millisecond: the server keeps a vote's time in whole milliseconds, so
/// votes timed from a finer instant would count up to 1 ms earlier than the model says
/// (with a 24-hour half-life, 8e-9 of a score: past `within`'s 1e-9).
fn now_to_the_ms() -> DateTime<Utc> {
    DateTime::from_timestamp_millis(Utc::now().timestamp_millis()).unwrap()
}

/// A score from a trending read, against what votes of `votes` (count, hours ago; a
/// negative count is a `decr`) give with half-life `h` hours, read between `from` and
/// `to`: each vote's part lies between what it weighs read at `from` and at `to` (a vote
/// of 0 hours ago was written in between: a `decr` may weigh its whole count).
fn within(score: f64, votes: &[(f64, f64)], h: f64, from: DateTime<Utc>, to: DateTime<Utc>) {
    let hours = |read: DateTime<Utc>| (read - from).num_milliseconds() as f64 / 3_600_000.0;
    let (mut low, mut high) = (0.0, 0.0);
    for &(count, ago) in votes {
        let (first, last) = (
            count * (-ago / h).exp2(),
            count * (-(ago + hours(to)) / h).exp2(),
        );
        low += first.min(last);
        high += first.max(last);
    }
    assert!(
        score <= high + 1e-9 * high.abs() && score >= low - 1e-9 * low.abs(),
        "{score} not within [{low}, {high}]"
    );
}

#[tokio::test]
async fn trending_boards_through_the_api() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "hot", "title": "Hot", "membership": "open",
        "multiplier": 2, "periods": ["all", "trending:6h"]}))
        .await;
    let from = now_to_the_ms();
    let ago = |hours: i64| (from - chrono::Duration::hours(hours)).to_rfc3339();
    for (member, voter, count, at) in [
        ("ann", "v1", 2, None),
        ("bob", "v2", 4, Some(ago(6))),
        ("bob", "v3", 1, Some(ago(12))),
        ("cat", "v1", 1, None),
    ] {
        let mut body = json!({"member": member, "voter": voter, "count": count});
        if let Some(at) = at {
            body["at"] = json!(at);
        }
        let (status, answer) = app.vote("hot", body).await;
        assert_eq!(status, StatusCode::OK, "{answer}");
        // The answer lists the buckets only: a decayed score changes every moment.
        let periods: Vec<&str> = answer["scores"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["period"].as_str().unwrap())
            .collect();
        assert_eq!(periods, ["all"]);
    }
    let (status, top) = app
        .get("/api/v1/boards/hot/top?period=trending:6h&view=real")
        .await;
    let to = Utc::now();
    assert_eq!(status, StatusCode::OK, "{top}");
    assert_eq!(top["period"], "trending:6h");
    assert_eq!(top["bucket"], "trending:6h");
    assert_eq!(top["resets_at"], Value::Null);
    assert_eq!(top["total_members"], 3);
    assert_eq!(top["participants"], 3);
    let entries = top["entries"].as_array().unwrap();
    let members: Vec<&str> = entries
        .iter()
        .map(|e| e["member"].as_str().unwrap())
        .collect();
    // bob: 4 × ½ + 1 × ¼ = 2.25 now, ann 2, cat 1.
    assert_eq!(members, ["bob", "ann", "cat"]);
    within(
        num(&entries[0]["score"]),
        &[(4.0, 6.0), (1.0, 12.0)],
        6.0,
        from,
        to,
    );
    within(num(&entries[1]["score"]), &[(2.0, 0.0)], 6.0, from, to);
    let (_, display) = app.get("/api/v1/boards/hot/top?period=trending:6h").await;
    within(
        num(&display["entries"][0]["score"]),
        &[(8.0, 6.0), (2.0, 12.0)],
        6.0,
        from,
        Utc::now(),
    );
    let (status, bob) = app
        .get("/api/v1/boards/hot/members/bob?period=trending:6h&view=real")
        .await;
    assert_eq!(status, StatusCode::OK, "{bob}");
    assert_eq!(bob["rank"], 1);
    assert_eq!(bob["participants"], 2);
    assert_eq!(bob["votes"], Value::Null);
    assert_eq!(bob["previous"], Value::Null);
    within(
        num(&bob["score"]),
        &[(4.0, 6.0), (1.0, 12.0)],
        6.0,
        from,
        Utc::now(),
    );
    let (status, stats) = app.get("/api/v1/boards/hot/stats?period=trending:6h").await;
    assert_eq!(status, StatusCode::OK, "{stats}");
    assert_eq!(
        (
            &stats["participants"],
            &stats["total_members"],
            &stats["votes"]
        ),
        (&json!(3), &json!(3), &json!(8))
    );
    let (status, body) = app
        .get("/api/v1/boards/hot/top?period=trending:6h&at=2026-11-01")
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("invalid_bucket")),
        "{body}"
    );
    for bad in [
        "trending:0h",
        "trending:721h",
        "trending:06h",
        "trending:6",
        "trending:6d",
    ] {
        let (status, body) = app
            .post(
                "/api/v1/admin/boards",
                json!({"slug": "bad", "title": "Bad", "periods": ["all", bad]}),
            )
            .await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (StatusCode::UNPROCESSABLE_ENTITY, Some("invalid_period")),
            "{bad}: {body}"
        );
    }
    let five: Vec<String> = (1..=5).map(|h| format!("trending:{h}h")).collect();
    let (status, body) = app
        .post(
            "/api/v1/admin/boards",
            json!({"slug": "bad", "title": "Bad", "periods": five}),
        )
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("invalid_periods")),
        "{body}"
    );
    let (status, body) = app
        .post(
            "/api/v1/admin/boards",
            json!({"slug": "bad", "title": "Bad", "periods": ["day", "trending:6h"],
                "storage": {"kind": "sharded", "shards": 4}}),
        )
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("invalid_field")),
        "{body}"
    );
    app.members("hot", &["bob"]).await;
    let (status, body) = app
        .post(
            "/api/v1/admin/boards/hot/members/bob/adjustments",
            json!({"period": "trending:6h", "view": "both", "delta": 5, "reason": "fix"}),
        )
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("invalid_period")),
        "{body}"
    );
}

#[tokio::test]
async fn a_scores_board_trends_with_incr_and_decr_only() {
    let app = TestApp::spawn().await;
    app.board(
        json!({"slug": "likes", "title": "Likes", "membership": "open",
        "scoring": "scores", "decimals": 1, "periods": ["all", "trending:24h"]}),
    )
    .await;
    let from = now_to_the_ms();
    for (op, value) in [("incr", 10.5), ("decr", 0.5)] {
        let (status, body) = app
            .post(
                "/api/v1/boards/likes/scores",
                json!({"member": "ann", "op": op, "value": value}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    for op in ["set", "best"] {
        let (status, body) = app
            .post(
                "/api/v1/boards/likes/scores",
                json!({"member": "ann", "op": op, "value": 50}),
            )
            .await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (
                StatusCode::UNPROCESSABLE_ENTITY,
                Some("operator_not_allowed")
            ),
            "{op}: {body}"
        );
    }
    let (_, top) = app
        .get("/api/v1/boards/likes/top?period=trending:24h")
        .await;
    assert_eq!(top["entries"][0]["member"], "ann");
    within(
        num(&top["entries"][0]["score"]),
        &[(10.5, 0.0), (-0.5, 0.0)],
        24.0,
        from,
        Utc::now(),
    );
    let (status, body) = app
        .post(
            "/api/v1/admin/boards",
            json!({"slug": "capped", "title": "Capped", "scoring": "scores",
                "periods": ["trending:24h"], "storage": {"kind": "top_n", "retain": 10, "trim_at": 20}}),
        )
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("invalid_field")),
        "{body}"
    );
}

/// Casts `votes` (member, voter, count, minutes before `from`) on `board`, then revokes
/// every vote of the voter `bot`; answers the revocation.
async fn votes_then_bot_revoked(
    app: &TestApp,
    board: &str,
    from: DateTime<Utc>,
    votes: &[(&str, &str, i64, i64)],
) -> Value {
    for &(member, voter, count, minutes) in votes {
        let at = (from - chrono::Duration::minutes(minutes)).to_rfc3339();
        let (status, body) = app
            .vote(
                board,
                json!({"member": member, "voter": voter, "count": count, "at": at}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    let (status, revoked) = app
        .post(
            &format!("/api/v1/admin/boards/{board}/revocations"),
            json!({"voter": "bot", "from": null, "to": null, "reason": "a bot"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{revoked}");
    revoked
}

#[tokio::test]
async fn a_revocation_takes_a_voters_votes_out_of_trending_periods() {
    let app = TestApp::spawn().await;
    app.board(
        json!({"slug": "hotrv", "title": "Hot", "membership": "open", "ledger": true,
        "multiplier": 1.5, "periods": ["all", "trending:1h", "trending:24h"]}),
    )
    .await;
    let from = now_to_the_ms();
    // ann: the fan's 2 votes an hour ago and the bot's 5 now; bob: the bot's alone.
    let revoked = votes_then_bot_revoked(
        &app,
        "hotrv",
        from,
        &[
            ("ann", "fan", 2, 60),
            ("ann", "bot", 5, 0),
            ("bob", "bot", 3, 30),
            ("bob", "bot", 4, 90),
            ("cat", "fan", 1, 0),
        ],
    )
    .await;
    assert_eq!(revoked["votes"], 12, "{revoked}");
    for (period, h) in [("trending:1h", 1.0), ("trending:24h", 24.0)] {
        for (view, per_vote) in [("real", 1.0), ("display", 1.5)] {
            let (_, top) = app
                .get(&format!(
                    "/api/v1/boards/hotrv/top?period={period}&view={view}"
                ))
                .await;
            let entries = top["entries"].as_array().unwrap();
            let members: Vec<&str> = entries
                .iter()
                .map(|e| e["member"].as_str().unwrap())
                .collect();
            // bob had only the bot's votes: he leaves; ann keeps the fan's two.
            assert_eq!(top["total_members"], 2, "{period} {view}: {top}");
            assert!(
                members.contains(&"ann") && members.contains(&"cat"),
                "{top}"
            );
            let ann = entries.iter().find(|e| e["member"] == "ann").unwrap();
            let cat = entries.iter().find(|e| e["member"] == "cat").unwrap();
            within(
                num(&ann["score"]),
                &[(2.0 * per_vote, 1.0)],
                h,
                from,
                Utc::now(),
            );
            within(num(&cat["score"]), &[(per_vote, 0.0)], h, from, Utc::now());
        }
        let (_, stats) = app
            .get(&format!("/api/v1/boards/hotrv/stats?period={period}"))
            .await;
        assert_eq!(stats["votes"], 3, "{stats}");
    }
}

/// Redis lost the board: the rebuild from the ledger puts every vote back into the
/// trending periods, weighted by its time; a revoked vote stays out and an adjustment
/// never reaches them.
#[tokio::test(flavor = "multi_thread")]
async fn a_trending_period_redis_lost_is_rebuilt_from_the_ledger() {
    use crate::durability::{app_on_own_redis, lose_redis_and_wait_rebuilt};
    let (server, app) = app_on_own_redis().await;
    app.board(json!({"slug": "hotlost", "title": "Hot", "ledger": true,
        "multiplier": 1.5, "periods": ["all", "trending:1h", "trending:24h"]}))
        .await;
    app.members("hotlost", &["ann", "bob", "cat"]).await;
    let from = now_to_the_ms();
    votes_then_bot_revoked(
        &app,
        "hotlost",
        from,
        &[
            ("ann", "fan", 2, 60),
            ("ann", "bot", 5, 0),
            ("bob", "fan", 3, 30),
            ("bob", "fan", 4, 600),
            ("cat", "fan", 1, 3000),
        ],
    )
    .await;
    let (status, body) = app
        .post(
            "/api/v1/admin/boards/hotlost/members/cat/adjustments",
            json!({"period": "all", "view": "both", "delta": 100, "reason": "test"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    // What each member holds (count, hours before `from`), after the revocation.
    let expected: [(&str, &[(f64, f64)]); 3] = [
        ("ann", &[(2.0, 1.0)]),
        ("bob", &[(3.0, 0.5), (4.0, 10.0)]),
        ("cat", &[(1.0, 50.0)]),
    ];
    let tops = |app: TestApp| async move {
        let mut tops = Vec::new();
        for period in ["trending:1h", "trending:24h"] {
            for view in ["real", "display"] {
                let (_, top) = app
                    .get(&format!(
                        "/api/v1/boards/hotlost/top?period={period}&view={view}"
                    ))
                    .await;
                tops.push(top);
            }
        }
        tops
    };
    let order = |tops: &[Value]| -> Vec<Vec<String>> {
        tops.iter()
            .map(|top| {
                top["entries"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|e| e["member"].as_str().unwrap().to_owned())
                    .collect()
            })
            .collect()
    };
    let before = tops(app.clone()).await;
    crate::ledger::ledger(&app, "hotlost", 1000).await;

    lose_redis_and_wait_rebuilt(&app, &server).await;
    let after = tops(app.clone()).await;
    assert_eq!(order(&after), order(&before), "{after:?}");
    let read_at = Utc::now();
    for (i, top) in after.iter().enumerate() {
        let h = if i < 2 { 1.0 } else { 24.0 };
        let per_vote = if i % 2 == 0 { 1.0 } else { 1.5 };
        assert_eq!(top["total_members"], 3, "{top}");
        for (member, votes) in expected {
            let entry = top["entries"]
                .as_array()
                .unwrap()
                .iter()
                .find(|e| e["member"] == member)
                .unwrap_or_else(|| panic!("{member} in {top}"));
            let votes: Vec<(f64, f64)> = votes.iter().map(|&(c, a)| (c * per_vote, a)).collect();
            within(num(&entry["score"]), &votes, h, from, read_at);
        }
    }
}
