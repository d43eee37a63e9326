//! Leagues in play: joins fill brackets in order, scores rank with exact ties, a close
//! moves players once (by hand, by the task, racing, resumed), rewards are handed over
//! once, webhooks are signed and retried until delivered.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::harness::{Options, RawRedis, TestApp};

pub(crate) fn league(slug: &str, size: i64, webhook: Option<String>) -> Value {
    json!({"slug": slug, "title": slug,
        "tiers": [{"name": "bronze", "promote": 0.5, "demote": 0},
            {"name": "silver", "promote": 0.25, "demote": 0.25},
            {"name": "gold", "promote": 0, "demote": 0.5}],
        "bracket_size": size, "season": "month", "timezone": "UTC",
        "rewards": [{"tier": "bronze", "ranks": [1, 1], "reward": "medal"}],
        "webhook_url": webhook})
}

pub(crate) async fn create(app: &TestApp, body: Value) -> Value {
    let (status, created) = app.post("/api/v1/admin/leagues", body).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    created
}

pub(crate) async fn join(app: &TestApp, slug: &str, player: &str) -> Value {
    let (status, joined) = app
        .post(
            &format!("/api/v1/leagues/{slug}/join"),
            json!({"player": player}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{joined}");
    joined
}

pub(crate) async fn score(app: &TestApp, slug: &str, body: Value) -> (StatusCode, Value) {
    app.post(&format!("/api/v1/leagues/{slug}/scores"), body)
        .await
}

pub(crate) async fn add(app: &TestApp, slug: &str, player: &str, delta: i64) -> Value {
    let (status, answer) = score(app, slug, json!({"player": player, "delta": delta})).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    answer
}

pub(crate) fn code(answer: &(StatusCode, Value)) -> (StatusCode, Option<&str>) {
    (answer.0, answer.1["error"]["code"].as_str())
}

/// `(rank, player, score, zone)` of each entry of a bracket.
async fn standings(app: &TestApp, slug: &str, bracket: &str) -> Vec<(i64, String, i64, String)> {
    let (status, read) = app
        .get(&format!("/api/v1/leagues/{slug}/brackets/{bracket}"))
        .await;
    assert_eq!(status, StatusCode::OK, "{read}");
    read["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["rank"].as_i64().unwrap(),
                e["player"].as_str().unwrap().to_owned(),
                e["score"].as_i64().unwrap(),
                e["zone"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn row(rank: i64, player: &str, score: i64, zone: &str) -> (i64, String, i64, String) {
    (rank, player.to_owned(), score, zone.to_owned())
}

#[tokio::test(flavor = "multi_thread")]
async fn joins_fill_brackets_in_order_and_equal_scores_rank_by_join() {
    let app = TestApp::spawn().await;
    create(&app, league("arena", 3, None)).await;
    let mut places = Vec::new();
    for i in 1..=7 {
        let joined = join(&app, "arena", &format!("p{i}")).await;
        assert_eq!(
            (
                joined["season"].clone(),
                joined["tier"].clone(),
                joined["score"].clone()
            ),
            (json!(1), json!("bronze"), json!(0))
        );
        assert_eq!(joined["rewards"], json!([]));
        places.push((
            joined["bracket"].as_str().unwrap().to_owned(),
            joined["rank"].as_i64().unwrap(),
        ));
    }
    let want: Vec<(String, i64)> = [
        ("bronze-1", 1),
        ("bronze-1", 2),
        ("bronze-1", 3),
        ("bronze-2", 1),
        ("bronze-2", 2),
        ("bronze-2", 3),
        ("bronze-3", 1),
    ]
    .iter()
    .map(|(b, r)| (b.to_string(), *r))
    .collect();
    assert_eq!(places, want);

    // Joining again answers the same place and replaces the profile.
    let (status, again) = app
        .post(
            "/api/v1/leagues/arena/join",
            json!({"player": "p2", "profile": {"nickname": "Two", "avatar": "https://example.com/2.png"}}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{again}");
    assert_eq!(
        (again["bracket"].clone(), again["rank"].clone()),
        (json!("bronze-1"), json!(2))
    );

    // p3 scores first, p2 then equals it: p2 joined earlier and ranks first.
    assert_eq!(add(&app, "arena", "p3", 10).await["rank"], 1);
    let p2 = add(&app, "arena", "p2", 10).await;
    assert_eq!(
        (
            p2["rank"].clone(),
            p2["score"].clone(),
            p2["bracket"].clone()
        ),
        (json!(1), json!(10), json!("bronze-1"))
    );
    assert_eq!(
        standings(&app, "arena", "bronze-1").await,
        [
            row(1, "p2", 10, "promote"),
            row(2, "p3", 10, "stay"),
            row(3, "p1", 0, "stay")
        ]
    );
    let (_, read) = app.get("/api/v1/leagues/arena/brackets/bronze-1").await;
    assert_eq!(
        (
            read["entries"][0]["nickname"].clone(),
            read["entries"][0]["avatar"].clone()
        ),
        (json!("Two"), json!("https://example.com/2.png"))
    );
    assert_eq!(read["entries"][1]["nickname"], Value::Null);
    let (status, p1) = app.get("/api/v1/leagues/arena/players/p1").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        p1,
        json!({"season": 1, "player": "p1", "tier": "bronze", "bracket": "bronze-1", "rank": 3, "score": 0, "zone": "stay"})
    );

    // Scores near 2^53 stay exact, and past it are refused.
    let max = 9_007_199_254_740_991_i64;
    assert_eq!(add(&app, "arena", "p4", max).await["score"], json!(max));
    assert_eq!(
        code(&score(&app, "arena", json!({"player": "p4", "delta": 1})).await),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("score_overflow"))
    );
    add(&app, "arena", "p5", max - 1).await;
    add(&app, "arena", "p6", max).await;
    assert_eq!(
        standings(&app, "arena", "bronze-2").await,
        [
            row(1, "p4", max, "promote"),
            row(2, "p6", max, "stay"),
            row(3, "p5", max - 1, "stay")
        ]
    );
    assert_eq!(add(&app, "arena", "p4", -max).await["score"], 0);

    // A key makes a write count once; reused for another write, it is refused.
    let keyed = |delta: i64| json!({"player": "p7", "delta": delta, "idempotency_key": "match-1"});
    let first = score(&app, "arena", keyed(5)).await;
    assert_eq!(
        (first.1["score"].clone(), first.1["replayed"].clone()),
        (json!(5), json!(false))
    );
    let again = score(&app, "arena", keyed(5)).await;
    assert_eq!(
        (again.1["score"].clone(), again.1["replayed"].clone()),
        (json!(5), json!(true))
    );
    // A replay says so in a header too, as a vote's does.
    let replay = app
        .client
        .post(format!("{}/api/v1/leagues/arena/scores", app.base))
        .bearer_auth(crate::harness::MASTER_KEY)
        .json(&keyed(5))
        .send()
        .await
        .unwrap();
    assert_eq!(replay.headers()["idempotent-replayed"], "true");
    assert_eq!(
        code(&score(&app, "arena", keyed(6)).await),
        (
            StatusCode::UNPROCESSABLE_ENTITY,
            Some("idempotency_key_reused")
        )
    );
    assert_eq!(
        standings(&app, "arena", "bronze-3").await,
        [row(1, "p7", 5, "stay")]
    );

    // Bad input: each refused with its code, nothing changed.
    assert_eq!(
        code(&score(&app, "arena", json!({"player": "p9", "delta": 1})).await),
        (StatusCode::CONFLICT, Some("not_joined"))
    );
    let (status, answer) = app.get("/api/v1/leagues/arena/players/p9").await;
    assert_eq!(
        (status, answer["error"]["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("not_joined"))
    );
    for (body, want) in [
        (json!({"player": "p1", "delta": 1.5}), "invalid_delta"),
        (
            json!({"player": "p1", "delta": 9_007_199_254_740_992_i64}),
            "invalid_delta",
        ),
        (
            json!({"player": "bad player", "delta": 1}),
            "invalid_player",
        ),
    ] {
        assert_eq!(
            code(&score(&app, "arena", body.clone()).await),
            (StatusCode::UNPROCESSABLE_ENTITY, Some(want)),
            "{body}"
        );
    }
    for profile in [
        json!({"avatar": "ftp://x"}),
        json!({"avatar": "https://example.com/a b.png"}),
        json!({"nickname": "\u{202E}exe.txt"}),
        json!({"nickname": "Ana\u{2066}"}),
        json!({"nickname": "A\u{0000}"}),
        json!({"nickname": "line\nbreak"}),
        json!({"nickname": "x".repeat(33)}),
        json!({"nickname": "  "}),
    ] {
        let (status, answer) = app
            .post(
                "/api/v1/leagues/arena/join",
                json!({"player": "p1", "profile": profile}),
            )
            .await;
        assert_eq!(
            (status, answer["error"]["code"].as_str()),
            (StatusCode::UNPROCESSABLE_ENTITY, Some("invalid_profile")),
            "{profile}"
        );
    }
    // 32 characters of four bytes each are a nickname.
    let (status, answer) = app
        .post(
            "/api/v1/leagues/arena/join",
            json!({"player": "p1", "profile": {"nickname": "😀".repeat(32)}}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    for (bracket, status, want) in [
        ("bronze-9", StatusCode::NOT_FOUND, "bracket_not_found"),
        ("iron-1", StatusCode::UNPROCESSABLE_ENTITY, "unknown_tier"),
        (
            "bronze",
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_bracket",
        ),
    ] {
        let (got, answer) = app
            .get(&format!("/api/v1/leagues/arena/brackets/{bracket}"))
            .await;
        assert_eq!(
            (got, answer["error"]["code"].as_str()),
            (status, Some(want)),
            "{bracket}"
        );
    }
    assert_eq!(
        standings(&app, "arena", "bronze-1").await,
        [
            row(1, "p2", 10, "promote"),
            row(2, "p3", 10, "stay"),
            row(3, "p1", 0, "stay")
        ]
    );

    // A deleted league takes no joins.
    let (status, _) = app.delete("/api/v1/admin/leagues/arena").await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, answer) = app
        .post("/api/v1/leagues/arena/join", json!({"player": "p1"}))
        .await;
    assert_eq!(
        (status, answer["error"]["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("league_not_found"))
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_thousand_concurrent_joins_fill_every_bracket_exactly() {
    let app = Arc::new(TestApp::spawn().await);
    create(&app, league("rush", 50, None)).await;
    let mut clients = Vec::new();
    for c in 0..64 {
        let app = Arc::clone(&app);
        clients.push(tokio::spawn(async move {
            let mut placed = Vec::new();
            for i in (c..1000).step_by(64) {
                let player = format!("u{i}");
                let joined = join(&app, "rush", &player).await;
                placed.push((player, joined["bracket"].as_str().unwrap().to_owned()));
            }
            placed
        }));
    }
    let mut answered = BTreeMap::new();
    for client in clients {
        answered.extend(client.await.unwrap());
    }
    assert_eq!(answered.len(), 1000);
    let mut seen = BTreeMap::new();
    for b in 1..=20 {
        let bracket = format!("bronze-{b}");
        let entries = standings(&app, "rush", &bracket).await;
        assert_eq!(entries.len(), 50, "{bracket}");
        for (_, player, _, _) in entries {
            assert!(
                seen.insert(player, bracket.clone()).is_none(),
                "a player in two brackets"
            );
        }
    }
    assert_eq!(seen, answered);
    let (status, _) = app.get("/api/v1/leagues/rush/brackets/bronze-21").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

/// The close report's moves and rewards as `(player, bracket, rank, from, to)` and
/// `(player, reward)`.
fn moves(report: &Value, list: &str) -> Vec<(String, String, i64, String, String)> {
    report[list]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["player"].as_str().unwrap().to_owned(),
                m["bracket"].as_str().unwrap().to_owned(),
                m["rank"].as_i64().unwrap(),
                m["from"].as_str().unwrap().to_owned(),
                m["to"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn mv(
    player: &str,
    bracket: &str,
    rank: i64,
    from: &str,
    to: &str,
) -> (String, String, i64, String, String) {
    (player.into(), bracket.into(), rank, from.into(), to.into())
}

pub(crate) async fn close(app: &TestApp, slug: &str, dry_run: bool) -> Value {
    let (status, report) = app
        .post(
            &format!("/api/v1/admin/leagues/{slug}/close?dry_run={dry_run}"),
            json!({}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{report}");
    report
}

/// A close previewed, then done: the preview equals the close.
async fn close_checked(app: &TestApp, slug: &str) -> Value {
    let mut preview = close(app, slug, true).await;
    assert_eq!(preview["dry_run"], true);
    let report = close(app, slug, false).await;
    preview["dry_run"] = json!(false);
    assert_eq!(report, preview);
    report
}

#[tokio::test(flavor = "multi_thread")]
async fn a_close_moves_shares_by_tier_and_hands_rewards_over_once() {
    let app = TestApp::spawn().await;
    create(&app, league("ladder", 4, None)).await;
    for i in 1..=8 {
        join(&app, "ladder", &format!("p{i}")).await;
    }
    for (player, points) in [("p1", 40), ("p2", 30), ("p3", 20), ("p4", 10), ("p8", 5)] {
        add(&app, "ladder", player, points).await;
    }
    // Bronze promotes ⌊0.5 × 4⌋ = 2 per bracket, demotes nobody; rank 1 wins a medal.
    let report = close_checked(&app, "ladder").await;
    assert_eq!(
        (
            report["season"].clone(),
            report["players"].clone(),
            report["brackets"].clone()
        ),
        (json!(1), json!(8), json!(2))
    );
    assert_eq!(
        moves(&report, "promotions"),
        [
            mv("p1", "bronze-1", 1, "bronze", "silver"),
            mv("p2", "bronze-1", 2, "bronze", "silver"),
            mv("p8", "bronze-2", 1, "bronze", "silver"),
            mv("p5", "bronze-2", 2, "bronze", "silver"),
        ]
    );
    assert_eq!(moves(&report, "demotions"), []);
    assert_eq!(
        report["rewards"],
        json!([{"player": "p1", "bracket": "bronze-1", "rank": 1, "reward": "medal"},
            {"player": "p8", "bracket": "bronze-2", "rank": 1, "reward": "medal"}])
    );
    let (_, admin) = app.get("/api/v1/admin/leagues/ladder").await;
    assert_eq!(admin["current_season"]["season"], 2, "{admin}");

    // Season 2: returning players start where season 1 put them; rewards come once.
    let p1 = join(&app, "ladder", "p1").await;
    assert_eq!(
        (
            p1["season"].clone(),
            p1["tier"].clone(),
            p1["bracket"].clone(),
            p1["rewards"].clone()
        ),
        (
            json!(2),
            json!("silver"),
            json!("silver-1"),
            json!(["medal"])
        )
    );
    assert_eq!(join(&app, "ladder", "p1").await["rewards"], json!([]));
    assert_eq!(
        join(&app, "ladder", "p8").await["rewards"],
        json!(["medal"])
    );
    for player in ["p2", "p5"] {
        assert_eq!(join(&app, "ladder", player).await["bracket"], "silver-1");
    }
    assert_eq!(join(&app, "ladder", "p3").await["bracket"], "bronze-1");
    assert_eq!(
        code(&score(&app, "ladder", json!({"player": "p4", "delta": 1})).await),
        (StatusCode::CONFLICT, Some("not_joined"))
    );
    add(&app, "ladder", "p2", 3).await;
    add(&app, "ladder", "p1", 2).await;

    // Silver moves ⌊0.25 × 4⌋ = 1 each way; a bracket of one in bronze moves nobody.
    let report = close_checked(&app, "ladder").await;
    assert_eq!(
        moves(&report, "promotions"),
        [mv("p2", "silver-1", 1, "silver", "gold")]
    );
    assert_eq!(
        moves(&report, "demotions"),
        [mv("p5", "silver-1", 4, "silver", "bronze")]
    );
    assert_eq!(
        report["rewards"],
        json!([{"player": "p3", "bracket": "bronze-1", "rank": 1, "reward": "medal"}])
    );
    assert_eq!(join(&app, "ladder", "p2").await["tier"], "gold");
    assert_eq!(join(&app, "ladder", "p5").await["tier"], "bronze");
    assert_eq!(join(&app, "ladder", "p1").await["tier"], "silver");
    // p4 skipped season 2: season 1 put them in bronze, where they play.
    assert_eq!(join(&app, "ladder", "p4").await["tier"], "bronze");
}

/// Every player's recorded result of season 1, by player.
async fn season_one(
    app: &TestApp,
    slug: &str,
) -> BTreeMap<String, (usize, i64, i64, i64, String, usize)> {
    let (state, league) = app.league_in_sql(slug).await;
    let season = ovation::store::sql::leagues::season(&state.db, league.id, 1)
        .await
        .unwrap()
        .unwrap();
    assert!(season.closed);
    let mut rows = Vec::new();
    for (place, _) in ovation::store::sql::leagues::bracket_sizes(&state.db, season.id)
        .await
        .unwrap()
    {
        rows.extend(
            ovation::store::sql::leagues::bracket_results(&state.db, season.id, place)
                .await
                .unwrap(),
        );
    }
    let by_player: BTreeMap<_, _> = rows
        .into_iter()
        .map(|r| {
            (
                r.player,
                (
                    r.place.tier,
                    r.place.number,
                    r.rank,
                    r.score,
                    r.zone,
                    r.next_tier,
                ),
            )
        })
        .collect();
    by_player
}

#[tokio::test(flavor = "multi_thread")]
async fn a_close_cut_off_is_finished_once_by_racing_instances_with_the_same_result() {
    let first = TestApp::spawn_with(Options {
        league_check: Duration::from_secs(3600),
        ..Options::default()
    })
    .await;
    for slug in ["cut", "whole"] {
        create(&first, league(slug, 4, None)).await;
        for i in 1..=10 {
            join(&first, slug, &format!("p{i}")).await;
        }
        for (i, points) in [(3, 9), (1, 7), (10, 7), (6, 2), (5, 1)] {
            add(&first, slug, &format!("p{i}"), points).await;
        }
    }
    // "whole" closes in one go.
    close(&first, "whole", false).await;
    // "cut" is over; a join starts season 2 (the close's first step) and nothing closes
    // season 1 here: this instance's task does not run.
    let mut raw = RawRedis::connect().await;
    let (_, cut) = first.league_in_sql("cut").await;
    let record = format!("{}:{{l:{}}}:season", first.prefix, cut.id);
    let past = chrono::Utc::now().timestamp_millis() - 1000;
    let () = raw
        .query(redis::cmd("HSET").arg(&record).arg("ends").arg(past))
        .await;
    let joined = join(&first, "cut", "p11").await;
    assert_eq!(
        (joined["season"].clone(), joined["tier"].clone()),
        (json!(2), json!("bronze"))
    );
    // A returning player's tier is known before the close: computed from the frozen season.
    assert_eq!(join(&first, "cut", "p3").await["tier"], "silver");
    assert_eq!(
        code(&score(&first, "cut", json!({"player": "p3", "delta": 1})).await),
        (StatusCode::CONFLICT, Some("season_closing"))
    );

    // Two instances whose task runs every 50 ms race to finish it.
    let racer = || Options {
        prefix: first.prefix.clone(),
        database: Some(Arc::clone(&first.database)),
        league_check: Duration::from_millis(50),
        ..Options::default()
    };
    let (_second, _third) = (
        TestApp::spawn_with(racer()).await,
        TestApp::spawn_with(racer()).await,
    );
    let started = Instant::now();
    loop {
        let answer = score(&first, "cut", json!({"player": "p3", "delta": 1})).await;
        if answer.0 == StatusCode::OK {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(15), "{answer:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (cut, whole) = (
        season_one(&first, "cut").await,
        season_one(&first, "whole").await,
    );
    assert_eq!(cut.len(), 10);
    assert_eq!(cut, whole);
    let (_, admin) = first.get("/api/v1/admin/leagues/cut").await;
    assert_eq!(admin["current_season"]["season"], 2, "{admin}");
    for (player, tier) in [
        ("p3", "silver"),
        ("p1", "silver"),
        ("p6", "silver"),
        ("p2", "bronze"),
        ("p10", "silver"),
    ] {
        assert_eq!(join(&first, "cut", player).await["tier"], tier, "{player}");
        assert_eq!(
            join(&first, "whole", player).await["tier"],
            tier,
            "{player}"
        );
    }
}

/// A season's inputs: tier ratios (thousandths) for 3 tiers, a bracket size, each
/// player's total score (players join in order), and where the rewards go.
#[derive(Debug, Clone)]
struct Season {
    ratios: [(i64, i64); 3],
    size: i64,
    scores: Vec<i64>,
    reward_ranks: (i64, i64),
}

fn season_strategy() -> impl proptest::strategy::Strategy<Value = Season> {
    use proptest::prelude::*;
    (
        0i64..=1000,
        0i64..=1000,
        0i64..=1000,
        0i64..=1000,
        2i64..6,
        proptest::collection::vec(-3i64..4, 0..23),
        1i64..3,
    )
        .prop_map(|(p0, p1, d1, d2, size, scores, first)| Season {
            ratios: [(p0, 0), (p1.min(1000 - d1), d1), (0, d2)],
            size,
            scores,
            reward_ranks: (first.min(size - 1), first.min(size - 1) + 1),
        })
}

/// What the close must do, worked out by brute force: brackets of `size` in join order,
/// each ranked by score then join, the top ⌊p·n⌋ up and the bottom ⌊d·n⌋ down.
/// A player placed by a close: player, bracket, final rank.
type Placed = (String, String, i64);

fn model(season: &Season) -> (Vec<Placed>, Vec<Placed>, Vec<(String, i64)>) {
    let (mut up, mut down, mut rewarded) = (Vec::new(), Vec::new(), Vec::new());
    let players: Vec<(usize, i64)> = season.scores.iter().copied().enumerate().collect();
    for (b, bracket) in players.chunks(season.size as usize).enumerate() {
        let mut ranked = bracket.to_vec();
        ranked.sort_by(|x, y| y.1.cmp(&x.1).then(x.0.cmp(&y.0)));
        let n = ranked.len() as i64;
        let (p, d) = season.ratios[0];
        let (promote, demote) = (n * p / 1000, n * d / 1000);
        for (i, (who, _)) in ranked.iter().enumerate() {
            let rank = i as i64 + 1;
            let id = (format!("p{}", who + 1), format!("bronze-{}", b + 1), rank);
            if rank <= promote {
                up.push(id.clone());
            } else if rank > n - demote {
                down.push(id.clone());
            }
            if (season.reward_ranks.0..=season.reward_ranks.1).contains(&rank) {
                rewarded.push((id.0, rank));
            }
        }
    }
    (up, down, rewarded)
}

#[tokio::test(flavor = "multi_thread")]
async fn closes_of_random_seasons_match_a_brute_force_model() {
    use proptest::strategy::{Strategy, ValueTree};
    let app = TestApp::spawn().await;
    let mut runner = proptest::test_runner::TestRunner::default();
    for case in 0..12 {
        let season = season_strategy().new_tree(&mut runner).unwrap().current();
        let slug = format!("model-{case}");
        let tiers: Vec<Value> = ["bronze", "silver", "gold"]
            .iter()
            .zip(season.ratios)
            .map(|(name, (p, d))| json!({"name": name, "promote": p as f64 / 1000.0, "demote": d as f64 / 1000.0}))
            .collect();
        create(
            &app,
            json!({"slug": slug, "title": slug, "tiers": tiers, "bracket_size": season.size,
                "season": "week", "rewards": [{"tier": "bronze", "ranks": [season.reward_ranks.0, season.reward_ranks.1], "reward": "r"}]}),
        )
        .await;
        for (i, score) in season.scores.iter().enumerate() {
            let p = format!("p{}", i + 1);
            join(&app, &slug, &p).await;
            if *score != 0 {
                add(&app, &slug, &p, *score).await;
            }
        }
        let report = close_checked(&app, &slug).await;
        let (up, down, rewarded) = model(&season);
        let got = |list: &str| -> Vec<Placed> {
            moves(&report, list)
                .into_iter()
                .map(|(p, b, r, _, _)| (p, b, r))
                .collect()
        };
        assert_eq!(got("promotions"), up, "{season:?}");
        assert_eq!(got("demotions"), down, "{season:?}");
        let got_rewards: Vec<(String, i64)> = report["rewards"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| {
                (
                    g["player"].as_str().unwrap().to_owned(),
                    g["rank"].as_i64().unwrap(),
                )
            })
            .collect();
        assert_eq!(got_rewards, rewarded, "{season:?}");
        assert_eq!(report["players"], json!(season.scores.len()), "{season:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn score_limits_refuse_past_the_limit_under_concurrency_and_count_nothing_refused() {
    let app = Arc::new(TestApp::spawn().await);
    let mut body = league("capped", 10, None);
    body["score_limits"] = json!([{"name": "three in ten minutes", "per": ["player"], "window": "rolling:10m", "limit": 3}]);
    let created = create(&app, body).await;
    assert_eq!(
        created["score_limits"],
        json!([{"name": "three in ten minutes", "per": ["player"], "window": "rolling:10m", "limit": 3}])
    );
    for p in ["a", "b"] {
        join(&app, "capped", p).await;
    }
    // 20 writes at once for one player: exactly 3 pass, whatever the timing (a rolling
    // window: no boundary to cross mid-test).
    let mut writes = Vec::new();
    for _ in 0..20 {
        let app = Arc::clone(&app);
        writes.push(tokio::spawn(async move {
            score(&app, "capped", json!({"player": "a", "delta": 1})).await
        }));
    }
    let mut passed = 0;
    for w in writes {
        let (status, answer) = w.await.unwrap();
        match status {
            StatusCode::OK => passed += 1,
            StatusCode::TOO_MANY_REQUESTS => {
                assert_eq!(answer["error"]["code"], "rate_limited", "{answer}");
                assert_eq!(answer["error"]["rule"]["name"], "three in ten minutes");
                assert_eq!(answer["error"]["rule"]["limit"], 3);
                let retry = answer["error"]["retry_after_s"].as_i64().unwrap();
                assert!((1..=601).contains(&retry), "{answer}");
                assert_eq!(answer["error"]["rule"]["dimensions"], json!(["player"]));
            }
            other => panic!("{other}: {answer}"),
        }
    }
    assert_eq!(passed, 3);
    let (_, a) = app.get("/api/v1/leagues/capped/players/a").await;
    assert_eq!(a["score"], 3, "refused writes count nothing");
    // Another player has a limit of their own.
    assert_eq!(add(&app, "capped", "b", 5).await["score"], 5);

    for (limits, code) in [
        (
            json!([{"per": ["voter"], "window": "minute", "limit": 3}]),
            "invalid_dimension",
        ),
        (
            json!([{"per": ["player"], "window": "campaign", "limit": 3}]),
            "invalid_window",
        ),
        (
            json!([{"per": ["player"], "window": "minute", "limit": 0}]),
            "invalid_limit",
        ),
        (
            json!([{"per": [], "window": "minute", "limit": 3}]),
            "empty_dimensions",
        ),
    ] {
        let (status, answer) = app
            .patch(
                "/api/v1/admin/leagues/capped",
                json!({"score_limits": limits}),
            )
            .await;
        assert_eq!(
            (status, answer["error"]["code"].as_str()),
            (StatusCode::UNPROCESSABLE_ENTITY, Some(code)),
            "{answer}"
        );
    }
    // Limits apply at once: lifted, the next write passes.
    let (status, _) = app
        .patch("/api/v1/admin/leagues/capped", json!({"score_limits": []}))
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(add(&app, "capped", "a", 1).await["score"], 4);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_close_while_another_holds_the_lease_is_refused_and_changes_nothing() {
    let app = TestApp::spawn().await;
    create(&app, league("busy", 4, None)).await;
    join(&app, "busy", "p1").await;
    let mut raw = RawRedis::connect().await;
    let record = raw
        .keys(&format!("{}:{{l:*}}:season", app.prefix))
        .await
        .remove(0);
    let lease = record.replace(":season", ":close:lease");
    let () = raw
        .query(
            redis::cmd("SET")
                .arg(&lease)
                .arg("another-instance")
                .arg("PX")
                .arg(60_000),
        )
        .await;
    let (status, answer) = app
        .post("/api/v1/admin/leagues/busy/close", json!({}))
        .await;
    assert_eq!(
        (status, answer["error"]["code"].as_str()),
        (StatusCode::CONFLICT, Some("already_closing"))
    );
    // The dry run needs no lease; the season is still the first, and open.
    assert_eq!(close(&app, "busy", true).await["season"], 1);
    assert_eq!(add(&app, "busy", "p1", 2).await["season"], 1);
    let () = raw.query(redis::cmd("DEL").arg(&lease)).await;
    assert_eq!(close(&app, "busy", false).await["season"], 1);
    assert_eq!(join(&app, "busy", "p1").await["season"], 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_close_cut_off_after_its_sql_transaction_is_finished_with_rewards_handed_over_once() {
    let app = TestApp::spawn().await;
    create(&app, league("late", 4, None)).await;
    for i in 1..=4 {
        join(&app, "late", &format!("p{i}")).await;
    }
    add(&app, "late", "p3", 9).await;
    let report = close(&app, "late", false).await;
    assert_eq!(moves(&report, "promotions").len(), 2);
    // Undo in Redis what follows the SQL transaction, as a crash right after it would
    // leave it: the next season waits, nothing settled, no reward waiting.
    let mut raw = RawRedis::connect().await;
    let record = raw
        .keys(&format!("{}:{{l:*}}:season", app.prefix))
        .await
        .remove(0);
    let base = record.trim_end_matches("season").to_owned();
    let () = raw
        .query(redis::cmd("HSET").arg(&record).arg("state").arg("waiting"))
        .await;
    let _: i64 = raw
        .query(redis::cmd("HDEL").arg(&record).arg("settled"))
        .await;
    let _: i64 = raw
        .query(
            redis::cmd("DEL")
                .arg(format!("{base}tiers"))
                .arg(format!("{base}rewards")),
        )
        .await;
    assert_eq!(
        code(&score(&app, "late", json!({"player": "p3", "delta": 1})).await),
        (StatusCode::CONFLICT, Some("season_closing"))
    );
    // The task finishes it (every 200 ms here): scores are taken again. p3 joins season 2
    // meanwhile; whichever join comes first after the close hands the reward over.
    let mut handed = Vec::new();
    let started = Instant::now();
    while score(&app, "late", json!({"player": "p3", "delta": 0}))
        .await
        .0
        != StatusCode::OK
    {
        let joined = join(&app, "late", "p3").await;
        assert_eq!(joined["tier"], "silver", "{joined}");
        handed.extend(joined["rewards"].as_array().unwrap().clone());
        assert!(started.elapsed() < Duration::from_secs(10));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    for _ in 0..2 {
        handed.extend(
            join(&app, "late", "p3").await["rewards"]
                .as_array()
                .unwrap()
                .clone(),
        );
    }
    assert_eq!(handed, [json!("medal")], "the reward, once");
    // Season 1 is recorded once.
    assert_eq!(season_one(&app, "late").await.len(), 4);
    assert_eq!(join(&app, "late", "p4").await["tier"], "bronze");
}

/// Season `n`'s rewards in SQL as `(player, reward, handed over, handed to)`.
async fn rewards_of(
    app: &TestApp,
    slug: &str,
    n: i64,
) -> Vec<(String, String, bool, Option<String>)> {
    let (state, league) = app.league_in_sql(slug).await;
    let season = ovation::store::sql::leagues::season(&state.db, league.id, n)
        .await
        .unwrap()
        .unwrap();
    ovation::store::sql::leagues::season_rewards(&state.db, season.id)
        .await
        .unwrap()
        .into_iter()
        .map(|r| (r.player, r.reward, r.delivered_at.is_some(), r.delivered_to))
        .collect()
}

async fn join_with(app: &TestApp, key: &str, slug: &str, player: &str) -> Value {
    let (status, joined) = app
        .call(
            reqwest::Method::POST,
            &format!("/api/v1/leagues/{slug}/join"),
            Some(key),
            Some(&json!({"player": player})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{joined}");
    joined
}

async fn key_for_league(app: &TestApp, name: &str, slug: &str) -> (i64, String) {
    let (status, created) = app
        .post(
            "/api/v1/admin/api-keys",
            json!({"name": name, "scopes": ["vote", "read"], "leagues": [slug]}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    (
        created["id"].as_i64().unwrap(),
        created["key"].as_str().unwrap().to_owned(),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn a_reward_goes_only_to_the_key_that_played_the_season_that_won_it() {
    let app = TestApp::spawn().await;
    create(&app, league("crown", 4, None)).await;
    let (backend_id, backend) = key_for_league(&app, "game backend", "crown").await;
    let (_, partner) = key_for_league(&app, "partner", "crown").await;
    for player in ["hero", "p2"] {
        join_with(&app, &backend, "crown", player).await;
    }
    add(&app, "crown", "hero", 5).await;
    let report = close(&app, "crown", false).await;
    assert_eq!(
        report["rewards"],
        json!([{"player": "hero", "bracket": "bronze-1", "rank": 1, "reward": "medal"}])
    );
    // Another key the league admits joins as hero: it plays, but takes nothing.
    let impostor = join_with(&app, &partner, "crown", "hero").await;
    assert_eq!(impostor["rewards"], json!([]), "{impostor}");
    assert_eq!(impostor["season"], 2);
    assert_eq!(
        rewards_of(&app, "crown", 1).await,
        [("hero".to_owned(), "medal".to_owned(), false, None)]
    );
    // The backend that played season 1 gets it, once, and SQL says who took it.
    let mine = join_with(&app, &backend, "crown", "hero").await;
    assert_eq!(mine["rewards"], json!(["medal"]), "{mine}");
    assert_eq!(mine["bracket"], impostor["bracket"], "the same place");
    assert_eq!(
        join_with(&app, &backend, "crown", "hero").await["rewards"],
        json!([])
    );
    let handed_to = Some(format!("key:{backend_id}"));
    let started = Instant::now();
    while rewards_of(&app, "crown", 1).await
        != [(
            "hero".to_owned(),
            "medal".to_owned(),
            true,
            handed_to.clone(),
        )]
    {
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "recorded as handed over"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_reward_held_for_a_revoked_key_goes_to_the_next_key_the_league_admits() {
    let app = TestApp::spawn().await;
    create(&app, league("rotate", 4, None)).await;
    let (old_id, old) = key_for_league(&app, "backend, old key", "rotate").await;
    join_with(&app, &old, "rotate", "hero").await;
    add(&app, "rotate", "hero", 5).await;
    close(&app, "rotate", false).await;
    let (new_id, new) = key_for_league(&app, "backend, new key", "rotate").await;
    assert_eq!(
        join_with(&app, &new, "rotate", "hero").await["rewards"],
        json!([])
    );
    let (status, _) = app
        .delete(&format!("/api/v1/admin/api-keys/{old_id}"))
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let joined = join_with(&app, &new, "rotate", "hero").await;
    assert_eq!(joined["rewards"], json!(["medal"]), "{joined}");
    assert_eq!(
        join_with(&app, &new, "rotate", "hero").await["rewards"],
        json!([])
    );
    let started = Instant::now();
    while rewards_of(&app, "rotate", 1).await
        != [(
            "hero".to_owned(),
            "medal".to_owned(),
            true,
            Some(format!("key:{new_id}")),
        )]
    {
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "recorded as handed over"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// One score write of the ops model: a player (0..4), an op and a value.
type OpWrite = (usize, &'static str, i64);

fn op_writes() -> impl proptest::strategy::Strategy<Value = Vec<OpWrite>> {
    use proptest::prelude::*;
    proptest::collection::vec(
        (
            0usize..4,
            prop_oneof![Just("set"), Just("best"), Just("incr"), Just("delta")],
            -6i64..7,
        ),
        1..30,
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn set_best_and_incr_match_a_model_with_ties_by_join_order() {
    use proptest::strategy::{Strategy, ValueTree};
    let app = TestApp::spawn().await;
    let mut runner = proptest::test_runner::TestRunner::default();
    for case in 0..10 {
        let writes = op_writes().new_tree(&mut runner).unwrap().current();
        let slug = format!("ops-{case}");
        create(&app, league(&slug, 10, None)).await;
        let players = ["p1", "p2", "p3", "p4"];
        let mut bracket = String::new();
        for p in players {
            bracket = join(&app, &slug, p).await["bracket"]
                .as_str()
                .unwrap()
                .to_owned();
        }
        let mut model = [0i64; 4];
        for (i, (who, op, value)) in writes.iter().enumerate() {
            let body = match *op {
                "delta" => json!({"player": players[*who], "delta": value}),
                op => json!({"player": players[*who], "op": op, "value": value}),
            };
            let (status, answer) = score(&app, &slug, body).await;
            assert_eq!(status, StatusCode::OK, "{answer}");
            let current = model[*who];
            model[*who] = match *op {
                "set" => *value,
                "best" => current.max(*value),
                _ => current + value,
            };
            assert_eq!(
                answer["score"],
                json!(model[*who]),
                "write {i} of {writes:?}"
            );
            // Rank: 1 + players with a higher score + those tied who joined earlier.
            let rank = 1
                + (0..4)
                    .filter(|&j| model[j] > model[*who] || (model[j] == model[*who] && j < *who))
                    .count() as i64;
            assert_eq!(answer["rank"], json!(rank), "write {i} of {writes:?}");
        }
        let mut expected: Vec<(usize, i64)> = model.iter().copied().enumerate().collect();
        expected.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let got: Vec<(String, i64)> = standings(&app, &slug, &bracket)
            .await
            .into_iter()
            .map(|(_, p, s, _)| (p, s))
            .collect();
        let want: Vec<(String, i64)> = expected
            .into_iter()
            .map(|(j, s)| (players[j].to_owned(), s))
            .collect();
        assert_eq!(got, want, "{writes:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn score_ops_are_checked_and_replayed_by_their_key() {
    let app = TestApp::spawn().await;
    create(&app, league("opscheck", 10, None)).await;
    join(&app, "opscheck", "p1").await;
    for (body, want) in [
        (json!({"player": "p1"}), "invalid_op"),
        (
            json!({"player": "p1", "delta": 1, "op": "set", "value": 2}),
            "invalid_op",
        ),
        (json!({"player": "p1", "op": "set"}), "invalid_op"),
        (json!({"player": "p1", "value": 3}), "invalid_op"),
        (
            json!({"player": "p1", "op": "max", "value": 3}),
            "invalid_op",
        ),
        (
            json!({"player": "p1", "op": "set", "value": 1.5}),
            "invalid_value",
        ),
        (
            json!({"player": "p1", "op": "set", "value": 9007199254740992i64}),
            "invalid_value",
        ),
    ] {
        let answer = score(&app, "opscheck", body.clone()).await;
        assert_eq!(
            code(&answer),
            (StatusCode::UNPROCESSABLE_ENTITY, Some(want)),
            "{body}: {}",
            answer.1
        );
    }
    let max = (1i64 << 53) - 1;
    let set = json!({"player": "p1", "op": "set", "value": max, "idempotency_key": "k1"});
    let first = score(&app, "opscheck", set.clone()).await;
    assert_eq!(first.0, StatusCode::OK, "{}", first.1);
    assert_eq!(first.1["score"], json!(max));
    // Past 2^53 - 1 by incr: refused, nothing changed; set and best never overflow.
    let over = score(
        &app,
        "opscheck",
        json!({"player": "p1", "op": "incr", "value": 1}),
    )
    .await;
    assert_eq!(
        code(&over),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("score_overflow"))
    );
    let best = score(
        &app,
        "opscheck",
        json!({"player": "p1", "op": "best", "value": 5}),
    )
    .await;
    assert_eq!(best.1["score"], json!(max), "{}", best.1);
    // A retry answers the first answer; the key with another op is a reuse.
    add(&app, "opscheck", "p1", -max).await;
    let again = score(&app, "opscheck", set).await;
    assert_eq!(again.1["score"], json!(max));
    assert_eq!(again.1["replayed"], json!(true));
    let reused = score(
        &app,
        "opscheck",
        json!({"player": "p1", "op": "best", "value": max, "idempotency_key": "k1"}),
    )
    .await;
    assert_eq!(
        code(&reused),
        (
            StatusCode::UNPROCESSABLE_ENTITY,
            Some("idempotency_key_reused")
        )
    );
}
