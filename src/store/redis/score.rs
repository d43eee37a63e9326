//! `score.lua` and `refund.lua`: score writes on every storage layout.
//!
//! A `full` or `top_n` board's write is one `score.lua` call on the board's keys. A
//! `sharded` board's write touches one shard: `score.lua` on the member's shard with the
//! rules that count per member (their counters live there). Rules that do not count per
//! member live in the board's own slot: when there are any, a reserve step first checks
//! and consumes them there (`score.lua` with no period), and `refund.lua` gives them back
//! when the shard refuses the write or replays an earlier answer. A crash between the two
//! steps can only under-admit: the reservation stays consumed, no score is written.

use redis::{Script, Value};
use std::sync::LazyLock;

use super::keys::BoardKeys;
use super::refund::Refund;
use super::rules;
use super::trend;
use super::vote::refusals_ttl_s;
use super::window::{self, WindowTarget};
use super::write::{WriteFacts, WriteReply};
use super::{Invocation, RedisFailure, RedisStore};
use crate::domain::period::{Bucket, HalfLife, Period};
use crate::domain::score::{MAX_UNITS, View};
use crate::domain::scoring::{Op, Storage};

static SCORE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        include_str!("window.lua"),
        include_str!("ring.lua"),
        include_str!("rules.lua"),
        include_str!("trend.lua"),
        include_str!("instance.lua"),
        include_str!("score.lua")
    ))
});

/// Everything one score write needs.
#[derive(Debug)]
pub struct ScoreCall<'a> {
    pub board: &'a BoardKeys,
    /// The bucket of every enabled period the write lands in.
    pub buckets: &'a [Bucket],
    pub op: Op,
    /// Units (value × 10^decimals), never negative.
    pub value: i64,
    pub write: WriteFacts<'a>,
    /// The board's rolling windows (`incr` and `decr` on a `full` board only), answered
    /// after its buckets.
    pub windows: &'a [WindowTarget],
    /// The board's trending periods (`incr` and `decr` on a `full` board only), which the
    /// write adds to and does not answer.
    pub trends: &'a [HalfLife],
}

/// How a score write went: its new score (units) per bucket.
pub type ScoreReply = WriteReply<i64>;

/// Where a score script runs: the keys it writes, the periods it writes (none for a
/// reserve step) and the rules it checks (by index into the call's rules).
struct Step<'a> {
    keys: BoardKeys,
    buckets: &'a [Bucket],
    rules: Vec<usize>,
    /// Counts the write per hour, and keeps the idempotency record.
    records: bool,
}

impl ScoreCall<'_> {
    /// The `score.lua` call of one step; `tag` names the write's entries in rolling logs
    /// (the same in its reserve, write and refund).
    fn invocation(&self, step: &Step<'_>, tag: &str) -> Invocation {
        let keys = &step.keys;
        let w = &self.write;
        let (idem_key, idem_ttl) = w.idempotency_record(keys, step.records);
        let mut inv = SCORE.key(idem_key);
        inv.key(keys.vote_counts())
            .key(keys.refusals(w.hour))
            .key(keys.late_writes());
        for bucket in step.buckets {
            inv.key(keys.scores(View::Real, bucket))
                .key(keys.exact_scores(bucket));
        }
        let voters = if step.records { w.voters } else { &[] };
        for bucket in voters {
            inv.key(keys.participants(bucket))
                .key(keys.member_participants(bucket, w.member));
        }
        let rules = || step.rules.iter().map(|&i| &w.rules[i]);
        rules::push_keys(rules(), keys, &mut inv);
        inv.key(keys.ledger());
        let windows = if step.records { self.windows } else { &[] };
        for window in windows {
            window.keys(&mut inv);
        }
        let trends = if step.records { self.trends } else { &[] };
        trend::push_keys(keys, trends, &mut inv);
        let (retain, trim_at) = match keys.storage() {
            Storage::TopN { retain, trim_at } => (retain, trim_at),
            _ => (0, 0),
        };
        inv.arg(w.member)
            .arg(self.op.as_str())
            .arg(self.value)
            .arg(w.voter.unwrap_or(""))
            .arg(idem_ttl)
            .arg(w.receipt)
            .arg(if step.records {
                w.hour.to_string()
            } else {
                String::new()
            })
            .arg(step.buckets.len())
            .arg(MAX_UNITS)
            .arg(w.at_ms)
            .arg(tag)
            .arg(refusals_ttl_s(keys))
            .arg(step.rules.len())
            .arg(retain)
            .arg(trim_at)
            .arg(voters.len())
            .arg(if w.late {
                step.buckets
                    .iter()
                    .map(|b| if b.period == Period::All { 'a' } else { '1' })
                    .collect()
            } else {
                "0".to_owned()
            })
            .arg(keys.ttl_ms())
            .arg(if step.records {
                w.ledger.unwrap_or("")
            } else {
                ""
            });
        rules::push_args(rules(), w.at_ms, &mut inv);
        rules::push_fields(rules(), &mut inv);
        inv.arg(windows.len());
        for window in windows {
            window.args(&mut inv);
        }
        inv.arg(trends.len());
        trend::push_args(trends, &mut inv);
        inv
    }

    /// The steps of this write: one, or a reserve step in the board's slot and the write
    /// in the member's shard.
    fn steps(&self) -> (Option<Step<'_>>, Step<'_>) {
        let all: Vec<usize> = (0..self.write.rules.len()).collect();
        match self.board.storage() {
            Storage::Sharded { .. } => {
                let (member, board): (Vec<usize>, Vec<usize>) = all
                    .into_iter()
                    .partition(|&i| self.write.rules[i].in_shard(self.board));
                let reserve = (!board.is_empty()).then(|| Step {
                    keys: self.board.clone(),
                    buckets: &[],
                    rules: board,
                    records: false,
                });
                let write = Step {
                    keys: self.board.member_shard(self.write.member),
                    buckets: self.buckets,
                    rules: member,
                    records: true,
                };
                (reserve, write)
            }
            _ => (
                None,
                Step {
                    keys: self.board.clone(),
                    buckets: self.buckets,
                    rules: all,
                    records: true,
                },
            ),
        }
    }
}

/// Reads a score write's reply; `rules` are the call's rules the step checked.
fn score_reply(value: &Value, rules: &[usize]) -> Result<ScoreReply, RedisFailure> {
    WriteReply::parse(
        "score",
        value,
        |units, _| Some(units),
        |i| rules.get(i).copied(),
    )
}

impl RedisStore {
    /// Applies score writes, each atomically in its shard and independently of the
    /// others, and answers each one's outcome in order. The whole call fails only when
    /// Redis did not answer; then the writes may or may not have been applied.
    pub async fn write_scores(
        &self,
        calls: &[ScoreCall<'_>],
    ) -> Result<Vec<Result<ScoreReply, RedisFailure>>, RedisFailure> {
        let tags: Vec<String> = calls
            .iter()
            .map(|_| format!("{:016x}", rand::random::<u64>()))
            .collect();
        let steps: Vec<(Option<Step<'_>>, Step<'_>)> = calls.iter().map(|c| c.steps()).collect();

        let mut outcomes: Vec<Option<Result<ScoreReply, RedisFailure>>> =
            calls.iter().map(|_| None).collect();

        // A write with a reserve step and an idempotency key first looks for its record
        // in the shard: a retry answers its first answer and reserves nothing. (The shard
        // write checks again, atomically, for a retry racing the first attempt.)
        let reserved_first = (0..calls.len()).filter_map(|i| {
            steps[i].0.as_ref()?;
            Some((i, &steps[i].1.keys, &calls[i].write))
        });
        for (i, record) in self.recorded(reserved_first).await? {
            outcomes[i] = Some(score_reply(&record, &[]));
        }

        // Reserve steps, in one round trip; a write whose reservation was refused (or
        // failed) answers that and goes no further.
        let reserving: Vec<usize> = (0..calls.len())
            .filter(|&i| steps[i].0.is_some() && outcomes[i].is_none())
            .collect();
        let reserve_calls: Vec<Invocation> = reserving
            .iter()
            .filter_map(|&i| Some(calls[i].invocation(steps[i].0.as_ref()?, &tags[i])))
            .collect();
        let reserved = self.run_script("score", &SCORE, &reserve_calls).await?;
        for (&i, reply) in reserving.iter().zip(reserved) {
            let rules = steps[i].0.as_ref().map_or(&[][..], |s| &s.rules[..]);
            match reply.and_then(|v| score_reply(&v, rules)) {
                Ok(ScoreReply::Written(_)) => {}
                other => outcomes[i] = Some(other),
            }
        }

        let mut writing: Vec<usize> = (0..calls.len())
            .filter(|&i| outcomes[i].is_none())
            .collect();
        let mut refunds = Vec::new();
        // A write that found a rolling window out of its keys' reach changed nothing: bring
        // the window to the clock and write again (see vote.rs).
        let mut recast: Vec<Option<Vec<WindowTarget>>> = vec![None; calls.len()];
        for attempt in 0..=window::WINDOW_ATTEMPTS {
            let write_calls: Vec<Invocation> = writing
                .iter()
                .map(|&i| {
                    let windows = recast[i].as_deref().unwrap_or(calls[i].windows);
                    let call = ScoreCall {
                        windows,
                        ..calls[i]
                    };
                    call.invocation(&steps[i].1, &tags[i])
                })
                .collect();
            let written = self.run_script("score", &SCORE, &write_calls).await?;
            let mut behind = Vec::new();
            for (&i, reply) in writing.iter().zip(written) {
                let Some(reply) = window::settled(reply, attempt) else {
                    behind.push(i);
                    continue;
                };
                let reply = reply.and_then(|v| score_reply(&v, &steps[i].1.rules));
                if let (Some(reserve), Ok(r)) = (&steps[i].0, &reply)
                    && !matches!(r, ScoreReply::Written(_))
                {
                    refunds.push(Refund {
                        keys: &reserve.keys,
                        rules: reserve
                            .rules
                            .iter()
                            .map(|&r| &calls[i].write.rules[r])
                            .collect(),
                        count: 1,
                        tag: &tags[i],
                    });
                }
                outcomes[i] = Some(reply);
            }
            if behind.is_empty() {
                break;
            }
            let windows: Vec<&[WindowTarget]> = behind
                .iter()
                .map(|&i| recast[i].as_deref().unwrap_or(calls[i].windows))
                .collect();
            let moved = self.advance_windows(&windows).await?;
            for (&i, windows) in behind.iter().zip(moved) {
                recast[i] = Some(windows);
            }
            writing = behind;
        }
        self.refund(&refunds).await;
        Ok(outcomes
            .into_iter()
            .map(|o| {
                o.unwrap_or_else(|| {
                    Err(RedisFailure::Reply("a score write went unanswered".into()))
                })
            })
            .collect())
    }
}
