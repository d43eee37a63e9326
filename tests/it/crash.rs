//! The crash test (`make test-faults`): votes with idempotency keys at full speed from many
//! clients while redis-server (append-only file, `appendfsync always`) is killed with
//! SIGKILL and started again; clients retry every unanswered vote under its key. Every
//! acknowledged vote must be counted exactly once.

use ovation::store::redis::RedisTarget;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::harness::{Options, RedisServer, TestApp};

const CLIENTS: usize = 32;
const MEMBERS: usize = 10;

#[derive(Default)]
struct Tally {
    acknowledged: AtomicU64,
    replayed: AtomicU64,
    unavailable: AtomicU64,
    transport_errors: AtomicU64,
    /// Milliseconds from the restart to the first acknowledged vote after it.
    recovered_ms: AtomicU64,
}

/// Sends one vote until it is acknowledged; a 503 or a broken connection is retried
/// under the same idempotency key.
async fn vote_until_acknowledged(app: &TestApp, tally: &Tally, body: &Value, restart: &Restart) {
    loop {
        let sent = app
            .client
            .post(format!("{}/api/v1/boards/crash/votes", app.base))
            .bearer_auth(crate::harness::MASTER_KEY)
            .json(body)
            .send()
            .await;
        match sent {
            Ok(resp) if resp.status() == StatusCode::OK => {
                let answer: Value = resp.json().await.unwrap();
                tally.acknowledged.fetch_add(1, Ordering::SeqCst);
                if answer["replayed"] == true {
                    tally.replayed.fetch_add(1, Ordering::SeqCst);
                }
                restart.note_recovery(tally);
                return;
            }
            Ok(resp) if resp.status() == StatusCode::SERVICE_UNAVAILABLE => {
                tally.unavailable.fetch_add(1, Ordering::SeqCst);
            }
            Ok(resp) => panic!("unexpected answer {}", resp.status()),
            Err(_) => {
                tally.transport_errors.fetch_add(1, Ordering::SeqCst);
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// When Redis was started again, once it was.
#[derive(Default)]
struct Restart {
    at: std::sync::Mutex<Option<Instant>>,
}

impl Restart {
    fn note_recovery(&self, tally: &Tally) {
        let at = *self.at.lock().unwrap();
        if let Some(at) = at {
            let ms = at.elapsed().as_millis() as u64;
            let _ = tally.recovered_ms.compare_exchange(
                0,
                ms.max(1),
                Ordering::SeqCst,
                Ordering::SeqCst,
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "the crash test: run by `make test-faults` (and CI)"]
async fn every_acknowledged_vote_counts_once_across_a_redis_crash_and_is_in_the_ledger_once() {
    let dir = tempfile::tempdir().unwrap();
    let port = crate::harness::free_port();
    let mut redis = RedisServer::start_durable(port, dir.path());
    let app = TestApp::spawn_with(Options {
        redis: RedisTarget::Single(redis.url()),
        ..Options::default()
    })
    .await;
    app.board(json!({"slug": "crash", "title": "Crash", "periods": ["hour", "all"]}))
        .await;
    let ids: Vec<String> = (0..MEMBERS).map(|i| format!("m{i}")).collect();
    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    app.members("crash", &ids).await;

    let tally = Arc::new(Tally::default());
    let restart = Arc::new(Restart::default());
    let stop = Arc::new(AtomicBool::new(false));
    let mut clients = Vec::new();
    for client in 0..CLIENTS {
        let (app, tally, restart, stop) =
            (app.clone(), tally.clone(), restart.clone(), stop.clone());
        clients.push(tokio::spawn(async move {
            let mut n = 0;
            while !stop.load(Ordering::SeqCst) {
                let body = json!({
                    "member": format!("m{}", (client + n) % MEMBERS),
                    "voter": format!("c{client}"),
                    "idempotency_key": format!("c{client}-{n}"),
                });
                vote_until_acknowledged(&app, &tally, &body, &restart).await;
                n += 1;
            }
        }));
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    let before_crash = tally.acknowledged.load(Ordering::SeqCst);
    redis.crash();
    let crashed = Instant::now();
    tokio::time::sleep(Duration::from_secs(1)).await;
    let unavailable_before_restart = tally.unavailable.load(Ordering::SeqCst);
    let redis = RedisServer::start_durable(port, dir.path());
    let outage = crashed.elapsed();
    *restart.at.lock().unwrap() = Some(Instant::now());
    tokio::time::sleep(Duration::from_secs(3)).await;
    stop.store(true, Ordering::SeqCst);
    for client in clients {
        client.await.unwrap();
    }

    let acknowledged = tally.acknowledged.load(Ordering::SeqCst);
    let (_, top) = app
        .get("/api/v1/boards/crash/top?period=all&view=real&limit=100")
        .await;
    let counted: u64 = top["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["score"].as_u64().unwrap())
        .sum();
    let lost = acknowledged.saturating_sub(counted);
    let double = counted.saturating_sub(acknowledged);
    println!(
        "crash test: {CLIENTS} clients, redis-server killed with SIGKILL after 2 s (appendfsync always)"
    );
    println!("  votes acknowledged:        {acknowledged} ({before_crash} before the crash)");
    println!("  votes counted:             {counted}");
    println!("  lost:                      {lost}");
    println!("  double-counted:            {double}");
    println!(
        "  503s during the outage:    {} ({unavailable_before_restart} while Redis was down)",
        tally.unavailable.load(Ordering::SeqCst)
    );
    println!(
        "  broken connections:        {}",
        tally.transport_errors.load(Ordering::SeqCst)
    );
    println!(
        "  retries answered as replays: {}",
        tally.replayed.load(Ordering::SeqCst)
    );
    println!(
        "  recovery:                  first acknowledged vote {} ms after the restart (Redis down {} ms)",
        tally.recovered_ms.load(Ordering::SeqCst),
        outage.as_millis()
    );
    assert!(
        before_crash > 0 && acknowledged > before_crash,
        "votes flowed on both sides of the crash"
    );
    assert!(unavailable_before_restart > 0, "the outage was seen");
    assert_eq!(lost, 0, "every acknowledged vote counts");
    assert_eq!(double, 0, "no vote counts twice");

    // The ledger holds every acknowledged vote once: as many entries, gapless, and per
    // member as many as its score.
    let entries = crate::ledger::ledger(&app, "crash", 10_000).await;
    crate::ledger::assert_gapless(&entries);
    let mut per_member = std::collections::BTreeMap::new();
    for e in &entries {
        *per_member
            .entry(e["member"].as_str().unwrap().to_owned())
            .or_insert(0u64) += e["count"].as_u64().unwrap();
    }
    let scores: std::collections::BTreeMap<String, u64> = top["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["member"].as_str().unwrap().to_owned(),
                e["score"].as_u64().unwrap(),
            )
        })
        .collect();
    println!("  ledger entries:            {}", entries.len());
    assert_eq!(
        entries.len() as u64,
        acknowledged,
        "one entry per acknowledged vote"
    );
    assert_eq!(
        per_member, scores,
        "the ledger adds up to every member's score"
    );
    drop(redis);
}
