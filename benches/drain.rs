//! `make bench`, the ledger's drain as it runs under load, on SQLite: batches of
//! `BENCH_DRAIN_PASS` entries (default 3,000: 12,000 votes a second at the default
//! `OVATION_LEDGER_DRAIN_MS` of 250) pushed to a board's Redis ledger as `vote.lua` appends
//! them (200 members, 100,000 voters), each followed by one pass of the engine's own drain
//! (`engine::ledger::drain_all`), `BENCH_DRAIN_ROWS` rows in all (default 180,000), and a
//! last pass once the board is quiet (the voter index catches up). Prints the CPU µs a row
//! of each of the process's threads over the passes (SQLite's worker, the runtime's) from
//! `/proc/self/task/*/stat`, the passes' apart from the quiet one's (what a busy board's
//! drain costs, and what it leaves for when the board is quiet), and the passes' wall time
//! a row.
//!
//! The pieces of today's figure are in bench/notes/2026-11-28-ledger-cost.md.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A benchmark stops at the first failure.

use std::collections::BTreeMap;
use std::time::Instant;

use chrono::{Duration, Utc};
use ovation::domain::board::{BoardSettings, Membership};
use ovation::domain::ids::BoardSlug;
use ovation::domain::ledger::Entry;
use ovation::domain::score::Milli;
use ovation::engine::state::AppState;
use ovation::engine::{admin, ledger};
use rand::{Rng, SeedableRng};

mod common;

use common::{engine_state, env_number, start_redis};

/// CPU time (clock ticks) of each of this process's threads, by name (numbered threads
/// of one pool summed).
fn thread_ticks() -> BTreeMap<String, u64> {
    let main = std::fs::read_to_string("/proc/self/comm").unwrap_or_default();
    let mut out = BTreeMap::new();
    for task in std::fs::read_dir("/proc/self/task").unwrap() {
        let stat = std::fs::read_to_string(task.unwrap().path().join("stat")).unwrap_or_default();
        let (Some((head, rest)), Some(open)) = (stat.rsplit_once(')'), stat.find('(')) else {
            continue;
        };
        let name = &head[open + 1..];
        let name = if name == main.trim_end() {
            "main (the passes)".to_owned()
        } else {
            name.trim_end_matches(char::is_numeric).to_owned()
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        // utime and stime: fields 14 and 15 of stat, 12 and 13 after the name.
        let ticks = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
        *out.entry(name).or_default() += ticks;
    }
    out
}

/// One drain pass, its CPU by thread added to `cpu` and its wall time answered.
async fn timed_pass(state: &AppState, cpu: &mut BTreeMap<String, u64>) -> f64 {
    let before = thread_ticks();
    let started = Instant::now();
    ledger::drain_all(state, "bench").await;
    let wall = started.elapsed().as_secs_f64();
    for (name, ticks) in thread_ticks() {
        *cpu.entry(name.clone()).or_default() += ticks - before.get(&name).copied().unwrap_or(0);
    }
    wall
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let (_redis, port) = start_redis();
        let dir = tempfile::tempdir().unwrap();
        let url = format!(
            "sqlite://{}?mode=rwc",
            dir.path().join("drain.db").display()
        );
        let state = engine_state(&url, port, "drain:", &[]).await;
        let mut settings = BoardSettings::new("Drain bench".into());
        settings.membership = Membership::Open;
        settings.multiplier = Milli::from_thousandths(3000);
        let board = admin::create_board(
            &state,
            "bench",
            BoardSlug::parse("drained").unwrap(),
            settings,
        )
        .await
        .unwrap();
        let mut conn = redis::Client::open(format!("redis://127.0.0.1:{port}"))
            .unwrap()
            .get_multiplexed_async_connection()
            .await
            .unwrap();
        let rows: usize = env_number("BENCH_DRAIN_ROWS", 180_000);
        let pass: usize = env_number("BENCH_DRAIN_PASS", 3000);
        let mut rng = rand::rngs::StdRng::seed_from_u64(3);
        let now = Utc::now();
        let (mut cpu, mut wall, mut pushed) = (BTreeMap::new(), 0.0, 0);
        while pushed < rows {
            let texts: Vec<String> = (0..pass)
                .map(|i| {
                    Entry {
                        id: rng.random(),
                        at: (now + Duration::milliseconds((pushed + i) as i64)).timestamp_millis(),
                        recorded: now.timestamp_millis(),
                        member: format!("m{}", rng.random_range(1..=200)),
                        voter: Some(format!("u{}", rng.random_range(1..=100_000))),
                        channel: None,
                        terminal: None,
                        count: 1,
                        op: None,
                        value: None,
                        display: 3_000_000,
                        carry: 300_000,
                        adjusts: None,
                        ip: None,
                        held: None,
                        releases: None,
                    }
                    .encode()
                })
                .collect();
            let _: () = redis::cmd("RPUSH")
                .arg(board.keys.ledger())
                .arg(&texts)
                .query_async(&mut conn)
                .await
                .unwrap();
            wall += timed_pass(&state, &mut cpu).await;
            pushed += pass;
        }
        let mut quiet = BTreeMap::new();
        timed_pass(&state, &mut quiet).await;
        // Clock ticks are 10 ms.
        let per_row = |ticks: u64| ticks as f64 * 1e4 / rows as f64;
        println!("the drain on SQLite, {rows} rows, {pass} a pass, then a quiet pass");
        println!("| thread | CPU µs a row, the passes | the quiet pass |\n|---|---:|---:|");
        for (name, ticks) in &cpu {
            let after = quiet.get(name).copied().unwrap_or(0);
            if *ticks > 0 || after > 0 {
                println!(
                    "| {name} | {:.2} | {:.2} |",
                    per_row(*ticks),
                    per_row(after)
                );
            }
        }
        println!(
            "| the process | {:.2} | {:.2} |",
            per_row(cpu.values().sum()),
            per_row(quiet.values().sum())
        );
        println!(
            "wall time of the passes: {:.2} µs a row",
            wall * 1e6 / rows as f64
        );
    });
}
