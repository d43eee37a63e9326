//! Rolling windows against a brute-force model, on a real redis-server: windows of every
//! length, random votes at random times (some stamped late, by up to ten days), reads in
//! between, long idle gaps; after every vote its answer, and after every read the whole
//! ranking and the participants, equal the model's.

use chrono::{DateTime, Utc};
use proptest::prelude::*;

use ovation::domain::period::{Rolling, SlotUnit, parse_instant, parse_timezone};
use ovation::domain::score::{Increment, View};
use ovation::domain::scoring::Op as ScoreOperator;
use ovation::domain::scoring::Storage;
use ovation::store::redis::Spread;
use ovation::store::redis::window::{WindowAt, WindowPageQuery, WindowTarget};
use ovation::store::redis::{PageReply, ScoreCall, ScoreReply, VoteCall, VoteReply, WriteFacts};

use crate::harness::{runtime, shared_redis, store_on_shared_backend, store_on_shared_redis};

/// A window and the timezone whose days it counts.
#[derive(Debug, Clone, Copy)]
struct Shape(Rolling, &'static str);

impl Shape {
    fn slots(self) -> i64 {
        self.0.slots()
    }

    fn slot(self, at: DateTime<Utc>) -> i64 {
        self.0.slot(parse_timezone(self.1).unwrap(), at)
    }
}

/// What the board counts: votes, or a scores board's `incr` and `decr` (a count below 0
/// is a `decr`).
#[derive(Debug, Clone, Copy)]
enum Kind {
    Votes,
    Scores,
}

#[derive(Debug, Clone)]
enum Op {
    /// Time moves on by `after_s`, then a vote (or score write) stamped `late_s` earlier.
    Vote {
        after_s: i64,
        late_s: i64,
        member: u8,
        voter: u8,
        count: i64,
    },
    /// Time moves on by `after_s`, then the whole window is read.
    Read { after_s: i64 },
}

fn op(kind: Kind) -> impl Strategy<Value = Op> {
    // Mostly small steps, so slots fill up; sometimes days, longer than any window.
    let after = prop_oneof![
        12 => 0i64..900,
        6 => 0i64..6 * 3600,
        2 => 0i64..36 * 3600,
        1 => 0i64..5 * 86_400,
        1 => 8 * 86_400i64..9 * 86_400,
        1 => 80 * 86_400i64..100 * 86_400,
    ];
    let late = prop_oneof![6 => Just(0i64), 2 => 0i64..3 * 3600, 1 => 0i64..10 * 86_400];
    let count = match kind {
        Kind::Votes => (1i64..4).boxed(),
        Kind::Scores => prop_oneof![3 => 1i64..6, 2 => -5i64..0].boxed(),
    };
    prop_oneof![
        3 => (after.clone(), late, 0u8..6, 0u8..5, count).prop_map(
            |(after_s, late_s, member, voter, count)| Op::Vote { after_s, late_s, member, voter, count }
        ),
        1 => after.prop_map(|after_s| Op::Read { after_s }),
    ]
}

/// What the window must hold: every vote with the slot it landed in.
#[derive(Default)]
struct Model {
    head: Option<i64>,
    landed: Vec<(i64, String, i64, String)>,
}

impl Model {
    fn advance(&mut self, slot: i64) -> i64 {
        let head = self.head.map_or(slot, |h| h.max(slot));
        self.head = Some(head);
        head
    }

    /// A vote read at `clock` and stamped at `at` lands in the newest slot, unless it is
    /// older than the whole window.
    fn vote(&mut self, n: i64, clock: i64, at: i64, member: String, count: i64, voter: String) {
        let head = self.advance(clock.max(at));
        if at > clock - n {
            self.landed.push((head, member, count, voter));
        }
    }

    /// The window at `clock`: (member, score) best first as Redis orders them (ties by
    /// member, descending), members whose score adds up to 0 left out, and the distinct
    /// voters.
    fn read(&mut self, n: i64, clock: i64, per_vote: i64) -> (Vec<(String, i64)>, i64) {
        let head = self.advance(clock);
        let mut totals = std::collections::BTreeMap::<String, i64>::new();
        let mut voters = std::collections::BTreeSet::new();
        for (slot, member, count, voter) in &self.landed {
            if *slot > head - n {
                *totals.entry(member.clone()).or_default() += count * per_vote;
                voters.insert(voter.clone());
            }
        }
        let mut ranking: Vec<(String, i64)> = totals.into_iter().filter(|t| t.1 != 0).collect();
        ranking.sort_by(|a, b| b.1.cmp(&a.1).then(b.0.cmp(&a.0)));
        (ranking, voters.len() as i64)
    }
}

/// Plays `ops` from `start` on a fresh board of `kind` and checks every answer and read
/// against the model.
async fn play(kind: Kind, shape: Shape, budget: i64, start: DateTime<Utc>, ops: &[Op]) {
    use std::sync::atomic::{AtomicI64, Ordering};
    static BOARD: AtomicI64 = AtomicI64::new(1);
    let store = store_on_shared_redis("wt:");
    let board = store.keys().board(
        BOARD.fetch_add(1, Ordering::Relaxed),
        Storage::Full,
        Spread::Voters,
        chrono_tz::Tz::UTC,
    );
    // A vote counts 1 real and 3 display units; a score write its value in both views.
    let per_display = match kind {
        Kind::Votes => 3,
        Kind::Scores => 1,
    };
    let n = shape.slots();
    let window_at = |clock: i64| WindowAt {
        budget,
        ..WindowAt::new(&board, shape.0, clock)
    };
    let mut model = Model::default();
    let mut now = start;
    for op in ops {
        match op {
            Op::Vote {
                after_s,
                late_s,
                member,
                voter,
                count,
            } => {
                now += chrono::Duration::seconds(*after_s);
                let at = now - chrono::Duration::seconds(*late_s);
                let (clock, slot) = (shape.slot(now), shape.slot(at));
                let member = format!("m{member}");
                let voter = format!("v{voter}");
                let target = WindowTarget {
                    window: window_at(clock),
                    at: slot,
                };
                let write = WriteFacts::at(&member, Some(&voter), at.timestamp_millis());
                let windows = std::slice::from_ref(&target);
                let totals = match kind {
                    Kind::Votes => {
                        let call = VoteCall {
                            board: &board,
                            targets: &[],
                            increment: Increment {
                                real: *count,
                                display: *count * 3,
                                carry: 0,
                            },
                            write,
                            windows,
                            trends: &[],
                        };
                        match store.cast_votes(&[call]).await.unwrap().remove(0).unwrap() {
                            VoteReply::Written(scores) => scores,
                            other => panic!("{other:?}"),
                        }
                    }
                    Kind::Scores => {
                        let call = ScoreCall {
                            board: &board,
                            buckets: &[],
                            op: if *count < 0 {
                                ScoreOperator::Decr
                            } else {
                                ScoreOperator::Incr
                            },
                            value: count.abs(),
                            write,
                            windows,
                            trends: &[],
                        };
                        match store
                            .write_scores(&[call])
                            .await
                            .unwrap()
                            .remove(0)
                            .unwrap()
                        {
                            ScoreReply::Written(scores) => scores.iter().map(|&s| (s, s)).collect(),
                            other => panic!("{other:?}"),
                        }
                    }
                };
                model.vote(n, clock, slot, member.clone(), *count, voter);
                let (ranking, _) = model.read(n, clock, 1);
                let expected = ranking
                    .iter()
                    .find(|(m, _)| *m == member)
                    .map_or(0, |e| e.1);
                assert_eq!(
                    totals,
                    vec![(expected, expected * per_display)],
                    "the write answers the member's window totals"
                );
            }
            Op::Read { after_s } => {
                now += chrono::Duration::seconds(*after_s);
                let clock = shape.slot(now);
                for (view, per_vote) in [(View::Real, 1), (View::Display, per_display)] {
                    let query = WindowPageQuery {
                        window: window_at(clock),
                        view,
                        offset: 0,
                        limit: 1000,
                        anchor: None,
                    };
                    let page: PageReply = store.window_pages(&[query]).await.unwrap().remove(0);
                    let (ranking, voters) = model.read(n, clock, per_vote);
                    assert_eq!(page.entries, ranking, "{view:?} at {now}");
                    assert_eq!(page.total_members, ranking.len() as i64);
                    assert_eq!(page.participants, voters, "voters at {now}");
                }
            }
        }
    }
}

fn at(raw: &str) -> DateTime<Utc> {
    parse_instant(raw).unwrap()
}

/// A window of any length: 1 to 168 hours, or 1 to 90 days.
fn any_window() -> impl Strategy<Value = Rolling> {
    prop_oneof![
        (1u16..=168).prop_map(|n| Rolling::new(SlotUnit::Hour, n).unwrap()),
        (1u16..=90).prop_map(|n| Rolling::new(SlotUnit::Day, n).unwrap()),
    ]
}

/// How many drained members one call subtracts: one, a few (so leaving slots drain over
/// many votes and reads), or all at once.
fn budget() -> impl Strategy<Value = i64> {
    prop_oneof![Just(1i64), Just(3), Just(1_000_000_000)]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn the_last_24_hours_are_exact_at_every_read(
        ops in prop::collection::vec(op(Kind::Votes), 1..80),
        budget in budget(),
    ) {
        runtime().block_on(play(
            Kind::Votes,
            Shape(Rolling::HOURS_24, "UTC"),
            budget,
            at("2026-11-20T00:00:00Z"),
            &ops,
        ));
    }

    #[test]
    fn the_last_7_days_are_exact_across_a_dst_change(
        ops in prop::collection::vec(op(Kind::Votes), 1..80),
        budget in budget(),
    ) {
        // New York's clocks go back on 2026-11-01: that local day is 25 hours long.
        runtime().block_on(play(
            Kind::Votes,
            Shape(Rolling::DAYS_7, "America/New_York"),
            budget,
            at("2026-10-30T20:00:00Z"),
            &ops,
        ));
    }

    #[test]
    fn windows_of_any_length_are_exact(
        window in any_window(),
        tz in prop_oneof![Just("UTC"), Just("America/New_York"), Just("Asia/Kolkata")],
        ops in prop::collection::vec(op(Kind::Votes), 1..80),
        budget in budget(),
    ) {
        runtime().block_on(play(Kind::Votes, Shape(window, tz), budget, at("2026-10-30T20:00:00Z"), &ops));
    }

    #[test]
    fn a_scores_boards_windows_add_up_incr_and_decr_exactly(
        window in any_window(),
        ops in prop::collection::vec(op(Kind::Scores), 1..80),
        budget in budget(),
    ) {
        runtime().block_on(play(
            Kind::Scores,
            Shape(window, "UTC"),
            budget,
            at("2026-11-20T00:00:00Z"),
            &ops,
        ));
    }

    #[test]
    fn a_one_slot_window_is_exact(
        ops in prop::collection::vec(op(Kind::Votes), 1..40),
        budget in budget(),
    ) {
        let one_hour = Rolling::new(SlotUnit::Hour, 1).unwrap();
        runtime().block_on(play(Kind::Votes, Shape(one_hour, "UTC"), budget, at("2026-11-20T00:00:00Z"), &ops));
    }
}

/// 64 clients vote at once, half with the clock still in one hour and half already in
/// the next: every vote lands in a slot of the window, and the totals are exact then and
/// after the first hour leaves.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn votes_across_a_slot_boundary_from_64_clients_add_up_exactly() {
    let store = store_on_shared_redis("wc:");
    let board = store
        .keys()
        .board(1, Storage::Full, Spread::Voters, chrono_tz::Tz::UTC);
    let boundary = Rolling::HOURS_24.slot(chrono_tz::Tz::UTC, at("2026-11-23T10:00:00Z"));
    let mut clients = Vec::new();
    // Client 0 goes first, so the earlier hour holds at least one vote.
    for i in 0..64i64 {
        let store = store.clone();
        let board = board.clone();
        clients.push(tokio::spawn(async move {
            let clock = boundary - 1 + i % 2;
            let member = format!("m{}", i % 3);
            let voter = format!("v{i}");
            let target = WindowTarget {
                window: WindowAt::new(&board, Rolling::HOURS_24, clock),
                at: clock,
            };
            let call = VoteCall {
                board: &board,
                targets: &[],
                increment: Increment {
                    real: 1,
                    display: 1,
                    carry: 0,
                },
                write: WriteFacts::at(&member, Some(&voter), clock * 3_600_000),
                windows: std::slice::from_ref(&target),
                trends: &[],
            };
            let reply = store.cast_votes(&[call]).await.unwrap().remove(0).unwrap();
            assert!(matches!(reply, VoteReply::Written(_)), "{reply:?}");
        }));
        if i == 0 {
            clients.pop().unwrap().await.unwrap();
        }
    }
    for client in clients {
        client.await.unwrap();
    }
    let read = |clock: i64| {
        let store = store.clone();
        let query = WindowPageQuery {
            window: WindowAt::new(&board, Rolling::HOURS_24, clock),
            view: View::Real,
            offset: 0,
            limit: 10,
            anchor: None,
        };
        async move { store.window_pages(&[query]).await.unwrap().remove(0) }
    };
    let page = read(boundary).await;
    let sum = |page: &PageReply| page.entries.iter().map(|(_, s)| s).sum::<i64>();
    assert_eq!(sum(&page), 64);
    assert_eq!(page.participants, 64);
    assert_eq!(
        page.entries,
        vec![("m0".into(), 22), ("m2".into(), 21), ("m1".into(), 21)]
    );
    // What landed in the earlier hour is exactly what leaves when it goes out of the window.
    let earlier: i64 = {
        let mut conn = redis::Client::open(shared_redis().url())
            .unwrap()
            .get_multiplexed_async_connection()
            .await
            .unwrap();
        let [key, ..] = board.window(Rolling::HOURS_24).at(boundary - 1);
        let scores: Vec<(String, i64)> = redis::cmd("ZRANGE")
            .arg(key)
            .arg(0)
            .arg(-1)
            .arg("WITHSCORES")
            .query_async(&mut conn)
            .await
            .unwrap();
        scores.iter().map(|(_, s)| s).sum()
    };
    assert!(earlier >= 1, "client 0 voted before the clock turned");
    let later = read(boundary + 23).await;
    assert_eq!(sum(&later), 64 - earlier);
}

/// An instance whose clock is slots behind the window's head (another instance moved it
/// on): its vote lands in the head slot, as one a slot behind does, unless it is older
/// than the whole window; score writes alike.
#[tokio::test]
async fn a_write_from_a_clock_slots_behind_the_head_lands_in_the_head_slot() {
    let store = store_on_shared_redis("wk:");
    let board = store
        .keys()
        .board(1, Storage::Full, Spread::Voters, chrono_tz::Tz::UTC);
    let head = Rolling::HOURS_24.slot(chrono_tz::Tz::UTC, at("2026-11-23T10:00:00Z"));
    let vote = |clock: i64, at: i64, voter: &'static str| {
        let store = store.clone();
        let board = board.clone();
        async move {
            let target = WindowTarget {
                window: WindowAt::new(&board, Rolling::HOURS_24, clock),
                at,
            };
            let call = VoteCall {
                board: &board,
                targets: &[],
                increment: Increment {
                    real: 1,
                    display: 1,
                    carry: 0,
                },
                write: WriteFacts::at("m1", Some(voter), at * 3_600_000),
                windows: std::slice::from_ref(&target),
                trends: &[],
            };
            store.cast_votes(&[call]).await.unwrap().remove(0).unwrap()
        }
    };
    assert_eq!(
        vote(head, head, "v1").await,
        VoteReply::Written(vec![(1, 1)])
    );
    // Three slots behind, then a day and more behind the head.
    assert_eq!(
        vote(head - 3, head - 3, "v2").await,
        VoteReply::Written(vec![(2, 2)])
    );
    assert_eq!(
        vote(head - 30, head - 30, "v3").await,
        VoteReply::Written(vec![(2, 2)])
    );
    let query = WindowPageQuery {
        window: WindowAt::new(&board, Rolling::HOURS_24, head),
        view: View::Real,
        offset: 0,
        limit: 10,
        anchor: None,
    };
    let page = store.window_pages(&[query]).await.unwrap().remove(0);
    assert_eq!(page.entries, vec![("m1".to_owned(), 2)]);
    assert_eq!(page.participants, 2);
    // The vote from behind went into the head slot: it leaves the window with it.
    let later = WindowPageQuery {
        window: WindowAt::new(&board, Rolling::HOURS_24, head + 24),
        view: View::Real,
        offset: 0,
        limit: 10,
        anchor: None,
    };
    let page = store.window_pages(&[later]).await.unwrap().remove(0);
    assert_eq!(page.entries, vec![]);

    let scores = store
        .keys()
        .board(2, Storage::Full, Spread::Members, chrono_tz::Tz::UTC);
    for (clock, expected) in [(head, 5), (head - 5, 10)] {
        let target = WindowTarget {
            window: WindowAt::new(&scores, Rolling::HOURS_24, clock),
            at: clock,
        };
        let call = ScoreCall {
            board: &scores,
            buckets: &[],
            op: ScoreOperator::Incr,
            value: 5,
            write: WriteFacts::at("m1", None, clock * 3_600_000),
            windows: std::slice::from_ref(&target),
            trends: &[],
        };
        let reply = store
            .write_scores(&[call])
            .await
            .unwrap()
            .remove(0)
            .unwrap();
        assert_eq!(reply, ScoreReply::Written(vec![expected]), "clock {clock}");
    }
}

/// Through the API: a board keeping the last 24 hours beside calendar periods.
#[tokio::test]
async fn a_board_keeps_the_last_24_hours_beside_its_calendar_periods() {
    use crate::harness::{TestApp, num};
    use reqwest::StatusCode;
    use serde_json::json;

    let app = TestApp::spawn().await;
    let (status, body) = app
        .post(
            "/api/v1/admin/boards",
            json!({"slug": "roll", "title": "Roll", "multiplier": 2, "carry_over": 0.5,
                "periods": ["day", "all", "rolling:24h"]}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    app.members("roll", &["a", "b"]).await;
    let (status, vote) = app
        .vote("roll", json!({"member": "a", "voter": "v1", "count": 3}))
        .await;
    assert_eq!(status, StatusCode::OK, "{vote}");
    let rolling = vote["scores"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["period"] == "rolling:24h")
        .unwrap_or_else(|| panic!("the vote answers the rolling scores: {vote}"));
    assert_eq!(rolling["bucket"], "rolling:24h");
    assert_eq!(
        (num(&rolling["real"]), num(&rolling["display"])),
        (3.0, 6.0)
    );
    app.vote("roll", json!({"member": "b", "voter": "v2"}))
        .await;
    // A vote older than the whole window counts in the calendar periods only.
    let old = (chrono::Utc::now() - chrono::Duration::hours(30)).to_rfc3339();
    let (status, body) = app
        .vote(
            "roll",
            json!({"member": "b", "voter": "v3", "count": 5, "at": old}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");

    let (status, top) = app
        .get("/api/v1/boards/roll/top?period=rolling:24h&view=real")
        .await;
    assert_eq!(status, StatusCode::OK, "{top}");
    let entries: Vec<(String, f64)> = top["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["member"].as_str().unwrap().to_owned(), num(&e["score"])))
        .collect();
    assert_eq!(entries, vec![("a".to_owned(), 3.0), ("b".to_owned(), 1.0)]);
    assert_eq!(top["resets_at"], serde_json::Value::Null);
    assert_eq!(top["participants"], 2);
    let from =
        chrono::DateTime::parse_from_rfc3339(top["window"]["from"].as_str().unwrap()).unwrap();
    let to = chrono::DateTime::parse_from_rfc3339(top["window"]["to"].as_str().unwrap()).unwrap();
    assert_eq!(
        from.timestamp(),
        (to.timestamp().div_euclid(3600) - 23) * 3600,
        "the window starts at the oldest of its 24 UTC hours: {top}"
    );
    let (status, stats) = app
        .get("/api/v1/boards/roll/stats?period=rolling:24h")
        .await;
    assert_eq!(status, StatusCode::OK, "{stats}");
    assert_eq!(
        (
            stats["total_members"].as_i64(),
            stats["participants"].as_i64()
        ),
        (Some(2), Some(2))
    );
    let (_, all) = app
        .get("/api/v1/boards/roll/top?period=all&view=real")
        .await;
    assert_eq!(
        num(&all["entries"][0]["score"]),
        6.0,
        "b has 6 votes all time: {all}"
    );

    // Carry-over goes into the next day, never into the rolling window.
    let (_, display) = app.get("/api/v1/boards/roll/top?period=rolling:24h").await;
    assert_eq!(num(&display["entries"][0]["score"]), 6.0, "{display}");
    let tomorrow = (chrono::Utc::now() + chrono::Duration::days(1)).format("%Y-%m-%d");
    let (_, next_day) = app
        .get(&format!("/api/v1/boards/roll/top?period=day&at={tomorrow}"))
        .await;
    assert_eq!(num(&next_day["entries"][0]["score"]), 3.0, "{next_day}");

    // One member's standing: rank and score in the window; voters are counted per board.
    let (status, member) = app
        .get("/api/v1/boards/roll/members/a?period=rolling:24h&view=real")
        .await;
    assert_eq!(status, StatusCode::OK, "{member}");
    assert_eq!(
        (member["rank"].as_i64(), num(&member["score"])),
        (Some(1), 3.0)
    );
    assert_eq!(member["participants"], serde_json::Value::Null);
    assert_eq!(member["previous"], serde_json::Value::Null);

    // A rolling window has no buckets; a window too long or too short is no period.
    let (status, body) = app
        .get("/api/v1/boards/roll/top?period=rolling:24h&at=2026-11-23")
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("invalid_bucket"))
    );
    for (period, code) in [
        ("rolling:169h", "invalid_period"),
        ("rolling:91d", "invalid_period"),
        ("rolling:0h", "invalid_period"),
        ("rolling:5h", "period_not_enabled"),
        ("rolling:7d", "period_not_enabled"),
    ] {
        let (status, body) = app
            .get(&format!("/api/v1/boards/roll/top?period={period}"))
            .await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (StatusCode::UNPROCESSABLE_ENTITY, Some(code)),
            "{period}"
        );
    }
}

/// A deleted member leaves the window's slots too: when its slot expires, it must not
/// come back with a negative total.
#[tokio::test]
async fn a_deleted_member_leaves_every_slot_of_the_window() {
    use crate::harness::TestApp;
    use reqwest::StatusCode;
    use serde_json::json;

    let app = TestApp::spawn().await;
    app.board(json!({"slug": "del", "title": "Del", "periods": ["all", "rolling:24h"]}))
        .await;
    app.members("del", &["m1", "m2"]).await;
    for member in ["m1", "m2"] {
        app.vote("del", json!({"member": member, "count": 2})).await;
    }
    let (status, _) = app.delete("/api/v1/admin/boards/del/members/m1").await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    // The first board of a fresh database has id 1.
    let prefix = format!("{}:", app.prefix);
    let store = store_on_shared_backend(&prefix);
    let board = store
        .keys()
        .board(1, Storage::Full, Spread::Voters, chrono_tz::Tz::UTC);
    let now = Rolling::HOURS_24.slot(chrono_tz::Tz::UTC, Utc::now());
    // A vote an hour on, so the current slot later leaves on its own, not in a reset.
    let later = WindowTarget {
        window: WindowAt::new(&board, Rolling::HOURS_24, now + 1),
        at: now + 1,
    };
    let call = VoteCall {
        board: &board,
        targets: &[],
        increment: Increment {
            real: 1,
            display: 1_000_000,
            carry: 0,
        },
        write: WriteFacts::at("m2", None, (now + 1) * 3_600_000),
        windows: std::slice::from_ref(&later),
        trends: &[],
    };
    store.cast_votes(&[call]).await.unwrap().remove(0).unwrap();
    for (clock, expected) in [
        (now + 1, vec![("m2".to_owned(), 3)]),
        (now + 24, vec![("m2".to_owned(), 1)]),
    ] {
        let query = WindowPageQuery {
            window: WindowAt::new(&board, Rolling::HOURS_24, clock),
            view: View::Real,
            offset: 0,
            limit: 10,
            anchor: None,
        };
        let page = store.window_pages(&[query]).await.unwrap().remove(0);
        assert_eq!(page.entries, expected, "at slot {clock}");
    }
}

/// Rules and idempotency on a board that keeps nothing but the last 7 days.
#[tokio::test]
async fn rules_and_retries_work_on_a_rolling_only_board() {
    use crate::harness::{TestApp, num};
    use reqwest::StatusCode;
    use serde_json::json;

    let app = TestApp::spawn().await;
    app.board(
        json!({"slug": "week", "title": "Week", "periods": ["rolling:7d"],
        "timezone": "America/New_York"}),
    )
    .await;
    app.members("week", &["a"]).await;
    let (status, _) = app
        .post(
            "/api/v1/admin/boards/week/rules",
            json!({"name": "two a day", "dimensions": ["voter"], "window": "day", "limit": 2}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let vote = json!({"member": "a", "voter": "v1", "idempotency_key": "k-1"});
    let (status, first) = app.vote("week", vote.clone()).await;
    assert_eq!(status, StatusCode::OK, "{first}");
    assert_eq!(first["scores"][0]["period"], "rolling:7d");
    assert_eq!(num(&first["scores"][0]["real"]), 1.0);
    let (status, again) = app.vote("week", vote).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(again["replayed"], true);
    assert_eq!(
        again["scores"], first["scores"],
        "a retry answers the first answer"
    );
    let (status, _) = app
        .vote("week", json!({"member": "a", "voter": "v1"}))
        .await;
    assert_eq!(status, StatusCode::OK);
    let (status, refused) = app
        .vote("week", json!({"member": "a", "voter": "v1"}))
        .await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{refused}");
    let (_, top) = app.get("/api/v1/boards/week/top?view=real").await;
    assert_eq!(
        top["period"], "rolling:7d",
        "the only period is the default"
    );
    assert_eq!(num(&top["entries"][0]["score"]), 2.0, "{top}");
    assert_eq!(top["participants"], 1);
}
