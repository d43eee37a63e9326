//! `make bench`: how much of what Redis itself can do Ovation delivers over HTTP.
//!
//! One run, one machine: a fresh `redis-server` (no persistence) and the release server
//! (`target/release/ovation`) as separate processes; `wrk` as the HTTP load generator.
//! 1. Ceiling: the project's own `vote.lua`, called straight at Redis over 64
//!    connections with exactly the keys and arguments the server would send (random
//!    voters 1..100,000, members m1..m200, fresh idempotency keys).
//!    For reference, `redis-benchmark` replays one captured call the same way.
//! 2. Votes over HTTP with wrk (same shape), as a ratio of (1), with Redis's script time
//!    per vote: with group commit (the default) and with it off (`OVATION_VOTE_GROUP=1`);
//!    and the board with its ledger (the default) against the same board without
//!    (`"ledger": false`), in turns: votes/s, p99, server and Redis CPU per vote, and
//!    their ratios (targets: votes/s at least 0.9 ×, p99 at most 1.2 × the board
//!    without).
//! 3. Top-100 reads against the trivial `/healthz`.
//!    Beside 2 and 3, in each round, the Go peer (`peer`): the same vote script and
//!    top-100 reads on the same Redis, and Ovation's votes (ledger on), p99 and reads as
//!    ratios of the peer's (targets: votes/s at least 1.25 ×, p99 at most 1 ×, top-100
//!    reads at least 4 ×).
//! 4. Member rank reads on a 1,000,000-member open board.
//! 5. Redis bytes per member per bucket against a bare ZADD of the same members.
//! 6. Redis µs per vote for each board shape (full semantics, with an idempotency key,
//!    no carry-over, no rules, one period, a rolling window, a trending period): what
//!    each feature costs, each on an empty store, a run that lost more than 5% of a core
//!    to steal repeated;
//!    the full-semantics calls also with 8 and 32 votes per call (group commit). With
//!    `BENCH_REDIS_ALSO` (a `redis-server` binary; `make bench` builds one with
//!    `scripts/build-redis.sh`), the same calls also on that Redis, side by side.
//! 7. Redis encoding settings that trade memory for speed (dense HyperLogLogs, larger
//!    listpack zsets): Redis µs per vote and memory, with the ceiling's generator.
//!
//! Before those, `redis-benchmark` over one connection gives Redis's time per vote with
//! nothing else running. Phases 1 to 3 run `BENCH_REPEATS` times in turn (default 3) and
//! the table shows medians: on a shared VM the host's steal time moves every figure, so
//! each phase records it, and a phase that lost more than 5% of a core to steal is run
//! again (three tries at most). Each vote phase starts from an empty store, because a
//! vote costs Redis more as the store fills; each vote phase over HTTP on a server of its
//! own (its own SQL database), and no server runs during the phases that call Redis
//! directly: a server whose board's ledger reached SQL takes an emptied Redis for a lost
//! one and rebuilds the board from its ledger, and its drain reads what others write.
//!
//! Prints a markdown table and writes JSON to `bench/results/`. Settings:
//! `BENCH_SECONDS` (default 10 per phase), `BENCH_WORKERS` (default "1,2"),
//! `BENCH_REPEATS` (default 3), `BENCH_SERVER` (the server binary, default
//! `target/release/ovation`: point it at another build to compare two) and `BENCH_OUT`
//! (the JSON file's name, default `<date>-<cores>cores.json`).

#![allow(clippy::unwrap_used, clippy::expect_used)] // A benchmark stops at the first failure.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ovation::domain::idempotency::Idempotency;
use ovation::domain::ids::{BoardSlug, Channel, IdempotencyKey, MemberId, Terminal, VoterId};
use ovation::engine::state::AppState;
use ovation::engine::writes::{What, Write, vote_invocation};
use ovation::store::redis::{LEDGER_ARG, VOTE_ARGS, VOTE_SOURCE, VOTER_ARG, repeated_call};
use rand::{Rng, SeedableRng};
use serde_json::{Value, json};

mod common;
mod cpu;
mod http;
mod memory;
mod peer;

use common::{
    command_stats, env_number, evalsha_stat, evalsha_usec, redis_cli, start_redis,
    start_redis_from, steal_seconds, vote_caller, write_results,
};
use cpu::CpuMeter;
use http::{
    CONNECTIONS, Server, WrkResult, call, cpu_cell, create_board, round, server_bin, start_server,
    start_server_with, until_quiet, wrk,
};
use memory::used_memory;

/// Empties Redis and its command statistics before a vote phase. A vote costs Redis more
/// as the store fills (a larger keyspace, fuller sparse HyperLogLogs), so phases that are
/// compared start from the same, empty store; the board's configuration lives in SQL.
fn fresh_store(port: u16) {
    redis_cli(port, &["FLUSHDB"]);
    redis_cli(port, &["CONFIG", "RESETSTAT"]);
}

/// The median of the figure at `path` (a JSON pointer) over the repeats.
fn median(reps: &[Value], path: &str) -> f64 {
    let mut values: Vec<f64> = reps
        .iter()
        .filter_map(|r| r.pointer(path)?.as_f64())
        .collect();
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => 0.0,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

/// The lowest and highest of the figure at `path` over the repeats: `0.91–1.02`.
fn spread(reps: &[Value], path: &str) -> String {
    let values: Vec<f64> = reps
        .iter()
        .filter_map(|r| r.pointer(path)?.as_f64())
        .collect();
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    format!("{}–{}", fmt2(lo), fmt2(hi))
}

fn fmt2(x: f64) -> String {
    format!("{x:.2}")
}

/// The median CPU share of each process (and steal) over the repeats, as a table cell.
fn median_cpu(reps: &[Value], path: &str) -> String {
    let Some(names) = reps
        .first()
        .and_then(|r| r.pointer(path)?.as_object().cloned())
    else {
        return String::new();
    };
    let medians: serde_json::Map<String, Value> = names
        .keys()
        .map(|name| {
            let m = median(reps, &format!("{path}/{name}"));
            (name.clone(), json!(m))
        })
        .collect();
    cpu_cell(&Value::Object(medians))
}

fn top_url(base: &str) -> String {
    format!("{base}/api/v1/boards/bench/top?period=day&limit=100")
}

fn percentile(sorted: &[u32], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    f64::from(sorted[i]) / 1000.0
}

fn random_vote(rng: &mut impl Rng, n: u64) -> Write {
    Write {
        board: BoardSlug::parse("bench").unwrap().into(),
        member: MemberId::parse(&format!("m{}", rng.random_range(1..=200))).unwrap(),
        what: What::Vote { count: 1 },
        voter: Some(VoterId::parse(&format!("u{}", rng.random_range(1..=100_000))).unwrap()),
        channel: Some(Channel::parse("app").unwrap()),
        terminal: Some(Terminal::parse("ios").unwrap()),
        idempotency: Some(Idempotency::new(
            IdempotencyKey::parse(&format!("c{n}-{}", rng.random::<u32>())).unwrap(),
            &[("n", Some(&n.to_string()))],
        )),
        at: None,
        ip: None,
        skip_limits: false,
        releases: None,
    }
}

/// Reads the arguments of a `redis-cli MONITOR` line: `… [0 addr] "EVALSHA" "sha" …`.
fn monitor_args(line: &str) -> Vec<String> {
    let rest = line.split_once("] ").map_or("", |(_, r)| r);
    let mut args = Vec::new();
    let mut chars = rest.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '"' {
            continue;
        }
        let mut arg = String::new();
        while let Some(c) = chars.next() {
            match c {
                '"' => break,
                '\\' => match chars.next() {
                    Some('x') => {
                        let hex: String = chars.by_ref().take(2).collect();
                        arg.push(u8::from_str_radix(&hex, 16).unwrap_or(b'?') as char);
                    }
                    Some('n') => arg.push('\n'),
                    Some(other) => arg.push(other),
                    None => {}
                },
                other => arg.push(other),
            }
        }
        args.push(arg);
    }
    args
}

/// One vote's EVALSHA as the server sends it, captured with MONITOR, with a random voter,
/// a fresh idempotency key and ledger entry id (`__rand_int__`) for `redis-benchmark` to
/// fill in. It has
/// one random range for every placeholder, so the member stays the captured one; the
/// project's generator varies it.
async fn capture_call(
    client: &reqwest::Client,
    base: &str,
    redis_port: u16,
    board: &str,
    keyed: bool,
) -> Vec<String> {
    let mut monitor = Command::new("redis-cli")
        .args(["-p", &redis_port.to_string(), "MONITOR"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = monitor.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        use std::io::BufRead;
        std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
            .find(|l| l.contains("\"EVALSHA\"") && l.contains("\"captured\""))
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let tag = format!("captured{}", rand::random::<u32>());
    let mut vote =
        json!({"member": "m7", "voter": "captured", "channel": "app", "terminal": "ios"});
    if keyed {
        vote["idempotency_key"] = json!(tag);
    }
    call(
        client,
        base,
        reqwest::Method::POST,
        &format!("/api/v1/boards/{board}/votes"),
        vote,
    )
    .await;
    let line = reader
        .join()
        .unwrap()
        .expect("MONITOR saw the vote's EVALSHA");
    let _ = monitor.kill();
    let _ = monitor.wait();
    let mut args = monitor_args(&line);
    // args: EVALSHA sha numkeys keys… argv…; KEYS[1] is the idempotency record, whose
    // name ends with the key, and ARGV ends with the vote's own.
    if keyed {
        let record = args[3]
            .strip_suffix(&tag)
            .expect("KEYS[1] ends with the idempotency key");
        args[3] = format!("{record}__rand_int__");
    }
    let own = args.len() - VOTE_ARGS - 1;
    args[own + VOTER_ARG] = "u__rand_int__".to_owned();
    // A ledger entry of its own per replay: the drain tells entries apart by their ids
    // (`{"id":<n>,…}`; a leading 1 keeps the zero-padded placeholder a JSON number).
    let entry = &mut args[own + LEDGER_ARG];
    if let Some(rest) = entry
        .strip_prefix("{\"id\":")
        .and_then(|e| e.find(',').map(|at| e[at..].to_owned()))
    {
        *entry = format!("{{\"id\":1__rand_int__{rest}");
    }
    args
}

/// The ceiling as `redis-benchmark` measures it: the captured call replayed `requests`
/// times over `connections` connections.
fn redis_benchmark(redis_port: u16, call: &[String], connections: usize, requests: u64) -> Value {
    let out = Command::new("redis-benchmark")
        .args([
            "-p",
            &redis_port.to_string(),
            "-c",
            &connections.to_string(),
            "-n",
            &requests.to_string(),
            "-r",
            "100000000",
        ])
        .args(call)
        .output()
        .expect("redis-benchmark is installed with redis-server");
    let text = String::from_utf8_lossy(&out.stdout);
    let rps = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("throughput summary: "))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|n| n.parse::<f64>().ok())
        .unwrap_or(0.0);
    // The line after the "avg min p50 p95 p99 max" header.
    let lines: Vec<&str> = text.lines().collect();
    let summary = lines
        .iter()
        .position(|l| l.trim_start().starts_with("avg"))
        .and_then(|i| lines.get(i + 1))
        .map(|l| {
            l.split_whitespace()
                .filter_map(|n| n.parse::<f64>().ok())
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    json!({
        "scripts_per_s": rps,
        "p50_ms": summary.get(2).copied().unwrap_or(0.0),
        "p99_ms": summary.get(4).copied().unwrap_or(0.0),
        "redis_usec_per_call": evalsha_usec(redis_port),
    })
}

/// Where a vote phase over HTTP runs: the server binary, the directory of the servers'
/// SQL databases, Redis and the server's settings.
struct HttpPhase<'a> {
    root: &'a Path,
    bin: &'a Path,
    db_dir: &'a Path,
    client: &'a reqwest::Client,
    redis_port: u16,
    redis_pid: u32,
    workers: usize,
    seconds: u64,
}

/// Votes over HTTP with wrk on the `bench` board of a server of its own, from an empty
/// store, repeated while the host steals more than `STEAL_LIMIT`. Each try starts a new
/// server (`prefix` and the try's number: its own SQL database and keys, `extra`
/// settings): a server whose board's ledger was drained to SQL takes an emptied Redis for
/// a lost one and rebuilds the board from its ledger, which the phase would measure.
/// Answers the run, Redis's script time per vote counted (a call may carry several
/// votes: group commit) and the server, still running, its board holding the votes.
async fn http_votes(
    phase: &HttpPhase<'_>,
    prefix: &str,
    extra: &[(&str, &str)],
    board: &Value,
) -> (WrkResult, f64, Server) {
    let mut tries = 0;
    until_quiet(
        |(v, _, _): &(WrkResult, f64, Server)| v.steal(),
        || {
            tries += 1;
            let prefix = format!("{prefix}t{tries}");
            async move {
                fresh_store(phase.redis_port);
                let server = start_server_with(
                    phase.bin,
                    phase.db_dir,
                    phase.redis_port,
                    phase.workers,
                    &prefix,
                    250,
                    extra,
                );
                set_up_shape(phase.client, &server.base, "bench", board.clone(), true).await;
                redis_cli(phase.redis_port, &["CONFIG", "RESETSTAT"]);
                let v = wrk(
                    &format!("{}/api/v1/boards/bench/votes", server.base),
                    Some(&phase.root.join("bench/vote.lua")),
                    phase.seconds,
                    &[("redis", phase.redis_pid), ("server", server.pid)],
                );
                let counted = v.requests.saturating_sub(v.errors).max(1) as f64;
                let usec = evalsha_stat(phase.redis_port, "usec") / counted;
                (v, usec, server)
            }
        },
    )
    .await
}

/// The Go peer's run, on an empty store: votes with the same wrk script as Ovation's, then
/// top-100 reads of its day, each repeated while the host steals too much.
async fn peer_phase(
    bin: &Path,
    root: &Path,
    redis_port: u16,
    redis_pid: u32,
    seconds: u64,
) -> (WrkResult, WrkResult) {
    fresh_store(redis_port);
    let peer = peer::start(bin, redis_port);
    let pids = [("redis", redis_pid), ("server", peer.pid)];
    let votes = until_quiet(WrkResult::steal, || async {
        wrk(
            &format!("{}/api/v1/boards/bench/votes", peer.base),
            Some(&root.join("bench/vote.lua")),
            seconds,
            &pids,
        )
    })
    .await;
    let top = until_quiet(WrkResult::steal, || async {
        wrk(&top_url(&peer.base), None, seconds, &pids)
    })
    .await;
    (votes, top)
}

/// Waits (30 s at most) until `server`'s ledger drain has taken every accepted vote to
/// SQL, so that a read phase after a vote phase does not measure the drain.
async fn drained(client: &reqwest::Client, server: &Server) {
    for _ in 0..300 {
        let ready: Value = match client.get(format!("{}/readyz", server.base)).send().await {
            Ok(resp) => resp.json().await.unwrap_or(Value::Null),
            Err(_) => Value::Null,
        };
        if ready.pointer("/ledger/pending").and_then(Value::as_u64) == Some(0) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the ledger drain did not catch up in 30 s");
}

/// Board shapes for [`shapes`]: name, slug, changes to the `bench` board, its rules kept,
/// the vote's idempotency key.
const SHAPES: [(&str, &str, &str, bool, bool); 9] = [
    (
        "full semantics: 5 periods x 2 views, carry-over 0.1, 3 rules, a voter",
        "bench",
        "{}",
        true,
        false,
    ),
    (
        "the same with an idempotency key",
        "bench",
        "{}",
        true,
        true,
    ),
    (
        "full semantics without the ledger",
        "s-noledger",
        r#"{"ledger": false}"#,
        true,
        false,
    ),
    (
        "no carry-over",
        "s-nocarry",
        r#"{"carry_over": 0}"#,
        true,
        false,
    ),
    ("no rules", "s-norules", "{}", false, false),
    (
        "one period (all), no rules",
        "s-one",
        r#"{"periods": ["all"]}"#,
        false,
        false,
    ),
    (
        "full semantics + rolling:24h",
        "s-rolling",
        r#"{"periods": ["hour", "day", "week", "month", "all", "rolling:24h"]}"#,
        true,
        false,
    ),
    (
        "full semantics + rolling:72h",
        "s-rolling72",
        r#"{"periods": ["hour", "day", "week", "month", "all", "rolling:72h"]}"#,
        true,
        false,
    ),
    (
        "full semantics + trending:6h",
        "s-trending",
        r#"{"periods": ["hour", "day", "week", "month", "all", "trending:6h"]}"#,
        true,
        false,
    ),
];

/// Gives every rolling window a replayed call names a state at the current UTC hour, as
/// its first write would have left it: on an empty store a vote finds its window out of
/// its keys' reach and answers `advance` (the store then advances it with every key), so
/// a replay without this would measure that answer. The shapes' windows count hours.
fn seed_windows(port: u16, call: &[String]) {
    let hour = (std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        / 3600)
        .to_string();
    for key in call
        .iter()
        .filter(|a| a.contains(":w:rolling:") && a.ends_with(":state"))
    {
        redis_cli(port, &["HSET", key, "head", &hour, "pending", "0"]);
    }
}

/// One shape's row: its name, and per Redis measured (the server's, then `BENCH_REDIS_ALSO`'s)
/// the Redis µs per vote and the host steal of the run reported.
type ShapeRow = (String, Vec<(f64, f64)>);

/// Where a full-semantics vote's Redis time goes, per Redis measured (see
/// [`command_profile`]).
type Profile = Vec<Vec<(String, f64, f64)>>;

/// Each board shape's board, set up on the server at `base`, and one vote's EVALSHA on
/// it, captured: (name, slug, call).
async fn capture_shapes(
    client: &reqwest::Client,
    base: &str,
    redis_port: u16,
) -> Vec<(&'static str, &'static str, Vec<String>)> {
    let mut captured = Vec::new();
    for (name, slug, changes, rules, keyed) in SHAPES {
        if slug != "bench" {
            set_up_shape(
                client,
                base,
                slug,
                serde_json::from_str(changes).unwrap(),
                rules,
            )
            .await;
        }
        captured.push((
            name,
            slug,
            capture_call(client, base, redis_port, slug, keyed).await,
        ));
    }
    captured
}

/// Redis µs per vote for each board shape: its captured call replayed by
/// `redis-benchmark` (16 connections) on an empty store with no server running (a
/// server would take each emptied store for a lost Redis and rebuild its boards from
/// their ledgers meanwhile, whose scripts Redis would count with the votes'), so a row
/// is what that feature costs Redis; the same calls also on the Redis at `also` (another
/// version), with the script loaded there. A run that lost more than `STEAL_LIMIT`% of a
/// core to the host is run again (three tries at most); each figure comes with the steal
/// of its run.
async fn shapes(
    captured: &[(&'static str, &'static str, Vec<String>)],
    redis_port: u16,
    also: Option<u16>,
) -> (Vec<ShapeRow>, Profile) {
    let mut out = Vec::new();
    let mut profile = Vec::new();
    let ports: Vec<u16> = std::iter::once(redis_port).chain(also).collect();
    for (name, slug, captured) in captured {
        // The `bench` board's calls also as group commit sends them under load.
        let groups: &[usize] = if *slug == "bench" || *slug == "s-trending" {
            &GROUPS
        } else {
            &[1]
        };
        for &votes in groups {
            let call = repeated_call(captured, votes);
            let mut figures = Vec::new();
            for &port in &ports {
                let figure = until_quiet(
                    |(_, stolen): &(f64, f64)| *stolen,
                    || async {
                        fresh_store(port);
                        if port != redis_port {
                            redis_cli(port, &["SCRIPT", "LOAD", VOTE_SOURCE]);
                        }
                        seed_windows(port, &call);
                        let (steal, at) = (steal_seconds(), Instant::now());
                        let run = redis_benchmark(port, &call, 16, SHAPE_VOTES / votes as u64);
                        let stolen = (steal_seconds() - steal) / at.elapsed().as_secs_f64() * 100.0;
                        let per_call = run["redis_usec_per_call"].as_f64().unwrap_or(0.0);
                        (per_call / votes as f64, stolen)
                    },
                )
                .await;
                if profile.len() < ports.len() {
                    // The first row, full semantics one vote per call: its statistics are
                    // still those of the run it reports.
                    profile.push(command_profile(port, SHAPE_VOTES as f64));
                }
                figures.push(figure);
            }
            let name = if votes == 1 {
                (*name).to_owned()
            } else {
                format!("{name}; {votes} votes per call (group commit)")
            };
            out.push((name, figures));
        }
    }
    (out, profile)
}

/// Where a vote's Redis time goes: each command's calls and µs per vote (commands a
/// script runs count in Redis's statistics too), and the script's own time (EVALSHA's
/// time less its commands': the arguments, Lua, calling each command and converting its
/// reply), from the statistics of the last run of `votes` votes.
fn command_profile(redis_port: u16, votes: f64) -> Vec<(String, f64, f64)> {
    let mut rows = Vec::new();
    let mut commands = 0.0;
    let mut script = 0.0;
    for (name, calls, usec) in command_stats(redis_port) {
        match name.as_str() {
            "evalsha" => script = usec,
            // The phase's own commands: resetting, loading the script, reading these.
            n if n.starts_with("config") || n.starts_with("script") || n == "info" => {}
            _ => {
                commands += usec;
                rows.push((name, calls / votes, usec / votes));
            }
        }
    }
    rows.sort_by(|a, b| b.2.total_cmp(&a.2));
    rows.push((
        "the script itself".to_owned(),
        1.0,
        (script - commands) / votes,
    ));
    rows
}

/// Votes each shape's figure is measured over.
const SHAPE_VOTES: u64 = 60_000;

/// Votes per call the `bench` board's shapes are also measured at.
const GROUPS: [usize; 3] = [1, 8, 32];

/// Redis encoding settings that trade memory for speed, each measured with the ceiling's
/// generator (random members and voters, one vote per call) from an empty store: Redis
/// µs per vote, the memory the phase left, and the steal it saw.
async fn encodings(
    state: &Arc<AppState>,
    seconds: u64,
    redis_pid: u32,
    redis_port: u16,
) -> Vec<(String, f64, f64, f64)> {
    let defaults = [
        ("hll-sparse-max-bytes", "3000"),
        ("zset-max-listpack-entries", "128"),
    ];
    let variants: [(&str, &[(&str, &str)]); 3] = [
        (
            "defaults (hll-sparse-max-bytes 3000, zset-max-listpack-entries 128)",
            &[],
        ),
        (
            "hll-sparse-max-bytes 0 (dense HyperLogLogs)",
            &[("hll-sparse-max-bytes", "0")],
        ),
        (
            "zset-max-listpack-entries 256 (200-member buckets as listpacks)",
            &[("zset-max-listpack-entries", "256")],
        ),
    ];
    let mut out = Vec::new();
    for (name, settings) in variants {
        for (key, value) in defaults.iter().chain(settings) {
            redis_cli(redis_port, &["CONFIG", "SET", key, value]);
        }
        let (run, usec, bytes) = until_quiet(
            |(c, _, _): &(Value, f64, f64)| c["cpu_pct"]["steal"].as_f64().unwrap_or(0.0),
            || async {
                fresh_store(redis_port);
                let c = ceiling(state, seconds, redis_pid).await;
                (c, evalsha_usec(redis_port), used_memory(redis_port))
            },
        )
        .await;
        let steal = run["cpu_pct"]["steal"].as_f64().unwrap_or(0.0);
        out.push((name.to_owned(), usec, bytes, steal));
    }
    for (key, value) in defaults {
        redis_cli(redis_port, &["CONFIG", "SET", key, value]);
    }
    out
}

/// The ceiling: vote.lua straight at Redis, 64 connections, one call in flight each.
async fn ceiling(state: &Arc<AppState>, seconds: u64, redis_pid: u32) -> Value {
    let caller = Arc::new(vote_caller());
    let client = redis::Client::open(redis_url(&state.settings)).unwrap();
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let me = std::process::id();
    let meter = CpuMeter::start(&[("redis", redis_pid), ("load generator", me)]);
    let started = Instant::now();
    let mut tasks = Vec::new();
    for task in 0..CONNECTIONS {
        let (state, caller, client) = (state.clone(), caller.clone(), client.clone());
        tasks.push(tokio::spawn(async move {
            let mut conn = client.get_multiplexed_async_connection().await.unwrap();
            let mut rng = rand::rngs::StdRng::from_os_rng();
            let mut latencies = Vec::new();
            let mut n = (task as u64) << 40;
            while Instant::now() < deadline {
                n += 1;
                let vote = random_vote(&mut rng, n);
                let inv = vote_invocation(&state, &caller, vote).unwrap();
                let t = Instant::now();
                let reply: redis::Value = inv.invoke_async(&mut conn).await.unwrap();
                latencies.push(t.elapsed().as_micros() as u32);
                assert!(matches!(reply, redis::Value::Array(_)), "{reply:?}");
            }
            latencies
        }));
    }
    let mut latencies = Vec::new();
    for t in tasks {
        latencies.extend(t.await.unwrap());
    }
    let wall = started.elapsed().as_secs_f64();
    let cpu = meter.stop();
    latencies.sort_unstable();
    json!({
        "scripts_per_s": (latencies.len() as f64 / wall).round(),
        "p50_ms": percentile(&latencies, 0.50),
        "p99_ms": percentile(&latencies, 0.99),
        "cpu_pct": cpu,
    })
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let seconds: u64 = env_number("BENCH_SECONDS", 10);
    let worker_counts: Vec<usize> = std::env::var("BENCH_WORKERS")
        .unwrap_or_else(|_| "1,2".into())
        .split(',')
        .filter_map(|w| w.trim().parse().ok())
        .collect();
    let repeats: usize = env_number("BENCH_REPEATS", 3_usize).max(1);
    let server_bin = server_bin(&root);
    assert!(
        server_bin.exists(),
        "build the server first: cargo build --release"
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(run(&root, &server_bin, seconds, repeats, &worker_counts));
}

/// The realistic board: five periods, 200 members, N = 3, carry-over 0.1, three rules
/// loose enough never to refuse.
async fn set_up_board(client: &reqwest::Client, base: &str) {
    set_up_shape(client, base, "bench", json!({}), true).await;
}

/// A board like `bench` (Asia/Shanghai, multiplier 3, carry-over 0.1, the five calendar
/// periods, 200 members, three rules) with `changes` applied, and without its rules
/// unless `rules`.
async fn set_up_shape(
    client: &reqwest::Client,
    base: &str,
    slug: &str,
    changes: Value,
    rules: bool,
) {
    let mut board = json!({
        "slug": slug, "title": "Bench", "timezone": "Asia/Shanghai",
        "multiplier": 3, "carry_over": 0.1, "max_count": 10
    });
    for (k, v) in changes.as_object().unwrap() {
        board[k] = v.clone();
    }
    let rules = if rules {
        vec![
            json!({"name": "voter per day", "dimensions": ["voter"], "window": "day", "limit": 1_000_000}),
            json!({"name": "voter per member per hour", "dimensions": ["voter", "member"], "window": "hour", "limit": 1_000_000}),
            json!({"name": "member per minute", "dimensions": ["member"], "window": "minute", "limit": 1_000_000_000}),
        ]
    } else {
        Vec::new()
    };
    create_board(client, base, board, 200, &rules).await;
}

async fn run(root: &Path, bin: &Path, seconds: u64, repeats: usize, worker_counts: &[usize]) {
    let (redis, redis_port) = start_redis();
    let redis_pid = redis.0.id();
    let db_dir = tempfile::tempdir().unwrap();
    // The server closes a keep-alive connection idle for 5 s; phases idle the client longer.
    let client = reqwest::Client::builder()
        .pool_idle_timeout(Duration::from_secs(2))
        .build()
        .unwrap();
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let mut runs = Vec::new();
    let mut rows = Vec::new();
    let peer_bin = peer::build(root);

    for &workers in worker_counts {
        let prefix = format!("w{workers}");
        // The board the generator and the replayed calls use, made by a server that is
        // then stopped: no drain or rebuild runs beside the phases that call Redis alone.
        let setup = start_server(bin, db_dir.path(), redis_port, workers, &prefix, 250);
        set_up_board(&client, &setup.base).await;
        let generator = Arc::new(
            ovation::startup::connect(setup.settings.clone())
                .await
                .unwrap(),
        );
        let captured = capture_call(&client, &setup.base, redis_port, "bench", true).await;
        drop(setup);
        let phase = HttpPhase {
            root,
            bin,
            db_dir: db_dir.path(),
            client: &client,
            redis_port,
            redis_pid,
            workers,
            seconds,
        };

        // Redis time per vote with nothing else running: one connection, one call at a time.
        fresh_store(redis_port);
        let quiet = redis_benchmark(redis_port, &captured, 1, 5_000);

        // The host's steal time moves every figure between phases, so the phases run
        // `repeats` times in turn and the table shows medians; ratios are paired within
        // one repeat before the median is taken.
        let mut reps = Vec::new();
        let mut uncached = None;
        for rep in 0..repeats {
            let (ceiling, ceiling_usec) = until_quiet(
                |(c, _): &(Value, f64)| c["cpu_pct"]["steal"].as_f64().unwrap_or(0.0),
                || async {
                    fresh_store(redis_port);
                    let c = ceiling(&generator, seconds, redis_pid).await;
                    (c, evalsha_usec(redis_port))
                },
            )
            .await;
            fresh_store(redis_port);
            let requests =
                (ceiling["scripts_per_s"].as_f64().unwrap_or(1000.0) * seconds as f64) as u64;
            let benchmark = redis_benchmark(redis_port, &captured, CONNECTIONS, requests.max(1000));
            // Group commit off: each request's vote is its own call.
            let (alone, alone_usec, solo_server) = http_votes(
                &phase,
                &format!("{prefix}r{rep}solo"),
                &[("OVATION_VOTE_GROUP", "1")],
                &json!({}),
            )
            .await;
            drop(solo_server);
            // The same board without its ledger, just before the one with it.
            let (unledgered, unledgered_usec, unledgered_server) = http_votes(
                &phase,
                &format!("{prefix}r{rep}noledger"),
                &[],
                &json!({"ledger": false}),
            )
            .await;
            drop(unledgered_server);
            let (votes, http_usec, server) =
                http_votes(&phase, &format!("{prefix}r{rep}"), &[], &json!({})).await;
            drained(&client, &server).await;
            let pids = [("redis", redis_pid), ("server", server.pid)];
            let trivial = until_quiet(WrkResult::steal, || async {
                wrk(&format!("{}/healthz", server.base), None, seconds, &pids)
            })
            .await;
            let top = until_quiet(WrkResult::steal, || async {
                wrk(&top_url(&server.base), None, seconds, &pids)
            })
            .await;
            let last_prefix = server.prefix.clone();
            // Stopped before the next phase empties the store.
            drop(server);
            if rep + 1 == repeats {
                // The same top-100 reads with the read cache off, on a second server in
                // place of the last vote phase's (the same database and keys), before the
                // Go peer's phase empties the store: on an empty store the server would
                // find the board lost and rebuild it from its ledger while it reads.
                let server = start_server(bin, db_dir.path(), redis_port, workers, &last_prefix, 0);
                uncached = Some(wrk(
                    &top_url(&server.base),
                    None,
                    seconds,
                    &[("redis", redis_pid), ("server", server.pid)],
                ));
            }
            let peer = match &peer_bin {
                Some(bin) => {
                    let (peer_votes, peer_top) =
                        peer_phase(bin, root, redis_port, redis_pid, seconds).await;
                    json!({
                        "votes": peer_votes.json(&[]),
                        "top100": peer_top.json(&[]),
                        "votes_ratio": votes.rps / peer_votes.rps.max(1.0),
                        "p99_ratio": votes.p99_ms / peer_votes.p99_ms.max(0.001),
                        "top100_ratio": top.rps / peer_top.rps.max(1.0),
                    })
                }
                None => Value::Null,
            };
            let ceiling_rate = ceiling["scripts_per_s"].as_f64().unwrap_or(0.0);
            let bench_rate = benchmark["scripts_per_s"].as_f64().unwrap_or(0.0);
            reps.push(json!({
                "ceiling": ceiling,
                "ceiling_redis_usec_per_call": ceiling_usec,
                "redis_benchmark_ceiling": benchmark,
                "votes": votes.json(&[("ratio_to_ceiling", votes.rps / ceiling_rate.max(1.0)),
                                     ("ratio_to_redis_benchmark", votes.rps / bench_rate.max(1.0)),
                                     ("redis_usec_per_vote", http_usec),
                                     ("per_s_ratio_to_no_ledger", votes.rps / unledgered.rps.max(1.0)),
                                     ("p99_ratio_to_no_ledger", votes.p99_ms / unledgered.p99_ms.max(0.001))]),
                "votes_without_ledger": unledgered.json(&[("redis_usec_per_vote", unledgered_usec)]),
                "votes_group_commit_off": alone.json(&[
                    ("ratio_to_ceiling", alone.rps / ceiling_rate.max(1.0)),
                    ("redis_usec_per_vote", alone_usec)]),
                "trivial": trivial.json(&[]),
                "top100": top.json(&[("ratio_to_trivial", top.rps / trivial.rps.max(1.0))]),
                "go_peer": peer,
            }));
        }

        let uncached = uncached.expect("the last repeat reads with the cache off");

        let med = |path: &str| median(&reps, path);
        let trivial_rps = med("/trivial/per_s");
        rows.push(format!(
            "| {workers} | Redis alone: vote.lua, 1 connection | {:.0} scripts/s | {:.2} | | | redis {:.1} µs/call | |",
            quiet["scripts_per_s"].as_f64().unwrap_or(0.0),
            quiet["p50_ms"].as_f64().unwrap_or(0.0),
            quiet["redis_usec_per_call"].as_f64().unwrap_or(0.0),
        ));
        rows.push(format!(
            "| {workers} | ceiling: vote.lua at Redis, own generator | {:.0} scripts/s | {:.2} | {:.2} | 1.00 | redis {:.1} µs/call | {} |",
            med("/ceiling/scripts_per_s"), med("/ceiling/p50_ms"), med("/ceiling/p99_ms"),
            med("/ceiling_redis_usec_per_call"), median_cpu(&reps, "/ceiling/cpu_pct")
        ));
        rows.push(format!(
            "| {workers} | ceiling: redis-benchmark (one member) | {:.0} scripts/s | {:.2} | {:.2} | | redis {:.1} µs/call | |",
            med("/redis_benchmark_ceiling/scripts_per_s"), med("/redis_benchmark_ceiling/p50_ms"),
            med("/redis_benchmark_ceiling/p99_ms"), med("/redis_benchmark_ceiling/redis_usec_per_call")
        ));
        rows.push(format!(
            "| {workers} | votes over HTTP (group commit) | {:.0} votes/s | {:.2} | {:.2} | {:.2} ({} of redis-benchmark; repeats {}) | redis {:.1} µs/vote; server {:.0} µs CPU/vote | {} |",
            med("/votes/per_s"), med("/votes/p50_ms"), med("/votes/p99_ms"),
            med("/votes/ratio_to_ceiling"), fmt2(med("/votes/ratio_to_redis_benchmark")),
            spread(&reps, "/votes/ratio_to_ceiling"),
            med("/votes/redis_usec_per_vote"), med("/votes/server_cpu_us_per_request"),
            median_cpu(&reps, "/votes/cpu_pct")
        ));
        rows.push(format!(
            "| {workers} | votes over HTTP, the same board without its ledger | {:.0} votes/s | {:.2} | {:.2} | | redis {:.1} µs/vote, {:.1} µs CPU/vote; server {:.0} µs CPU/vote | {} |",
            med("/votes_without_ledger/per_s"), med("/votes_without_ledger/p50_ms"),
            med("/votes_without_ledger/p99_ms"), med("/votes_without_ledger/redis_usec_per_vote"),
            med("/votes_without_ledger/redis_cpu_us_per_request"),
            med("/votes_without_ledger/server_cpu_us_per_request"),
            median_cpu(&reps, "/votes_without_ledger/cpu_pct")
        ));
        rows.push(format!(
            "| {workers} | the ledger's cost: with ÷ without | {:.2} × votes/s (target ≥ 0.9; repeats {}) | | {:.2} × p99 (target ≤ 1.2; repeats {}) | | redis {:.1} vs {:.1} µs CPU/vote; server {:.0} vs {:.0} µs CPU/vote | |",
            med("/votes/per_s_ratio_to_no_ledger"), spread(&reps, "/votes/per_s_ratio_to_no_ledger"),
            med("/votes/p99_ratio_to_no_ledger"), spread(&reps, "/votes/p99_ratio_to_no_ledger"),
            med("/votes/redis_cpu_us_per_request"), med("/votes_without_ledger/redis_cpu_us_per_request"),
            med("/votes/server_cpu_us_per_request"), med("/votes_without_ledger/server_cpu_us_per_request"),
        ));
        rows.push(format!(
            "| {workers} | votes over HTTP, group commit off | {:.0} votes/s | {:.2} | {:.2} | {:.2} (repeats {}) | redis {:.1} µs/vote; server {:.0} µs CPU/vote | {} |",
            med("/votes_group_commit_off/per_s"), med("/votes_group_commit_off/p50_ms"),
            med("/votes_group_commit_off/p99_ms"), med("/votes_group_commit_off/ratio_to_ceiling"),
            spread(&reps, "/votes_group_commit_off/ratio_to_ceiling"),
            med("/votes_group_commit_off/redis_usec_per_vote"),
            med("/votes_group_commit_off/server_cpu_us_per_request"),
            median_cpu(&reps, "/votes_group_commit_off/cpu_pct")
        ));
        rows.push(format!(
            "| {workers} | trivial /healthz | {trivial_rps:.0} req/s | {:.2} | {:.2} | 1.00 | server {:.0} µs CPU/request | {} |",
            med("/trivial/p50_ms"), med("/trivial/p99_ms"),
            med("/trivial/server_cpu_us_per_request"), median_cpu(&reps, "/trivial/cpu_pct")
        ));
        rows.push(format!(
            "| {workers} | top 100 (day), read cache 250 ms | {:.0} reads/s | {:.2} | {:.2} | {:.2} (repeats {}) | server {:.0} µs CPU/read | {} |",
            med("/top100/per_s"), med("/top100/p50_ms"), med("/top100/p99_ms"),
            med("/top100/ratio_to_trivial"), spread(&reps, "/top100/ratio_to_trivial"),
            med("/top100/server_cpu_us_per_request"), median_cpu(&reps, "/top100/cpu_pct")
        ));
        if peer_bin.is_some() {
            rows.push(format!(
                "| {workers} | Go peer: votes over HTTP (the same wrk script, the same Redis) | {:.0} votes/s | {:.2} | {:.2} | | redis {:.1} µs CPU/vote; server {:.0} µs CPU/vote | {} |",
                med("/go_peer/votes/per_s"), med("/go_peer/votes/p50_ms"), med("/go_peer/votes/p99_ms"),
                med("/go_peer/votes/redis_cpu_us_per_request"),
                med("/go_peer/votes/server_cpu_us_per_request"),
                median_cpu(&reps, "/go_peer/votes/cpu_pct")
            ));
            rows.push(format!(
                "| {workers} | Go peer: top 100 (day) | {:.0} reads/s | {:.2} | {:.2} | | server {:.0} µs CPU/read | {} |",
                med("/go_peer/top100/per_s"), med("/go_peer/top100/p50_ms"), med("/go_peer/top100/p99_ms"),
                med("/go_peer/top100/server_cpu_us_per_request"),
                median_cpu(&reps, "/go_peer/top100/cpu_pct")
            ));
            rows.push(format!(
                "| {workers} | Ovation (ledger on) ÷ Go peer | {:.2} × votes/s (target ≥ 1.25; repeats {}) | | {:.2} × p99 (target ≤ 1; repeats {}) | {:.2} × top-100 reads/s (target ≥ 4; repeats {}) | redis {:.1} vs {:.1} µs CPU/vote; server {:.0} vs {:.0} µs CPU/vote | |",
                med("/go_peer/votes_ratio"), spread(&reps, "/go_peer/votes_ratio"),
                med("/go_peer/p99_ratio"), spread(&reps, "/go_peer/p99_ratio"),
                med("/go_peer/top100_ratio"), spread(&reps, "/go_peer/top100_ratio"),
                med("/votes/redis_cpu_us_per_request"), med("/go_peer/votes/redis_cpu_us_per_request"),
                med("/votes/server_cpu_us_per_request"), med("/go_peer/votes/server_cpu_us_per_request"),
            ));
        }
        rows.push(format!(
            "| {workers} | top 100 (day), read cache off | {:.0} reads/s | {:.2} | {:.2} | {:.2} | {} errors | {} |",
            uncached.rps,
            uncached.p50_ms,
            uncached.p99_ms,
            uncached.rps / trivial_rps.max(1.0),
            uncached.errors,
            cpu_cell(&uncached.cpu)
        ));
        runs.push(json!({
            "workers": workers,
            "redis_alone_one_connection": quiet,
            "repeats": reps,
            "medians": {
                "ceiling_scripts_per_s": med("/ceiling/scripts_per_s"),
                "redis_benchmark_scripts_per_s": med("/redis_benchmark_ceiling/scripts_per_s"),
                "votes_per_s": med("/votes/per_s"),
                "votes_p99_ms": med("/votes/p99_ms"),
                "votes_ratio_to_ceiling": round(med("/votes/ratio_to_ceiling"), 3),
                "votes_ratio_to_redis_benchmark": round(med("/votes/ratio_to_redis_benchmark"), 3),
                "votes_redis_usec_per_vote": med("/votes/redis_usec_per_vote"),
                "votes_without_ledger_per_s": med("/votes_without_ledger/per_s"),
                "votes_without_ledger_p99_ms": med("/votes_without_ledger/p99_ms"),
                "ledger_per_s_ratio": round(med("/votes/per_s_ratio_to_no_ledger"), 3),
                "ledger_p99_ratio": round(med("/votes/p99_ratio_to_no_ledger"), 3),
                "go_peer_votes_ratio": round(med("/go_peer/votes_ratio"), 3),
                "go_peer_p99_ratio": round(med("/go_peer/p99_ratio"), 3),
                "go_peer_top100_ratio": round(med("/go_peer/top100_ratio"), 3),
                "votes_group_commit_off_per_s": med("/votes_group_commit_off/per_s"),
                "votes_group_commit_off_redis_usec_per_vote":
                    med("/votes_group_commit_off/redis_usec_per_vote"),
                "top100_ratio_to_trivial": round(med("/top100/ratio_to_trivial"), 3),
            },
            "top100_uncached": uncached.json(&[("ratio_to_trivial", uncached.rps / trivial_rps.max(1.0))]),
        }));
    }

    // What each feature costs Redis per vote.
    let shape_server = start_server(bin, db_dir.path(), redis_port, 1, "shapes", 250);
    set_up_board(&client, &shape_server.base).await;
    // The same calls on another Redis version, when `make bench` built one.
    let also = std::env::var("BENCH_REDIS_ALSO")
        .ok()
        .filter(|bin| !bin.is_empty())
        .map(|bin| start_redis_from(&bin));
    let also_port = also.as_ref().map(|(_, port)| *port);
    let versions: Vec<String> = std::iter::once(redis_port)
        .chain(also_port)
        .map(redis_version)
        .collect();
    let captured = capture_shapes(&client, &shape_server.base, redis_port).await;
    let shape_settings = shape_server.settings.clone();
    drop(shape_server);
    let (shape_rows, profile) = shapes(&captured, redis_port, also_port).await;
    drop(also);
    let shape_state = Arc::new(ovation::startup::connect(shape_settings).await.unwrap());
    let encoding_rows = encodings(&shape_state, seconds, redis_pid, redis_port).await;

    // A million-member open board, loaded with a pipeline, for rank reads and memory.
    let server = start_server(
        bin,
        db_dir.path(),
        redis_port,
        *worker_counts.last().unwrap_or(&1),
        "big",
        250,
    );
    call(
        &client,
        &server.base,
        reqwest::Method::POST,
        "/api/v1/admin/boards",
        json!({"slug": "big", "title": "Big", "membership": "open", "periods": ["all"]}),
    )
    .await;
    let state = ovation::startup::connect(server.settings.clone())
        .await
        .unwrap();
    let board = state
        .config
        .board(&BoardSlug::parse("big").unwrap())
        .unwrap();
    let key = board.keys.scores(
        ovation::domain::score::View::Display,
        &ovation::domain::period::Bucket::all(),
    );
    let redis_client = redis::Client::open(redis_url(&server.settings)).unwrap();
    let mut conn = redis_client
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let mut rng = rand::rngs::StdRng::from_os_rng();
    let scores: Vec<i64> = (0..1_000_000)
        .map(|_| rng.random_range(1..1_000_000i64) * 1_000_000)
        .collect();
    let load = Instant::now();
    for target in [key.as_str(), "bare-zadd"] {
        for chunk in (0..1_000_000usize).collect::<Vec<_>>().chunks(10_000) {
            let mut pipe = redis::pipe();
            for &i in chunk {
                pipe.zadd(target, format!("p{}", i + 1), scores[i]).ignore();
            }
            let () = pipe.query_async(&mut conn).await.unwrap();
        }
    }
    let load_s = load.elapsed().as_secs_f64();
    let usage = |k: &str| -> f64 {
        redis_cli(redis_port, &["MEMORY", "USAGE", k, "SAMPLES", "0"])
            .trim()
            .parse()
            .unwrap_or(0.0)
    };
    let (ours, bare) = (usage(&key), usage("bare-zadd"));
    let member_reads = wrk(
        &format!("{}/", server.base),
        Some(&root.join("bench/member.lua")),
        seconds,
        &[("redis", redis_pid), ("server", server.pid)],
    );
    rows.push(format!("| {} | member rank, 1,000,000-member board | {:.0} reads/s | {:.2} | {:.2} | | {} errors | {} |", worker_counts.last().unwrap_or(&1), member_reads.rps, member_reads.p50_ms, member_reads.p99_ms, member_reads.errors, cpu_cell(&member_reads.cpu)));
    rows.push(format!(
        "| | memory per member per bucket | {:.1} B | | | {:.2} × bare ZADD ({:.1} B) | | |",
        ours / 1e6,
        ours / bare.max(1.0),
        bare / 1e6
    ));

    let date = chrono::Utc::now().format("%Y-%m-%d").to_string();
    let report = json!({
        "date": date,
        "machine": {"cores": cores, "note": "load generator, server and Redis share these cores"},
        "seconds_per_phase": seconds,
        "connections": CONNECTIONS,
        "repeats": repeats,
        "runs": runs,
        "member_reads": member_reads.json(&[]),
        "redis_versions": versions,
        "redis_usec_per_vote_by_shape": shape_rows.iter().map(|(name, figures)| json!({
            "shape": name,
            "by_redis_version": versions.iter().zip(figures).map(|(version, (usec, steal))| json!({
                "redis_version": version, "redis_usec_per_vote": round(*usec, 1), "steal_pct": round(*steal, 1),
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "full_semantics_profile": versions.iter().zip(&profile).map(|(version, rows)| json!({
            "redis_version": version,
            "commands": rows.iter().map(|(name, calls, usec)| json!({
                "command": name, "calls_per_vote": round(*calls, 2), "redis_usec_per_vote": round(*usec, 2),
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "encodings": encoding_rows.iter().map(|(name, usec, bytes, steal)| json!({
            "settings": name, "redis_usec_per_vote": round(*usec, 1),
            "used_memory_bytes": bytes, "steal_pct": round(*steal, 1),
        })).collect::<Vec<_>>(),
        "memory": {"members": 1_000_000, "bytes_per_member": round(ours / 1e6, 1), "bare_zadd_bytes_per_member": round(bare / 1e6, 1),
                   "ratio": round(ours / bare.max(1.0), 3), "load_seconds": round(load_s, 1)},
    });
    println!(
        "\n## Ovation benchmark, {date}, {cores} cores (load generator, server and Redis share them)\n"
    );
    println!(
        "{seconds} s phases, {CONNECTIONS} connections, medians of {repeats} repeats; \
         `steal` is CPU the host gave to other guests.\n"
    );
    println!("| workers | what | rate | p50 ms | p99 ms | ratio | notes | CPU, % of one core |");
    println!("|---|---|---|---|---|---|---|---|");
    for row in rows {
        println!("{row}");
    }
    let heads: String = versions
        .iter()
        .map(|v| format!(" Redis {v}: µs per vote | votes/s per core | host steal |"))
        .collect();
    println!("\n| board shape |{heads}");
    println!("|---|{}", "---|---|---|".repeat(versions.len()));
    for (name, figures) in &shape_rows {
        let cells: String = figures
            .iter()
            .map(|(usec, steal)| {
                format!(" {usec:.1} | {:.0} | {steal:.1}% |", 1e6 / usec.max(0.001))
            })
            .collect();
        println!("| {name} |{cells}");
    }
    for (version, rows) in versions.iter().zip(&profile) {
        println!(
            "\n| where a full-semantics vote's time goes, Redis {version} | calls per vote | Redis µs per vote |"
        );
        println!("|---|---|---|");
        for (name, calls, usec) in rows {
            println!("| {name} | {calls:.2} | {usec:.2} |");
        }
    }
    println!(
        "\n| Redis encoding settings (own generator, 64 connections) | Redis µs per vote | used memory after the phase | host steal |"
    );
    println!("|---|---|---|---|");
    for (name, usec, bytes, steal) in &encoding_rows {
        println!(
            "| {name} | {usec:.1} | {:.1} MB | {steal:.1}% |",
            bytes / 1e6
        );
    }
    write_results(format!("{date}-{cores}cores.json"), &report);
    println!("Every repeat, with CPU (% of one core) per phase, is in the JSON.");
}

/// The version a Redis reports (`redis_version`).
pub fn redis_version(port: u16) -> String {
    redis_cli(port, &["INFO", "server"])
        .lines()
        .find_map(|l| l.strip_prefix("redis_version:"))
        .unwrap_or("?")
        .trim()
        .to_owned()
}

/// The URL of the one Redis a bench's server runs on.
pub fn redis_url(settings: &ovation::config::Settings) -> &str {
    match &settings.redis {
        ovation::store::redis::RedisTarget::Single(url) => url,
        ovation::store::redis::RedisTarget::Cluster(_) => panic!("the bench runs on one Redis"),
    }
}
