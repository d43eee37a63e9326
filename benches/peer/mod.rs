//! The Go peer (`../shared/peers/go`, or `BENCH_PEER_GO`): the same two endpoints as a
//! competent Go developer would write them, built into `target/peer-go/` and run beside
//! Ovation on the same Redis, with the load bench's limits.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::common::{Proc, free_port, wait_for_port};
use crate::http::MASTER_KEY;

/// A running peer: its process, its pid and its address.
pub struct Peer {
    _proc: Proc,
    pub pid: u32,
    pub base: String,
}

/// Builds the peer with its own `build.sh` into `target/peer-go/peer-go`; `None` (said
/// on stderr) when its folder is not there.
pub fn build(root: &Path) -> Option<PathBuf> {
    let dir = std::env::var("BENCH_PEER_GO")
        .map(PathBuf::from)
        .unwrap_or_else(|_| root.join("../shared/peers/go"));
    let script = dir.join("build.sh");
    if !script.exists() {
        eprintln!(
            "no Go peer at {} (BENCH_PEER_GO): its rows are left out",
            dir.display()
        );
        return None;
    }
    let out = root.join("target/peer-go/peer-go");
    std::fs::create_dir_all(out.parent()?).unwrap();
    let status = Command::new("bash")
        .arg(&script)
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success(), "the Go peer's build.sh failed");
    Some(out)
}

/// Starts the peer on a free port against the Redis on `redis_port`: votes need the
/// bench's key; its three limits loose enough never to refuse, as the load bench's rules
/// are; display scores three times the real ones, as the bench board's multiplier.
pub fn start(bin: &Path, redis_port: u16) -> Peer {
    let port = free_port();
    let child = Command::new(bin)
        .env_clear()
        .env("PORT", port.to_string())
        .env("HOST", "127.0.0.1")
        .env("REDIS_URL", format!("redis://127.0.0.1:{redis_port}"))
        .env("API_KEY", MASTER_KEY)
        .env("DISPLAY_MULTIPLIER", "3")
        .env("LIMIT_VOTER_MINUTE", "1000000")
        .env("LIMIT_VOTER_DAY", "1000000")
        .env("LIMIT_VOTER_MEMBER_DAY", "1000000")
        .env("TZ", "UTC")
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    wait_for_port(port);
    Peer {
        _proc: Proc(child),
        pid,
        base: format!("http://127.0.0.1:{port}"),
    }
}
