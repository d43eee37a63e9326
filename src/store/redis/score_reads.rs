//! Coalesced reads of members' scores in a fixed list of keys: what a vote on a board
//! whose scores are sums over shards adds to its own shard's scores in its answer (the
//! other shards' parts of the member's scores, read beside its reserve steps, before it
//! is cast). Reads of the same keys that arrive while one is in flight wait for the next,
//! which serves them all with one ZMSCORE per key over the union of their members; so
//! under load a hot board's answers cost Redis a few commands per call, not one per key
//! and vote. A read never serves a request that arrived after it was sent, so every read
//! counts what had counted before its request arrived.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::oneshot;

use super::reply::parse_units;
use super::{RedisFailure, RedisStore};

/// Each key's score (units, 0 when absent) of one member, in the order of the keys.
type Scores = Result<Vec<i64>, RedisFailure>;

/// The requests waiting for the next read of one list of keys, and whether a read of
/// them is running.
#[derive(Default)]
struct Queue {
    waiting: Vec<(String, oneshot::Sender<Scores>)>,
    running: bool,
}

/// The queues of every list of keys being read, shared by the store's clones.
#[derive(Clone, Default)]
pub(super) struct ScoreReads {
    queues: Arc<Mutex<HashMap<Vec<String>, Queue>>>,
}

impl RedisStore {
    /// `member`'s score in each of `keys`, read after this call began, together with
    /// other callers' reads of the same keys.
    pub(super) async fn scores_of(&self, keys: Vec<String>, member: String) -> Scores {
        let (tx, rx) = oneshot::channel();
        let start = {
            let mut queues = self
                .score_reads
                .queues
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            let queue = queues.entry(keys.clone()).or_default();
            queue.waiting.push((member, tx));
            !std::mem::replace(&mut queue.running, true)
        };
        if start {
            tokio::spawn(self.clone().read_scores(keys));
        }
        rx.await.unwrap_or_else(|_| {
            Err(RedisFailure::Unavailable(
                "the read of the shards' scores stopped before Redis answered".to_owned(),
            ))
        })
    }

    /// Reads `keys` for the members waiting, one read at a time, until none wait.
    async fn read_scores(self, keys: Vec<String>) {
        loop {
            let waiting = {
                let mut queues = self
                    .score_reads
                    .queues
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner);
                let Some(queue) = queues.get_mut(&keys) else {
                    return;
                };
                if queue.waiting.is_empty() {
                    queues.remove(&keys);
                    return;
                }
                std::mem::take(&mut queue.waiting)
            };
            let mut members: Vec<String> = waiting.iter().map(|(m, _)| m.clone()).collect();
            members.sort_unstable();
            members.dedup();
            let mut pipe = redis::pipe();
            for key in &keys {
                pipe.cmd("ZMSCORE").arg(key).arg(&members);
            }
            let read: Result<Vec<Vec<Option<String>>>, RedisFailure> =
                self.query("shard_scores", pipe).await;
            for (member, reply) in waiting {
                let at = members.binary_search(&member).unwrap_or(0);
                let scores = match &read {
                    Ok(read) => read
                        .iter()
                        .map(|of_key| match of_key.get(at) {
                            Some(Some(score)) => parse_units(score).ok_or_else(|| {
                                RedisFailure::Reply(format!("shard_scores: a score {score}"))
                            }),
                            Some(None) => Ok(0),
                            None => Err(RedisFailure::Reply("shard_scores: a score unread".into())),
                        })
                        .collect(),
                    Err(failure) => Err(failure.clone()),
                };
                // The receiver is gone when its request was dropped.
                let _ = reply.send(scores);
            }
        }
    }
}
