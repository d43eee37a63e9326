//! Writing to boards, one path for votes and score writes: each write is checked against
//! the cached configuration (board and scoring, member, time, campaign window, the
//! rate-limit rules' values: [`admit`]), turned into its store call — a vote into
//! `vote.lua` (through group commit), a score write into `score.lua` — and the calls of a
//! batch go to Redis together. Each write is applied or refused on its own, and the
//! answers keep the order of the writes.

use std::net::IpAddr;

use chrono::{DateTime, Utc};

use super::auth::Caller;
use super::boards::{self, BoardRef};
use super::error::EngineError;
use super::limits;
use super::rooms::{self, RoomWrite};
use super::state::AppState;
use crate::domain::auth::Scope;
use crate::domain::board::{BoardSettings, Membership};
use crate::domain::code::Code;
use crate::domain::idempotency::Idempotency;
use crate::domain::identity::SignedIn;
use crate::domain::ids::{BoardName, Channel, MemberId, Terminal, VoterId};
use crate::domain::ledger::Entry;
use crate::domain::limit::{VoteValues, ip_subject};
use crate::domain::period::{Bucket, HalfLife, epoch_hour, voter_buckets};
use crate::domain::retention::is_late;
use crate::domain::score::{Increment, View};
use crate::domain::scoring::{Op, parse_value, to_points};
use crate::metrics::{self, WriteKind, WriteOutcome};
use crate::store::redis::window::WindowTarget;
use crate::store::redis::{
    Invocation, PeriodScores, RedisFailure, RuleCheck, ScoreCall, VoteCall, VoteTarget, WriteFacts,
    WriteReply,
};

/// How far ahead of the server's clock a backfilled `at` may be (clock skew).
const FUTURE_SLACK: chrono::Duration = chrono::Duration::minutes(5);

/// One write, parsed: who writes what on which board's member.
#[derive(Debug, Clone)]
pub struct Write {
    pub board: BoardName,
    pub member: MemberId,
    pub what: What,
    pub voter: Option<VoterId>,
    pub channel: Option<Channel>,
    pub terminal: Option<Terminal>,
    /// The client's idempotency key with the request's fingerprint.
    pub idempotency: Option<Idempotency>,
    /// An explicit time (backfill scope); `None` means now.
    pub at: Option<DateTime<Utc>>,
    /// The end user's address: from the connection, a trusted proxy, or the API client.
    pub ip: Option<IpAddr>,
    /// Written without rate-limit rules (backfill scope), for imports of history.
    pub skip_limits: bool,
    /// A held vote a review releases: the held ledger entry's id (see `engine::held`).
    pub releases: Option<i64>,
}

/// What a write does.
#[derive(Debug, Clone, PartialEq)]
pub enum What {
    /// `count` votes, on a `votes` board.
    Vote { count: i64 },
    /// An operator and a value as the client sent it (read with the board's decimals),
    /// on a `scores` board.
    Score { op: Op, value: serde_json::Number },
}

impl What {
    fn kind(&self) -> WriteKind {
        match self {
            Self::Vote { .. } => WriteKind::Vote,
            Self::Score { .. } => WriteKind::Score,
        }
    }
}

/// The member's new scores after a write.
#[derive(Debug, Clone)]
pub struct Written {
    pub board: String,
    pub member: String,
    /// True when this answer repeats the first one for the same idempotency key.
    pub replayed: bool,
    /// True when a watch held the vote for review and the board tells voters so
    /// (`tell_held`); the scores are then the member's as they stand.
    pub held: bool,
    /// One entry per period the board keeps: its calendar periods shortest first, then
    /// its rolling windows.
    pub scores: Vec<BucketTotals>,
}

/// A member's scores in one bucket: in both views (a `scores` board has one, which
/// both name).
#[derive(Debug, Clone)]
pub struct BucketTotals {
    pub period: String,
    pub bucket: String,
    pub real: serde_json::Number,
    pub display: serde_json::Number,
}

/// A write that passed every check, ready for Redis.
struct Prepared {
    board: BoardRef,
    write: Write,
    at: DateTime<Utc>,
    late: bool,
    rules: Vec<RuleCheck>,
    /// The buckets whose distinct voters the write adds to.
    voters: Vec<Bucket>,
    /// The board's trending periods: a write adds to each (answering none of them).
    trends: Vec<HalfLife>,
    targets: Targets,
}

/// Where a write lands, by kind.
enum Targets {
    Vote {
        targets: Vec<VoteTarget>,
        /// The board's rolling windows, after its calendar periods in every answer.
        windows: Vec<WindowTarget>,
        increment: Increment,
    },
    Score {
        buckets: Vec<Bucket>,
        /// The board's rolling windows, after its calendar periods in every answer.
        windows: Vec<WindowTarget>,
        op: Op,
        units: i64,
    },
}

impl Prepared {
    /// (period, bucket) of every score the write answers, in its script's order: its
    /// calendar periods' buckets, then its rolling windows (whose bucket is their name).
    fn labels(&self) -> Vec<(&str, &str)> {
        let calendar: Vec<&Bucket> = match &self.targets {
            Targets::Vote { targets, .. } => targets.iter().map(|t| &t.current).collect(),
            Targets::Score { buckets, .. } => buckets.iter().collect(),
        };
        calendar
            .into_iter()
            .map(|b| (b.period.as_str(), b.label.as_str()))
            .chain(
                self.board
                    .settings()
                    .periods
                    .iter()
                    .filter_map(|p| p.rolling())
                    .map(|w| (w.as_str(), w.as_str())),
            )
            .collect()
    }

    /// The write's ledger entry, encoded, when its board keeps a ledger; `recorded` is
    /// when it arrived.
    fn ledger_entry(&self, recorded: DateTime<Utc>) -> Option<String> {
        if !self.board.settings().ledger {
            return None;
        }
        let w = &self.write;
        let (count, op, value, display, carry) = match (&self.targets, &w.what) {
            (Targets::Vote { increment, .. }, What::Vote { count }) => {
                (*count, None, None, increment.display, increment.carry)
            }
            (Targets::Score { op, units, .. }, _) => (1, Some(*op), Some(*units), 0, 0),
            (Targets::Vote { .. }, What::Score { .. }) => return None,
        };
        let entry = Entry {
            id: rand::random(),
            at: self.at.timestamp_millis(),
            recorded: recorded.timestamp_millis(),
            member: w.member.to_string(),
            voter: w.voter.as_ref().map(ToString::to_string),
            channel: w.channel.as_ref().map(ToString::to_string),
            terminal: w.terminal.as_ref().map(ToString::to_string),
            count,
            op,
            value,
            display,
            carry,
            adjusts: None,
            // Kept where a held vote's review may show it.
            ip: (!self.board.config.watches.is_empty())
                .then(|| w.ip.map(|ip| ip.to_canonical().to_string()))
                .flatten(),
            held: None,
            releases: w.releases,
        };
        Some(entry.encode())
    }

    /// What is stored beside the write's scores for idempotent replays: the request's
    /// fingerprint and the (period, bucket) labels, as `<fingerprint>|<labels JSON>`.
    fn receipt(&self) -> String {
        let fingerprint = self
            .write
            .idempotency
            .as_ref()
            .map_or("", |i| i.fingerprint.as_str());
        format!(
            "{fingerprint}|{}",
            serde_json::to_string(&self.labels()).unwrap_or_default()
        )
    }
}

/// The store call of a prepared write.
enum Call<'a> {
    Vote(VoteCall<'a>),
    Score(ScoreCall<'a>),
}

fn call<'a>(
    p: &'a Prepared,
    caller: &'a Caller,
    receipt: &'a str,
    ledger: Option<&'a str>,
    state: &AppState,
) -> Call<'a> {
    let write = WriteFacts {
        member: p.write.member.as_str(),
        voter: p.write.voter.as_ref().map(VoterId::as_str),
        idempotency: p
            .write
            .idempotency
            .as_ref()
            .map(|i| (caller.id.as_str(), &i.key, state.settings.idempotency_ttl)),
        receipt,
        hour: epoch_hour(p.at),
        at_ms: p.at.timestamp_millis(),
        late: p.late,
        rules: &p.rules,
        voters: &p.voters,
        ledger,
    };
    match &p.targets {
        Targets::Vote {
            targets,
            windows,
            increment,
        } => Call::Vote(VoteCall {
            board: &p.board.keys,
            targets,
            increment: *increment,
            write,
            windows,
            trends: &p.trends,
        }),
        Targets::Score {
            buckets,
            windows,
            op,
            units,
        } => Call::Score(ScoreCall {
            board: &p.board.keys,
            buckets,
            op: *op,
            value: *units,
            write,
            windows,
            trends: &p.trends,
        }),
    }
}

/// Applies writes; each is applied or refused on its own, and the answers keep their
/// order. Redis not answering at all is the one error of the whole call. `kind` is what
/// the request writes, counted for items that could not be read.
pub async fn apply(
    state: &AppState,
    caller: &Caller,
    kind: WriteKind,
    writes: Vec<Result<Write, EngineError>>,
) -> Result<Vec<Result<Written, EngineError>>, EngineError> {
    let now = Utc::now();
    let labels: Vec<(WriteKind, String)> = writes
        .iter()
        .map(|w| match w {
            Ok(w) => (w.what.kind(), board_label(state, &w.board)),
            Err(_) => (kind, "unknown".to_owned()),
        })
        .collect();
    let mut prepared: Vec<Result<Prepared, EngineError>> = writes
        .into_iter()
        .map(|w| prepare(state, caller, w?, now))
        .collect();
    // A write that would open a family's room passes the family's budget first.
    let rooms: Vec<RoomWrite<'_>> = prepared
        .iter()
        .enumerate()
        .filter_map(|(index, p)| {
            let p = p.as_ref().ok()?;
            p.board.instance.as_ref()?;
            Some(RoomWrite {
                index,
                board: &p.board,
                member: &p.write.member,
                ip: p.write.ip,
                skip_limits: p.write.skip_limits,
            })
        })
        .collect();
    let (opened, refused) = rooms::open(state, caller, &rooms, now).await?;
    drop(rooms);
    for (index, why) in refused {
        prepared[index] = Err(why);
    }
    let ready: Vec<&Prepared> = prepared.iter().filter_map(|p| p.as_ref().ok()).collect();
    let receipts: Vec<String> = ready.iter().map(|p| p.receipt()).collect();
    let entries: Vec<Option<String>> = ready.iter().map(|p| p.ledger_entry(now)).collect();
    let (mut votes, mut scores) = (Vec::new(), Vec::new());
    for ((p, receipt), entry) in ready.iter().zip(&receipts).zip(&entries) {
        match call(p, caller, receipt, entry.as_deref(), state) {
            Call::Vote(c) => votes.push(c),
            Call::Score(c) => scores.push(c),
        }
    }
    let (vote_replies, score_replies) = tokio::join!(
        async {
            if votes.is_empty() {
                Ok(Vec::new())
            } else {
                state.redis.cast_votes(&votes).await
            }
        },
        async {
            if scores.is_empty() {
                Ok(Vec::new())
            } else {
                state.redis.write_scores(&scores).await
            }
        },
    );
    let (mut vote_replies, mut score_replies) = (
        vote_replies.map_err(outcome_unknown)?.into_iter(),
        score_replies.map_err(outcome_unknown)?.into_iter(),
    );
    let fewer = || {
        EngineError::from(anyhow::anyhow!(
            "redis answered fewer writes than were sent"
        ))
    };
    // Family instances, which the family's listing notes once they are written (and the
    // drain, when they appended ledger entries).
    let instances: Vec<Option<(BoardRef, bool)>> = prepared
        .iter()
        .map(|p| {
            p.as_ref()
                .ok()
                .filter(|p| p.board.instance.is_some())
                .map(|p| (p.board.clone(), p.board.settings().ledger))
        })
        .collect();
    let answers: Vec<Result<Written, EngineError>> = prepared
        .into_iter()
        .map(|p| {
            let p = p?;
            match p.targets {
                Targets::Vote { .. } => {
                    answer(&p, vote_replies.next().ok_or_else(fewer)??, vote_totals)
                }
                Targets::Score { .. } => {
                    let decimals = p.board.settings().scoring.decimals();
                    answer(&p, score_replies.next().ok_or_else(fewer)??, |units| {
                        let points = to_points(units, decimals);
                        (points.clone(), points)
                    })
                }
            }
        })
        .collect();
    for ((kind, board), answer) in labels.iter().zip(&answers) {
        metrics::write(*kind, board, outcome(answer.as_ref().map(|r| r.replayed)));
    }
    // A room opened for writes that were all refused is taken back: it opens nothing.
    opened.settle(state, |i| answers[i].is_err()).await;
    let written: Vec<(BoardRef, bool)> = instances
        .into_iter()
        .zip(&answers)
        .filter_map(|(board, answer)| board.filter(|_| answer.as_ref().is_ok_and(|w| !w.replayed)))
        .collect();
    boards::note_written(state, &written, now).await;
    Ok(answers)
}

/// The board label of a write in the writes metric: a board that exists (a family for
/// its instances, so labels stay few), else `unknown`, so a client cannot make labels up.
fn board_label(state: &AppState, board: &BoardName) -> String {
    if state.config.board(&board.slug).is_some() {
        board.slug.to_string()
    } else {
        "unknown".to_owned()
    }
}

/// The `vote.lua` invocation `apply` would send for `write` (a vote) now: the benchmark
/// replays these straight at Redis to measure the ceiling the HTTP path is compared
/// with.
pub fn vote_invocation(
    state: &AppState,
    caller: &Caller,
    write: Write,
) -> Result<Invocation, EngineError> {
    let prepared = prepare(state, caller, write, Utc::now())?;
    let receipt = prepared.receipt();
    let entry = prepared.ledger_entry(Utc::now());
    match call(&prepared, caller, &receipt, entry.as_deref(), state) {
        Call::Vote(vote) => Ok(vote.invocation()),
        Call::Score(_) => Err(anyhow::anyhow!("a score write has no vote.lua invocation").into()),
    }
}

/// Redis did not answer: the writes may have been applied. The client retries with the
/// same idempotency keys and gets either the first answers or fresh ones.
pub(super) fn outcome_unknown(failure: RedisFailure) -> EngineError {
    match failure {
        RedisFailure::Unavailable(cause) => EngineError::OutcomeUnknown(cause),
        other => other.into(),
    }
}

/// How a write went, for the writes metric: `Ok(replayed)` or the refusal.
pub(super) fn outcome(answer: Result<bool, &EngineError>) -> WriteOutcome<'_> {
    match answer {
        Ok(true) => WriteOutcome::Replayed,
        Ok(false) => WriteOutcome::Accepted,
        Err(err) => WriteOutcome::Refused {
            code: err.code().as_str(),
            rule: match err {
                EngineError::RateLimited { rule, .. } => rule["name"].as_str(),
                _ => None,
            },
        },
    }
}

/// Checks what every write checks — the board and its scoring (a vote needs a `votes`
/// board, a score write a `scores` one), the member, the time (and the backfill scope
/// for an explicit one), the campaign window, the rate-limit rules' values — then works
/// out where the write lands.
fn prepare(
    state: &AppState,
    caller: &Caller,
    write: Write,
    now: DateTime<Utc>,
) -> Result<Prepared, EngineError> {
    caller.reach_board(&write.board.slug)?;
    let board = boards::find(state, &write.board)?;
    let settings = board.settings();
    let write = match &caller.signed_in {
        Some(signed_in) => signed_in_write(settings, signed_in, write)?,
        None => write,
    };
    let (count, units) = amounts(settings, &write)?;
    match board.config.members.get(&write.member) {
        None if settings.membership == Membership::Closed => {
            return Err(EngineError::not_found(
                Code::MemberNotFound,
                format!("{} is not a member of board {}", write.member, write.board),
            ));
        }
        Some(m) if !m.enabled => {
            return Err(EngineError::conflict(
                Code::MemberDisabled,
                format!("{} does not accept votes", write.member),
            ));
        }
        _ => {}
    }
    let at = match write.at {
        Some(at) => {
            // A board with a late grace takes a time that recent from any writer.
            let grace = chrono::Duration::seconds(settings.late_grace_s);
            if settings.late_grace_s == 0 || at < now - grace {
                caller.require(Scope::Backfill)?;
            }
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
    let write = Write {
        channel: caller.channel.clone().or(write.channel),
        ..write
    };
    let rules = if write.skip_limits {
        caller.require(Scope::Backfill)?;
        Vec::new()
    } else {
        let values = VoteValues {
            voter: write.voter.as_ref().map(ToString::to_string),
            member: Some(write.member.to_string()),
            channel: write.channel.as_ref().map(ToString::to_string),
            terminal: write.terminal.as_ref().map(ToString::to_string),
            ip: write.ip.map(ip_subject),
            creator: None,
        };
        let scope = board.rule_scope();
        let mut checks = limits::checks(scope, &values, count, at, now)?;
        let watches = &board.config.watches;
        checks.extend(limits::watch_checks(
            scope, watches, &values, write.ip, at, now,
        )?);
        checks
    };
    let targets = targets(&board, &write, units, at, now)?;
    let voters = voter_buckets(&settings.periods, settings.timezone, at)?;
    let trends = settings
        .periods
        .iter()
        .filter_map(|p| p.trending())
        .collect();
    Ok(Prepared {
        // An instance is never archived: it has no closed bucket to archive again.
        late: board.archived() && is_late(at, now),
        board,
        write,
        at,
        rules,
        voters,
        trends,
        targets,
    })
}

/// A signed-in voter's write: a vote, on a board that accepts the voter's provider, by
/// the token's voter (a body naming another voter is refused), with the token's terminal
/// when its provider reads one.
fn signed_in_write(
    settings: &BoardSettings,
    signed_in: &SignedIn,
    write: Write,
) -> Result<Write, EngineError> {
    if !matches!(write.what, What::Vote { .. }) {
        return Err(EngineError::forbidden(
            Code::Forbidden,
            "a voter's token casts votes; score writes need an API key",
        ));
    }
    if !settings.providers.contains(&signed_in.provider) {
        return Err(EngineError::forbidden(
            Code::ProviderNotAccepted,
            format!(
                "board {} does not accept tokens of identity provider {}",
                write.board, signed_in.provider
            ),
        ));
    }
    if let Some(voter) = &write.voter
        && voter != &signed_in.voter
    {
        return Err(EngineError::forbidden(
            Code::VoterMismatch,
            format!(
                "voter {voter:?} is not the signed-in voter; leave voter out, the token names it"
            ),
        ));
    }
    Ok(Write {
        voter: Some(signed_in.voter.clone()),
        terminal: signed_in.terminal.clone().or(write.terminal),
        ..write
    })
}

/// What a write counts against each rule (its votes, or 1 for a score write) and the
/// units a score write carries (0 for a vote), refusing a write the board does not take:
/// votes on a scores board or scores on a votes board, a count past the board's maximum,
/// a score that cannot be read or that lowers a `top_n` board's.
fn amounts(settings: &BoardSettings, write: &Write) -> Result<(i64, i64), EngineError> {
    let scores = matches!(write.what, What::Score { .. });
    if settings.scoring.is_scores() != scores {
        return Err(EngineError::conflict(
            Code::WrongScoring,
            if scores {
                format!(
                    "board {} counts votes, not scores: send it votes",
                    write.board
                )
            } else {
                format!(
                    "board {} keeps scores, not votes: write scores to it",
                    write.board
                )
            },
        ));
    }
    match &write.what {
        What::Vote { count } => {
            let max = settings.max_count;
            if !(1..=max).contains(count) {
                return Err(EngineError::invalid(
                    Code::InvalidCount,
                    format!("count must be between 1 and {max} on this board"),
                ));
            }
            Ok((*count, 0))
        }
        What::Score { op, value } => {
            let units = parse_value(value, settings.scoring.decimals())?;
            if *op == Op::Decr && settings.storage.is_top_n() {
                return Err(lowering(&write.board));
            }
            Ok((1, units))
        }
    }
}

/// Where a write at `at` lands: a vote's bucket per period (and the next, when it carries
/// over) and its rolling windows; a score write's bucket per period.
fn targets(
    board: &BoardRef,
    write: &Write,
    units: i64,
    at: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<Targets, EngineError> {
    let settings = board.settings();
    let tz = settings.timezone;
    let windows = || {
        settings
            .periods
            .iter()
            .filter_map(|p| p.rolling())
            .map(|window| WindowTarget::new(&board.keys, window, tz, now, at))
            .collect()
    };
    let calendar = || settings.periods.iter().filter(|p| p.is_bucketed());
    Ok(match &write.what {
        What::Vote { count } => {
            let multiplier = board
                .config
                .members
                .get(&write.member)
                .and_then(|m| m.multiplier)
                .unwrap_or(settings.multiplier);
            let increment = Increment::of(*count, multiplier, settings.carry_over);
            let carries = increment.carry > 0;
            let targets = calendar()
                .map(|&period| {
                    let current = Bucket::containing(period, tz, at)?;
                    let next = if carries { current.next(tz) } else { None };
                    Ok(VoteTarget { current, next })
                })
                .collect::<Result<_, EngineError>>()?;
            Targets::Vote {
                targets,
                windows: windows(),
                increment,
            }
        }
        What::Score { op, .. } => {
            if matches!(op, Op::Set | Op::Best) && settings.periods.iter().any(|p| !p.is_bucketed())
            {
                return Err(EngineError::invalid(
                    Code::OperatorNotAllowed,
                    format!(
                        "board {} keeps rolling windows or trending periods, which add up the \
                         writes within them: use incr or decr",
                        board.config.board.slug
                    ),
                ));
            }
            Targets::Score {
                buckets: calendar()
                    .map(|&period| Bucket::containing(period, tz, at))
                    .collect::<Result<_, _>>()?,
                windows: windows(),
                op: *op,
                units,
            }
        }
    })
}

fn lowering(board: &BoardName) -> EngineError {
    EngineError::invalid(
        Code::OperatorNotAllowed,
        format!(
            "board {board} keeps only its top scores, so a score may not go down: use incr, \
             best, or set to a value at least the current score"
        ),
    )
}

/// The labels of a replayed answer, once the request is known to be the one that wrote
/// it: the same key with another request is a 422 `idempotency_key_reused`.
fn replayed_labels(
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

/// The 429 of the rule at `rule_index` of a write's rules.
fn limited(p: &Prepared, rule_index: usize, retry_ms: Option<i64>) -> EngineError {
    let found = p.rules.get(rule_index).and_then(|check| {
        let rule = p.board.config.rules.iter().find(|r| r.id == check.rule)?;
        Some((check, rule))
    });
    match found {
        Some((check, rule)) => limits::refusal(
            &p.board.config,
            rule,
            check.limit,
            &p.write.member,
            retry_ms,
            p.at,
        ),
        None => anyhow::anyhow!(
            "Redis named rule {rule_index} of {}, which the board no longer has",
            p.rules.len()
        )
        .into(),
    }
}

fn overflow() -> EngineError {
    EngineError::invalid(
        Code::ScoreOverflow,
        "this write would take a score past 2^53 units, the most a board holds exactly (a sharded votes board's shard: 2^53 / shards)",
    )
}

/// The answer's labels: this write's, or those the first answer recorded.
fn labels_of(p: &Prepared, replayed: Option<&str>) -> Result<Vec<(String, String)>, EngineError> {
    match replayed {
        Some(receipt) => replayed_labels(receipt, p.write.idempotency.as_ref()),
        None => Ok(p
            .labels()
            .into_iter()
            .map(|(period, bucket)| (period.to_owned(), bucket.to_owned()))
            .collect()),
    }
}

/// A write's answer from its script's reply: `totals` turns one bucket's scores into the
/// bucket's real and display totals.
fn answer<S>(
    p: &Prepared,
    reply: WriteReply<S>,
    totals: impl Fn(S) -> (serde_json::Number, serde_json::Number),
) -> Result<Written, EngineError> {
    let (receipt, scores, held) = match reply {
        WriteReply::Written(scores) => (None, scores, false),
        // A held vote answers as an accepted one, with the scores as they stand.
        WriteReply::Held {
            watch,
            flags,
            scores,
        } => {
            let votes = match p.write.what {
                What::Vote { count } => count,
                What::Score { .. } => 1,
            };
            metrics::held(p.write.board.slug.as_str(), watch, votes, flags);
            (None, scores, true)
        }
        WriteReply::Replayed {
            receipt,
            scores,
            held,
        } => (Some(receipt), scores, held),
        WriteReply::Limited {
            rule_index,
            retry_ms,
        } => return Err(limited(p, rule_index, retry_ms)),
        WriteReply::Overflow => return Err(overflow()),
        WriteReply::Lowers => return Err(lowering(&p.write.board)),
    };
    let labels = labels_of(p, receipt.as_deref())?;
    Ok(Written {
        board: p.write.board.to_string(),
        member: p.write.member.to_string(),
        replayed: receipt.is_some(),
        held: held && p.board.settings().tell_held,
        scores: labels
            .into_iter()
            .zip(scores.into_iter().map(totals))
            .map(|((period, bucket), (real, display))| BucketTotals {
                period,
                bucket,
                real,
                display,
            })
            .collect(),
    })
}

fn vote_totals((real, display): PeriodScores) -> (serde_json::Number, serde_json::Number) {
    (View::Real.to_votes(real), View::Display.to_votes(display))
}
