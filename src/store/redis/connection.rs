//! One Redis or a Redis Cluster behind one connection type.
//!
//! A cluster runs a pipeline on one node, so [`Connection::query_split`] sends the
//! commands of a pipeline whose keys live in several slots (a sharded board's shards, a
//! batch of writes to several boards) as one pipeline per slot, in parallel, and puts
//! the replies back in order. One Redis gets the same split: its connection pipelines
//! concurrent requests, so the split costs nothing there, and both backends run one
//! code path.

use std::collections::HashMap;
use std::time::Duration;

use redis::aio::{ConnectionLike, ConnectionManager, ConnectionManagerConfig};
use redis::cluster::{ClusterClient, ClusterConfig};
use redis::cluster_async::ClusterConnection;
use redis::cluster_routing::{Route, RoutingInfo, SingleNodeRoutingInfo, Slot, SlotAddr};
use redis::{Arg, Cmd, Pipeline, RedisFuture, RedisResult, Value};

/// Where Redis is: one server, or a cluster reached through its seed nodes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RedisTarget {
    Single(String),
    Cluster(Vec<String>),
}

impl RedisTarget {
    /// The servers to open a connection of one's own on (pub/sub), in the order to try
    /// them.
    pub fn nodes(&self) -> &[String] {
        match self {
            Self::Single(url) => std::slice::from_ref(url),
            Self::Cluster(seeds) => seeds,
        }
    }
}

/// A handle on the shared connection; cloning it is cheap.
#[derive(Clone)]
pub enum Connection {
    Single(ConnectionManager),
    Cluster(ClusterConnection),
}

impl Connection {
    /// Prepares the connection without waiting for Redis: it connects (to a cluster: learns
    /// its slots) on first use and reconnects by itself; a cluster client follows MOVED
    /// and ASK and a failover's new topology.
    pub fn open(target: &RedisTarget, timeout: Duration) -> RedisResult<Self> {
        match target {
            RedisTarget::Single(url) => {
                let client = redis::Client::open(url.as_str())?;
                let config = ConnectionManagerConfig::new()
                    .set_connection_timeout(Some(timeout / 2))
                    .set_response_timeout(Some(timeout))
                    .set_number_of_retries(1)
                    .set_min_delay(Duration::from_millis(50))
                    .set_max_delay(Duration::from_millis(250));
                Ok(Self::Single(ConnectionManager::new_lazy_with_config(
                    client, config,
                )?))
            }
            RedisTarget::Cluster(seeds) => {
                let client = ClusterClient::builder(seeds.iter().map(String::as_str))
                    .retries(3)
                    .min_retry_wait(50)
                    .max_retry_wait(250)
                    .build()?;
                let config = ClusterConfig::new()
                    .set_connection_timeout(timeout / 2)
                    .set_response_timeout(timeout);
                Ok(Self::Cluster(
                    client.get_pending_async_connection_with_config(config),
                ))
            }
        }
    }

    /// Runs the commands of `pipe` (not atomic, none ignored), on a cluster one pipeline
    /// per slot in parallel, and answers their replies in the order of `pipe`; a command
    /// Redis refused answers its `Value::ServerError` in its place. On one server, or in
    /// one slot, the pipeline goes as it is:
    /// copying a batch's calls delayed it enough, in a debug build, for a script cache
    /// flushed every 200 µs to refuse every retry (`retries::a_script_cache_flushed…`).
    pub async fn query_split(&self, mut pipe: Pipeline) -> RedisResult<Vec<Value>> {
        let slots: Vec<Option<Slot>> = match self {
            Self::Single(_) => Vec::new(),
            Self::Cluster(_) => pipe
                .cmd_iter()
                .map(|cmd| routing_key(cmd).map(Slot::for_key))
                .collect(),
        };
        // One server, or one slot (the usual case: one board): the pipeline as it is, no
        // copies.
        if slots.windows(2).all(|w| w[0] == w[1]) {
            pipe.ignore_errors();
            let mut conn = self.clone();
            return pipe.query_async(&mut conn).await;
        }
        let mut groups: HashMap<Option<Slot>, (Pipeline, Vec<usize>)> = HashMap::new();
        for (i, (cmd, slot)) in pipe.cmd_iter().zip(slots).enumerate() {
            let (sub, at) = groups.entry(slot).or_insert_with(|| {
                let mut sub = redis::pipe();
                sub.ignore_errors();
                (sub, Vec::new())
            });
            sub.add_command(cmd.clone());
            at.push(i);
        }
        let runs = groups.into_values().map(|(sub, at)| {
            let mut conn = self.clone();
            async move {
                let replies: Vec<Value> = sub.query_async(&mut conn).await?;
                Ok::<_, redis::RedisError>((at, replies))
            }
        });
        let mut replies = vec![Value::Nil; pipe.len()];
        for run in futures_util::future::join_all(runs).await {
            let (at, values) = run?;
            for (i, value) in at.into_iter().zip(values) {
                replies[i] = value;
            }
        }
        Ok(replies)
    }

    /// One SCAN step (`COUNT` 1000) over the keys matching `pattern`, on the server that
    /// holds `slot_key`'s slot: a cluster's keys of one hash tag live on one node.
    pub async fn scan_step(
        &mut self,
        slot_key: &str,
        cursor: u64,
        pattern: &str,
    ) -> RedisResult<(u64, Vec<String>)> {
        self.scan_step_at(Slot::for_key(slot_key), cursor, pattern)
            .await
    }

    /// One SCAN step as [`Self::scan_step`], on the master serving `slot`.
    pub async fn scan_step_at(
        &mut self,
        slot: Slot,
        cursor: u64,
        pattern: &str,
    ) -> RedisResult<(u64, Vec<String>)> {
        let mut scan = redis::cmd("SCAN");
        scan.arg(cursor)
            .arg("MATCH")
            .arg(pattern)
            .arg("COUNT")
            .arg(1000);
        match self {
            Self::Single(conn) => scan.query_async(conn).await,
            Self::Cluster(conn) => {
                let route =
                    SingleNodeRoutingInfo::SpecificNode(Route::with_slot(slot, SlotAddr::Master));
                let reply = conn
                    .route_command(scan, RoutingInfo::SingleNode(route))
                    .await?;
                Ok(redis::from_redis_value(reply)?)
            }
        }
    }

    /// One slot of each master, so that a SCAN sent to each walks every key once: one
    /// server's any slot; a cluster's masters as `CLUSTER SLOTS` names them now.
    pub async fn master_slots(&mut self) -> RedisResult<Vec<Slot>> {
        let Self::Cluster(conn) = self else {
            return Ok(Slot::new(0).into_iter().collect());
        };
        let ranges: Vec<Value> = redis::cmd("CLUSTER").arg("SLOTS").query_async(conn).await?;
        let mut first: HashMap<String, u16> = HashMap::new();
        for range in ranges {
            let Value::Array(items) = range else { continue };
            let (Some(Value::Int(start)), Some(Value::Array(master))) =
                (items.first(), items.get(2))
            else {
                continue;
            };
            let address = match (master.first(), master.get(1)) {
                (Some(Value::BulkString(host)), Some(Value::Int(port))) => {
                    format!("{}:{port}", String::from_utf8_lossy(host))
                }
                _ => continue,
            };
            let slot = u16::try_from(*start).unwrap_or(0);
            first
                .entry(address)
                .and_modify(|s| *s = (*s).min(slot))
                .or_insert(slot);
        }
        Ok(first.into_values().filter_map(Slot::new).collect())
    }
}

/// The key a command is routed by: a script's first key, else the command's first
/// argument; `None` for a script without keys.
fn routing_key(cmd: &Cmd) -> Option<&[u8]> {
    let args: Vec<&[u8]> = cmd
        .args_iter()
        .filter_map(|a| match a {
            Arg::Simple(a) => Some(a),
            _ => None,
        })
        .collect();
    let name = args.first()?;
    if name.eq_ignore_ascii_case(b"EVALSHA") || name.eq_ignore_ascii_case(b"EVAL") {
        (args.get(2)? != b"0").then(|| args.get(3).copied())?
    } else {
        args.get(1).copied()
    }
}

impl ConnectionLike for Connection {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Self::Single(conn) => conn.req_packed_command(cmd),
            Self::Cluster(conn) => conn.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Self::Single(conn) => conn.req_packed_commands(pipeline, offset, count),
            Self::Cluster(conn) => conn.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Self::Single(conn) => conn.get_db(),
            Self::Cluster(conn) => conn.get_db(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_route_by_their_first_key_and_scripts_by_theirs() {
        let key = |cmd: &Cmd| routing_key(cmd).map(<[u8]>::to_vec);
        assert_eq!(
            key(redis::cmd("ZCARD").arg("{b:1}:z")),
            Some(b"{b:1}:z".to_vec())
        );
        assert_eq!(
            key(redis::cmd("EVALSHA")
                .arg("abc")
                .arg(2)
                .arg("{b:2}:x")
                .arg("y")),
            Some(b"{b:2}:x".to_vec())
        );
        assert_eq!(key(redis::cmd("EVALSHA").arg("abc").arg(0).arg("a")), None);
    }
}
