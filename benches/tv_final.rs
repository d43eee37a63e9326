//! `make bench`, the final of a TV vote: one hot board on a fresh `redis-server` (no
//! persistence). Ten members, periods hour, day and all in both views, carry-over 0.1,
//! three rules (voter per day, voter and member per day, ip per minute), the ledger on,
//! 100,000 distinct voters, every vote with an idempotency key.
//!
//! 1. Redis µs per vote: votes go through the engine (`writes::apply`, what a request
//!    does after HTTP) from 64 tasks, so group commit forms its calls as it does under
//!    load; Redis's own statistics give EVALSHA's µs per vote, next to one ZINCRBY's in
//!    the same run (the machine's own unit), and what the commands it runs cost alone.
//!    Repeated when the host stole more than 3 % of a core. In turn with it, three
//!    rounds, the same board with one watch (`ip/24` over a rolling 10 minutes, a
//!    threshold no subject reaches, so every vote is counted and watched) and with the
//!    watch over the calendar hour instead: the median of the rounds' differences in
//!    ZINCRBY-times per vote (target: at most 1 more). Then the same board
//!    `sharded` (6 shards, by voter) on the same Redis: its reserve steps, shard votes
//!    and reads of the shards' scores (ZMSCORE), from 64 and from 512 writers (a board's votes spread over its shards' slots, so each slot
//!    has fewer in flight and its calls are smaller at the same load).
//! 2. Votes over HTTP: the release server (`target/release/ovation`, two workers) with the
//!    same board, `wrk` at 64 connections (`bench/tv_vote.lua`): votes per second, p50
//!    and p99, Redis's script time per vote counted (the votes' calls and the ledger's
//!    drain), the CPU each process used, and the votes per second as a share of what one
//!    Redis core takes at phase 1's cost. On a 2-core machine the server and `wrk` share
//!    the cores with Redis, so this share says what this machine's HTTP path delivers,
//!    not what one Redis core could take with the server elsewhere.
//!
//! 3. The sharded board on Redis Clusters of 3 masters (6 shards) and of 6 masters (12
//!    shards) on the same two cores, through the engine from 64 and from 512 tasks: votes
//!    per second (this machine's load generator and the nodes share two cores), Redis µs
//!    per vote in scripts and reads over all nodes, and per node its process's CPU (µs
//!    per vote, its share of the nodes' CPU, % of a core) and its scripts' and reads' µs.
//!    At 512 writers: the busiest master's CPU per vote over the masters' mean (target
//!    ≤ 1.5), the CPU per vote summed over the masters over the `full` board's on one
//!    Redis (target ≤ 1.25), and the votes per second the masters would take with a core
//!    each (1 ÷ the busiest master's CPU per vote): a projection from per-master time,
//!    not a measured rate; two cores cannot measure past two.
//!
//! Prints a markdown table and writes JSON to `bench/results/`. Settings: `BENCH_TV_VOTES`
//! (votes per run of phase 1, default 200,000), `BENCH_SECONDS` (phase 2, default 10),
//! `OVATION_VOTE_GROUP` (the largest group commit, default 32).

#![allow(clippy::unwrap_used, clippy::expect_used)] // A benchmark stops at the first failure.

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;
use std::time::Instant;

use ovation::domain::board::{BoardSettings, Member, Membership};
use ovation::domain::idempotency::Idempotency;
use ovation::domain::ids::{BoardSlug, Channel, IdempotencyKey, MemberId, Terminal, VoterId};
use ovation::domain::limit::{Dimension, Missing, RuleSpec, Window};
use ovation::domain::period::{Calendar, Period};
use ovation::domain::score::Milli;
use ovation::domain::scoring::Storage;
use ovation::domain::watch::{WatchDimension, WatchSpec};
use ovation::engine::state::AppState;
use ovation::engine::writes::{self, What, Write};
use ovation::engine::{admin, watches};
use ovation::metrics::WriteKind;
use rand::{Rng, SeedableRng};
use serde_json::json;

mod common;
mod cpu;
mod http;

use common::{
    command_stat, command_stats, engine_state, env_number, evalsha_stat, median, redis_cli,
    start_cluster, start_redis, steal_seconds, vote_caller, write_results, zincrby_usec,
};
use cpu::cpu_times;
use http::{WrkResult, cpu_cell, create_board, server_bin, start_server_with, until_quiet, wrk};

/// Concurrent writers, as the 64 connections.
const TASKS: usize = 64;

/// Concurrent writers of the sharded phases' second run: a board's votes spread over its
/// shards' slots, so each slot has fewer in flight and its calls are smaller (each call
/// costs Redis a fixed part, and a vote alone costs several times a summed one). Each
/// vote waits in one slot's queue at a time, so a shard's calls hold about this ÷ (2 ×
/// shards) steps, saturated or not: 43 on 6 shards, 21 on 12
/// (bench/notes/2026-12-03-calls-at-saturation.md).
const LOADED: u64 = 512;

/// Distinct voters the votes come from.
const VOTERS: u32 = 100_000;

/// The TV-final board's members.
const MEMBERS: u32 = 10;

/// The shards of the TV-final board in its sharded phases on one Redis.
const SHARDS: i64 = 6;

/// The clusters of phase 3: masters, and the shards of the board on them.
const CLUSTERS: [(usize, i64); 2] = [(3, 6), (6, 12)];

/// Largest share of a core the host may steal from a run before it is repeated.
const STEAL_LIMIT: f64 = 3.0;

/// How many rounds phase 1 runs the `full` board and its two watched twins, in turn:
/// a watch's cost is the median of the rounds' differences (single runs of the phases
/// drifted apart by more than a watch costs).
const WATCH_ROUNDS: usize = 3;

/// The TV-final board `slug`, kept in `storage`: ten members, hour/day/all, carry-over
/// 0.1, three rules, the ledger on.
async fn tv_board(state: &AppState, slug: &str, storage: Storage) -> BoardSlug {
    let slug = BoardSlug::parse(slug).unwrap();
    let mut settings = BoardSettings::new("TV final".into());
    settings.storage = storage;
    settings.membership = Membership::Closed;
    settings.periods = vec![Period::Hour, Period::Day, Period::All];
    settings.carry_over = Milli::from_thousandths(100);
    settings.ledger = true;
    admin::create_board(state, "bench", slug.clone(), settings)
        .await
        .unwrap();
    let members = (1..=MEMBERS)
        .map(|i| Member {
            id: MemberId::parse(&format!("m{i}")).unwrap(),
            name: format!("Contestant {i}"),
            image_url: None,
            initial_votes: 0,
            multiplier: None,
            enabled: true,
            profile: json!({}),
        })
        .collect();
    admin::upsert_members(state, "bench", &slug, members)
        .await
        .unwrap();
    for (name, dimensions, window, limit) in [
        ("voter per day", vec![Dimension::Voter], "day", 1_000),
        (
            "voter and member per day",
            vec![Dimension::Member, Dimension::Voter],
            "day",
            100,
        ),
        ("ip per minute", vec![Dimension::Ip], "minute", 10_000),
    ] {
        let spec = RuleSpec {
            name: name.into(),
            dimensions,
            window: Window::parse(window).unwrap(),
            limit,
            overrides: Vec::new(),
            missing: Missing::Refuse,
        };
        admin::create_rule(state, "bench", &slug, spec)
            .await
            .unwrap();
    }
    slug
}

/// A vote of a random voter (and its address) for a random member, with a key of its own.
fn tv_vote(rng: &mut impl Rng, slug: &BoardSlug, n: u64) -> Write {
    let voter = rng.random_range(1..=VOTERS);
    Write {
        board: slug.clone().into(),
        member: MemberId::parse(&format!("m{}", rng.random_range(1..=MEMBERS))).unwrap(),
        what: What::Vote { count: 1 },
        voter: Some(VoterId::parse(&format!("viewer-{voter}")).unwrap()),
        channel: Some(Channel::parse("app").unwrap()),
        terminal: Some(Terminal::parse("ios").unwrap()),
        idempotency: Some(Idempotency::new(
            IdempotencyKey::parse(&format!("tv-{n}")).unwrap(),
            &[("n", Some(&n.to_string()))],
        )),
        at: None,
        ip: Some(IpAddr::V4(Ipv4Addr::from(0x0a00_0000 + voter / 2))),
        skip_limits: false,
        releases: None,
    }
}

/// Each command's calls and µs per vote in Redis's statistics on `ports`, summed over
/// them (a script's commands count there too), EVALSHA's first, over `votes` votes.
fn profile(ports: &[u16], votes: f64) -> Vec<(String, f64, f64)> {
    let mut rows: Vec<(String, f64, f64)> = Vec::new();
    for &port in ports {
        for (name, calls, usec) in command_stats(port) {
            if matches!(
                name.as_str(),
                "info" | "config|resetstat" | "flushdb" | "cluster"
            ) {
                continue;
            }
            match rows.iter_mut().find(|(n, _, _)| *n == name) {
                Some(row) => {
                    row.1 += calls / votes;
                    row.2 += usec / votes;
                }
                None => rows.push((name, calls / votes, usec / votes)),
            }
        }
    }
    rows.sort_by(|a, b| {
        (a.0 != "evalsha")
            .cmp(&(b.0 != "evalsha"))
            .then(b.2.total_cmp(&a.2))
    });
    rows
}

/// One Redis node of a phase: its port and process.
#[derive(Clone, Copy)]
struct Node {
    port: u16,
    pid: u32,
}

/// What one node did per vote in a phase: its scripts' µs (EVALSHA, their commands
/// included), the µs of its reads of shards' scores (ZMSCORE), and the CPU its process
/// used (µs, and % of a core): what bounds the node, the engine's own commands and the
/// network included.
struct NodeRun {
    evalsha_usec: f64,
    zmscore_usec: f64,
    cpu_usec: f64,
    cpu_pct: f64,
}

/// A phase of votes through the engine.
struct EngineRun {
    /// Redis µs per vote: every node's scripts and reads of other shards.
    usec: f64,
    steal: f64,
    commands: Vec<(String, f64, f64)>,
    nodes: Vec<NodeRun>,
    votes_per_s: f64,
}

/// `votes` votes cast through the engine by `writers` tasks on board `slug`, from an
/// empty store on `nodes`.
async fn engine_run(
    state: &Arc<AppState>,
    nodes: &[Node],
    (slug, votes, writers): (&BoardSlug, u64, u64),
) -> EngineRun {
    let ports: Vec<u16> = nodes.iter().map(|n| n.port).collect();
    for &port in &ports {
        redis_cli(port, &["FLUSHDB"]);
        redis_cli(port, &["CONFIG", "RESETSTAT"]);
    }
    let caller = Arc::new(vote_caller());
    let cpu_before: Vec<f64> = nodes.iter().map(|n| cpu_times(n.pid).0).collect();
    let (steal, at) = (steal_seconds(), Instant::now());
    let mut tasks = Vec::new();
    for task in 0..writers {
        let (state, caller, slug) = (state.clone(), caller.clone(), slug.clone());
        tasks.push(tokio::spawn(async move {
            let mut rng = rand::rngs::StdRng::seed_from_u64(task);
            for i in 0..votes / writers {
                let vote = tv_vote(&mut rng, &slug, task << 32 | i);
                let answers = writes::apply(&state, &caller, WriteKind::Vote, vec![Ok(vote)])
                    .await
                    .unwrap();
                for answer in answers {
                    answer.unwrap();
                }
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    let wall = at.elapsed().as_secs_f64();
    let stolen = (steal_seconds() - steal) / wall * 100.0;
    let cast = (votes / writers * writers) as f64;
    let nodes: Vec<NodeRun> = nodes
        .iter()
        .zip(cpu_before)
        .map(|(n, before)| {
            let cpu = cpu_times(n.pid).0 - before;
            NodeRun {
                evalsha_usec: evalsha_stat(n.port, "usec") / cast,
                zmscore_usec: command_stat(n.port, "zmscore", "usec") / cast,
                cpu_usec: cpu * 1e6 / cast,
                cpu_pct: cpu / wall * 100.0,
            }
        })
        .collect();
    EngineRun {
        usec: nodes.iter().map(|n| n.evalsha_usec + n.zmscore_usec).sum(),
        steal: stolen,
        commands: profile(&ports, cast),
        nodes,
        votes_per_s: cast / wall,
    }
}

/// `values` as `+a, +b, +c`.
fn listed(values: &[f64]) -> String {
    values
        .iter()
        .map(|v| format!("{v:+.2}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// [`engine_run`], repeated (three runs at most) while the host stole more than
/// [`STEAL_LIMIT`].
async fn quiet_engine_run(
    state: &Arc<AppState>,
    nodes: &[Node],
    phase: (&BoardSlug, u64, u64),
) -> EngineRun {
    let mut run = engine_run(state, nodes, phase).await;
    for _ in 1..3 {
        if run.steal <= STEAL_LIMIT {
            break;
        }
        run = engine_run(state, nodes, phase).await;
    }
    run
}

impl EngineRun {
    fn json(&self) -> serde_json::Value {
        json!({
            "redis_usec_per_vote": self.usec,
            "steal_pct": self.steal,
            "votes_per_s": self.votes_per_s,
            "nodes": self.nodes.iter().map(|n| json!({
                "share_of_redis_cpu": n.cpu_usec / self.nodes_cpu(),
                "evalsha_usec_per_vote": n.evalsha_usec,
                "zmscore_usec_per_vote": n.zmscore_usec,
                "redis_cpu_usec_per_vote": n.cpu_usec,
                "redis_cpu_pct": n.cpu_pct,
            })).collect::<Vec<_>>(),
            "commands": self.commands.iter().map(|(name, calls, usec)| json!({
                "command": name, "calls_per_vote": calls, "usec_per_vote": usec,
            })).collect::<Vec<_>>(),
        })
    }

    /// Redis µs per vote in the commands run, EVALSHA's own time left out: the
    /// scripts' commands and the few the engine sends itself (the ledger drain's reads).
    fn commands_usec(&self) -> f64 {
        self.commands
            .iter()
            .filter(|(name, _, _)| name != "evalsha")
            .map(|(_, _, usec)| usec)
            .sum()
    }

    /// Votes per `vote.lua` call (a sharded vote's reserve step is a call's vote too).
    fn votes_per_call(&self) -> f64 {
        let calls = self
            .commands
            .iter()
            .find(|(name, _, _)| name == "evalsha")
            .map_or(0.0, |(_, calls, _)| *calls);
        1.0 / calls.max(1e-9)
    }

    /// Redis CPU µs per vote summed over the nodes.
    fn nodes_cpu(&self) -> f64 {
        self.nodes.iter().map(|n| n.cpu_usec).sum()
    }

    /// The busiest node's Redis CPU per vote.
    fn busiest_cpu(&self) -> f64 {
        self.nodes.iter().map(|n| n.cpu_usec).fold(0.0, f64::max)
    }

    /// The busiest node's CPU per vote over the nodes' mean.
    fn busiest_over_mean(&self) -> f64 {
        self.busiest_cpu() / (self.nodes_cpu() / self.nodes.len() as f64)
    }

    /// Each node's figures, for the table.
    fn nodes_cell(&self) -> String {
        let total = self.nodes_cpu();
        self.nodes
            .iter()
            .enumerate()
            .map(|(i, n)| {
                format!(
                    "node {}: CPU {:.1} µs ({:.0} % of the Redis CPU, {:.0} % of a core; scripts {:.1} + reads {:.1} µs)",
                    i + 1,
                    n.cpu_usec,
                    n.cpu_usec / total * 100.0,
                    n.cpu_pct,
                    n.evalsha_usec,
                    n.zmscore_usec,
                )
            })
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// The TV-final board `final` made over the API of the server at `base`, as phase 1's.
async fn tv_board_over_http(client: &reqwest::Client, base: &str) {
    let rules = [
        json!({"name": "voter per day", "dimensions": ["voter"], "window": "day", "limit": 1000}),
        json!({"name": "voter and member per day", "dimensions": ["voter", "member"], "window": "day", "limit": 100}),
        json!({"name": "ip per minute", "dimensions": ["ip"], "window": "minute", "limit": 10_000}),
    ];
    let board = json!({"slug": "final", "title": "TV final", "membership": "closed",
                       "periods": ["hour", "day", "all"], "carry_over": 0.1, "ledger": true});
    create_board(client, base, board, MEMBERS as usize, &rules).await;
}

/// Phase 2: votes over HTTP, repeated while the host steals too much; the run and Redis's
/// script µs per vote counted.
async fn http_phase(port: u16, redis_pid: u32, seconds: u64) -> (WrkResult, f64) {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let group = std::env::var("OVATION_VOTE_GROUP").unwrap_or_else(|_| "32".to_owned());
    let server = start_server_with(
        &server_bin(&root),
        dir.path(),
        port,
        2,
        "tvhttp",
        250,
        &[("OVATION_VOTE_GROUP", &group)],
    );
    let client = reqwest::Client::new();
    tv_board_over_http(&client, &server.base).await;
    let pids = [("redis", redis_pid), ("server", server.pid)];
    until_quiet(
        |(run, _): &(WrkResult, f64)| run.steal(),
        || async {
            redis_cli(port, &["CONFIG", "RESETSTAT"]);
            let run = wrk(
                &format!("{}/api/v1/boards/final/votes", server.base),
                Some(&root.join("bench/tv_vote.lua")),
                seconds,
                &pids,
            );
            let counted = run.requests.saturating_sub(run.errors).max(1) as f64;
            let usec = evalsha_stat(port, "usec") / counted;
            (run, usec)
        },
    )
    .await
}

async fn run() {
    let (redis, port) = start_redis();
    let single = [Node {
        port,
        pid: redis.0.id(),
    }];
    let dir = tempfile::tempdir().unwrap();
    let database = format!("sqlite://{}?mode=rwc", dir.path().join("tv.db").display());
    let group = std::env::var("OVATION_VOTE_GROUP").unwrap_or_else(|_| "32".to_owned());
    let state = Arc::new(
        engine_state(
            &database,
            port,
            "tv:",
            &[("OVATION_VOTE_GROUP", group.clone())],
        )
        .await,
    );
    let full = tv_board(&state, "final", Storage::Full).await;
    // One watch per /24, over a rolling 10 minutes (the target's shape), or over the
    // calendar hour.
    let mut watched_boards = Vec::new();
    for (slug, window) in [
        ("finalw", Window::Rolling(600)),
        ("finalh", Window::Calendar(Calendar::Hour)),
    ] {
        let board = tv_board(&state, slug, Storage::Full).await;
        let watch = WatchSpec {
            name: "a network".into(),
            dimensions: vec![WatchDimension::IpPrefix(24)],
            window,
            threshold: 100_000,
        };
        watches::create(&state, "bench", &board, watch)
            .await
            .unwrap();
        watched_boards.push(board);
    }
    let sharded = tv_board(&state, "final8", Storage::sharded(SHARDS)).await;
    let votes: u64 = env_number("BENCH_TV_VOTES", 200_000);

    let writers = TASKS as u64;
    let mut rounds: Vec<[EngineRun; 3]> = Vec::new();
    for _ in 0..WATCH_ROUNDS {
        rounds.push([
            quiet_engine_run(&state, &single, (&full, votes, writers)).await,
            quiet_engine_run(&state, &single, (&watched_boards[0], votes, writers)).await,
            quiet_engine_run(&state, &single, (&watched_boards[1], votes, writers)).await,
        ]);
    }
    let split = quiet_engine_run(&state, &single, (&sharded, votes, writers)).await;
    let split_loaded = quiet_engine_run(&state, &single, (&sharded, votes, LOADED)).await;
    let unit = zincrby_usec(port);
    // What each watch adds, per round, in ZINCRBY-times; the round whose `full` run is the
    // median stands for phase 1.
    let added = |k: usize| -> Vec<f64> {
        rounds
            .iter()
            .map(|r| (r[k].usec - r[0].usec) / unit)
            .collect()
    };
    let (rolling_added, hourly_added) = (added(1), added(2));
    let mut order: Vec<usize> = (0..rounds.len()).collect();
    order.sort_by(|&a, &b| rounds[a][0].usec.total_cmp(&rounds[b][0].usec));
    let [one, with_watch, with_hourly] = rounds.swap_remove(order[order.len() / 2]);
    let units = one.usec / unit;
    let commands = one.commands_usec();
    let seconds: u64 = env_number("BENCH_SECONDS", 10);
    let (over_http, http_usec) = http_phase(port, redis.0.id(), seconds).await;
    let share = over_http.rps / (1e6 / one.usec);

    // Phase 3: the sharded board on clusters of 3 and of 6 masters, on the same two cores.
    let mut clusters = Vec::new();
    for (masters, shards) in CLUSTERS {
        let cluster = start_cluster(masters);
        let seeds: Vec<String> = cluster
            .iter()
            .map(|(_, p)| format!("redis://127.0.0.1:{p}"))
            .collect();
        let cluster_dir = tempfile::tempdir().unwrap();
        let cluster_database = format!(
            "sqlite://{}?mode=rwc",
            cluster_dir.path().join("tvc.db").display()
        );
        let cluster_state = Arc::new(
            engine_state(
                &cluster_database,
                cluster[0].1,
                "tvc:",
                &[
                    ("OVATION_VOTE_GROUP", group.clone()),
                    ("OVATION_REDIS_CLUSTER", seeds.join(",")),
                ],
            )
            .await,
        );
        let board = tv_board(&cluster_state, "final8", Storage::sharded(shards)).await;
        let nodes: Vec<Node> = cluster
            .iter()
            .map(|(proc, port)| Node {
                port: *port,
                pid: proc.0.id(),
            })
            .collect();
        let runs = [
            quiet_engine_run(&cluster_state, &nodes, (&board, votes, writers)).await,
            quiet_engine_run(&cluster_state, &nodes, (&board, votes, LOADED)).await,
        ];
        clusters.push((masters, shards, runs));
    }

    println!("\n## The TV final: one hot board\n");
    println!("| figure | value |\n|---|---|");
    println!(
        "| Redis µs per vote, `full` board (EVALSHA, 64 writers, group commit) | {:.2} |",
        one.usec
    );
    println!("| µs per ZINCRBY, same run | {unit:.3} |");
    println!("| ZINCRBY-times per vote (target ≤ 12) | {units:.1} |");
    println!(
        "| what one watch (ip/24, rolling 10 min) adds: ZINCRBY-times per vote, the median of {WATCH_ROUNDS} rounds (target ≤ 1) | +{:.2} (rounds {}; steal {:.1} %) |",
        median(&rolling_added),
        listed(&rolling_added),
        with_watch.steal
    );
    println!(
        "| what one watch (ip/24, calendar hour) adds, likewise | +{:.2} (rounds {}; steal {:.1} %) |",
        median(&hourly_added),
        listed(&hourly_added),
        with_hourly.steal
    );
    println!(
        "| of which the commands alone (every command but EVALSHA) | {commands:.2} µs = {:.1} ZINCRBY-times |",
        commands / unit
    );
    println!("| votes per Redis core | {:.0} |", 1e6 / one.usec);
    println!("| steal (% of a core) | {:.1} |", one.steal);
    println!(
        "| votes/s over HTTP (64 connections, two workers) | {:.0} ({:.2}× one Redis core's) |",
        over_http.rps, share
    );
    println!(
        "| p50 / p99 over HTTP | {:.2} / {:.2} ms |",
        over_http.p50_ms, over_http.p99_ms
    );
    println!("| non-2xx over HTTP | {} |", over_http.errors);
    println!("| Redis µs per vote over HTTP (scripts) | {http_usec:.2} |");
    println!(
        "| CPU over HTTP (% of a core) | {} |",
        cpu_cell(&over_http.cpu)
    );
    let mut sharded_rows = vec![
        ("one Redis".to_owned(), SHARDS, TASKS as u64, &split),
        ("one Redis".to_owned(), SHARDS, LOADED, &split_loaded),
    ];
    for (masters, shards, runs) in &clusters {
        for (run, writers) in runs.iter().zip([TASKS as u64, LOADED]) {
            sharded_rows.push((format!("{masters}-master cluster"), *shards, writers, run));
        }
    }
    for (place, shards, writers, run) in sharded_rows {
        println!(
            "| `sharded` board ({shards} shards), {place}, {writers} writers | {:.0} votes/s; Redis {:.2} µs per vote in scripts and reads = {:.1} ZINCRBY (phase 1's), CPU {:.1} µs over the nodes, {:.1} votes per script call; {}; steal {:.1} % |",
            run.votes_per_s,
            run.usec,
            run.usec / unit,
            run.nodes_cpu(),
            run.votes_per_call(),
            run.nodes_cell(),
            run.steal
        );
    }
    println!(
        "\n| cluster, {LOADED} writers | busiest master's Redis CPU ÷ the masters' mean (target ≤ 1.5) | Redis CPU per vote over the masters ÷ the `full` board's on one Redis at 64 writers (target ≤ 1.25) | projected votes/s: 1 ÷ the busiest master's CPU per vote |\n|---|---|---|---|"
    );
    for (masters, shards, [_, loaded]) in &clusters {
        println!(
            "| {masters} masters, {shards} shards | {:.2} | {:.2} ({:.1} ÷ {:.1} µs) | {:.0} (the `full` board on one core: {:.0}) |",
            loaded.busiest_over_mean(),
            loaded.nodes_cpu() / one.nodes_cpu(),
            loaded.nodes_cpu(),
            one.nodes_cpu(),
            1e6 / loaded.busiest_cpu(),
            1e6 / one.nodes_cpu()
        );
    }
    println!("\n| command (`full` board) | calls per vote | µs per vote |\n|---|---|---|");
    for (name, calls, usec) in &one.commands {
        println!("| {name} | {calls:.3} | {usec:.2} |");
    }
    let out = json!({
        "date": chrono::Utc::now().to_rfc3339(),
        "votes": votes,
        "redis_usec_per_vote": one.usec,
        "zincrby_usec": unit,
        "zincrby_units_per_vote": units,
        "commands_usec_per_vote": commands,
        "commands_zincrby_units_per_vote": commands / unit,
        "votes_per_redis_core": 1e6 / one.usec,
        "steal_pct": one.steal,
        "full": one.json(),
        "watched": with_watch.json(),
        "watch_zincrby_units_added": median(&rolling_added),
        "watch_zincrby_units_added_rounds": rolling_added,
        "watched_hourly": with_hourly.json(),
        "watch_hourly_zincrby_units_added": median(&hourly_added),
        "watch_hourly_zincrby_units_added_rounds": hourly_added,
        "shards": SHARDS,
        "sharded_one_redis": split.json(),
        "sharded_one_redis_512_writers": split_loaded.json(),
        "http": over_http.json(&[("redis_usec_per_vote", http_usec), ("share_of_one_redis_core", share)]),
        "clusters": clusters.iter().map(|(masters, shards, [run, loaded])| json!({
            "masters": masters,
            "shards": shards,
            "writers_64": run.json(),
            "writers_512": loaded.json(),
            "busiest_over_mean_512": loaded.busiest_over_mean(),
            "redis_cpu_over_full_512": loaded.nodes_cpu() / one.nodes_cpu(),
            "projected_votes_per_s_512": 1e6 / loaded.busiest_cpu(),
        })).collect::<Vec<_>>(),
    });
    write_results(
        format!("{}-tv-final.json", chrono::Utc::now().format("%Y-%m-%d")),
        &out,
    );
}

fn main() {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(run());
}
