//! What the benchmarks use: free ports, child processes stopped on drop, the host's
//! steal time, Redis's own command statistics read through `redis-cli`, and the time of
//! one ZINCRBY (the unit Redis figures are stated in).

// Each bench uses its own part of this module.
#![allow(dead_code)]

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The median of `values` (the upper one of an even count).
pub fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted[sorted.len() / 2]
}

/// The number in the environment variable `name`, or `default` when it is unset or not
/// a number.
pub fn env_number<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub fn wait_for_port(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "nothing listens on {port}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A child process killed on drop.
pub struct Proc(pub Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

pub fn redis_cli(port: u16, args: &[&str]) -> String {
    let out = Command::new("redis-cli")
        .args(["-p", &port.to_string()])
        .args(args)
        .output()
        .expect("redis-cli is installed with redis-server");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A field of EVALSHA's command statistics since the last CONFIG RESETSTAT: `calls`,
/// `usec` or `usec_per_call`.
pub fn evalsha_stat(port: u16, field: &str) -> f64 {
    command_stat(port, "evalsha", field)
}

/// A field of `command`'s statistics (lower case) since the last CONFIG RESETSTAT.
pub fn command_stat(port: u16, command: &str, field: &str) -> f64 {
    let (line, prefix) = (format!("cmdstat_{command}:"), format!("{field}="));
    redis_cli(port, &["INFO", "commandstats"])
        .lines()
        .find_map(|l| l.strip_prefix(line.as_str()))
        .and_then(|l| l.split(',').find_map(|f| f.strip_prefix(prefix.as_str())))
        .and_then(|f| f.trim().parse().ok())
        .unwrap_or(0.0)
}

/// Writes a bench's `report` to `bench/results/`, named by `BENCH_OUT` or else `name`,
/// and says where.
pub fn write_results(name: String, report: &serde_json::Value) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/results");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(std::env::var("BENCH_OUT").unwrap_or(name));
    std::fs::write(&file, serde_json::to_string_pretty(report).unwrap()).unwrap();
    println!("\nJSON: {}", file.display());
}

/// The caller a bench's votes come from when they go through the engine: the vote scope,
/// every board.
pub fn vote_caller() -> ovation::engine::auth::Caller {
    use ovation::domain::auth::{Reach, Scope};
    ovation::engine::auth::Caller {
        scopes: vec![Scope::Vote],
        channel: None,
        reach: Reach::EVERYWHERE,
        actor: "bench".into(),
        id: "bench".into(),
        signed_in: None,
    }
}

/// Every command in Redis's statistics since the last CONFIG RESETSTAT (a script's
/// commands count there too): its name (lower case, `config|resetstat` for a
/// subcommand), calls and µs.
pub fn command_stats(port: u16) -> Vec<(String, f64, f64)> {
    let stats = redis_cli(port, &["INFO", "commandstats"]);
    let field = |line: &str, name: &str| -> f64 {
        line.split([':', ','])
            .find_map(|f| f.strip_prefix(name)?.parse().ok())
            .unwrap_or(0.0)
    };
    stats
        .lines()
        .filter_map(|l| l.strip_prefix("cmdstat_"))
        .map(|line| {
            let name = line.split(':').next().unwrap_or_default().to_owned();
            (name, field(line, "calls="), field(line, "usec="))
        })
        .collect()
}

/// µs of one ZINCRBY on a 10-member sorted set, from Redis's statistics.
pub fn zincrby_usec(port: u16) -> f64 {
    redis_cli(port, &["CONFIG", "RESETSTAT"]);
    let mut pipe = String::new();
    for i in 0..20_000 {
        pipe.push_str(&format!("ZINCRBY unit 1 m{}\n", i % 10));
    }
    let mut child = std::process::Command::new("redis-cli")
        .args(["-p", &port.to_string(), "--pipe"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(pipe.as_bytes())
        .unwrap();
    child.wait().unwrap();
    command_stat(port, "zincrby", "usec_per_call")
}

/// An application state (no HTTP) over `database_url` and the Redis on `port`, its keys
/// under `prefix`, with `extra` settings (`OVATION_*` variable, value).
pub async fn engine_state(
    database_url: &str,
    port: u16,
    prefix: &str,
    extra: &[(&str, String)],
) -> ovation::engine::state::AppState {
    let mut env: std::collections::HashMap<String, String> = [
        ("OVATION_CONFIG", "/dev/null".to_owned()),
        ("OVATION_DATABASE_URL", database_url.to_owned()),
        ("OVATION_REDIS_URL", format!("redis://127.0.0.1:{port}")),
        ("OVATION_KEY_PREFIX", prefix.to_owned()),
        ("OVATION_LOG", "error".to_owned()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    env.extend(extra.iter().map(|(k, v)| ((*k).to_owned(), v.clone())));
    ovation::startup::connect(ovation::config::Settings::from_sources(&env).unwrap())
        .await
        .unwrap()
}

/// `usec_per_call` of EVALSHA since the last CONFIG RESETSTAT.
pub fn evalsha_usec(port: u16) -> f64 {
    evalsha_stat(port, "usec_per_call")
}

/// CPU time the hypervisor gave to other guests (steal), summed over cores, in seconds.
pub fn steal_seconds() -> f64 {
    std::fs::read_to_string("/proc/stat")
        .ok()
        .and_then(|stat| {
            let line = stat.lines().next()?.to_owned();
            // cpu user nice system idle iowait irq softirq steal …
            line.split_whitespace().nth(8)?.parse::<f64>().ok()
        })
        .map_or(0.0, |ticks| ticks / 100.0)
}

/// Starts a `redis-server` without persistence on a free loopback port and waits until it
/// listens; it stops when the answer is dropped.
pub fn start_redis() -> (Proc, u16) {
    start_redis_from("redis-server")
}

/// The same with the `redis-server` at `bin`.
pub fn start_redis_from(bin: &str) -> (Proc, u16) {
    let port = free_port();
    let child = Command::new(bin)
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
        .args(["--save", "", "--appendonly", "no", "--loglevel", "warning"])
        .stdout(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{bin}: {e}"));
    let redis = Proc(child);
    wait_for_port(port);
    (redis, port)
}

/// `masters` cluster-enabled `redis-server`s joined into one cluster of as many masters
/// (`redis-cli --cluster create`: each owns a contiguous share of the slots).
pub fn start_cluster(masters: usize) -> Vec<(Proc, u16)> {
    let dir = tempfile::tempdir().unwrap().keep();
    let nodes: Vec<(Proc, u16)> = (0..masters)
        .map(|_| {
            let (port, bus) = (free_port(), free_port());
            let child = Command::new("redis-server")
                .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
                .args(["--save", "", "--appendonly", "no", "--loglevel", "warning"])
                .args([
                    "--cluster-enabled",
                    "yes",
                    "--cluster-port",
                    &bus.to_string(),
                ])
                .args(["--cluster-config-file", &format!("nodes-{port}.conf")])
                .arg("--dir")
                .arg(&dir)
                .stdout(Stdio::null())
                .spawn()
                .expect("redis-server is installed");
            let node = Proc(child);
            wait_for_port(port);
            (node, port)
        })
        .collect();
    let created = Command::new("redis-cli")
        .args(["--cluster", "create"])
        .args(nodes.iter().map(|(_, p)| format!("127.0.0.1:{p}")))
        .args(["--cluster-replicas", "0", "--cluster-yes"])
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(created.success());
    for (_, port) in &nodes {
        while !redis_cli(*port, &["CLUSTER", "INFO"]).contains("cluster_state:ok") {
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    nodes
}
