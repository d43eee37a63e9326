//! CPU use of processes over a phase, for the benchmarks that report it.

use std::time::Instant;

use serde_json::{Value, json};

use super::common::steal_seconds;

/// CPU seconds (user + system) of a process so far, and of its children it has waited for.
pub fn cpu_times(pid: u32) -> (f64, f64) {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or(Vec::new(), |(_, rest)| rest.split_whitespace().collect());
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // Fields 14 to 17 (utime, stime, cutime, cstime) follow the command name at 11 to 14.
    (
        (ticks(11) + ticks(12)) / 100.0,
        (ticks(13) + ticks(14)) / 100.0,
    )
}

fn cpu_seconds(pid: u32) -> f64 {
    cpu_times(pid).0
}

/// CPU use of several processes over a phase, and the host's steal, in % of one core.
pub struct CpuMeter {
    pids: Vec<(String, u32)>,
    start: Vec<f64>,
    steal: f64,
    at: Instant,
}

impl CpuMeter {
    pub fn start(pids: &[(&str, u32)]) -> Self {
        Self {
            pids: pids.iter().map(|(n, p)| (n.to_string(), *p)).collect(),
            start: pids.iter().map(|(_, p)| cpu_seconds(*p)).collect(),
            steal: steal_seconds(),
            at: Instant::now(),
        }
    }

    pub fn stop(self) -> Value {
        let wall = self.at.elapsed().as_secs_f64();
        let mut out = serde_json::Map::new();
        for ((name, pid), start) in self.pids.iter().zip(self.start) {
            let pct = (cpu_seconds(*pid) - start) / wall * 100.0;
            out.insert(name.clone(), json!((pct * 10.0).round() / 10.0));
        }
        let steal = (steal_seconds() - self.steal) / wall * 100.0;
        out.insert("steal".into(), json!((steal * 10.0).round() / 10.0));
        Value::Object(out)
    }
}
