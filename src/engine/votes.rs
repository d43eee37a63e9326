//! Casting votes: a request is checked against the cached configuration, turned into one
//! `vote.lua` run per item, and the runs of a batch go to Redis in one pipeline.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;

use crate::domain::auth::Scope;
use crate::domain::code::Code;
use crate::domain::idempotency::Idempotency;
use crate::domain::ids::{BoardSlug, Channel, MemberId, Terminal, VoterId};
use crate::domain::limit::{VoteValues, ip_subject};
use crate::domain::period::Bucket;
use crate::domain::score::{Increment, View};
use crate::engine::auth::Caller;
use crate::engine::config::{BoardConfig, ConfigCache};
use crate::engine::limits;
use crate::error::ApiError;
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
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct VoteResult {
    pub board: String,
    pub member: String,
    /// True when this answer repeats the first one for the same idempotency key.
    pub replayed: bool,
    /// One entry per enabled period, shortest first.
    pub scores: Vec<PeriodScore>,
}

/// A member's scores in one bucket.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PeriodScore {
    pub period: String,
    pub bucket: String,
    #[schema(value_type = f64)]
    pub real: serde_json::Number,
    #[schema(value_type = f64)]
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
    rules: Vec<RuleCheck>,
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
    votes: Vec<Result<Vote, ApiError>>,
) -> Result<Vec<Result<VoteResult, ApiError>>, ApiError> {
    let now = Utc::now();
    // Boards that exist label the votes metric; anything else is `unknown`, so a client
    // cannot make labels up.
    let boards: Vec<String> = votes
        .iter()
        .map(|v| match v {
            Ok(v) if cache.board(&v.board).is_some() => v.board.to_string(),
            _ => "unknown".to_owned(),
        })
        .collect();
    let prepared: Vec<Result<Prepared, ApiError>> = votes
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
    let mut replies = if calls.is_empty() {
        Vec::new()
    } else {
        // Redis did not answer: the votes may have counted. The client retries with the
        // same idempotency keys and gets either the first answers or fresh counts.
        redis.cast_votes(&calls).await.map_err(|e| match e {
            RedisFailure::Unavailable(cause) => ApiError::OutcomeUnknown(cause),
            other => other.into(),
        })?
    }
    .into_iter();

    let answers: Vec<Result<VoteResult, ApiError>> = prepared
        .into_iter()
        .map(|p| {
            let p = p?;
            let reply = replies
                .next()
                .ok_or_else(|| anyhow::anyhow!("redis answered fewer votes than were sent"))?;
            answer(&p, reply?)
        })
        .collect();
    for (board, answer) in boards.iter().zip(&answers) {
        metrics::vote(board, outcome(answer));
    }
    Ok(answers)
}

fn outcome(answer: &Result<VoteResult, ApiError>) -> VoteOutcome<'_> {
    match answer {
        Ok(result) if result.replayed => VoteOutcome::Replayed,
        Ok(_) => VoteOutcome::Accepted,
        Err(err) => VoteOutcome::Refused {
            code: err.code(),
            rule: match err {
                ApiError::RateLimited { rule, .. } => rule["name"].as_str(),
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
        rules: &p.rules,
        windows: &p.windows,
    }
}

/// The `vote.lua` invocation `cast` would send for `vote` now: the benchmark replays
/// these straight at Redis to measure the ceiling the HTTP path is compared with.
pub fn invocation(
    cache: &ConfigCache,
    caller: &Caller,
    vote: Vote,
    idempotency_ttl: Duration,
) -> Result<Invocation, ApiError> {
    let prepared = prepare(cache, caller, vote, Utc::now())?;
    let receipt = receipt(&prepared);
    Ok(call(&prepared, caller, &receipt, idempotency_ttl).invocation())
}

fn prepare(
    cache: &ConfigCache,
    caller: &Caller,
    vote: Vote,
    now: DateTime<Utc>,
) -> Result<Prepared, ApiError> {
    let board = cache.board(&vote.board).ok_or_else(|| {
        ApiError::not_found(Code::BoardNotFound, format!("no board {}", vote.board))
    })?;
    let settings = &board.board.settings;
    if !(1..=settings.max_count).contains(&vote.count) {
        return Err(ApiError::invalid(
            Code::InvalidCount,
            format!(
                "count must be between 1 and {} on this board",
                settings.max_count
            ),
        ));
    }
    let member = board.members.get(&vote.member);
    match member {
        None if settings.membership == crate::domain::board::Membership::Closed => {
            return Err(ApiError::not_found(
                Code::MemberNotFound,
                format!("{} is not a member of board {}", vote.member, vote.board),
            ));
        }
        Some(m) if !m.enabled => {
            return Err(ApiError::conflict(
                Code::MemberDisabled,
                format!("{} does not accept votes", vote.member),
            ));
        }
        _ => {}
    }
    let at = match vote.at {
        Some(at) => {
            caller.require(Scope::Backfill)?;
            if at > now + FUTURE_SLACK {
                return Err(ApiError::invalid(
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
        .map_err(|e| ApiError::conflict(e.code, e.message))?;

    // A key bound to a channel speaks for that channel, whatever the body says.
    let vote = Vote {
        channel: caller.channel.clone().or(vote.channel),
        ..vote
    };
    let rules = if vote.skip_limits {
        caller.require(Scope::Backfill)?;
        Vec::new()
    } else {
        let values = VoteValues {
            voter: vote.voter.as_ref().map(|v| v.to_string()),
            member: Some(vote.member.to_string()),
            channel: vote.channel.as_ref().map(|c| c.to_string()),
            terminal: vote.terminal.as_ref().map(|t| t.to_string()),
            ip: vote.ip.map(ip_subject),
        };
        limits::checks(&board, &values, vote.count, at, now)?
    };

    let multiplier = member
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
        .collect::<Result<_, ApiError>>()?;
    Ok(Prepared {
        board,
        vote,
        targets,
        windows,
        increment,
        at,
        rules,
    })
}

/// What is stored beside a vote's scores for idempotent replays: the request's
/// fingerprint and the bucket labels, as `<fingerprint>|<labels JSON>`.
fn receipt(p: &Prepared) -> String {
    let labels = p.labels();
    let fingerprint = p
        .vote
        .idempotency
        .as_ref()
        .map_or("", |i| i.fingerprint.as_str());
    format!(
        "{fingerprint}|{}",
        serde_json::to_string(&labels).unwrap_or_default()
    )
}

fn answer(p: &Prepared, reply: VoteReply) -> Result<VoteResult, ApiError> {
    let (labels, scores, replayed): (Vec<(String, String)>, Vec<PeriodScores>, bool) = match reply {
        VoteReply::Counted(scores) => (
            p.labels()
                .into_iter()
                .map(|(period, bucket)| (period.to_owned(), bucket.to_owned()))
                .collect(),
            scores,
            false,
        ),
        VoteReply::Replayed { receipt, scores } => {
            let (fingerprint, labels) = receipt
                .split_once('|')
                .ok_or_else(|| anyhow::anyhow!("unreadable idempotency receipt {receipt:?}"))?;
            if Some(fingerprint) != p.vote.idempotency.as_ref().map(|i| i.fingerprint.as_str()) {
                return Err(ApiError::invalid(
                    Code::IdempotencyKeyReused,
                    "this idempotency key was used for a different request: send a new key \
                     for a new vote, or the first request unchanged to get its answer again",
                ));
            }
            let labels = serde_json::from_str(labels)
                .map_err(|e| anyhow::anyhow!("unreadable idempotency receipt {receipt:?}: {e}"))?;
            (labels, scores, true)
        }
        VoteReply::Limited {
            rule_index,
            retry_ms,
        } => {
            let check = p.rules.get(rule_index).ok_or_else(|| {
                anyhow::anyhow!("vote.lua named rule {rule_index} of {}", p.rules.len())
            })?;
            let rule = p
                .board
                .rules
                .iter()
                .find(|r| r.id == check.rule)
                .ok_or_else(|| anyhow::anyhow!("rule {} left the board", check.rule))?;
            return Err(limits::refusal(
                &p.board,
                rule,
                check.limit,
                &p.vote.member,
                retry_ms,
                p.at,
            ));
        }
        VoteReply::Overflow => {
            return Err(ApiError::invalid(
                Code::ScoreOverflow,
                "this vote would take a score past 2^53 units, the most a board holds exactly",
            ));
        }
    };
    Ok(VoteResult {
        board: p.vote.board.to_string(),
        member: p.vote.member.to_string(),
        replayed,
        scores: labels
            .into_iter()
            .zip(scores)
            .map(|((period, bucket), (real, display))| PeriodScore {
                period,
                bucket,
                real: View::Real.to_votes(real),
                display: View::Display.to_votes(display),
            })
            .collect(),
    })
}
