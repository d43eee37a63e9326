//! `make bench`, live push: subscribers of one board's top on one instance of the release
//! server (two workers, `OVATION_EVENTS_INTERVAL_MS` 1000) while votes come at a steady
//! rate, over plain TCP connections held by this process.
//!
//! For 0, 100 and `BENCH_PUSH_SUBSCRIBERS` (default 10,000) subscribers: the Redis calls
//! per second (all commands, votes included), the server's memory per subscriber (its
//! resident memory once they are connected less just before), the server's CPU per event delivered, and
//! the delivery latency — from a vote's answer to each subscriber's receiving a top that
//! counts it — at p50 and p99. The board has one member; vote `k` takes its score to `k`,
//! so a top with score `k` counts votes 1 to `k`, and its latency is measured from vote
//! `k`'s answer. Prints a markdown table and writes JSON to `bench/results/`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A benchmark stops at the first failure.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

mod common;
mod cpu;
mod http;

use common::{command_stats, env_number, redis_cli, start_redis, steal_seconds, write_results};
use cpu::cpu_times;
use http::{MASTER_KEY, create_board, server_bin, start_server_with};

/// Votes per second during a phase.
const VOTE_RATE: u64 = 20;

/// The events interval the server runs with.
const INTERVAL_MS: u64 = 1000;

/// When each vote was answered, by the score it took the member to.
type Answers = Arc<Mutex<Vec<Instant>>>;

/// Resident memory of a process, in KB.
fn rss_kb(pid: u32) -> f64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0.0)
}

/// The tops subscribers received: (subscriber, the score shown, when it arrived).
type Seen = Arc<Mutex<Vec<(usize, i64, Instant)>>>;

/// Subscriber `id`: reads the stream and records each top's score (0 for an empty top)
/// and when it arrived, until its task is aborted.
async fn subscriber(id: usize, addr: String, path: String, seen: Seen) {
    let mut stream = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let request =
        format!("GET {path} HTTP/1.1\r\nHost: bench\r\nAccept: text/event-stream\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut buffer = Vec::new();
    let mut chunk = vec![0u8; 8192];
    loop {
        let n = match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        let at = Instant::now();
        buffer.extend_from_slice(&chunk[..n]);
        let text = String::from_utf8_lossy(&buffer).into_owned();
        let mut consumed = 0;
        for line in text.split_inclusive('\n') {
            if !line.ends_with('\n') {
                break;
            }
            consumed += line.len();
            // The top's data: its first entry's score (one member).
            if let Some(data) = line.strip_prefix("data: {\"bucket\"") {
                let score = data
                    .split("\"score\":")
                    .nth(1)
                    .and_then(|s| s.split(['}', ',']).next())
                    .and_then(|s| s.trim().parse::<i64>().ok())
                    .unwrap_or(0);
                seen.lock().unwrap().push((id, score, at));
            }
        }
        buffer.drain(..consumed);
    }
}

/// Votes at [`VOTE_RATE`] for `seconds`, recording each answer's time.
async fn vote(client: &reqwest::Client, base: &str, seconds: u64, answers: &Answers) {
    let tick = Duration::from_millis(1000 / VOTE_RATE);
    let mut next = tokio::time::Instant::now();
    for _ in 0..seconds * VOTE_RATE {
        tokio::time::sleep_until(next).await;
        next += tick;
        let resp = client
            .post(format!("{base}/api/v1/boards/push/votes"))
            .bearer_auth(MASTER_KEY)
            .json(&json!({"member": "m1"}))
            .send()
            .await
            .unwrap();
        assert!(resp.status().is_success());
        answers.lock().unwrap().push(Instant::now());
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() as f64 * p) as usize).min(sorted.len() - 1)]
}

async fn run() {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let (redis, port) = start_redis();
    let dir = tempfile::tempdir().unwrap();
    let interval = INTERVAL_MS.to_string();
    let server = start_server_with(
        &server_bin(&root),
        dir.path(),
        port,
        2,
        "push",
        250,
        &[("OVATION_EVENTS_INTERVAL_MS", &interval)],
    );
    let client = reqwest::Client::new();
    create_board(
        &client,
        &server.base,
        json!({"slug": "push", "title": "Push", "periods": ["day"], "public_page": true}),
        1,
        &[],
    )
    .await;
    let addr = server.base.trim_start_matches("http://").to_owned();
    let seconds: u64 = env_number("BENCH_PUSH_SECONDS", 10);
    let most: usize = env_number("BENCH_PUSH_SUBSCRIBERS", 10_000);
    let answers: Answers = Arc::default();
    let mut rows = Vec::new();
    println!("\n## Live push: one board's top, votes at {VOTE_RATE}/s\n");
    println!(
        "| subscribers | Redis calls/s | server memory per subscriber | server CPU per event delivered | delivery p50 / p99 (from the vote's answer) | events delivered | steal |"
    );
    println!("|---|---|---|---|---|---|---|");
    for count in [0, 100, most] {
        let before_kb = rss_kb(server.pid);
        let seen: Seen = Arc::default();
        let tasks: Vec<_> = (0..count)
            .map(|id| {
                tokio::spawn(subscriber(
                    id,
                    addr.clone(),
                    "/api/v1/boards/push/events?period=day&top=1".to_owned(),
                    seen.clone(),
                ))
            })
            .collect();
        // Every subscriber has its first top before the phase starts.
        let deadline = Instant::now() + Duration::from_secs(60);
        while seen.lock().unwrap().len() < count && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let connected = seen.lock().unwrap().len();
        let memory_kb = rss_kb(server.pid) - before_kb;
        seen.lock().unwrap().clear();
        redis_cli(port, &["CONFIG", "RESETSTAT"]);
        let cpu_before = cpu_times(server.pid).0;
        let steal_before = steal_seconds();
        let started = Instant::now();
        let first_vote = answers.lock().unwrap().len();
        vote(&client, &server.base, seconds, &answers).await;
        // The last votes' tops arrive within an interval or two.
        tokio::time::sleep(Duration::from_millis(2 * INTERVAL_MS)).await;
        let wall = started.elapsed().as_secs_f64();
        let cpu = cpu_times(server.pid).0 - cpu_before;
        let steal = (steal_seconds() - steal_before) / wall * 100.0;
        let calls: f64 = command_stats(port)
            .iter()
            .filter(|(name, _, _)| !matches!(name.as_str(), "info" | "config|resetstat"))
            .map(|(_, calls, _)| calls)
            .sum();
        // Each vote of the phase, at each subscriber: from its answer to the first top
        // that counts it.
        let answered = answers.lock().unwrap().clone();
        let seen = std::mem::take(&mut *seen.lock().unwrap());
        let delivered = seen.len();
        let mut counted = vec![first_vote; count];
        let mut latencies = Vec::new();
        for (id, score, at) in seen {
            let score = (score as usize).min(answered.len());
            for answer in answered.iter().take(score).skip(counted[id]) {
                latencies.push(at.saturating_duration_since(*answer).as_secs_f64() * 1000.0);
            }
            counted[id] = counted[id].max(score);
        }
        latencies.sort_by(f64::total_cmp);
        for task in tasks {
            task.abort();
        }
        let per_subscriber_kb = if count > 0 {
            memory_kb / count as f64
        } else {
            0.0
        };
        let cpu_per_event_us = if delivered > 0 {
            cpu * 1e6 / delivered as f64
        } else {
            f64::NAN
        };
        let (p50, p99) = (percentile(&latencies, 0.5), percentile(&latencies, 0.99));
        println!(
            "| {count} ({connected} connected) | {:.0} | {per_subscriber_kb:.1} KB | {cpu_per_event_us:.1} µs | {p50:.0} / {p99:.0} ms | {delivered} | {steal:.1} % |",
            calls / wall
        );
        rows.push(json!({
            "subscribers": count, "connected": connected,
            "redis_calls_per_s": calls / wall,
            "server_kb_per_subscriber": per_subscriber_kb,
            "server_cpu_us_per_event": cpu_per_event_us,
            "delivery_p50_ms": p50, "delivery_p99_ms": p99,
            "events_delivered": delivered,
            "steal_pct": steal,
        }));
        // Let the server notice the closed streams before the next phase.
        tokio::time::sleep(Duration::from_millis(2 * INTERVAL_MS)).await;
    }
    drop(redis);
    write_results(
        format!("{}-push.json", chrono::Utc::now().format("%Y-%m-%d")),
        &json!({
            "date": chrono::Utc::now().to_rfc3339(),
            "interval_ms": INTERVAL_MS,
            "votes_per_s": VOTE_RATE,
            "phases": rows,
        }),
    );
}

fn main() {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(run());
}
