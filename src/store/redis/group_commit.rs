//! Group commit for votes: votes on one board that are in flight together go to Redis as
//! one `vote.lua` call, which applies them in order, each passing or failing on its own.
//! A call's fixed cost in Redis (the EVALSHA, its argument tables, the reply) is then
//! shared by the votes in it.
//!
//! With a largest group of one (`OVATION_VOTE_GROUP=1`) each request's votes go as
//! their own call at once, as many at a time as requests come. Otherwise no vote waits
//! on a timer. A board has at most [`IN_FLIGHT`] calls running (a shard of a board
//! whose scores are sums over shards [`SHARD_IN_FLIGHT`]); a vote that
//! finds them all running queues, and the next call to start takes what has queued, up
//! to the store's largest group (whole requests only: the votes of one request stay in
//! one call, in their order). So a lone vote goes at once, and under load calls fill by
//! themselves. A board's calls share one slot (its hash tag), so a Redis Cluster takes
//! them as it takes one vote.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use redis::{ServerErrorKind, Value};
use tokio::sync::oneshot;

use super::keys::BoardKeys;
use super::vote::{Call, Segment};
use super::window;
use super::{RedisFailure, RedisStore};

/// Calls one board may have running at once: two keep Redis busy while the server reads
/// one call's replies and sends the next.
const IN_FLIGHT: usize = 2;

/// Calls one shard of a board whose scores are sums over shards may have running at once.
/// A master holds several shards (two with twice as many shards as masters), so it still
/// has calls running while the server reads one's replies, and a shard's calls hold
/// twice the votes, which share more of their members' sums: on 6 masters it took
/// 11–27 % off the masters' CPU a vote (bench/notes/2026-12-02-sharded-two-rounds.md).
const SHARD_IN_FLIGHT: usize = 1;

/// Calls of `board`'s votes (in its own slot, or in a shard's) one slot may have
/// running at once.
pub(super) fn in_flight(board: &BoardKeys) -> usize {
    if board.sums_shards() {
        SHARD_IN_FLIGHT
    } else {
        IN_FLIGHT
    }
}

/// The most votes one call takes unless one request brings more (`OVATION_VOTE_GROUP`).
pub const DEFAULT_GROUP: usize = 32;

/// Each vote's reply, or the failure of the whole call (Redis did not answer).
type Replies = Result<Vec<Result<Value, RedisFailure>>, RedisFailure>;

/// One request's votes on one board, and where their replies go.
struct Unit {
    segments: Vec<Segment>,
    reply: oneshot::Sender<Replies>,
    queued: Instant,
}

/// The votes waiting for one board and how many of its calls are running.
#[derive(Default)]
struct Queue {
    units: VecDeque<Unit>,
    running: usize,
}

/// The queues of every board with votes in flight, shared by the store's clones.
#[derive(Clone)]
pub(super) struct GroupCommit {
    queues: Arc<Mutex<HashMap<String, Queue>>>,
    max_group: usize,
}

impl GroupCommit {
    pub(super) fn new(max_group: usize) -> Self {
        Self {
            queues: Arc::default(),
            max_group: max_group.max(1),
        }
    }
}

impl RedisStore {
    /// Applies one request's votes on one board (their keys share the slot named by
    /// `slot`) in order, grouped with other requests' votes on that board in flight, of
    /// which at most `in_flight` calls run at once (see [`in_flight`]).
    pub(super) async fn commit_votes(
        &self,
        slot: &str,
        in_flight: usize,
        segments: Vec<Segment>,
    ) -> Replies {
        if self.group.max_group == 1 {
            // Group commit off: every request's call goes at once, however many are
            // running.
            let segments: Vec<&Segment> = segments.iter().collect();
            return self.run_votes(&segments).await;
        }
        let (tx, rx) = oneshot::channel();
        let start = {
            let mut queues = self
                .group
                .queues
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            let queue = queues.entry(slot.to_owned()).or_default();
            queue.units.push_back(Unit {
                segments,
                reply: tx,
                queued: Instant::now(),
            });
            let start = queue.running < in_flight;
            if start {
                queue.running += 1;
            }
            start
        };
        if start {
            tokio::spawn(self.clone().drive(slot.to_owned()));
        }
        rx.await.unwrap_or_else(|_| {
            Err(RedisFailure::Unavailable(
                "the vote's call stopped before Redis answered".to_owned(),
            ))
        })
    }

    /// Sends the board's queued votes, a group per call, until none is left.
    async fn drive(self, slot: String) {
        while let Some(units) = self.next_group(&slot) {
            let counts: Vec<usize> = units.iter().map(|u| u.segments.len()).collect();
            let segments: Vec<&Segment> = units.iter().flat_map(|u| &u.segments).collect();
            let outcome = self.run_votes(&segments).await;
            match outcome {
                Ok(replies) => {
                    let mut replies = replies.into_iter();
                    for (unit, count) in units.into_iter().zip(counts) {
                        // The receiver is gone when its request was dropped; the votes
                        // counted all the same.
                        let _ = unit.reply.send(Ok(replies.by_ref().take(count).collect()));
                    }
                }
                Err(failure) => {
                    for unit in units {
                        let _ = unit.reply.send(Err(failure.clone()));
                    }
                }
            }
        }
    }

    /// Takes the next group of whole units off the board's queue (at least one, and more
    /// while they fit the largest group), or stops the caller's run when none is left.
    /// A unit that has waited longer than the store's timeout (Redis is slow or gone, and
    /// the calls before it took that long) is answered `Unavailable` without being sent,
    /// so no vote waits much longer than twice the timeout however many queue.
    fn next_group(&self, slot: &str) -> Option<Vec<Unit>> {
        let mut queues = self
            .group
            .queues
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let queue = queues.get_mut(slot)?;
        while let Some(unit) = queue
            .units
            .pop_front_if(|u| u.queued.elapsed() > self.timeout)
        {
            let _ = unit.reply.send(Err(RedisFailure::Unavailable(format!(
                "the vote waited over {} ms for the calls before it",
                self.timeout.as_millis()
            ))));
        }
        let mut units = Vec::new();
        let mut votes = 0;
        while let Some(unit) = queue.units.front() {
            if !units.is_empty() && votes + unit.segments.len() > self.group.max_group {
                break;
            }
            votes += unit.segments.len();
            units.extend(queue.units.pop_front());
        }
        if units.is_empty() {
            queue.running -= 1;
            if queue.running == 0 {
                queues.remove(slot);
            }
            return None;
        }
        Some(units)
    }

    /// One `vote.lua` call of `segments`: each vote's reply, in order (each `advance`
    /// when the call found a rolling window out of its reach). When Redis lost
    /// its script cache the call goes again as an EVAL carrying the script, so a flush
    /// between loading the script and calling it cannot refuse it again; a call refused
    /// with NOSCRIPT did not run, so it never counts twice.
    async fn run_votes(&self, segments: &[&Segment]) -> Replies {
        let call = Call::of(segments);
        let reply = self
            .bounded("vote", |conn| async move {
                for eval in [false, true] {
                    let mut pipe = redis::pipe();
                    pipe.add_command(call.command(eval));
                    match conn.query_split(pipe).await?.pop() {
                        Some(Value::ServerError(e))
                            if !eval && e.kind() == Some(ServerErrorKind::NoScript) => {}
                        Some(Value::ServerError(e)) => {
                            return Err(redis::RedisError::from(e).into());
                        }
                        Some(value) => return Ok(value),
                        None => break,
                    }
                }
                Err(RedisFailure::Reply("vote: no reply".to_owned()))
            })
            .await?;
        if window::is_behind(&reply) {
            // Nothing happened: every vote of the call answers it (see `cast_votes`).
            return Ok(segments.iter().map(|_| Ok(reply.clone())).collect());
        }
        let Value::Array(items) = reply else {
            return Err(RedisFailure::Reply(format!("vote: {reply:?}")));
        };
        if items.len() != segments.len() {
            return Err(RedisFailure::Reply(format!(
                "vote: {} replies to {} votes",
                items.len(),
                segments.len()
            )));
        }
        Ok(items
            .into_iter()
            .map(|item| match item {
                Value::ServerError(e) => Err(redis::RedisError::from(e).into()),
                value => Ok(value),
            })
            .collect())
    }
}
