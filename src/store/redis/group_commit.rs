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
//! one call, in their order; a shard's call [`SHARD_STEPS`] times that, as it holds
//! reserve steps besides its votes). So a lone vote goes at once, and under load calls
//! fill by themselves. A board's calls share one slot (its hash tag), so a Redis Cluster takes
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

/// How many steps a largest group's vote counts for in a shard's call. A sharded vote
/// runs about two steps (its write in its voter's shard, and for most votes a reserve
/// step in the shard its `ip` rule's subject picks), and a shard's call holds both
/// kinds, so calls of twice the group hold about as many votes as a `full` board's: on
/// 3 masters at 512 writers a shard's calls were at the group's 32 steps
/// (bench/notes/2026-12-02-shard-group.md).
const SHARD_STEPS: usize = 2;

/// How calls of one board's votes run in a slot (its own, or a shard's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Pace {
    /// Calls one slot may have running at once.
    pub in_flight: usize,
    /// How many steps one call takes for each vote of the store's largest group.
    pub steps: usize,
}

/// How calls of `board`'s votes run (in its own slot, or in a shard's).
pub(super) fn pace(board: &BoardKeys) -> Pace {
    if board.sums_shards() {
        Pace {
            in_flight: SHARD_IN_FLIGHT,
            steps: SHARD_STEPS,
        }
    } else {
        Pace {
            in_flight: IN_FLIGHT,
            steps: 1,
        }
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

/// How many of the queued requests (their steps, oldest first) the next call takes: the
/// first, and more while the call stays within `largest` steps.
fn group_len(steps: impl Iterator<Item = usize>, largest: usize) -> usize {
    let mut taken = 0;
    let mut total = 0;
    for n in steps {
        if taken > 0 && total + n > largest {
            break;
        }
        taken += 1;
        total += n;
    }
    taken
}

impl RedisStore {
    /// Applies one request's votes on one board (their keys share the slot named by
    /// `slot`) in order, grouped with other requests' votes on that board in flight, at
    /// the board's `pace` (see [`pace`]).
    pub(super) async fn commit_votes(
        &self,
        slot: &str,
        pace: Pace,
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
            let start = queue.running < pace.in_flight;
            if start {
                queue.running += 1;
            }
            start
        };
        if start {
            let largest = self.group.max_group * pace.steps;
            tokio::spawn(self.clone().drive(slot.to_owned(), largest));
        }
        rx.await.unwrap_or_else(|_| {
            Err(RedisFailure::Unavailable(
                "the vote's call stopped before Redis answered".to_owned(),
            ))
        })
    }

    /// Sends the board's queued votes, a group of at most `largest` steps per call, until
    /// none is left.
    async fn drive(self, slot: String, largest: usize) {
        while let Some(units) = self.next_group(&slot, largest) {
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
    /// while they fit in `largest` steps), or stops the caller's run when none is left.
    /// A unit that has waited longer than the store's timeout (Redis is slow or gone, and
    /// the calls before it took that long) is answered `Unavailable` without being sent,
    /// so no vote waits much longer than twice the timeout however many queue.
    fn next_group(&self, slot: &str, largest: usize) -> Option<Vec<Unit>> {
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
        let take = group_len(queue.units.iter().map(|u| u.segments.len()), largest);
        let units: Vec<Unit> = queue.units.drain(..take).collect();
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

#[cfg(test)]
mod tests {
    use chrono_tz::Tz;

    use super::*;
    use crate::domain::scoring::Storage;
    use crate::store::redis::keys::{Keys, Spread};

    // A call takes whole requests, the first whatever its size, then more while they fit.
    #[test]
    fn a_call_takes_whole_requests_while_they_fit() {
        assert_eq!(group_len([5, 1].into_iter(), 4), 1);
        assert_eq!(group_len([2, 2, 1].into_iter(), 4), 2);
        assert_eq!(group_len([1, 3, 1].into_iter(), 4), 2);
        assert_eq!(group_len(std::iter::empty(), 4), 0);
    }

    // A shard's call holds reserve steps besides its votes, so it takes twice the largest
    // group's steps, one call in flight; a board's own slot takes the group, two.
    #[test]
    fn a_shards_call_takes_twice_the_group_in_steps() {
        let keys = Keys::new("ov:");
        let full = keys.board(7, Storage::Full, Spread::Members, Tz::UTC);
        let sharded = keys.board(8, Storage::sharded(6), Spread::Voters, Tz::UTC);
        let queued = || std::iter::repeat_n(1, 100);
        let (own, shard) = (pace(&full), pace(&sharded));
        assert_eq!((own.in_flight, shard.in_flight), (2, 1));
        assert_eq!(group_len(queued(), DEFAULT_GROUP * own.steps), 32);
        assert_eq!(group_len(queued(), DEFAULT_GROUP * shard.steps), 64);
    }
}
