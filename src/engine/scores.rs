//! Score writes on `scores` boards: a request is checked like a vote (board, member,
//! time, campaign window, rules), turned into one store write per item, and the writes of
//! a batch go to Redis together.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};

use super::error::EngineError;
use crate::domain::code::Code;
use crate::domain::idempotency::Idempotency;
use crate::domain::ids::{BoardSlug, Channel, MemberId, Terminal, VoterId};
use crate::domain::period::{Bucket, voter_buckets};
use crate::domain::scoring::{Op, parse_value, to_points};
use crate::engine::auth::Caller;
use crate::engine::config::{BoardConfig, ConfigCache};
use crate::engine::votes::{
    Admitted, Writer, admit, in_order, limited, metric_labels, outcome, outcome_unknown,
    replayed_labels, write_receipt,
};
use crate::metrics;
use crate::store::redis::{RedisStore, RuleCheck, ScoreCall, ScoreReply};

/// One score write, parsed.
#[derive(Debug, Clone)]
pub struct ScoreWrite {
    pub board: BoardSlug,
    pub member: MemberId,
    pub op: Op,
    /// As the client sent it; read with the board's decimals.
    pub value: serde_json::Number,
    pub voter: Option<VoterId>,
    pub channel: Option<Channel>,
    pub terminal: Option<Terminal>,
    pub idempotency: Option<Idempotency>,
    pub at: Option<DateTime<Utc>>,
    pub ip: Option<IpAddr>,
    pub skip_limits: bool,
}

/// The member's new scores after a write.
#[derive(Debug, Clone)]
pub struct ScoreWritten {
    pub board: String,
    pub member: String,
    /// True when this answer repeats the first one for the same idempotency key.
    pub replayed: bool,
    /// One entry per enabled period, shortest first.
    pub scores: Vec<BucketTotal>,
}

/// A member's score in one bucket.
#[derive(Debug, Clone)]
pub struct BucketTotal {
    pub period: String,
    pub bucket: String,
    pub score: serde_json::Number,
}

/// A write that passed every check, ready for Redis.
struct Prepared {
    board: Arc<BoardConfig>,
    write: ScoreWrite,
    buckets: Vec<Bucket>,
    /// The buckets whose distinct voters the write adds to.
    voters: Vec<Bucket>,
    units: i64,
    at: DateTime<Utc>,
    late: bool,
    rules: Vec<RuleCheck>,
}

/// Applies score writes; each is applied or refused on its own, answers in order.
pub async fn write(
    cache: &ConfigCache,
    redis: &RedisStore,
    idempotency_ttl: Duration,
    caller: &Caller,
    writes: Vec<Result<ScoreWrite, EngineError>>,
) -> Result<Vec<Result<ScoreWritten, EngineError>>, EngineError> {
    let now = Utc::now();
    let boards = metric_labels(
        cache,
        writes.iter().map(|w| w.as_ref().ok().map(|w| &w.board)),
    );
    let prepared: Vec<Result<Prepared, EngineError>> = writes
        .into_iter()
        .map(|w| prepare(cache, caller, w?, now))
        .collect();
    let ready: Vec<&Prepared> = prepared.iter().filter_map(|p| p.as_ref().ok()).collect();
    let receipts: Vec<String> = ready.iter().map(|p| receipt(p)).collect();
    let calls: Vec<ScoreCall<'_>> = ready
        .iter()
        .zip(&receipts)
        .map(|(p, receipt)| ScoreCall {
            board: &p.board.keys,
            buckets: &p.buckets,
            voters: &p.voters,
            member: p.write.member.as_str(),
            op: p.write.op,
            value: p.units,
            voter: p.write.voter.as_ref().map(VoterId::as_str),
            idempotency: p
                .write
                .idempotency
                .as_ref()
                .map(|i| (caller.id.as_str(), &i.key, idempotency_ttl)),
            receipt,
            hour: p.at.timestamp().div_euclid(3600),
            at_ms: p.at.timestamp_millis(),
            late: p.late,
            rules: &p.rules,
        })
        .collect();
    let replies = if calls.is_empty() {
        Vec::new()
    } else {
        redis.write_scores(&calls).await.map_err(outcome_unknown)?
    };
    let answers = in_order(prepared, replies, answer);
    for (board, answer) in boards.iter().zip(&answers) {
        metrics::vote(board, outcome(answer.as_ref().map(|r| r.replayed)));
    }
    Ok(answers)
}

fn prepare(
    cache: &ConfigCache,
    caller: &Caller,
    write: ScoreWrite,
    now: DateTime<Utc>,
) -> Result<Prepared, EngineError> {
    let writer = Writer {
        board: &write.board,
        member: &write.member,
        voter: write.voter.as_ref(),
        channel: write.channel.as_ref(),
        terminal: write.terminal.as_ref(),
        ip: write.ip,
        at: write.at,
        skip_limits: write.skip_limits,
    };
    let mut units = 0;
    let value = |board: &BoardConfig| {
        let s = &board.board.settings;
        units = parse_value(&write.value, s.scoring.decimals())?;
        if write.op == Op::Decr && s.storage.is_top_n() {
            return Err(lowering(&write.board));
        }
        Ok(1)
    };
    let Admitted {
        board,
        at,
        late,
        channel,
        rules,
    } = admit(cache, caller, &writer, true, value, now)?;
    let settings = &board.board.settings;
    let buckets = settings
        .periods
        .iter()
        .map(|&period| Bucket::containing(period, settings.timezone, at))
        .collect::<Result<_, _>>()?;
    let voters = voter_buckets(&settings.periods, settings.timezone, at)?;
    Ok(Prepared {
        write: ScoreWrite { channel, ..write },
        board,
        buckets,
        voters,
        units,
        at,
        late,
        rules,
    })
}

fn lowering(board: &BoardSlug) -> EngineError {
    EngineError::invalid(
        Code::OperatorNotAllowed,
        format!(
            "board {board} keeps only its top scores, so a score may not go down: use incr, \
             best, or set to a value at least the current score"
        ),
    )
}

fn receipt(p: &Prepared) -> String {
    let labels: Vec<(&str, &str)> = p
        .buckets
        .iter()
        .map(|b| (b.period.as_str(), b.label.as_str()))
        .collect();
    write_receipt(p.write.idempotency.as_ref(), &labels)
}

fn answer(p: &Prepared, reply: ScoreReply) -> Result<ScoreWritten, EngineError> {
    let (labels, scores, replayed): (Vec<(String, String)>, Vec<i64>, bool) = match reply {
        ScoreReply::Written(scores) => (
            p.buckets
                .iter()
                .map(|b| (b.period.to_string(), b.label.clone()))
                .collect(),
            scores,
            false,
        ),
        ScoreReply::Replayed { receipt, scores } => (
            replayed_labels(&receipt, p.write.idempotency.as_ref())?,
            scores,
            true,
        ),
        ScoreReply::Limited {
            rule_index,
            retry_ms,
        } => {
            return Err(limited(
                &p.board,
                &p.rules,
                rule_index,
                retry_ms,
                &p.write.member,
                p.at,
            ));
        }
        ScoreReply::Overflow => {
            return Err(EngineError::invalid(
                Code::ScoreOverflow,
                "this write would take a score past 2^53 units, the most a board holds exactly",
            ));
        }
        ScoreReply::Lowers => return Err(lowering(&p.write.board)),
    };
    let decimals = p.board.board.settings.scoring.decimals();
    Ok(ScoreWritten {
        board: p.write.board.to_string(),
        member: p.write.member.to_string(),
        replayed,
        scores: labels
            .into_iter()
            .zip(scores)
            .map(|((period, bucket), units)| BucketTotal {
                period,
                bucket,
                score: to_points(units, decimals),
            })
            .collect(),
    })
}
