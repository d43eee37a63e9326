//! What the HTTP benchmarks share: the release server started as a process on a fresh
//! SQLite file, calls to its API, `wrk` runs with the CPU each process used, and phases
//! run again when the host stole too much of a core.

// Each bench uses its own part of this module.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use ovation::config::Settings;
use serde_json::{Value, json};

use crate::common::{Proc, free_port, wait_for_port};
use crate::cpu::{CpuMeter, cpu_times};

/// Most of a core the host may steal during a phase before it is run again.
const STEAL_LIMIT: f64 = 5.0;

pub const MASTER_KEY: &str = "bench-master-key-0123456789";
pub const CONNECTIONS: usize = 64;

/// A wrk run: requests/s, p50 and p99 in ms, and non-2xx responses.
pub struct WrkResult {
    pub rps: f64,
    /// Requests answered in the run.
    pub requests: u64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub errors: u64,
    pub cpu: Value,
}

impl WrkResult {
    /// The host's steal during the run, in % of one core.
    pub fn steal(&self) -> f64 {
        self.cpu["steal"].as_f64().unwrap_or(0.0)
    }

    /// The run as JSON, with the server's and Redis's CPU per request and any `extra`
    /// figures.
    pub fn json(&self, extra: &[(&str, f64)]) -> Value {
        let per_request = |process: &str| {
            let pct = self.cpu[process].as_f64().unwrap_or(0.0);
            round(pct * 1e4 / self.rps.max(1.0), 1)
        };
        let mut out = json!({
            "per_s": self.rps, "requests": self.requests, "p50_ms": self.p50_ms, "p99_ms": self.p99_ms,
            "errors": self.errors, "cpu_pct": self.cpu,
            "server_cpu_us_per_request": per_request("server"),
            "redis_cpu_us_per_request": per_request("redis"),
        });
        for (name, value) in extra {
            out[*name] = json!(round(*value, 3));
        }
        out
    }
}

fn millis(text: &str) -> f64 {
    let text = text.trim();
    let (num, scale) = if let Some(n) = text.strip_suffix("us") {
        (n, 0.001)
    } else if let Some(n) = text.strip_suffix("ms") {
        (n, 1.0)
    } else if let Some(n) = text.strip_suffix('s') {
        (n, 1000.0)
    } else {
        (text, 1.0)
    };
    num.parse::<f64>().unwrap_or(f64::NAN) * scale
}

pub fn wrk(url: &str, script: Option<&Path>, seconds: u64, pids: &[(&str, u32)]) -> WrkResult {
    let mut cmd = Command::new("wrk");
    cmd.args([
        "-t1",
        &format!("-c{CONNECTIONS}"),
        &format!("-d{seconds}s"),
        "--latency",
    ])
    .args(["-H", &format!("Authorization: Bearer {MASTER_KEY}")])
    .args(["-H", "Content-Type: application/json"]);
    if let Some(script) = script {
        cmd.arg("-s").arg(script);
    }
    let child = cmd
        .arg(url)
        .stdout(Stdio::piped())
        .spawn()
        .expect("wrk is installed (make bench installs it)");
    // wrk is gone by the time its CPU could be read from /proc, so it is counted as a
    // waited-for child of this process.
    let children_before = cpu_times(std::process::id()).1;
    let meter = CpuMeter::start(pids);
    let started = Instant::now();
    let out = child.wait_with_output().unwrap();
    let mut cpu = meter.stop();
    let wrk_cpu = (cpu_times(std::process::id()).1 - children_before)
        / started.elapsed().as_secs_f64()
        * 100.0;
    cpu["wrk"] = json!((wrk_cpu * 10.0).round() / 10.0);
    let text = String::from_utf8_lossy(&out.stdout);
    let line = |prefix: &str| {
        text.lines()
            .map(str::trim)
            .find(|l| l.starts_with(prefix))
            .map(|l| l[prefix.len()..].trim().to_owned())
            .unwrap_or_default()
    };
    let requests = text
        .lines()
        .find_map(|l| l.trim().split_once(" requests in "))
        .and_then(|(n, _)| n.trim().parse().ok())
        .unwrap_or(0);
    WrkResult {
        rps: line("Requests/sec:").parse().unwrap_or(0.0),
        requests,
        p50_ms: millis(&line("50%")),
        p99_ms: millis(&line("99%")),
        errors: line("Non-2xx or 3xx responses:").parse().unwrap_or(0),
        cpu,
    }
}

/// CPU shares as a table cell: `redis 96 · server 64 · wrk 12` (% of one core).
pub fn cpu_cell(cpu: &Value) -> String {
    cpu.as_object()
        .map(|m| {
            m.iter()
                .map(|(name, pct)| format!("{name} {:.0}", pct.as_f64().unwrap_or(0.0)))
                .collect::<Vec<_>>()
                .join(" · ")
        })
        .unwrap_or_default()
}

/// Runs `phase` until the host stole at most `STEAL_LIMIT`% of a core during it (three
/// tries at most) and answers that run: a phase that lost more is not a result.
pub async fn until_quiet<T, F: Future<Output = T>>(
    steal: impl Fn(&T) -> f64,
    mut phase: impl FnMut() -> F,
) -> T {
    let mut run = phase().await;
    for _ in 1..3 {
        if steal(&run) <= STEAL_LIMIT {
            break;
        }
        run = phase().await;
    }
    run
}

pub async fn call(
    client: &reqwest::Client,
    base: &str,
    method: reqwest::Method,
    path: &str,
    body: Value,
) -> Value {
    let resp = client
        .request(method, format!("{base}{path}"))
        .bearer_auth(MASTER_KEY)
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = resp.status();
    let body: Value = resp.json().await.unwrap_or(Value::Null);
    assert!(status.is_success(), "{path}: {status} {body}");
    body
}

/// Creates the board `board` (the admin API's body) with members `m1`..`m<members>` and
/// `rules` (the rules API's bodies), over the API of the server at `base`.
pub async fn create_board(
    client: &reqwest::Client,
    base: &str,
    board: Value,
    members: usize,
    rules: &[Value],
) {
    use reqwest::Method;
    let slug = board["slug"].as_str().unwrap_or_default().to_owned();
    call(client, base, Method::POST, "/api/v1/admin/boards", board).await;
    let members: Vec<Value> = (1..=members)
        .map(|i| json!({"id": format!("m{i}"), "name": format!("Member {i}")}))
        .collect();
    call(
        client,
        base,
        Method::PUT,
        &format!("/api/v1/admin/boards/{slug}/members"),
        json!({"members": members}),
    )
    .await;
    for rule in rules {
        call(
            client,
            base,
            Method::POST,
            &format!("/api/v1/admin/boards/{slug}/rules"),
            rule.clone(),
        )
        .await;
    }
}

pub struct Server {
    _proc: Proc,
    pub pid: u32,
    pub base: String,
    pub settings: Settings,
    /// Names its SQL database and prefixes its Redis keys.
    pub prefix: String,
}

/// The server the benchmarks start: `BENCH_SERVER`, else the release build.
pub fn server_bin(root: &Path) -> std::path::PathBuf {
    std::env::var("BENCH_SERVER")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|_| root.join("target/release/ovation"))
}

pub fn start_server(
    bin: &Path,
    db_dir: &Path,
    redis_port: u16,
    workers: usize,
    prefix: &str,
    read_cache_ms: u64,
) -> Server {
    start_server_with(bin, db_dir, redis_port, workers, prefix, read_cache_ms, &[])
}

/// [`start_server`] with more settings (`OVATION_*` variable, value).
pub fn start_server_with(
    bin: &Path,
    db_dir: &Path,
    redis_port: u16,
    workers: usize,
    prefix: &str,
    read_cache_ms: u64,
    extra: &[(&str, &str)],
) -> Server {
    let port = free_port();
    let mut env: Vec<(String, String)> = vec![
        ("OVATION_CONFIG".into(), "/dev/null".into()),
        ("OVATION_BIND".into(), format!("127.0.0.1:{port}")),
        (
            "OVATION_DATABASE_URL".into(),
            format!("sqlite://{}/{prefix}.db?mode=rwc", db_dir.display()),
        ),
        (
            "OVATION_REDIS_URL".into(),
            format!("redis://127.0.0.1:{redis_port}"),
        ),
        ("OVATION_KEY_PREFIX".into(), format!("{prefix}:")),
        ("OVATION_MASTER_KEY".into(), MASTER_KEY.into()),
        ("OVATION_ADMIN_PASSWORD".into(), "bench-password".into()),
        ("OVATION_WORKERS".into(), workers.to_string()),
        ("OVATION_LOG".into(), "error".into()),
        ("OVATION_READ_CACHE_MS".into(), read_cache_ms.to_string()),
        // The archive task's script calls would mix into the EVALSHA statistics.
        ("OVATION_ARCHIVE_CHECK_MS".into(), "600000".into()),
    ];
    env.extend(
        extra
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
    );
    let child = Command::new(bin)
        .env_clear()
        .envs(env.iter().cloned())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    wait_for_port(port);
    let settings = Settings::from_sources(&env.into_iter().collect()).unwrap();
    Server {
        _proc: Proc(child),
        pid,
        base: format!("http://127.0.0.1:{port}"),
        settings,
        prefix: prefix.to_owned(),
    }
}

pub fn round(x: f64, digits: i32) -> f64 {
    let f = 10f64.powi(digits);
    (x * f).round() / f
}
