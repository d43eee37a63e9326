//! Casting votes: a request is checked against the cached configuration, turned into one
//! `vote.lua` run per item, and the runs of a batch go to Redis in one pipeline.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};

use super::error::EngineError;
use crate::domain::auth::Scope;
use crate::domain::code::Code;
use crate::domain::idempotency::Idempotency;
use crate::domain::ids::{BoardSlug, Channel, MemberId, Terminal, VoterId};
use crate::domain::limit::{VoteValues, ip_subject};
use crate::domain::period::{Bucket, voter_buckets};
use crate::domain::retention::is_late;
use crate::domain::score::{Increment, View};
use crate::engine::auth::Caller;
use crate::engine::config::{BoardConfig, ConfigCache};
use crate::engine::limits;
use crate::metrics::{self, VoteOutcome};
use crate::store::redis::window::{WindowAt, WindowTarget};
use crate::store::redis::{
    Invocation, PeriodScores, RedisFailure, RedisStore, RuleCheck, VoteCall, VoteReply, VoteTarget,
};

/// How far ahead of the server's clock a backfilled `at` may be (clock skew).
const FUTURE_SLACK: chrono::Duration = chrono::Duration::minutes(5);

/// One vote, parsed.
#[derive(Debug, Clone)]
pub struct Vote {
    pub board: BoardSlug,
    pub member: MemberId,
    pub voter: Option<VoterId>,
    pub count: i64,
    pub channel: Option<Channel>,
    pub terminal: Option<Terminal>,
    /// The client's idempotency key with the request's fingerprint.
    pub idempotency: Option<Idempotency>,
    /// An explicit time (backfill scope); `None` means now.
    pub at: Option<DateTime<Utc>>,
    /// The end user's address: from the connection, a trusted proxy, or the API client.
    pub ip: Option<IpAddr>,
    /// Cast without rate-limit rules (backfill scope), for imports of history.
    pub skip_limits: bool,
}

/// The member's new scores after a vote.
#[derive(Debug, Clone)]
pub struct VoteCounted {
    pub board: String,
    pub member: String,
    /// True when this answer repeats the first one for the same idempotency key.
    pub replayed: bool,
    /// One entry per enabled period, shortest first.
    pub scores: Vec<PeriodTotals>,
}

/// A member's scores in one bucket.
#[derive(Debug, Clone)]
pub struct PeriodTotals {
    pub period: String,
    pub bucket: String,
    pub real: serde_json::Number,
    pub display: serde_json::Number,
}

/// A vote that passed every check, ready for Redis.
struct Prepared {
    board: Arc<BoardConfig>,
    vote: Vote,
    targets: Vec<VoteTarget>,
    /// The board's rolling windows, after its calendar periods in every answer.
    windows: Vec<WindowTarget>,
    increment: Increment,
    at: DateTime<Utc>,
    late: bool,
    rules: Vec<RuleCheck>,
    /// The buckets whose distinct voters the vote adds to.
    voters: Vec<Bucket>,
}

impl Prepared {
    /// (period, bucket) of every score the vote answers, in `vote.lua`'s order: the
    /// calendar periods' buckets, then the rolling windows (whose bucket is their name).
    fn labels(&self) -> Vec<(&str, &str)> {
        self.targets
            .iter()
            .map(|t| (t.current.period.as_str(), t.current.label.as_str()))
            .chain(
                self.board
                    .board
                    .settings
                    .periods
                    .iter()
                    .filter_map(|p| p.rolling())
                    .map(|w| (w.as_str(), w.as_str())),
            )
            .collect()
    }
}

/// Casts votes; each is applied or refused on its own, and the answers keep their order.
pub async fn cast(
    cache: &ConfigCache,
    redis: &RedisStore,
    idempotency_ttl: Duration,
    caller: &Caller,
    votes: Vec<Result<Vote, EngineError>>,
) -> Result<Vec<Result<VoteCounted, EngineError>>, EngineError> {
    let now = Utc::now();
    let boards = metric_labels(
        cache,
        votes.iter().map(|v| v.as_ref().ok().map(|v| &v.board)),
    );
    let prepared: Vec<Result<Prepared, EngineError>> = votes
        .into_iter()
        .map(|vote| prepare(cache, caller, vote?, now))
        .collect();
    let ready: Vec<&Prepared> = prepared.iter().filter_map(|p| p.as_ref().ok()).collect();
    let receipts: Vec<String> = ready.iter().map(|p| receipt(p)).collect();
    let calls: Vec<VoteCall<'_>> = ready
        .iter()
        .zip(&receipts)
        .map(|(p, receipt)| call(p, caller, receipt, idempotency_ttl))
        .collect();
    let replies = if calls.is_empty() {
        Vec::new()
    } else {
        redis.cast_votes(&calls).await.map_err(outcome_unknown)?
    };
    let answers = in_order(prepared, replies, answer);
    for (board, answer) in boards.iter().zip(&answers) {
        metrics::vote(board, outcome(answer.as_ref().map(|r| r.replayed)));
    }
    Ok(answers)
}

/// The board label of each write in the votes metric: boards that exist, anything else
/// `unknown`, so a client cannot make labels up.
pub(super) fn metric_labels<'a>(
    cache: &ConfigCache,
    boards: impl Iterator<Item = Option<&'a BoardSlug>>,
) -> Vec<String> {
    boards
        .map(|b| match b {
            Some(b) if cache.board(b).is_some() => b.to_string(),
            _ => "unknown".to_owned(),
        })
        .collect()
}

/// Redis did not answer: the writes may have been applied. The client retries with the
/// same idempotency keys and gets either the first answers or fresh ones.
pub(super) fn outcome_unknown(failure: RedisFailure) -> EngineError {
    match failure {
        RedisFailure::Unavailable(cause) => EngineError::OutcomeUnknown(cause),
        other => other.into(),
    }
}

/// The answers of a batch in the order of its requests: a request refused before Redis
/// keeps its error, each other one takes the next of Redis's replies (sent in order).
pub(super) fn in_order<P, R, T>(
    prepared: Vec<Result<P, EngineError>>,
    replies: Vec<Result<R, RedisFailure>>,
    answer: impl Fn(&P, R) -> Result<T, EngineError>,
) -> Vec<Result<T, EngineError>> {
    let mut replies = replies.into_iter();
    prepared
        .into_iter()
        .map(|p| {
            let p = p?;
            let reply = replies
                .next()
                .ok_or_else(|| anyhow::anyhow!("redis answered fewer writes than were sent"))?;
            answer(&p, reply?)
        })
        .collect()
}

/// How a write went, for the votes metric: `Ok(replayed)` or the refusal.
pub(super) fn outcome(answer: Result<bool, &EngineError>) -> VoteOutcome<'_> {
    match answer {
        Ok(true) => VoteOutcome::Replayed,
        Ok(false) => VoteOutcome::Accepted,
        Err(err) => VoteOutcome::Refused {
            code: err.code().as_str(),
            rule: match err {
                EngineError::RateLimited { rule, .. } => rule["name"].as_str(),
                _ => None,
            },
        },
    }
}

/// The Redis call of a prepared vote.
fn call<'a>(
    p: &'a Prepared,
    caller: &'a Caller,
    receipt: &'a str,
    idempotency_ttl: Duration,
) -> VoteCall<'a> {
    VoteCall {
        board: &p.board.keys,
        targets: &p.targets,
        member: p.vote.member.as_str(),
        increment: p.increment,
        voter: p.vote.voter.as_ref().map(VoterId::as_str),
        idempotency: p
            .vote
            .idempotency
            .as_ref()
            .map(|i| (caller.id.as_str(), &i.key, idempotency_ttl)),
        receipt,
        hour: p.at.timestamp().div_euclid(3600),
        at_ms: p.at.timestamp_millis(),
        late: p.late,
        rules: &p.rules,
        windows: &p.windows,
        voters: &p.voters,
    }
}

/// The `vote.lua` invocation `cast` would send for `vote` now: the benchmark replays
/// these straight at Redis to measure the ceiling the HTTP path is compared with.
pub fn invocation(
    cache: &ConfigCache,
    caller: &Caller,
    vote: Vote,
    idempotency_ttl: Duration,
) -> Result<Invocation, EngineError> {
    let prepared = prepare(cache, caller, vote, Utc::now())?;
    let receipt = receipt(&prepared);
    Ok(call(&prepared, caller, &receipt, idempotency_ttl).invocation())
}

/// Who writes what where, as every write (a vote or a score) is checked.
pub(super) struct Writer<'a> {
    pub board: &'a BoardSlug,
    pub member: &'a MemberId,
    pub voter: Option<&'a VoterId>,
    pub channel: Option<&'a Channel>,
    pub terminal: Option<&'a Terminal>,
    pub ip: Option<IpAddr>,
    pub at: Option<DateTime<Utc>>,
    pub skip_limits: bool,
}

/// A write that passed the checks every write passes.
pub(super) struct Admitted {
    pub board: Arc<BoardConfig>,
    pub at: DateTime<Utc>,
    /// Whether `at` had passed a while ago (`retention::is_late`).
    pub late: bool,
    /// The channel the write counts for: the key's, when it is bound to one.
    pub channel: Option<Channel>,
    pub rules: Vec<RuleCheck>,
}

/// Checks what every write checks: the board and its scoring (`scores` says which the
/// route writes), the member, the time (and the backfill scope for an explicit one), the
/// campaign window, and the rate-limit rules' values; answers the rules to pass with
/// `count` (or none when the write skips them).
pub(super) fn admit(
    cache: &ConfigCache,
    caller: &Caller,
    w: &Writer<'_>,
    scores: bool,
    count: impl FnOnce(&BoardConfig) -> Result<i64, EngineError>,
    now: DateTime<Utc>,
) -> Result<Admitted, EngineError> {
    caller.reach_board(w.board)?;
    let board = cache.board(w.board).ok_or_else(|| {
        EngineError::not_found(Code::BoardNotFound, format!("no board {}", w.board))
    })?;
    let settings = &board.board.settings;
    if settings.scoring.is_scores() != scores {
        return Err(EngineError::conflict(
            Code::WrongScoring,
            if scores {
                format!("board {} counts votes, not scores: send it votes", w.board)
            } else {
                format!(
                    "board {} keeps scores, not votes: write scores to it",
                    w.board
                )
            },
        ));
    }
    let count = count(&board)?;
    let member = board.members.get(w.member);
    match member {
        None if settings.membership == crate::domain::board::Membership::Closed => {
            return Err(EngineError::not_found(
                Code::MemberNotFound,
                format!("{} is not a member of board {}", w.member, w.board),
            ));
        }
        Some(m) if !m.enabled => {
            return Err(EngineError::conflict(
                Code::MemberDisabled,
                format!("{} does not accept votes", w.member),
            ));
        }
        _ => {}
    }
    let at = match w.at {
        Some(at) => {
            caller.require(Scope::Backfill)?;
            if at > now + FUTURE_SLACK {
                return Err(EngineError::invalid(
                    Code::InvalidTimestamp,
                    "at lies in the future",
                ));
            }
            at
        }
        None => now,
    };
    settings
        .window_admits(at)
        .map_err(|e| EngineError::conflict(e.code, e.message))?;

    // A key bound to a channel speaks for that channel, whatever the body says.
    let channel = caller.channel.clone().or_else(|| w.channel.cloned());
    let rules = if w.skip_limits {
        caller.require(Scope::Backfill)?;
        Vec::new()
    } else {
        let values = VoteValues {
            voter: w.voter.map(|v| v.to_string()),
            member: Some(w.member.to_string()),
            channel: channel.as_ref().map(|c| c.to_string()),
            terminal: w.terminal.map(|t| t.to_string()),
            ip: w.ip.map(ip_subject),
        };
        limits::checks(board.rule_scope(), &values, count, at, now)?
    };
    Ok(Admitted {
        board,
        at,
        late: is_late(at, now),
        channel,
        rules,
    })
}

fn prepare(
    cache: &ConfigCache,
    caller: &Caller,
    vote: Vote,
    now: DateTime<Utc>,
) -> Result<Prepared, EngineError> {
    let writer = Writer {
        board: &vote.board,
        member: &vote.member,
        voter: vote.voter.as_ref(),
        channel: vote.channel.as_ref(),
        terminal: vote.terminal.as_ref(),
        ip: vote.ip,
        at: vote.at,
        skip_limits: vote.skip_limits,
    };
    let count = |board: &BoardConfig| {
        let max = board.board.settings.max_count;
        if (1..=max).contains(&vote.count) {
            Ok(vote.count)
        } else {
            Err(EngineError::invalid(
                Code::InvalidCount,
                format!("count must be between 1 and {max} on this board"),
            ))
        }
    };
    let Admitted {
        board,
        at,
        late,
        channel,
        rules,
    } = admit(cache, caller, &writer, false, count, now)?;
    let vote = Vote { channel, ..vote };
    let settings = &board.board.settings;
    let multiplier = board
        .members
        .get(&vote.member)
        .and_then(|m| m.multiplier)
        .unwrap_or(settings.multiplier);
    let increment = Increment::of(vote.count, multiplier, settings.carry_over);
    let carries = increment.carry > 0;
    let tz = settings.timezone;
    let windows = settings
        .periods
        .iter()
        .filter_map(|p| p.rolling())
        .map(|window| WindowTarget {
            window: WindowAt::new(&board.keys, window, window.slot(tz, now)),
            at: window.slot(tz, at),
        })
        .collect();
    let targets = settings
        .periods
        .iter()
        .filter(|p| p.rolling().is_none())
        .map(|&period| {
            let current = Bucket::containing(period, settings.timezone, at)?;
            let next = if carries {
                current.next(settings.timezone)
            } else {
                None
            };
            Ok(VoteTarget { current, next })
        })
        .collect::<Result<_, EngineError>>()?;
    let voters = voter_buckets(&settings.periods, tz, at)?;
    Ok(Prepared {
        board,
        vote,
        targets,
        windows,
        increment,
        at,
        late,
        rules,
        voters,
    })
}

/// What is stored beside a vote's scores for idempotent replays.
fn receipt(p: &Prepared) -> String {
    write_receipt(p.vote.idempotency.as_ref(), &p.labels())
}

/// What is stored beside a write's scores for idempotent replays: the request's
/// fingerprint and the (period, bucket) labels, as `<fingerprint>|<labels JSON>`.
pub(super) fn write_receipt(idempotency: Option<&Idempotency>, labels: &[(&str, &str)]) -> String {
    let fingerprint = idempotency.map_or("", |i| i.fingerprint.as_str());
    format!(
        "{fingerprint}|{}",
        serde_json::to_string(labels).unwrap_or_default()
    )
}

/// The labels of a replayed answer, once the request is known to be the one that wrote
/// it: the same key with another request is a 422 `idempotency_key_reused`.
pub(super) fn replayed_labels(
    receipt: &str,
    idempotency: Option<&Idempotency>,
) -> Result<Vec<(String, String)>, EngineError> {
    let (fingerprint, labels) = receipt
        .split_once('|')
        .ok_or_else(|| anyhow::anyhow!("unreadable idempotency receipt {receipt:?}"))?;
    if Some(fingerprint) != idempotency.map(|i| i.fingerprint.as_str()) {
        return Err(EngineError::invalid(
            Code::IdempotencyKeyReused,
            "this idempotency key was used for a different request: send a new key for a \
             new write, or the first request unchanged to get its answer again",
        ));
    }
    Ok(serde_json::from_str(labels)
        .map_err(|e| anyhow::anyhow!("unreadable idempotency receipt {receipt:?}: {e}"))?)
}

/// The 429 of the rule at `rule_index` of a write's `rules`.
pub(super) fn limited(
    board: &BoardConfig,
    rules: &[RuleCheck],
    rule_index: usize,
    retry_ms: Option<i64>,
    member: &MemberId,
    at: DateTime<Utc>,
) -> EngineError {
    let found = rules.get(rule_index).and_then(|check| {
        let rule = board.rules.iter().find(|r| r.id == check.rule)?;
        Some((check, rule))
    });
    match found {
        Some((check, rule)) => limits::refusal(board, rule, check.limit, member, retry_ms, at),
        None => anyhow::anyhow!(
            "Redis named rule {rule_index} of {}, which the board no longer has",
            rules.len()
        )
        .into(),
    }
}

fn answer(p: &Prepared, reply: VoteReply) -> Result<VoteCounted, EngineError> {
    let (labels, scores, replayed): (Vec<(String, String)>, Vec<PeriodScores>, bool) = match reply {
        VoteReply::Counted(scores) => (
            p.labels()
                .into_iter()
                .map(|(period, bucket)| (period.to_owned(), bucket.to_owned()))
                .collect(),
            scores,
            false,
        ),
        VoteReply::Replayed { receipt, scores } => (
            replayed_labels(&receipt, p.vote.idempotency.as_ref())?,
            scores,
            true,
        ),
        VoteReply::Limited {
            rule_index,
            retry_ms,
        } => {
            return Err(limited(
                &p.board,
                &p.rules,
                rule_index,
                retry_ms,
                &p.vote.member,
                p.at,
            ));
        }
        VoteReply::Overflow => {
            return Err(EngineError::invalid(
                Code::ScoreOverflow,
                "this vote would take a score past 2^53 units, the most a board holds exactly",
            ));
        }
    };
    Ok(VoteCounted {
        board: p.vote.board.to_string(),
        member: p.vote.member.to_string(),
        replayed,
        scores: labels
            .into_iter()
            .zip(scores)
            .map(|((period, bucket), (real, display))| PeriodTotals {
                period,
                bucket,
                real: View::Real.to_votes(real),
                display: View::Display.to_votes(display),
            })
            .collect(),
    })
}
