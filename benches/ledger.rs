//! `make bench`, the vote ledger, on a fresh `redis-server` (no persistence):
//! 1. What the ledger costs Redis per vote: a full-semantics vote (five calendar periods
//!    in both views, carry-over 0.1, a voter's participants) without and with its entry,
//!    one vote a call and 32 a call (group commit), in turns; next to one ZINCRBY's time
//!    in the same run, the machine's own unit.
//!    Next to it, the entry alone kept three ways (a list, a stream entry per vote, a
//!    stream entry per call), 1 and 32 a call.
//! 2. The drain: entries waiting in Redis moved to SQL by the engine's own drain pass, on
//!    SQLite (a file) and on PostgreSQL (`BENCH_POSTGRES_URL`, default the local server;
//!    a database of its own, dropped after): rows per second, against the votes per
//!    second one Redis core takes (10^6 ÷ µs per vote); and on PostgreSQL, entries
//!    arriving at that rate for `BENCH_LEDGER_LAG_S` seconds (default 20) while the
//!    service's drain runs: the largest lag.
//! 3. A recount of a board of `BENCH_LEDGER_ENTRIES` entries (default 10,000,000) in
//!    SQLite, after the board was rebuilt from them into Redis: time, and the process's
//!    resident memory at a tenth of the entries and at the end (flat in entries).
//!
//! Prints a markdown table and writes JSON to `bench/results/`. Steal is read for
//! phase 1, which is repeated when it lost more than 3 % of a core.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A benchmark stops at the first failure.

use std::sync::Mutex;
use std::time::Instant;

use chrono::{Duration, Utc};
use chrono_tz::Tz;
use ovation::domain::board::{BoardSettings, Membership};
use ovation::domain::ids::BoardSlug;
use ovation::domain::ledger::Entry;
use ovation::domain::period::{Bucket, Period, voter_buckets};
use ovation::domain::score::{Increment, Milli};
use ovation::engine::state::AppState;
use ovation::engine::{admin, ledger, rebuild, recount};
use ovation::store::redis::keys::BoardKeys;
use ovation::store::redis::{RedisStore, RedisTarget, VoteCall, VoteTarget, WriteFacts};
use ovation::store::sql::ledger::{self as sql, LedgerOf};
use rand::{Rng, SeedableRng};
use serde_json::json;

mod common;

use common::{
    engine_state, env_number, evalsha_stat, evalsha_usec, median, redis_cli, start_redis,
    steal_seconds, write_results, zincrby_usec,
};

/// Votes per phase of part 1.
const VOTES: usize = 20_000;

/// Largest share of a core the host may steal from a phase of part 1 before it is
/// repeated.
const STEAL_LIMIT: f64 = 3.0;

/// Redis µs per vote of `votes` full-semantics votes, `group` a call, with or without
/// ledger entries; and the steal of the run (% of a core).
async fn vote_usec(
    store: &RedisStore,
    port: u16,
    board: &BoardKeys,
    with_ledger: bool,
    group: usize,
) -> (f64, f64) {
    redis_cli(port, &["FLUSHDB"]);
    redis_cli(port, &["CONFIG", "RESETSTAT"]);
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let now = Utc::now();
    let tz = Tz::UTC;
    let targets: Vec<VoteTarget> = Period::CALENDAR
        .iter()
        .map(|&p| {
            let current = Bucket::containing(p, tz, now).unwrap();
            let next = current.next(tz);
            VoteTarget { current, next }
        })
        .collect();
    let voters = voter_buckets(&Period::CALENDAR, tz, now).unwrap();
    let increment = Increment::of(
        1,
        Milli::from_thousandths(1500),
        Milli::from_thousandths(100),
    );
    let (steal, at) = (steal_seconds(), Instant::now());
    for _ in 0..VOTES / group {
        let votes: Vec<(String, String, String)> = (0..group)
            .map(|_| {
                let member = format!("m{}", rng.random_range(1..=10));
                let voter = format!("v{}", rng.random_range(1..=100_000));
                let entry = Entry {
                    id: rng.random(),
                    at: now.timestamp_millis(),
                    recorded: now.timestamp_millis(),
                    member: member.clone(),
                    voter: Some(voter.clone()),
                    channel: Some("app".into()),
                    terminal: Some("ios".into()),
                    count: 1,
                    op: None,
                    value: None,
                    display: increment.display,
                    carry: increment.carry,
                    adjusts: None,
                    ip: None,
                    held: None,
                    releases: None,
                }
                .encode();
                (member, voter, entry)
            })
            .collect();
        let calls: Vec<VoteCall> = votes
            .iter()
            .map(|(member, voter, entry)| VoteCall {
                board,
                targets: &targets,
                increment,
                write: WriteFacts {
                    voters: &voters,
                    ledger: with_ledger.then_some(entry.as_str()),
                    ..WriteFacts::at(member, Some(voter), now.timestamp_millis())
                },
                windows: &[],
                trends: &[],
            })
            .collect();
        for reply in store.cast_votes(&calls).await.unwrap() {
            reply.unwrap();
        }
    }
    let stolen = (steal_seconds() - steal) / at.elapsed().as_secs_f64() * 100.0;
    let per_vote = if group == 1 {
        evalsha_usec(port)
    } else {
        evalsha_stat(port, "usec") / VOTES as f64
    };
    (per_vote, stolen)
}

/// The ways a script could keep a call's entries, for the question of which
/// costs Redis less: `vote.lua`'s list (one RPUSH of every entry of the call), a stream
/// entry per vote (an XADD each), and one stream entry per call (the call's entries
/// joined into one XADD field, expanded to rows by the drain).
const SHAPES: [(&str, &str); 3] = [
    (
        "a list, one RPUSH a call (what vote.lua does)",
        "redis.call('RPUSH', KEYS[1], unpack(ARGV))",
    ),
    (
        "a stream, one XADD per vote",
        "for i = 1, #ARGV do redis.call('XADD', KEYS[1], '*', 'e', ARGV[i]) end",
    ),
    (
        "a stream, one XADD per call (entries joined)",
        "redis.call('XADD', KEYS[1], '*', 'e', table.concat(ARGV, '\\n'))",
    ),
];

/// Redis µs per vote of appending [`VOTES`] entries, `group` a call, the way `body`
/// does (a script of its own: the append alone, without the vote around it); and the
/// steal of the run (% of a core).
async fn append_usec(port: u16, body: &str, group: usize) -> (f64, f64) {
    redis_cli(port, &["FLUSHDB"]);
    redis_cli(port, &["CONFIG", "RESETSTAT"]);
    let client = redis::Client::open(format!("redis://127.0.0.1:{port}")).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    let script = redis::Script::new(body);
    let mut rng = rand::rngs::StdRng::seed_from_u64(5);
    let now = Utc::now().timestamp_millis();
    let (steal, at) = (steal_seconds(), Instant::now());
    for _ in 0..VOTES / group {
        let mut call = script.key("lb:{b:1}:lg");
        for _ in 0..group {
            call.arg(
                Entry {
                    id: rng.random(),
                    at: now,
                    recorded: now,
                    member: format!("m{}", rng.random_range(1..=10)),
                    voter: Some(format!("v{}", rng.random_range(1..=100_000))),
                    channel: Some("app".into()),
                    terminal: Some("ios".into()),
                    count: 1,
                    op: None,
                    value: None,
                    display: 1_500_000,
                    carry: 100_000,
                    adjusts: None,
                    ip: None,
                    held: None,
                    releases: None,
                }
                .encode(),
            );
        }
        let _: redis::Value = call.invoke_async(&mut conn).await.unwrap();
    }
    let stolen = (steal_seconds() - steal) / at.elapsed().as_secs_f64() * 100.0;
    (evalsha_stat(port, "usec") / VOTES as f64, stolen)
}

/// Runs `phase` until a run loses at most [`STEAL_LIMIT`] % (three tries), answering
/// its figure and steal.
async fn quiet<F, Fut>(mut phase: F) -> (f64, f64)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = (f64, f64)>,
{
    let mut best = (0.0, f64::MAX);
    for _ in 0..3 {
        let run = phase().await;
        if run.1 < best.1 {
            best = run;
        }
        if run.1 <= STEAL_LIMIT {
            break;
        }
    }
    best
}

/// A votes board of ten members in Asia/Shanghai, multiplier 1.5, carry-over 0.1.
async fn board(
    state: &AppState,
    slug: &str,
) -> std::sync::Arc<ovation::engine::config::BoardConfig> {
    let mut settings = BoardSettings::new("Ledger bench".into());
    settings.membership = Membership::Open;
    settings.timezone = "Asia/Shanghai".parse().unwrap();
    settings.multiplier = Milli::from_thousandths(1500);
    settings.carry_over = Milli::from_thousandths(100);
    admin::create_board(state, "bench", BoardSlug::parse(slug).unwrap(), settings)
        .await
        .unwrap()
}

/// `n` entries over the last `days` days, ten members, 100,000 voters.
fn entries(rng: &mut rand::rngs::StdRng, n: usize, days: i64) -> Vec<Entry> {
    let now = Utc::now();
    let mut out: Vec<Entry> = (0..n)
        .map(|_| {
            let at = now - Duration::milliseconds(rng.random_range(0..days * 86_400_000));
            Entry {
                id: rng.random(),
                at: at.timestamp_millis(),
                recorded: now.timestamp_millis(),
                member: format!("m{}", rng.random_range(1..=10)),
                voter: Some(format!("v{}", rng.random_range(1..=100_000))),
                channel: None,
                terminal: None,
                count: 1,
                op: None,
                value: None,
                display: 1_500_000,
                carry: 150_000,
                adjusts: None,
                ip: None,
                held: None,
                releases: None,
            }
        })
        .collect();
    out.sort_by_key(|e| e.at);
    out
}

/// Appends `entries` to the ledger `key`, as the vote script would.
async fn push(conn: &mut redis::aio::MultiplexedConnection, key: &str, entries: &[Entry]) {
    let texts: Vec<String> = entries.iter().map(Entry::encode).collect();
    let _: () = redis::cmd("RPUSH")
        .arg(key)
        .arg(&texts)
        .query_async(conn)
        .await
        .unwrap();
}

/// Rows per second the drain moves from Redis to the SQL database at `database_url`.
async fn drain_rate(database_url: &str, port: u16, rows: usize) -> f64 {
    let state = engine_state(database_url, port, "dr:", &[]).await;
    let config = board(&state, "drained").await;
    let mut rng = rand::rngs::StdRng::seed_from_u64(11);
    let client = redis::Client::open(format!("redis://127.0.0.1:{port}")).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    for chunk in entries(&mut rng, rows, 1).chunks(10_000) {
        push(&mut conn, &config.keys.ledger(), chunk).await;
    }
    let started = Instant::now();
    while state
        .redis
        .ledger_pending(std::slice::from_ref(&config.keys))
        .await
        .unwrap()
        > 0
    {
        ledger::drain_all(&state, "bench").await;
    }
    rows as f64 / started.elapsed().as_secs_f64()
}

/// The drain as it runs in the service (a pass every 250 ms) while entries arrive at
/// `rate` a second for `seconds`, into the SQL database at `database_url`: the largest
/// lag seen (seconds between the oldest waiting entry's arrival and now, looked at every
/// 10 ms), and the entries still waiting at the end.
async fn drain_lag(database_url: &str, port: u16, rate: f64, seconds: u64) -> (f64, u64) {
    let state = engine_state(database_url, port, "dl:", &[]).await;
    let config = board(&state, "lagged").await;
    let drain = ledger::start(state.clone(), std::time::Duration::from_millis(250)).unwrap();
    let client = redis::Client::open(format!("redis://127.0.0.1:{port}")).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(17);
    let (started, mut pushed, mut lag) = (Instant::now(), 0_usize, 0.0_f64);
    while started.elapsed().as_secs() < seconds {
        let now = Utc::now().timestamp_millis();
        let due = (started.elapsed().as_secs_f64() * rate) as usize;
        if due > pushed {
            let mut batch = entries(&mut rng, due - pushed, 1);
            for e in &mut batch {
                e.recorded = now;
            }
            push(&mut conn, &config.keys.ledger(), &batch).await;
            pushed = due;
        }
        let head = state.redis.ledger_head(&config.keys, 1).await.unwrap();
        if let Some(first) = head.entries.first() {
            let oldest = Entry::decode(first).unwrap().recorded;
            lag = lag.max((now - oldest) as f64 / 1000.0);
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    drain.stop().await;
    let left = state
        .redis
        .ledger_pending(std::slice::from_ref(&config.keys))
        .await
        .unwrap();
    (lag, left)
}

/// Resident memory of this process, bytes.
fn rss() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb * 1024.0)
}

async fn run() {
    let (_redis, port) = start_redis();
    let store = RedisStore::new(
        &RedisTarget::Single(format!("redis://127.0.0.1:{port}")),
        "lb:",
        std::time::Duration::from_secs(5),
    )
    .unwrap();
    let keys = store.keys().board(
        1,
        ovation::domain::scoring::Storage::Full,
        ovation::store::redis::Spread::Voters,
        Tz::UTC,
    );

    // 1. The ledger's cost per vote, in turns.
    let mut rows = Vec::new();
    for group in [1, 32] {
        let (mut without, mut with, mut steal) = (Vec::new(), Vec::new(), 0.0_f64);
        for _ in 0..3 {
            let a = quiet(|| vote_usec(&store, port, &keys, false, group)).await;
            let b = quiet(|| vote_usec(&store, port, &keys, true, group)).await;
            without.push(a.0);
            with.push(b.0);
            steal = steal.max(a.1).max(b.1);
        }
        rows.push((group, median(&without), median(&with), steal));
    }
    let mut shapes = Vec::new();
    for group in [1, 32] {
        for (name, body) in SHAPES {
            let (mut runs, mut steal) = (Vec::new(), 0.0_f64);
            for _ in 0..3 {
                let run = quiet(|| append_usec(port, body, group)).await;
                runs.push(run.0);
                steal = steal.max(run.1);
            }
            shapes.push((group, name, median(&runs), steal));
        }
    }
    let unit = median(&(0..3).map(|_| zincrby_usec(port)).collect::<Vec<_>>());

    // 2. The drain.
    let drained_rows: usize = env_number("BENCH_LEDGER_DRAIN", 200_000);
    let dir = tempfile::tempdir().unwrap();
    let sqlite = format!(
        "sqlite://{}?mode=rwc",
        dir.path().join("drain.db").display()
    );
    redis_cli(port, &["FLUSHDB"]);
    let sqlite_rate = drain_rate(&sqlite, port, drained_rows).await;
    let pg_server = std::env::var("BENCH_POSTGRES_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into());
    let pg_rate = match sea_orm::Database::connect(&pg_server).await {
        Ok(admin_db) => {
            let name = format!("ovation_bench_{}", std::process::id());
            sea_orm::ConnectionTrait::execute_unprepared(
                &admin_db,
                &format!("CREATE DATABASE {name}"),
            )
            .await
            .unwrap();
            let base = pg_server
                .rsplit_once('/')
                .map_or(pg_server.as_str(), |(b, _)| b);
            redis_cli(port, &["FLUSHDB"]);
            let url = format!("{base}/{name}");
            let rate = drain_rate(&url, port, drained_rows).await;
            redis_cli(port, &["FLUSHDB"]);
            let seconds = env_number("BENCH_LEDGER_LAG_S", 20);
            let (lag, left) = drain_lag(&url, port, 1e6 / rows[1].2, seconds).await;
            let _ = sea_orm::ConnectionTrait::execute_unprepared(
                &admin_db,
                &format!("DROP DATABASE {name} WITH (FORCE)"),
            )
            .await;
            Some((rate, lag, left, seconds))
        }
        Err(err) => {
            println!("PostgreSQL not reachable at {pg_server} ({err}): its drain is not measured");
            None
        }
    };

    // 3. A recount of a large ledger.
    let n: usize = env_number("BENCH_LEDGER_ENTRIES", 10_000_000);
    redis_cli(port, &["FLUSHDB"]);
    let recount_db = format!(
        "sqlite://{}?mode=rwc",
        dir.path().join("recount.db").display()
    );
    let state = engine_state(&recount_db, port, "rc:", &[]).await;
    let config = board(&state, "recounted").await;
    let of = LedgerOf::board(config.board.id);
    let mut rng = rand::rngs::StdRng::seed_from_u64(13);
    let filled = Instant::now();
    let mut last = None;
    let mut left = n;
    while left > 0 {
        let step = left.min(100_000);
        let batch = entries(&mut rng, step, 60);
        let texts: Vec<sql::NewEntry> = batch.iter().map(sql::NewEntry::of).collect();
        for chunk in texts.chunks(10_000) {
            let to = chunk.last().unwrap().id;
            sql::append(&state.db, of, 0, last, to, chunk)
                .await
                .unwrap();
            last = Some(to);
        }
        left -= step;
    }
    let fill_s = filled.elapsed().as_secs_f64();
    let rebuilt = Instant::now();
    rebuild::rebuild_lost(&state).await.unwrap();
    let rebuild_s = rebuilt.elapsed().as_secs_f64();
    let samples = Mutex::new(Vec::new());
    let started = Instant::now();
    let found = recount::recount(
        &state,
        "bench",
        &config.board.slug,
        false,
        &|done, total| {
            let mut samples = samples.lock().unwrap();
            // The first report past a tenth of the entries, and the last one.
            if (samples.is_empty() && done >= total / 10) || done == total {
                samples.retain(|&(d, _)| d != done);
                samples.push((done, rss()));
            }
        },
    )
    .await
    .unwrap();
    let recount_s = started.elapsed().as_secs_f64();
    let samples = samples.into_inner().unwrap();

    println!("\n## Vote ledger (`cargo bench --bench ledger`)\n");
    println!("| measure | value |\n|---|---|");
    println!("| one ZINCRBY (the unit) | {unit:.2} µs |");
    for (group, without, with, steal) in &rows {
        println!(
            "| Redis per vote, {group} a call: without / with the ledger | {without:.1} / {with:.1} µs: +{:.1} µs = {:.1} ZINCRBY (steal ≤ {steal:.1} %) |",
            with - without,
            (with - without) / unit
        );
    }
    for (group, name, usec, steal) in &shapes {
        println!(
            "| the entry alone, {group} a call, as {name} | {usec:.2} µs per vote = {:.2} ZINCRBY (steal ≤ {steal:.1} %) |",
            usec / unit
        );
    }
    let one_core = 1e6 / rows[1].2;
    println!("| votes/s one Redis core takes (32 a call, with the ledger) | {one_core:.0} |");
    println!(
        "| drain into SQLite | {sqlite_rate:.0} rows/s ({:.2}× that rate) |",
        sqlite_rate / one_core
    );
    match pg_rate {
        Some((r, lag, left, seconds)) => {
            println!(
                "| drain into PostgreSQL | {r:.0} rows/s ({:.2}× that rate) |",
                r / one_core
            );
            println!(
                "| PostgreSQL, entries arriving at that rate for {seconds} s, drained every 250 ms | largest lag {lag:.2} s, {left} waiting at the end |"
            );
        }
        None => println!("| drain into PostgreSQL | not measured |"),
    }
    println!(
        "| recount of {n} entries (SQLite) | {recount_s:.1} s ({} buckets, {} mismatches); filled in {fill_s:.0} s, rebuilt into Redis in {rebuild_s:.0} s |",
        found.buckets, found.mismatched
    );
    for (done, bytes) in &samples {
        println!(
            "| resident memory at {done} entries | {:.1} MiB |",
            bytes / 1_048_576.0
        );
    }

    let out = json!({
        "zincrby_usec": unit,
        "vote_usec": rows.iter().map(|(g, a, b, s)| json!({"group": g, "without": a, "with": b, "steal_pct": s})).collect::<Vec<_>>(),
        "entry_shapes_usec": shapes.iter().map(|(g, n, u, s)| json!({"group": g, "shape": n, "usec": u, "steal_pct": s})).collect::<Vec<_>>(),
        "drain_rows_per_s": {"sqlite": sqlite_rate, "postgres": pg_rate.map(|p| p.0), "rows": drained_rows},
        "drain_lag_at_one_core": pg_rate.map(|(_, lag, left, seconds)| json!({"max_lag_s": lag, "waiting_at_end": left, "seconds": seconds, "rate": one_core})),
        "recount": {"entries": n, "seconds": recount_s, "buckets": found.buckets, "mismatched": found.mismatched,
            "rss_bytes": samples, "fill_s": fill_s, "rebuild_s": rebuild_s},
    });
    write_results(
        format!("{}-ledger.json", Utc::now().format("%Y-%m-%d")),
        &out,
    );
}

fn main() {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
        .block_on(run());
}
