//! `vote.lua`: a vote's keys and arguments in the order the script takes them, and its
//! reply.

use redis::{Script, Value};
use std::sync::LazyLock;

use super::keys::BoardKeys;
use super::reply::{as_array, as_int, as_text, as_units, parse_units, reply_error};
use super::window::WindowTarget;
use super::{Invocation, RedisFailure, RedisStore};
use crate::domain::ids::IdempotencyKey;
use crate::domain::period::Bucket;
use crate::domain::score::{Increment, MAX_UNITS, View};
use std::time::Duration;

static VOTE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        include_str!("window.lua"),
        include_str!("vote.lua")
    ))
});

/// Where `vote.lua` takes the voter: ARGV[5] (see the script's header). The benchmark
/// rewrites it in captured calls.
pub const VOTER_ARGV: usize = 5;

/// How long a refusals hash outlives its hour: the dashboard shows the last 48 hours, and
/// a week more leaves room to look back.
pub const REFUSALS_TTL_S: i64 = 8 * 86_400;

/// Whose count a counter holds: a rule, its window's code, and the subject (the vote's
/// values for the rule's dimensions).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CounterOf {
    pub rule: i64,
    pub window: String,
    pub subject: String,
}

/// How one rule's counter is kept in Redis.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Counter {
    /// A calendar window's or the campaign's count of votes (string).
    Fixed {
        of: CounterOf,
        /// The window's start (epoch seconds); `None` for the campaign.
        start: Option<i64>,
        ttl_s: i64,
        /// Set the TTL on every write (its deadline moves), not only on the first.
        refresh: bool,
        /// From the vote until the window restarts; `None` when it never does.
        retry_ms: Option<i64>,
    },
    /// A rolling window: a log of admitted votes and its running total.
    Rolling {
        of: CounterOf,
        ttl_s: i64,
        /// Entries at or before this time (ms) have left the window.
        horizon_ms: i64,
    },
}

impl Counter {
    /// The counter's two keys in the order `vote.lua` and `usage.lua` take them: a fixed
    /// counter's key twice (the scripts ignore the second), a rolling window's log and
    /// running total.
    pub(super) fn keys(&self, board: &BoardKeys) -> (String, String) {
        match self {
            Self::Fixed { of, start, .. } => {
                let key = board.rule_counter(of.rule, &of.window, *start, &of.subject);
                (key.clone(), key)
            }
            Self::Rolling { of, .. } => (
                board.rule_log(of.rule, &of.window, &of.subject),
                board.rule_log_total(of.rule, &of.window, &of.subject),
            ),
        }
    }
}

/// One rule a vote must pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleCheck {
    /// The rule's id, for the refusals counter.
    pub rule: i64,
    /// The limit for this vote (overrides applied).
    pub limit: i64,
    pub counter: Counter,
}

/// One period's part of a vote: the bucket it counts in and the bucket that inherits the
/// carry-over (none for `all`).
#[derive(Debug, Clone)]
pub struct VoteTarget {
    pub current: Bucket,
    pub next: Option<Bucket>,
}

/// Everything one run of `vote.lua` needs.
#[derive(Debug)]
pub struct VoteCall<'a> {
    pub board: &'a BoardKeys,
    pub targets: &'a [VoteTarget],
    pub member: &'a str,
    pub increment: Increment,
    pub voter: Option<&'a str>,
    /// The caller's idempotency key (the record is the caller's own) and how long the
    /// record lives.
    pub idempotency: Option<(&'a str, &'a IdempotencyKey, Duration)>,
    /// Stored with the scores so a replay answers the same.
    pub receipt: &'a str,
    /// Hours since the epoch, for the votes-per-hour counter.
    pub hour: i64,
    /// The vote's time, ms since the epoch.
    pub at_ms: i64,
    /// The rules the vote must pass; empty when it skips them.
    pub rules: &'a [RuleCheck],
    /// The rolling windows the vote counts in.
    pub windows: &'a [WindowTarget],
}

impl VoteCall<'_> {
    /// The EVALSHA of this call.
    pub fn invocation(&self) -> Invocation {
        let (idem_key, idem_ttl) = match self.idempotency {
            Some((caller, key, ttl)) => (self.board.idempotency(caller, key), ttl.as_secs().max(1)),
            // vote.lua ignores KEYS[1] when the TTL is 0; any key of the board will do.
            None => (self.board.votes_per_hour(), 0),
        };
        let mut inv = VOTE.key(idem_key);
        inv.key(self.board.votes_per_hour())
            .key(self.board.refusals(self.hour));
        for t in self.targets {
            let next = t.next.as_ref().unwrap_or(&t.current);
            inv.key(self.board.scores(View::Real, &t.current))
                .key(self.board.scores(View::Display, &t.current))
                .key(self.board.scores(View::Display, next))
                .key(self.board.participants(&t.current))
                .key(self.board.member_participants(&t.current, self.member));
        }
        for rule in self.rules {
            let (first, second) = rule.counter.keys(self.board);
            inv.key(first).key(second);
        }
        for w in self.windows {
            for key in &w.window.keys {
                inv.key(key);
            }
        }
        let all_index = self
            .targets
            .iter()
            .position(|t| !t.current.period.is_periodic())
            .map_or(-1, |i| i as i64);
        inv.arg(self.member)
            .arg(self.increment.real)
            .arg(self.increment.display)
            .arg(self.increment.carry)
            .arg(self.voter.unwrap_or(""))
            .arg(idem_ttl)
            .arg(self.receipt)
            .arg(self.hour)
            .arg(self.targets.len())
            .arg(MAX_UNITS)
            .arg(all_index)
            .arg(self.at_ms)
            .arg(format!("{:016x}", rand::random::<u64>()))
            .arg(REFUSALS_TTL_S)
            .arg(self.rules.len());
        for t in self.targets {
            inv.arg(if t.next.is_some() { "1" } else { "0" });
        }
        for rule in self.rules {
            inv.arg(rule.rule).arg(match rule.counter {
                Counter::Fixed { .. } => "c",
                Counter::Rolling { .. } => "l",
            });
            inv.arg(rule.limit);
            match &rule.counter {
                Counter::Fixed {
                    ttl_s,
                    refresh,
                    retry_ms,
                    ..
                } => inv
                    .arg(ttl_s)
                    .arg(if *refresh { "1" } else { "0" })
                    .arg(retry_ms.unwrap_or(-1)),
                Counter::Rolling {
                    ttl_s, horizon_ms, ..
                } => inv.arg(ttl_s).arg(horizon_ms).arg(0),
            };
        }
        inv.arg(self.windows.len());
        for w in self.windows {
            w.args(&mut inv);
        }
        inv
    }
}

/// New scores in one period: (real units, display units).
pub type PeriodScores = (i64, i64);

/// How a vote went.
#[derive(Debug, Clone, PartialEq)]
pub enum VoteReply {
    /// Counted; the member's new scores, one pair per target in order.
    Counted(Vec<PeriodScores>),
    /// The idempotency key was used before: the receipt and scores of the first answer.
    Replayed {
        receipt: String,
        scores: Vec<PeriodScores>,
    },
    /// The rule at this index of the call's rules refused the vote; nothing was counted.
    /// `retry_ms`: until that rule admits it, `None` for never.
    Limited {
        rule_index: usize,
        retry_ms: Option<i64>,
    },
    /// A score would pass 2^53 units; nothing was written.
    Overflow,
}

impl VoteReply {
    fn parse(value: &Value, targets: usize) -> Result<Self, RedisFailure> {
        let items = as_array(value).ok_or_else(|| reply_error("vote", value))?;
        let tag = items
            .first()
            .and_then(as_text)
            .ok_or_else(|| reply_error("vote", value))?;
        match tag.as_str() {
            "ok" => {
                let units = items[1..].iter().map(as_units).collect::<Option<Vec<_>>>();
                pairs(units, targets)
                    .map(Self::Counted)
                    .ok_or_else(|| reply_error("vote", value))
            }
            "dup" => {
                let stored = items
                    .get(1)
                    .and_then(as_text)
                    .ok_or_else(|| reply_error("vote", value))?;
                let (receipt, scores) = stored
                    .rsplit_once('|')
                    .ok_or_else(|| reply_error("vote", value))?;
                let units = scores
                    .split(',')
                    .map(parse_units)
                    .collect::<Option<Vec<_>>>();
                let scores = pairs(units, usize::MAX).ok_or_else(|| reply_error("vote", value))?;
                Ok(Self::Replayed {
                    receipt: receipt.to_owned(),
                    scores,
                })
            }
            "overflow" => Ok(Self::Overflow),
            "limited" => {
                let (Some(index), Some(retry)) =
                    (items.get(1).and_then(as_int), items.get(2).and_then(as_int))
                else {
                    return Err(reply_error("vote", value));
                };
                Ok(Self::Limited {
                    rule_index: usize::try_from(index).map_err(|_| reply_error("vote", value))?,
                    retry_ms: (retry >= 0).then_some(retry),
                })
            }
            _ => Err(reply_error("vote", value)),
        }
    }
}

fn pairs(units: Option<Vec<i64>>, expected: usize) -> Option<Vec<PeriodScores>> {
    let units = units?;
    if units.len() % 2 != 0 || (expected != usize::MAX && units.len() != expected * 2) {
        return None;
    }
    Some(units.chunks(2).map(|c| (c[0], c[1])).collect())
}

impl RedisStore {
    /// Casts votes, each atomically and independently, in one round trip. Each vote
    /// answers on its own, also when Redis refuses some of them; the whole call fails
    /// only when Redis did not answer, and then the votes may or may not have counted.
    pub async fn cast_votes(
        &self,
        calls: &[VoteCall<'_>],
    ) -> Result<Vec<Result<VoteReply, RedisFailure>>, RedisFailure> {
        let invocations: Vec<Invocation> = calls.iter().map(VoteCall::invocation).collect();
        let replies = self.run_script("vote", &VOTE, &invocations).await?;
        Ok(replies
            .into_iter()
            .zip(calls)
            .map(|(reply, c)| VoteReply::parse(&reply?, c.targets.len() + c.windows.len()))
            .collect())
    }
}
