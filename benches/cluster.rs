//! `make bench`, Redis Cluster: the same work on one `redis-server` and on a 3-master
//! Redis Cluster on this machine (no persistence, no replicas), through the store's own
//! calls with 64 writers in flight on one client thread (group commit on, as the server
//! runs it: a board's votes in flight together share a script call).
//! 1. Votes over 48 boards (five calendar periods, a voter each): votes/s and each Redis
//!    process's CPU.
//! 2. A `sharded` board of 16 shards: score writes/s, then the top-100 read's p50 and
//!    p99 over 2,000 reads.
//!
//! Each phase is repeated (up to three runs) while the host stole more than 5% of a
//! core during it; the steal of the run shown is printed. Prints a markdown table.
//! `BENCH_CLUSTER_SECONDS` sets a phase's length (default 10).

#![allow(clippy::unwrap_used, clippy::expect_used)] // A benchmark stops at the first failure.

use std::rc::Rc;
use std::time::{Duration, Instant};

use chrono::Utc;
use chrono_tz::Tz;
use ovation::domain::period::{Bucket, Period, voter_buckets};
use ovation::domain::score::{Increment, View};
use ovation::domain::scoring::{Op, Storage};
use ovation::store::redis::keys::{BoardKeys, Spread};
use ovation::store::redis::{
    PageQuery, RedisStore, RedisTarget, ScoreCall, VoteCall, VoteTarget, WriteFacts,
};
use rand::{Rng, SeedableRng};
use serde_json::Value;

mod common;
mod cpu;

use common::{env_number, evalsha_stat, evalsha_usec, redis_cli, start_cluster, start_redis};
use cpu::CpuMeter;

const WRITERS: usize = 64;
const BOARDS: i64 = 48;
const STEAL_LIMIT: f64 = 5.0;

fn seconds() -> u64 {
    env_number("BENCH_CLUSTER_SECONDS", 10)
}

/// Runs `phase` until the host stole at most `STEAL_LIMIT`% of a core during it (three
/// tries at most); answers its result and CPU figures (with the steal) of that run.
async fn quiet<T, F: Future<Output = T>>(
    pids: &[(&str, u32)],
    mut phase: impl FnMut() -> F,
) -> (T, Value) {
    let mut last = None;
    for _ in 0..3 {
        let meter = CpuMeter::start(pids);
        let result = phase().await;
        let cpu = meter.stop();
        let done = cpu["steal"].as_f64().unwrap_or(0.0) <= STEAL_LIMIT;
        last = Some((result, cpu));
        if done {
            break;
        }
    }
    last.unwrap()
}

/// Votes by `WRITERS` writers over `BOARDS` boards for `secs` seconds: votes per second
/// and votes cast.
async fn votes(store: &RedisStore, secs: u64) -> (f64, f64) {
    let now = Utc::now();
    let targets: Rc<Vec<VoteTarget>> = Rc::new(
        Period::CALENDAR
            .iter()
            .map(|&p| VoteTarget {
                current: Bucket::containing(p, Tz::UTC, now).unwrap(),
                next: None,
            })
            .collect(),
    );
    let voters = Rc::new(voter_buckets(&Period::CALENDAR, Tz::UTC, now).unwrap());
    let boards: Rc<Vec<BoardKeys>> = Rc::new(
        (1..=BOARDS)
            .map(|id| {
                store
                    .keys()
                    .board(id, Storage::Full, Spread::Members, Tz::UTC)
            })
            .collect(),
    );
    let deadline = Instant::now() + Duration::from_secs(secs);
    let started = Instant::now();
    let writers = (0..WRITERS).map(|w| {
        let (store, targets, voters, boards) = (
            store.clone(),
            targets.clone(),
            voters.clone(),
            boards.clone(),
        );
        async move {
            let mut rng = rand::rngs::StdRng::seed_from_u64(w as u64);
            let mut done = 0u64;
            while Instant::now() < deadline {
                let board = &boards[rng.random_range(0..boards.len())];
                let member = format!("m{}", rng.random_range(1..=200));
                let voter = format!("v{}", rng.random_range(1..=100_000));
                let call = VoteCall {
                    board,
                    targets: &targets,
                    increment: Increment {
                        real: 1,
                        display: 1_000_000,
                        carry: 0,
                    },
                    write: WriteFacts {
                        voters: &voters,
                        ..WriteFacts::at(&member, Some(&voter), now.timestamp_millis())
                    },
                    windows: &[],
                    trends: &[],
                };
                store.cast_votes(&[call]).await.unwrap().remove(0).unwrap();
                done += 1;
            }
            done
        }
    });
    let total: u64 = futures_util::future::join_all(writers)
        .await
        .into_iter()
        .sum();
    (total as f64 / started.elapsed().as_secs_f64(), total as f64)
}

/// Score writes by `WRITERS` writers to random members of a sharded board for `secs`
/// seconds: writes per second.
async fn sharded_writes(store: &RedisStore, board: &BoardKeys, secs: u64) -> f64 {
    let buckets = [Bucket::all()];
    let deadline = Instant::now() + Duration::from_secs(secs);
    let started = Instant::now();
    let writers = (0..WRITERS).map(|w| {
        let buckets = &buckets;
        async move {
            let mut rng = rand::rngs::StdRng::seed_from_u64(100 + w as u64);
            let mut done = 0u64;
            while Instant::now() < deadline {
                let member = format!("member-{}", rng.random_range(0..1_000_000));
                let call = ScoreCall {
                    board,
                    buckets,
                    op: Op::Incr,
                    value: rng.random_range(1..1000),
                    write: WriteFacts::at(&member, None, 0),
                    windows: &[],
                    trends: &[],
                };
                store
                    .write_scores(&[call])
                    .await
                    .unwrap()
                    .remove(0)
                    .unwrap();
                done += 1;
            }
            done
        }
    });
    let total: u64 = futures_util::future::join_all(writers)
        .await
        .into_iter()
        .sum();
    total as f64 / started.elapsed().as_secs_f64()
}

/// p50 and p99 in µs of 2,000 top-100 reads, one after another.
async fn top_reads(store: &RedisStore, board: &BoardKeys) -> (u128, u128) {
    let all = Bucket::all();
    let mut micros = Vec::new();
    for _ in 0..2_000 {
        let t = Instant::now();
        store
            .pages(&[PageQuery {
                board,
                bucket: &all,
                view: View::Real,
                offset: 0,
                limit: 100,
                anchor: None,
            }])
            .await
            .unwrap();
        micros.push(t.elapsed().as_micros());
    }
    micros.sort_unstable();
    (micros[micros.len() / 2], micros[micros.len() * 99 / 100])
}

fn cpu_cell(cpu: &Value) -> String {
    cpu.as_object()
        .unwrap()
        .iter()
        .map(|(name, pct)| format!("{name} {pct}%"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn reset_stats(ports: &[u16]) {
    for port in ports {
        redis_cli(*port, &["CONFIG", "RESETSTAT"]);
    }
}

/// Redis's µs per vote over `ports` since their statistics were reset, `votes` votes
/// having been cast (group commit may put several in one script call), and each node's
/// µs per call when there are several.
fn usec_per_vote(ports: &[u16], votes: f64) -> String {
    let (usec, calls) = ports.iter().fold((0.0, 0.0), |(u, c), &p| {
        (u + evalsha_stat(p, "usec"), c + evalsha_stat(p, "calls"))
    });
    let mut figure = format!(
        "Redis {:.1} µs per vote, {:.2} votes per call",
        usec / f64::max(votes, 1.0),
        votes / f64::max(calls, 1.0)
    );
    if ports.len() > 1 {
        let nodes: Vec<String> = ports
            .iter()
            .map(|&p| format!("{:.1}", evalsha_usec(p)))
            .collect();
        figure += &format!(" (µs per call per node: {})", nodes.join(", "));
    }
    figure
}

struct Backend {
    name: &'static str,
    target: RedisTarget,
    procs: Vec<(String, u32)>,
    ports: Vec<u16>,
}

fn main() {
    let secs = seconds();
    let (single, single_port) = start_redis();
    let cluster = start_cluster(3);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let backends = [
        Backend {
            name: "one Redis",
            target: RedisTarget::Single(format!("redis://127.0.0.1:{single_port}")),
            procs: vec![("redis".to_owned(), single.0.id())],
            ports: vec![single_port],
        },
        Backend {
            name: "3-master cluster",
            target: RedisTarget::Cluster(
                cluster
                    .iter()
                    .map(|(_, p)| format!("redis://127.0.0.1:{p}"))
                    .collect(),
            ),
            procs: cluster
                .iter()
                .enumerate()
                .map(|(i, (node, _))| (format!("node {}", i + 1), node.0.id()))
                .collect(),
            ports: cluster.iter().map(|(_, p)| *p).collect(),
        },
    ];
    println!("| backend | measure | figure | CPU (% of one core) and host steal |");
    println!("|---|---|---|---|");
    runtime.block_on(async {
        for Backend {
            name,
            target,
            procs,
            ports,
        } in &backends
        {
            let store = RedisStore::new(target, "bench:", Duration::from_secs(30)).unwrap();
            let mut pids: Vec<(&str, u32)> = procs.iter().map(|(n, p)| (n.as_str(), *p)).collect();
            pids.push(("bench", std::process::id()));
            let flush = || {
                for port in ports {
                    redis_cli(*port, &["FLUSHALL"]);
                }
            };
            flush();
            let ((rate, usec), cpu) = quiet(&pids, || async {
                reset_stats(ports);
                let (rate, cast) = votes(&store, secs).await;
                (rate, usec_per_vote(ports, cast))
            })
            .await;
            println!(
                "| {name} | votes over {BOARDS} boards | {rate:.0}/s; {usec} | {} |",
                cpu_cell(&cpu)
            );
            flush();
            let board = store
                .keys()
                .board(1_000, Storage::sharded(16), Spread::Members, Tz::UTC);
            let (rate, cpu) = quiet(&pids, || sharded_writes(&store, &board, secs)).await;
            println!(
                "| {name} | score writes, sharded board (16 shards) | {rate:.0}/s | {} |",
                cpu_cell(&cpu)
            );
            let ((p50, p99), cpu) = quiet(&pids, || top_reads(&store, &board)).await;
            println!(
                "| {name} | top-100 read, sharded board | p50 {p50} µs, p99 {p99} µs | {} |",
                cpu_cell(&cpu)
            );
        }
    });
}
