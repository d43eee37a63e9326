//! `make bench`, board families: a fresh `redis-server` (no persistence) and the release
//! server (`target/release/ovation`, SQLite) as separate processes, a gifts family
//! (`scores`, periods hour, day and all, one rule per voter and day) written over HTTP
//! in batches of 100 score writes, 16 batches in flight.
//! 1. Redis per write to a new instance: one gift to each of 100,000 new rooms.
//! 2. Redis per write to an existing instance: nine more members in each of the first
//!    100,000 rooms (they then hold 10 members each), then 100,000 gifts to random members
//!    of random rooms. Phases 1 and 2 run three times in turn (phase 1 with new rooms each
//!    time); the table shows medians and the spread of the paired ratios, and how many
//!    PEXPIREs (the expiry) a write ran and their time. Redis time per write is EVALSHA's (the write script and the listing's note,
//!    whose commands it includes) over the writes, and is stated in ZINCRBYs measured in
//!    the same run (`usec_per_call` of ZINCRBY on a sorted set of 10 members).
//! 3. Memory: Redis's per room of 10 members (after the fill), and the server's resident memory before
//!    the rooms, with them, and after 100,000 more rooms with a TTL of a few seconds
//!    came and went (the process keeps nothing per room).
//! 4. The listing's first page (50 rooms) with 100,000 live rooms, by wrk.
//!
//! The write phases and the listing record the host's steal and run again (three tries
//! at most) when it lost more than 5% of a core. Prints a markdown table and writes JSON to `bench/results/`.
//! `BENCH_FAMILY_ROOMS` sets the rooms (default 100,000), `BENCH_SECONDS` the listing
//! phase's length (default 10).

#![allow(clippy::unwrap_used, clippy::expect_used)] // A benchmark stops at the first failure.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use chrono::Utc;
use ovation::store::redis::RedisTarget;
use rand::{Rng, SeedableRng};
use serde_json::{Value, json};

mod common;
mod cpu;
mod http;
mod memory;

use common::{
    command_stat, env_number, evalsha_stat, evalsha_usec, median, redis_cli, start_redis,
    steal_seconds, write_results,
};
use http::{call, cpu_cell, round, server_bin, start_server, until_quiet, wrk};
use memory::used_memory;

/// Score writes per HTTP call.
const BATCH: usize = 100;
/// HTTP calls in flight.
const IN_FLIGHT: usize = 16;
/// Members per room.
const MEMBERS: usize = 10;
/// How many times phases 1 and 2 run, in turn.
const REPEATS: usize = 3;
/// The TTL of the rooms that come and go in phase 3, in seconds.
const BRIEF_TTL_S: u64 = 3;

/// A gifts family whose rooms live `ttl_s`.
fn family(slug: &str, ttl_s: u64) -> Value {
    json!({"slug": slug, "title": slug, "membership": "open", "scoring": "scores",
        "periods": ["hour", "day", "all"], "instances": {"ttl_s": ttl_s}})
}

/// One write: (board, member); a room is `<family>:<room>`.
type Gift = (String, String);

/// Sends `n` gifts (`gift(i)` for i in 0..n), in batches of [`BATCH`],
/// [`IN_FLIGHT`] at a time. Answers the wall time, the host's steal in % of a core, and
/// the writes refused.
async fn send(
    client: &reqwest::Client,
    base: &str,
    n: usize,
    gift: Arc<dyn Fn(usize) -> Gift + Send + Sync>,
) -> (f64, f64, usize) {
    let next = Arc::new(AtomicUsize::new(0));
    let (stolen, at) = (steal_seconds(), Instant::now());
    let mut tasks = Vec::new();
    for t in 0..IN_FLIGHT {
        let (client, base, next, gift) =
            (client.clone(), base.to_owned(), next.clone(), gift.clone());
        tasks.push(tokio::spawn(async move {
            let mut rng = rand::rngs::StdRng::seed_from_u64(t as u64);
            let mut refused = 0;
            loop {
                let start = next.fetch_add(BATCH, Ordering::Relaxed);
                if start >= n {
                    return refused;
                }
                let scores: Vec<Value> = (start..n.min(start + BATCH))
                    .map(|i| {
                        let (board, member) = gift(i);
                        json!({"board": board, "member": member,
                            "op": "incr", "value": rng.random_range(1..500)})
                    })
                    .collect();
                let voter = format!("fan-{}", rng.random_range(0..1000));
                let answer = call(
                    &client,
                    &base,
                    reqwest::Method::POST,
                    "/api/v1/scores",
                    json!({"voter": voter, "scores": scores}),
                )
                .await;
                refused += answer["results"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|r| r["ok"] != json!(true))
                    .count();
            }
        }));
    }
    let mut refused = 0;
    for task in tasks {
        refused += task.await.unwrap();
    }
    let took = at.elapsed().as_secs_f64();
    (took, (steal_seconds() - stolen) / took * 100.0, refused)
}

/// A phase of writes: its wall time, writes/s, Redis µs per write and EVALSHA calls per
/// write, the expiry's share, steal, and refused writes.
struct Writes {
    seconds: f64,
    per_s: f64,
    redis_usec: f64,
    calls_per_write: f64,
    /// EVALSHA's µs per call: the write script and the listing's note together.
    usec_per_call: f64,
    /// The expiry's own commands inside the script: PEXPIREs per write, and their µs.
    pexpire_per_write: f64,
    pexpire_usec: f64,
    steal: f64,
    refused: usize,
}

impl Writes {
    fn json(&self, zincrby_usec: f64) -> Value {
        json!({"seconds": round(self.seconds, 2), "writes_per_s": round(self.per_s, 0),
            "redis_usec_per_write": round(self.redis_usec, 2),
            "zincrby_units_per_write": round(self.redis_usec / zincrby_usec, 1),
            "evalsha_calls_per_write": round(self.calls_per_write, 3),
            "evalsha_usec_per_call": round(self.usec_per_call, 2),
            "pexpire_per_write": round(self.pexpire_per_write, 2),
            "pexpire_usec_per_write": round(self.pexpire_usec, 2),
            "steal_pct": round(self.steal, 1), "refused": self.refused})
    }
}

async fn timed(
    client: &reqwest::Client,
    base: &str,
    port: u16,
    n: usize,
    gift: Arc<dyn Fn(usize) -> Gift + Send + Sync>,
) -> Writes {
    redis_cli(port, &["CONFIG", "RESETSTAT"]);
    let (seconds, steal, refused) = send(client, base, n, gift).await;
    Writes {
        seconds,
        per_s: n as f64 / seconds,
        redis_usec: evalsha_stat(port, "usec") / n as f64,
        calls_per_write: evalsha_stat(port, "calls") / n as f64,
        usec_per_call: evalsha_usec(port),
        pexpire_per_write: command_stat(port, "pexpire", "calls") / n as f64,
        pexpire_usec: command_stat(port, "pexpire", "usec") / n as f64,
        steal,
        refused,
    }
}

/// Redis µs per ZINCRBY on a sorted set of [`MEMBERS`] members, 16 callers pipelining,
/// on the server's Redis (`port`).
async fn zincrby_usec(target: &RedisTarget, port: u16) -> (f64, f64) {
    let RedisTarget::Single(url) = target else {
        panic!("the bench starts one redis-server")
    };
    let client = redis::Client::open(url.as_str()).unwrap();
    until_quiet(
        |(_, steal): &(f64, f64)| *steal,
        || async {
            redis_cli(port, &["CONFIG", "RESETSTAT"]);
            let (stolen, at) = (steal_seconds(), Instant::now());
            let mut tasks = Vec::new();
            for t in 0..16u64 {
                let client = client.clone();
                tasks.push(tokio::spawn(async move {
                    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
                    let mut rng = rand::rngs::StdRng::seed_from_u64(t);
                    for _ in 0..100 {
                        let mut pipe = redis::pipe();
                        for _ in 0..100 {
                            pipe.zincr(
                                format!("bench-unit:{t}"),
                                format!("m{}", rng.random_range(0..MEMBERS)),
                                rng.random_range(1..500),
                            )
                            .ignore();
                        }
                        let () = pipe.query_async(&mut conn).await.unwrap();
                    }
                }));
            }
            for task in tasks {
                task.await.unwrap();
            }
            let steal = (steal_seconds() - stolen) / at.elapsed().as_secs_f64() * 100.0;
            (command_stat(port, "zincrby", "usec_per_call"), steal)
        },
    )
    .await
}

/// The server's resident memory (`VmRSS`) in bytes.
fn rss(pid: u32) -> f64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb * 1024.0)
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let bin = server_bin(&root);
    let seconds: u64 = env_number("BENCH_SECONDS", 10);
    let rooms: usize = env_number("BENCH_FAMILY_ROOMS", 100_000);
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(run(&bin, seconds, rooms));
}

async fn run(bin: &Path, seconds: u64, rooms: usize) {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let (redis, port) = start_redis();
    let db_dir = tempfile::tempdir().unwrap();
    let server = start_server(bin, db_dir.path(), port, cores, "families", 0);
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(IN_FLIGHT)
        .timeout(Duration::from_secs(600))
        .build()
        .unwrap();
    let base = server.base.clone();
    let admin = |path: &str, body: Value| {
        let (client, base, path) = (client.clone(), base.clone(), path.to_owned());
        async move { call(&client, &base, reqwest::Method::POST, &path, body).await }
    };
    let live_rooms = |slug: &str| {
        let (client, base) = (client.clone(), base.clone());
        let path = format!("/api/v1/boards/{slug}/instances?limit=1");
        async move {
            let page = call(&client, &base, reqwest::Method::GET, &path, Value::Null).await;
            page["total"].as_u64().unwrap() as usize
        }
    };
    for (slug, ttl_s) in [("room", 3600), ("brief", BRIEF_TTL_S)] {
        admin("/api/v1/admin/boards", family(slug, ttl_s)).await;
        admin(
            &format!("/api/v1/admin/boards/{slug}/rules"),
            json!({"name": "a million a day", "dimensions": ["voter"], "window": "day", "limit": 1_000_000}),
        )
        .await;
    }
    // Warm the server (connections, scripts, caches) before its memory is read.
    send(
        &client,
        &base,
        10_000,
        Arc::new(|i| (format!("brief:warm-{}", i % 100), "m0".to_owned())),
    )
    .await;
    let (unit, unit_steal) = zincrby_usec(&server.settings.redis, port).await;
    let rss_before = rss(server.pid);
    let memory_before = used_memory(port);

    // 1 and 2, REPEATS times in turn: one gift to each of `rooms` new rooms (new ones each
    // time), and gifts to random members of the first rooms, filled to ten members first.
    // Each run of phase 1 (a run again too) writes to rooms tagged anew.
    let tags = std::cell::Cell::new(0);
    let to_new = || {
        let tag = tags.get();
        tags.set(tag + 1);
        timed(
            &client,
            &base,
            port,
            rooms,
            Arc::new(move |i| (format!("room:r{tag}-{i}"), "m1".to_owned())),
        )
    };
    let mut new_runs = vec![until_quiet(|w: &Writes| w.steal, to_new).await];
    let filled = tags.get() - 1;
    let to_existing = || {
        timed(
            &client,
            &base,
            port,
            rooms,
            Arc::new(move |i| {
                let h = (i as u64).wrapping_mul(2_654_435_761);
                (
                    format!("room:r{filled}-{}", h as usize % rooms),
                    format!("m{}", 1 + (h >> 32) as usize % MEMBERS),
                )
            }),
        )
    };
    let memory_one = used_memory(port);
    let fill = send(
        &client,
        &base,
        rooms * (MEMBERS - 1),
        Arc::new(move |i| {
            (
                format!("room:r{filled}-{}", i % rooms),
                format!("m{}", 2 + i / rooms),
            )
        }),
    )
    .await;
    let memory_filled = used_memory(port);
    let mut existing_runs = vec![until_quiet(|w: &Writes| w.steal, to_existing).await];
    for _ in 1..REPEATS {
        new_runs.push(until_quiet(|w: &Writes| w.steal, to_new).await);
        existing_runs.push(until_quiet(|w: &Writes| w.steal, to_existing).await);
    }
    // A room of one member (every run's rooms so far), and nine more in each of `rooms`.
    let per_room = (memory_one - memory_before) / (rooms * (filled + 1)) as f64
        + (memory_filled - memory_one) / rooms as f64;
    let rss_live = rss(server.pid);
    let live = rooms * tags.get();

    // 4. The listing's first page with every room live.
    assert_eq!(live_rooms("room").await, live, "every room is live");
    let url = format!("{base}/api/v1/boards/room/instances?limit=50");
    let pids = [("redis", redis.0.id()), ("server", server.pid)];
    let listing = until_quiet(
        |w: &http::WrkResult| w.steal(),
        || async { wrk(&url, None, seconds, &pids) },
    )
    .await;

    // 3. Rooms that come and go: the server's memory after they expired.
    send(
        &client,
        &base,
        rooms,
        Arc::new(|i| (format!("brief:b{i}"), "m1".to_owned())),
    )
    .await;
    tokio::time::sleep(Duration::from_secs(BRIEF_TTL_S + 2)).await;
    assert_eq!(live_rooms("brief").await, 0, "the brief rooms expired");
    let rss_after = rss(server.pid);

    let usec = |runs: &[Writes]| median(&runs.iter().map(|w| w.redis_usec).collect::<Vec<_>>());
    let (new_usec, existing_usec) = (usec(&new_runs), usec(&existing_runs));
    let ratio = new_usec / existing_usec.max(0.001);
    let paired: Vec<f64> = new_runs
        .iter()
        .zip(&existing_runs)
        .map(|(n, e)| n.redis_usec / e.redis_usec.max(0.001))
        .collect();
    let spread = |v: &[f64]| {
        (
            v.iter().copied().fold(f64::INFINITY, f64::min),
            v.iter().copied().fold(0.0, f64::max),
        )
    };
    let (low, high) = spread(&paired);
    let steal = spread(
        &new_runs
            .iter()
            .chain(&existing_runs)
            .map(|w| w.steal)
            .collect::<Vec<_>>(),
    )
    .1;
    let date = Utc::now().format("%Y-%m-%d").to_string();
    let report = json!({
        "date": date,
        "machine": {"cores": cores, "note": "load generator, server and Redis share these cores"},
        "rooms": rooms, "members_per_room": MEMBERS, "batch": BATCH, "in_flight": IN_FLIGHT,
        "repeats": REPEATS,
        "zincrby_usec": round(unit, 3), "zincrby_steal_pct": round(unit_steal, 1),
        "write_to_new_room": new_runs.iter().map(|w| w.json(unit)).collect::<Vec<_>>(),
        "write_to_existing_room": existing_runs.iter().map(|w| w.json(unit)).collect::<Vec<_>>(),
        "new_to_existing_ratio": round(ratio, 3),
        "paired_ratios": paired.iter().map(|r| round(*r, 3)).collect::<Vec<_>>(),
        "fill": {"writes": rooms * (MEMBERS - 1), "seconds": round(fill.0, 1), "steal_pct": round(fill.1, 1), "refused": fill.2},
        "redis_bytes_per_room": round(per_room, 0),
        "listing_first_page": listing.json(&[]),
        "server_rss_bytes": {"before": rss_before, "rooms_live": rss_live, "after_brief_rooms_expired": rss_after},
    });
    let mib = |b: f64| b / 1_048_576.0;
    println!(
        "\n## Board families, {date}, {cores} cores (load generator, server and Redis share them)\n"
    );
    println!("| what | figure | host steal |");
    println!("|---|---|---|");
    println!("| ZINCRBY, the unit (10-member sorted set) | {unit:.2} µs | {unit_steal:.1}% |");
    for (what, runs, median_usec) in [
        ("a gift to a new room", &new_runs, new_usec),
        ("a gift to an existing room", &existing_runs, existing_usec),
    ] {
        let pick = |f: fn(&Writes) -> f64| median(&runs.iter().map(f).collect::<Vec<_>>());
        println!(
            "| Redis per {what} ({rooms} writes over HTTP, median of {REPEATS}) | {median_usec:.1} µs = {:.1} ZINCRBY ({:.2} EVALSHA per write); of it {:.1} PEXPIRE taking {:.1} µs; {:.0} writes/s over HTTP; {} refused | ≤ {:.1}% |",
            median_usec / unit,
            pick(|w| w.calls_per_write),
            pick(|w| w.pexpire_per_write),
            pick(|w| w.pexpire_usec),
            pick(|w| w.per_s),
            runs.iter().map(|w| w.refused).sum::<usize>(),
            runs.iter().map(|w| w.steal).fold(0.0, f64::max)
        );
    }
    println!(
        "| new ÷ existing (target ≤ 1.3) | {ratio:.2} (paired runs {low:.2}–{high:.2}) | ≤ {steal:.1}% |"
    );
    println!(
        "| Redis memory per room of {MEMBERS} members (hour, day, all; listing included) | {per_room:.0} B | |"
    );
    println!(
        "| listing's first page, {live} live rooms, 64 connections, {seconds} s | {:.0}/s, p50 {:.2} ms, p99 {:.2} ms, {} errors; CPU {} | {:.1}% |",
        listing.rps,
        listing.p50_ms,
        listing.p99_ms,
        listing.errors,
        cpu_cell(&listing.cpu),
        listing.steal()
    );
    println!(
        "| server RSS: before the rooms / {live} rooms live / after {rooms} more came and expired | {:.1} / {:.1} / {:.1} MiB | |",
        mib(rss_before),
        mib(rss_live),
        mib(rss_after)
    );
    write_results(format!("{date}-{cores}cores-families.json"), &report);
}
