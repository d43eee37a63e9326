//! `make bench`, leagues: a fresh `redis-server` (no persistence) and the release server
//! (`target/release/ovation`, SQLite) as separate processes.
//! 1. Redis time of a join and of a score write (`usec_per_call` of EVALSHA:
//!    `league_join.lua`, then `league_score.lua` on random players) on a league of
//!    100,000 players in brackets of 50, through the store's own calls, 16 in flight.
//! 2. Score writes over HTTP with wrk (64 connections, random joined players), and
//!    Redis's time per write during it.
//! 3. A season's close of 100,000 players in 2,000 brackets, by the close endpoint:
//!    reading every bracket, the one SQL transaction (results, rewards, tiers), settling
//!    tiers in Redis.
//!
//! Each timed phase records the host's steal and runs again (three tries at most) when
//! it lost more than 5% of a core; the table shows the steal of the run it reports.
//! Prints a markdown table and writes JSON to `bench/results/`. `BENCH_SECONDS` (default
//! 10) sets the wrk phase's length, `BENCH_LEAGUE_PLAYERS` the players (default 100,000).

#![allow(clippy::unwrap_used, clippy::expect_used)] // A benchmark stops at the first failure.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::Utc;
use ovation::domain::league::{ScoreOp, SeasonRules};
use ovation::store::redis::{Advance, JoinCall, JoinReply, LeagueScoreCall, RedisStore};
use rand::{Rng, SeedableRng};
use serde_json::{Value, json};

mod common;
mod cpu;
mod http;

use common::{
    env_number, evalsha_stat, evalsha_usec, redis_cli, start_redis, steal_seconds, write_results,
};
use http::{CONNECTIONS, call, cpu_cell, round, server_bin, start_server, until_quiet, wrk};

/// Players per bracket.
const BRACKET: i64 = 50;
/// Score writes timed in phase 1.
const WRITES: usize = 50_000;
/// Requests in flight while players join over HTTP.
const JOINERS: usize = 64;
/// Calls in flight at Redis in phase 1: Redis busy, as under load (a lone call at an
/// idle Redis costs it about twice the time: cold caches, a sleeping thread).
const CALLERS: usize = 16;

fn league_body(slug: &str) -> Value {
    json!({"slug": slug, "title": slug,
        "tiers": [{"name": "bronze", "promote": 0.2, "demote": 0},
            {"name": "silver", "promote": 0.15, "demote": 0.15},
            {"name": "gold", "promote": 0, "demote": 0.2}],
        "bracket_size": BRACKET, "season": "month", "timezone": "UTC",
        "rewards": [{"tier": "bronze", "ranks": [1, 3], "reward": "medal"}]})
}

fn player(i: usize) -> String {
    format!("u{i}")
}

/// Joins `players` players (`u1`…) to `slug` over HTTP and gives each a random score.
async fn fill(client: &reqwest::Client, base: &str, slug: &str, players: usize) {
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(1));
    let mut tasks = Vec::new();
    for t in 0..JOINERS {
        let (client, base, slug, next) = (
            client.clone(),
            base.to_owned(),
            slug.to_owned(),
            next.clone(),
        );
        tasks.push(tokio::spawn(async move {
            let mut rng = rand::rngs::StdRng::seed_from_u64(t as u64);
            loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if i > players {
                    return;
                }
                let p = player(i);
                call(
                    &client,
                    &base,
                    reqwest::Method::POST,
                    &format!("/api/v1/leagues/{slug}/join"),
                    json!({"player": p}),
                )
                .await;
                let delta: i64 = rng.random_range(0..1000);
                call(
                    &client,
                    &base,
                    reqwest::Method::POST,
                    &format!("/api/v1/leagues/{slug}/scores"),
                    json!({"player": p, "delta": delta}),
                )
                .await;
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
}

/// Phase 1: a join's and a score write's Redis time, straight through the store.
async fn redis_times(store: &RedisStore, port: u16, players: usize) -> (f64, f64, f64) {
    let keys = store
        .keys()
        .league(1_000_000 + rand::random::<u32>() as i64);
    let rules = SeasonRules {
        tiers: ovation::domain::league::tiers_from_json(
            r#"[{"name":"bronze","promote":200,"demote":0},{"name":"silver","promote":150,"demote":150},{"name":"gold","promote":0,"demote":200}]"#,
        )
        .unwrap(),
        bracket_size: BRACKET,
        rewards: Vec::new(),
    };
    let now = Utc::now().timestamp_millis();
    let n = store
        .advance_season(
            &keys,
            &Advance {
                current: 0,
                first: 1,
                ended_ms: now,
                ends_ms: now + 86_400_000,
                rules: &rules,
            },
        )
        .await
        .unwrap();
    redis_cli(port, &["CONFIG", "RESETSTAT"]);
    // Each caller guesses a new player's bracket from its last join, as the server
    // does from what it remembers; a wrong guess costs one more call.
    let mut tasks = Vec::new();
    for t in 0..CALLERS {
        let (store, keys) = (store.clone(), keys.clone());
        tasks.push(tokio::spawn(async move {
            let mut places = Vec::new();
            let mut guess = None;
            for i in (1 + t..=players).step_by(CALLERS) {
                let player = player(i);
                loop {
                    let call = JoinCall {
                        season: n,
                        player: &player,
                        profile: None,
                        now_ms: Utc::now().timestamp_millis(),
                        caller: "bench",
                        claim: &[],
                        place: guess,
                        previous: None,
                    };
                    match store.join_league(&keys, &call).await.unwrap() {
                        JoinReply::Joined { place, .. } => {
                            guess = Some(place);
                            places.push((player, place));
                            break;
                        }
                        JoinReply::Place { place, .. } => guess = place,
                        other => panic!("{other:?}"),
                    }
                }
            }
            places
        }));
    }
    let mut places = std::collections::HashMap::new();
    for task in tasks {
        places.extend(task.await.unwrap());
    }
    let join_usec = evalsha_stat(port, "usec") / players as f64;
    let places = Arc::new(places);
    let (score_usec, steal) = until_quiet(
        |(_, steal): &(f64, f64)| *steal,
        || async {
            redis_cli(port, &["CONFIG", "RESETSTAT"]);
            let (stolen, at) = (steal_seconds(), Instant::now());
            let mut tasks = Vec::new();
            for t in 0..CALLERS {
                let (store, keys, places) = (store.clone(), keys.clone(), places.clone());
                tasks.push(tokio::spawn(async move {
                    let mut rng = rand::rngs::StdRng::seed_from_u64(t as u64);
                    for _ in 0..WRITES / CALLERS {
                        let p = player(rng.random_range(1..=players));
                        let call = LeagueScoreCall {
                            season: n,
                            player: &p,
                            op: ScoreOp::Incr(rng.random_range(1..100)),
                            now_ms: Utc::now().timestamp_millis(),
                            idempotency: None,
                            rules: &[],
                            tag: "",
                            place: places.get(&p).copied(),
                        };
                        store.league_score(&keys, &call).await.unwrap();
                    }
                }));
            }
            for task in tasks {
                task.await.unwrap();
            }
            let steal = (steal_seconds() - stolen) / at.elapsed().as_secs_f64() * 100.0;
            (evalsha_usec(port), steal)
        },
    )
    .await;
    (join_usec, score_usec, steal)
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let bin = server_bin(&root);
    let seconds: u64 = env_number("BENCH_SECONDS", 10);
    let players: usize = env_number("BENCH_LEAGUE_PLAYERS", 100_000);
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(run(&root, &bin, seconds, players));
}

async fn run(root: &Path, bin: &Path, seconds: u64, players: usize) {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let (redis, redis_port) = start_redis();
    let redis_pid = redis.0.id();
    let db_dir = tempfile::tempdir().unwrap();
    let server = start_server(bin, db_dir.path(), redis_port, cores, "league", 250);
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(JOINERS)
        .timeout(Duration::from_secs(600))
        .build()
        .unwrap();

    // 1. Redis time per join and per score write.
    let store = RedisStore::new(
        &server.settings.redis,
        "bench-league:",
        Duration::from_secs(5),
    )
    .unwrap();
    let (join_usec, score_usec, score_steal) = redis_times(&store, redis_port, players).await;

    // 2. Score writes over HTTP.
    call(
        &client,
        &server.base,
        reqwest::Method::POST,
        "/api/v1/admin/leagues",
        league_body("arena"),
    )
    .await;
    let filled = Instant::now();
    fill(&client, &server.base, "arena", players).await;
    let fill_s = filled.elapsed().as_secs_f64();
    let url = format!("{}/api/v1/leagues/arena/scores", server.base);
    let script = root.join("bench/league_score.lua");
    let pids = [("redis", redis_pid), ("server", server.pid)];
    let (writes, http_usec) = until_quiet(
        |(w, _): &(http::WrkResult, f64)| w.steal(),
        || async {
            redis_cli(redis_port, &["CONFIG", "RESETSTAT"]);
            let run = wrk(&url, Some(&script), seconds, &pids);
            (run, evalsha_usec(redis_port))
        },
    )
    .await;

    // 3. A close of every player, by hand; a fresh league for each try.
    let mut attempt = 0;
    let (close_s, closed, close_steal) = until_quiet(
        |(_, _, steal): &(f64, Value, f64)| *steal,
        || {
            attempt += 1;
            let (client, base) = (client.clone(), server.base.clone());
            async move {
                let slug = format!("close-{attempt}");
                call(
                    &client,
                    &base,
                    reqwest::Method::POST,
                    "/api/v1/admin/leagues",
                    league_body(&slug),
                )
                .await;
                fill(&client, &base, &slug, players).await;
                let (stolen, at) = (steal_seconds(), Instant::now());
                let report = call(
                    &client,
                    &base,
                    reqwest::Method::POST,
                    &format!("/api/v1/admin/leagues/{slug}/close"),
                    json!({}),
                )
                .await;
                let took = at.elapsed().as_secs_f64();
                let steal = (steal_seconds() - stolen) / took * 100.0;
                (took, report, steal)
            }
        },
    )
    .await;
    assert_eq!(
        closed["players"],
        json!(players),
        "the close saw every player"
    );

    let date = Utc::now().format("%Y-%m-%d").to_string();
    let brackets = closed["brackets"].as_i64().unwrap_or(0);
    let report = json!({
        "date": date,
        "machine": {"cores": cores, "note": "load generator, server and Redis share these cores"},
        "players": players,
        "bracket_size": BRACKET,
        "redis_usec_per_join": round(join_usec, 2),
        "redis_usec_per_score_write": round(score_usec, 2),
        "score_write_steal_pct": round(score_steal, 1),
        "http_score_writes": writes.json(&[("redis_usec_per_write", http_usec)]),
        "join_and_score_fill_seconds": round(fill_s, 1),
        "close": {"seconds": round(close_s, 2), "players": closed["players"], "brackets": brackets,
                  "promotions": closed["promotions"].as_array().map_or(0, Vec::len),
                  "demotions": closed["demotions"].as_array().map_or(0, Vec::len),
                  "steal_pct": round(close_steal, 1)},
    });
    println!("\n## Leagues, {date}, {cores} cores (load generator, server and Redis share them)\n");
    println!("| what | figure | host steal |");
    println!("|---|---|---|");
    println!("| Redis µs per join (`league_join.lua`, {players} joins) | {join_usec:.1} | |");
    println!(
        "| Redis µs per score write (`league_score.lua`, {WRITES} writes) | {score_usec:.1} ({:.0} writes/s per Redis core) | {score_steal:.1}% |",
        1e6 / score_usec.max(0.001)
    );
    println!(
        "| score writes over HTTP, {CONNECTIONS} connections, {seconds} s | {:.0}/s, p50 {:.2} ms, p99 {:.2} ms, {} errors; Redis {http_usec:.1} µs per write; CPU {} | {:.1}% |",
        writes.rps,
        writes.p50_ms,
        writes.p99_ms,
        writes.errors,
        cpu_cell(&writes.cpu),
        writes.steal()
    );
    println!(
        "| close of {players} players in {brackets} brackets (by hand, SQLite) | {close_s:.2} s | {close_steal:.1}% |"
    );
    write_results(format!("{date}-{cores}cores-league.json"), &report);
}
