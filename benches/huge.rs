//! `make bench`, huge boards: score boards of 10 million members in each storage layout,
//! on a fresh `redis-server` (no persistence), through the store's own calls.
//! 1. Memory per member of the all-time bucket of a `full`, a `top_n` (retain 1,000,
//!    trim at 1,200) and a `sharded` (16 shards) board loaded by pipeline; and a `top_n`
//!    board's memory at 100,000, 1,000,000 and 10,000,000 members: its ranking (the
//!    sorted set) stays flat, the exact scores (the hash) grow with the members.
//! 2. A score write's Redis time (`usec_per_call` of EVALSHA; `incr` on random members of
//!    the loaded board, periods day and all) in each layout, and top_n against full.
//! 3. Reads over one connection: a top-100 page and one member's rank, client p50 and
//!    p99 (the sharded board merges 16 shards; its rank sums 16 counts).
//!
//! Each timed phase measures the host's steal and runs again (up to three times) when it
//! lost more than 5% of a core; the table shows the steal of the run it reports.
//! `BENCH_HUGE_MEMBERS` sets the members (default 10,000,000).

#![allow(clippy::unwrap_used, clippy::expect_used)] // A benchmark stops at the first failure.

use std::time::{Duration, Instant};

use chrono::Utc;
use chrono_tz::Tz;
use ovation::domain::period::{Bucket, Period};
use ovation::domain::score::View;
use ovation::domain::scoring::{Op, Storage};
use ovation::store::redis::keys::{BoardKeys, Spread, shard_of};
use ovation::store::redis::{
    PageQuery, RedisStore, RedisTarget, ScoreCall, StandingQuery, WriteFacts,
};
use rand::{Rng, SeedableRng};

mod common;
mod memory;

use common::{env_number, evalsha_usec, redis_cli, start_redis, steal_seconds};
use memory::used_memory;

const WRITES: usize = 20_000;
const READS: usize = 2_000;
/// Steal above this share of a core (in %) makes a phase run again.
const STEAL_LIMIT: f64 = 5.0;

fn member(i: usize) -> String {
    format!("user-{i:08}")
}

/// A member's loaded score: spread widely, with ties.
fn score(i: usize) -> i64 {
    ((i as u64).wrapping_mul(2_654_435_761) % 5_000_000) as i64
}

/// Loads `members` members into the all-time bucket of `board` in its layout, by
/// pipeline, as score writes would have left them.
async fn load(port: u16, board: &BoardKeys, all: &Bucket, members: usize) {
    let client = redis::Client::open(format!("redis://127.0.0.1:{port}")).unwrap();
    // A batch into a set of millions can take longer than the client's default 500 ms
    // (Redis grows the set's hash table in one go).
    let config = redis::AsyncConnectionConfig::new().set_response_timeout(None);
    let mut conn = client
        .get_multiplexed_async_connection_with_config(&config)
        .await
        .unwrap();
    let ids: Vec<usize> = (0..members).collect();
    for chunk in ids.chunks(20_000) {
        let mut pipe = redis::pipe();
        match board.storage() {
            Storage::Full => {
                let mut zadd = redis::cmd("ZADD");
                zadd.arg(board.scores(View::Real, all));
                for &i in chunk {
                    zadd.arg(score(i)).arg(member(i));
                }
                pipe.add_command(zadd).ignore();
            }
            Storage::TopN { .. } => {
                let mut hset = redis::cmd("HSET");
                hset.arg(board.exact_scores(all));
                for &i in chunk {
                    hset.arg(member(i)).arg(score(i));
                }
                pipe.add_command(hset).ignore();
            }
            Storage::Sharded { shards, .. } => {
                let keys = board.shards();
                let mut zadds: Vec<redis::Cmd> = keys
                    .iter()
                    .map(|k| {
                        let mut c = redis::cmd("ZADD");
                        c.arg(k.scores(View::Real, all));
                        c
                    })
                    .collect();
                for &i in chunk {
                    let m = member(i);
                    zadds[shard_of(&m, shards) as usize].arg(score(i)).arg(m);
                }
                for c in zadds {
                    pipe.add_command(c).ignore();
                }
            }
        }
        pipe.query_async::<()>(&mut conn).await.unwrap();
    }
    if let Storage::TopN { retain, .. } = board.storage() {
        // The ranking holds the best `retain`, as trimming leaves it.
        let mut best: Vec<(i64, usize)> = (0..members).map(|i| (score(i), i)).collect();
        best.sort_unstable_by(|a, b| b.cmp(a));
        let mut zadd = redis::cmd("ZADD");
        zadd.arg(board.scores(View::Real, all));
        for &(s, i) in best.iter().take(retain as usize) {
            zadd.arg(s).arg(member(i));
        }
        let _: i64 = zadd.query_async(&mut conn).await.unwrap();
    }
}

/// Runs `phase` until the host stole at most `STEAL_LIMIT`% of a core during it (three
/// tries at most), and answers its result with the steal of that run.
async fn quiet<T, F: Future<Output = T>>(mut phase: impl FnMut() -> F) -> (T, f64) {
    let mut last = None;
    for _ in 0..3 {
        let (steal, at) = (steal_seconds(), Instant::now());
        let result = phase().await;
        let stolen = (steal_seconds() - steal) / at.elapsed().as_secs_f64() * 100.0;
        let done = stolen <= STEAL_LIMIT;
        last = Some((result, stolen));
        if done {
            break;
        }
    }
    last.unwrap()
}

async fn writes(
    store: &RedisStore,
    port: u16,
    board: &BoardKeys,
    buckets: &[Bucket],
    members: usize,
) -> f64 {
    redis_cli(port, &["CONFIG", "RESETSTAT"]);
    let mut rng = rand::rngs::StdRng::seed_from_u64(11);
    for _ in 0..WRITES {
        let m = member(rng.random_range(0..members));
        let call = ScoreCall {
            board,
            buckets,
            op: Op::Incr,
            value: rng.random_range(1..1000),
            write: WriteFacts::at(&m, None, 0),
            windows: &[],
            trends: &[],
        };
        store
            .write_scores(&[call])
            .await
            .unwrap()
            .remove(0)
            .unwrap();
    }
    evalsha_usec(port)
}

fn percentiles(mut micros: Vec<u128>) -> (u128, u128) {
    micros.sort_unstable();
    (micros[micros.len() / 2], micros[micros.len() * 99 / 100])
}

async fn reads(
    store: &RedisStore,
    board: &BoardKeys,
    all: &Bucket,
    members: usize,
) -> ((u128, u128), (u128, u128)) {
    let mut tops = Vec::with_capacity(READS);
    for _ in 0..READS {
        let t = Instant::now();
        store
            .pages(&[PageQuery {
                board,
                bucket: all,
                view: View::Real,
                offset: 0,
                limit: 100,
                anchor: None,
            }])
            .await
            .unwrap();
        tops.push(t.elapsed().as_micros());
    }
    let mut rng = rand::rngs::StdRng::seed_from_u64(5);
    let mut ranks = Vec::with_capacity(READS);
    for _ in 0..READS {
        let m = member(rng.random_range(0..members));
        let t = Instant::now();
        store
            .standings(&[StandingQuery {
                board,
                bucket: all,
                previous: None,
                view: View::Real,
                member: &m,
            }])
            .await
            .unwrap();
        ranks.push(t.elapsed().as_micros());
    }
    (percentiles(tops), percentiles(ranks))
}

fn main() {
    let (_redis, port) = start_redis();
    let members: usize = env_number("BENCH_HUGE_MEMBERS", 10_000_000);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let store = RedisStore::new(&RedisTarget::Single(format!("redis://127.0.0.1:{port}")), "bench:", Duration::from_secs(60)).unwrap();
        let now = Utc::now();
        let buckets: Vec<Bucket> = [Period::Day, Period::All]
            .iter()
            .map(|&p| Bucket::containing(p, Tz::UTC, now).unwrap())
            .collect();
        let all = &buckets[1];
        let layouts = [
            ("full", Storage::Full),
            ("top_n 1000/1200", Storage::TopN { retain: 1000, trim_at: 1200 }),
            ("sharded 16", Storage::sharded(16)),
        ];
        println!("{members} members in the all-time bucket.\n");
        println!("| layout | memory per member | write (Redis µs per call) | top-100 read p50 / p99 | rank read p50 / p99 |");
        println!("|---|---|---|---|---|");
        let mut write_usec = Vec::new();
        for (i, (name, storage)) in layouts.iter().enumerate() {
            redis_cli(port, &["FLUSHALL"]);
            let before = used_memory(port);
            let board = store.keys().board(i as i64 + 1, *storage, Spread::Members, Tz::UTC);
            load(port, &board, all, members).await;
            let per_member = (used_memory(port) - before) / members as f64;
            let (usec, write_steal) = quiet(|| writes(&store, port, &board, &buckets, members)).await;
            write_usec.push(usec);
            let (((top50, top99), (rank50, rank99)), read_steal) = quiet(|| reads(&store, &board, all, members)).await;
            println!(
                "| {name} | {per_member:.0} B | {usec:.1} µs (steal {write_steal:.1}%) | {:.2} / {:.2} ms | {:.2} / {:.2} ms (steal {read_steal:.1}%) |",
                top50 as f64 / 1000.0,
                top99 as f64 / 1000.0,
                rank50 as f64 / 1000.0,
                rank99 as f64 / 1000.0,
            );
        }
        println!(
            "\nA top_n write costs {:.2}× a full write (target ≤ 1.5×).\n",
            write_usec[1] / write_usec[0]
        );

        println!("| top_n members | ranking (sorted set) | exact scores (hash) | all, per member |");
        println!("|---|---|---|---|");
        let board = store.keys().board(9, Storage::TopN { retain: 1000, trim_at: 1200 }, Spread::Members, Tz::UTC);
        for n in [100_000usize, 1_000_000, members.max(1_000_000)] {
            redis_cli(port, &["FLUSHALL"]);
            let before = used_memory(port);
            load(port, &board, all, n).await;
            let bytes = |key: String| -> f64 {
                redis_cli(port, &["MEMORY", "USAGE", &key, "SAMPLES", "0"])
                    .trim()
                    .parse()
                    .unwrap_or(0.0)
            };
            let ranking = bytes(board.scores(View::Real, all));
            let exact = bytes(board.exact_scores(all));
            println!(
                "| {n} | {:.0} KB | {:.0} MB | {:.0} B |",
                ranking / 1024.0,
                exact / 1_048_576.0,
                (used_memory(port) - before) / n as f64
            );
        }
    });
}
