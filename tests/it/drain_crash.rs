//! The ledger's drain killed with SIGKILL at its two delicate moments, then the service
//! started again on the same SQL and Redis: between a drain's SQL commit and its Redis
//! trim, and between the trim and the next drain. Every acknowledged vote ends in SQL
//! exactly once, gapless (`make test-sql` runs it on PostgreSQL and MariaDB too).
//!
//! The server runs as its own process behind a proxy to Redis that stops carrying the
//! server's commands at the trim (`Cut::Before`) or right after it (`Cut::After`), so
//! the kill lands exactly there.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sea_orm::{EntityTrait, PaginatorTrait};
use serde_json::json;

use crate::cli::{Served, drained_seqs, votes};
use crate::harness::{TestDatabase, shared_redis};

/// Where a [`Tap`] stops carrying the server's commands to Redis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cut {
    /// From the first command that holds the needle: Redis never sees it.
    Before,
    /// After it: Redis runs it, and nothing the server sends later.
    After,
}

/// What a [`Tap`] is armed with: the bytes of the command it cuts at, and how.
type Armed = Arc<Mutex<Option<(Vec<u8>, Cut)>>>;

/// A TCP proxy from a server to Redis. Once armed with a needle, it stops forwarding the
/// server's bytes (on every connection, which stay open) as its [`Cut`] says; Redis's
/// answers still flow.
struct Tap {
    port: u16,
    armed: Armed,
    cut: Arc<AtomicBool>,
}

impl Tap {
    async fn start(target_port: u16) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let armed: Armed = Arc::default();
        let cut = Arc::new(AtomicBool::new(false));
        let (a, c) = (armed.clone(), cut.clone());
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let Ok(server) = tokio::net::TcpStream::connect(("127.0.0.1", target_port)).await
                else {
                    continue;
                };
                let (client_read, client_write) = client.into_split();
                let (server_read, server_write) = server.into_split();
                tokio::spawn(commands(client_read, server_write, a.clone(), c.clone()));
                tokio::spawn(answers(server_read, client_write));
            }
        });
        Self { port, armed, cut }
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    fn arm(&self, needle: &str, how: Cut) {
        *self.armed.lock().unwrap() = Some((needle.as_bytes().to_vec(), how));
    }

    /// Waits until the cut is made; panics after 15 s.
    async fn wait_cut(&self) {
        for _ in 0..300 {
            if self.cut.load(Ordering::SeqCst) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("the drain never sent its trim");
    }
}

async fn commands(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    armed: Armed,
    cut: Arc<AtomicBool>,
) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        if cut.load(Ordering::SeqCst) {
            continue;
        }
        let hit = armed.lock().unwrap().clone().and_then(|(needle, how)| {
            buf[..n]
                .windows(needle.len())
                .any(|w| w == needle.as_slice())
                .then_some(how)
        });
        if hit == Some(Cut::Before) {
            cut.store(true, Ordering::SeqCst);
            continue;
        }
        if to.write_all(&buf[..n]).await.is_err() {
            return;
        }
        if hit == Some(Cut::After) {
            cut.store(true, Ordering::SeqCst);
        }
    }
}

async fn answers(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
) {
    let _ = tokio::io::copy(&mut from, &mut to).await;
}

/// The SHA-1 the drain's trim runs under (`EVALSHA <sha>`), loaded into Redis first so
/// that the EVALSHA is the only command that carries the trim.
async fn trim_sha(raw: &mut redis::aio::MultiplexedConnection) -> String {
    let source = include_str!("../../src/store/redis/ledger_trim.lua");
    let sha: String = redis::cmd("SCRIPT")
        .arg("LOAD")
        .arg(source)
        .query_async(raw)
        .await
        .unwrap();
    assert_eq!(sha, redis::Script::new(source).get_hash());
    sha
}

/// Entries in the SQL ledger at `url` (its one board's).
async fn entries_in_sql(url: &str) -> u64 {
    let db = ovation::store::sql::connect(url, 1).await.unwrap();
    ovation::store::sql::entities::ledger_record::Entity::find()
        .count(&db)
        .await
        .unwrap()
}

/// Entries waiting in the board's Redis ledger, under `prefix`: none when the list is
/// gone (Redis deletes a list trimmed empty).
async fn entries_in_redis(raw: &mut redis::aio::MultiplexedConnection, prefix: &str) -> u64 {
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg(format!("{prefix}:*lg"))
        .query_async(raw)
        .await
        .unwrap();
    assert!(keys.len() <= 1, "one ledger at most: {keys:?}");
    let Some(key) = keys.first() else {
        return 0;
    };
    redis::cmd("LLEN").arg(key).query_async(raw).await.unwrap()
}

/// Votes acknowledged by a server whose drain is killed where `how` says, 10 more by the
/// next one: the ledger in SQL holds each of them once, in order, gapless.
async fn killed_at_the_trim(how: Cut) {
    let database = TestDatabase::create().await;
    let prefix = format!("dcrash{}{how:?}", std::process::id());
    let mut raw = redis::Client::open(shared_redis().url())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let sha = trim_sha(&mut raw).await;
    let tap = Tap::start(shared_redis().port).await;
    let first = Served::start_on(&database.url, &tap.url(), &prefix).await;
    first.open_board("crash").await;
    tap.arm(&sha, how);
    // Votes until the cut: those after it time out unanswered (not acknowledged).
    let mut acknowledged = Vec::new();
    for i in 0..40 {
        if tap.cut.load(Ordering::SeqCst) {
            break;
        }
        let voter = format!("a{i}");
        let answer = first
            .client
            .post(format!("{}/api/v1/boards/crash/votes", first.base))
            .bearer_auth(crate::harness::MASTER_KEY)
            .json(&json!({"member": "m1", "voter": voter}))
            .send()
            .await;
        if answer.is_ok_and(|a| a.status() == reqwest::StatusCode::OK) {
            acknowledged.push(voter);
        }
    }
    tap.wait_cut().await;
    drop(first);

    // Killed where meant: SQL committed the batch; Redis trimmed it, or did not.
    let stored = entries_in_sql(&database.url).await;
    assert!(stored > 0, "the drain committed before its trim");
    let waiting = entries_in_redis(&mut raw, &prefix).await;
    let acked = acknowledged.len() as u64;
    match how {
        Cut::Before => assert_eq!(waiting, acked, "nothing trimmed ({stored} in SQL)"),
        Cut::After => assert_eq!(waiting, acked - stored, "the stored entries trimmed"),
    }

    let second = Served::start_on(&database.url, &shared_redis().url(), &prefix).await;
    votes(&second.client, &second.base, "crash", "b", 10).await;
    assert_eq!(
        drained_seqs(&second.client, &second.base, "crash").await,
        (1..=acked as i64 + 10).collect::<Vec<_>>()
    );
    let page = second
        .call(
            reqwest::Method::GET,
            "/api/v1/admin/boards/crash/ledger?limit=1000",
            None,
        )
        .await;
    let voters: Vec<&str> = page["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["voter"].as_str().unwrap())
        .collect();
    let expected: Vec<String> = acknowledged
        .into_iter()
        .chain((0..10).map(|i| format!("b{i}")))
        .collect();
    assert_eq!(voters, expected, "each acknowledged vote once, in order");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_killed_between_the_drains_commit_and_its_trim_loses_and_repeats_nothing() {
    killed_at_the_trim(Cut::Before).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_killed_between_the_trim_and_the_next_drain_loses_and_repeats_nothing() {
    killed_at_the_trim(Cut::After).await;
}
