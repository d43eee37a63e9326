//! What the benchmarks read of Redis's memory.

use crate::common::redis_cli;

/// Bytes Redis has allocated (`used_memory`).
pub fn used_memory(port: u16) -> f64 {
    redis_cli(port, &["INFO", "memory"])
        .lines()
        .find_map(|l| l.strip_prefix("used_memory:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0.0)
}
