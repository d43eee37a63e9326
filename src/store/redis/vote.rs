//! `vote.lua`: a vote's keys and arguments in the order the script takes them, and its
//! reply.

use redis::{Script, ToRedisArgs, Value};
use std::sync::LazyLock;

use super::keys::BoardKeys;
use super::rules::{self, Counter};
use super::window::WindowTarget;
use super::write::{WriteFacts, WriteReply};
use super::{Invocation, RedisFailure, RedisStore, ScriptArgs};
use crate::domain::period::Bucket;
use crate::domain::score::{Increment, MAX_UNITS, View};

/// `vote.lua` with the libraries it uses in front (the benchmark loads it into a second
/// Redis to compare versions).
pub const VOTE_SOURCE: &str = concat!(
    include_str!("window.lua"),
    include_str!("rules.lua"),
    include_str!("instance.lua"),
    include_str!("vote.lua")
);

static VOTE: LazyLock<Script> = LazyLock::new(|| Script::new(VOTE_SOURCE));

/// How many ARGV end each vote of a `vote.lua` call (after its header's number and its
/// rules' fields): a call of one vote ends with them.
pub const VOTE_ARGS: usize = 10;

/// Where among those last ARGV `vote.lua` takes the voter (1-based; see the script's
/// header). The benchmark rewrites it in captured calls.
pub const VOTER_ARG: usize = 5;

/// Where among them `vote.lua` takes the ledger entry: the benchmark gives each replay of
/// a captured call an entry id of its own.
pub const LEDGER_ARG: usize = 10;

/// KEYS and ARGV of one part of a `vote.lua` call.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Part {
    keys: Vec<Vec<u8>>,
    args: Vec<Vec<u8>>,
}

impl ScriptArgs for Part {
    fn key<T: ToRedisArgs>(&mut self, key: T) -> &mut Self {
        self.keys.extend(key.to_redis_args());
        self
    }

    fn arg<T: ToRedisArgs>(&mut self, arg: T) -> &mut Self {
        self.args.extend(arg.to_redis_args());
        self
    }
}

/// One vote's part of a `vote.lua` call: what it shares with the call's other votes of
/// the same board, moment and rules (its header), and its own facts.
#[derive(Debug, Default)]
pub struct Segment {
    header: Part,
    own: Part,
}

/// A whole `vote.lua` call.
#[derive(Debug, Default)]
pub(super) struct Call {
    keys: Vec<Vec<u8>>,
    args: Vec<Vec<u8>>,
}

impl Call {
    /// The call that applies `votes` in order: each distinct header once, then each
    /// vote's own ARGV led by its header's number; the votes' own KEYS, then the
    /// headers'.
    pub(super) fn of(votes: &[&Segment]) -> Call {
        let mut headers: Vec<&Part> = Vec::new();
        let mut which = Vec::with_capacity(votes.len());
        for vote in votes {
            let at = match headers.iter().position(|h| **h == vote.header) {
                Some(at) => at,
                None => {
                    headers.push(&vote.header);
                    headers.len() - 1
                }
            };
            which.push(at + 1);
        }
        let mut call = Call::default();
        let own_keys: usize = votes.iter().map(|v| v.own.keys.len()).sum();
        call.arg(headers.len()).arg(votes.len()).arg(own_keys);
        for header in &headers {
            call.arg(header.keys.len()).arg(header.args.len());
            call.args.extend(header.args.iter().cloned());
        }
        for (vote, header) in votes.iter().zip(which) {
            call.arg(header);
            call.args.extend(vote.own.args.iter().cloned());
            call.keys.extend(vote.own.keys.iter().cloned());
        }
        for header in &headers {
            call.keys.extend(header.keys.iter().cloned());
        }
        call
    }

    fn arg<T: ToRedisArgs>(&mut self, arg: T) -> &mut Self {
        self.args.extend(arg.to_redis_args());
        self
    }

    /// This call as an EVALSHA, or as an EVAL that carries the script (which Redis runs
    /// even when its script cache was just flushed).
    pub(super) fn command(&self, eval: bool) -> redis::Cmd {
        let mut cmd = if eval {
            let mut cmd = redis::cmd("EVAL");
            cmd.arg(VOTE_SOURCE);
            cmd
        } else {
            let mut cmd = redis::cmd("EVALSHA");
            cmd.arg(VOTE.get_hash());
            cmd
        };
        cmd.arg(self.keys.len()).arg(&self.keys).arg(&self.args);
        cmd
    }
}

/// A captured call of one vote (EVALSHA, sha, numkeys, KEYS, ARGV, as the server sent
/// it) made into a call of `times` copies of that vote under its one header: the
/// benchmark measures what group commit saves Redis per vote with it.
pub fn repeated_call(call: &[String], times: usize) -> Vec<String> {
    let number = |s: &String| s.parse::<usize>().unwrap_or(0);
    let keys = number(&call[2]);
    let (all_keys, argv) = (&call[3..3 + keys], &call[3 + keys..]);
    // ARGV: 1, 1, the vote's keys, the header's keys and arguments, the arguments, then
    // the vote's own.
    let own = number(&argv[2]);
    let (own_keys, header_keys) = all_keys.split_at(own);
    let (header, vote) = argv[3..].split_at(2 + number(&argv[4]));
    let mut out = vec![
        call[0].clone(),
        call[1].clone(),
        (own * times + header_keys.len()).to_string(),
    ];
    for _ in 0..times {
        out.extend_from_slice(own_keys);
    }
    out.extend_from_slice(header_keys);
    out.extend(["1".to_owned(), times.to_string(), (own * times).to_string()]);
    out.extend_from_slice(header);
    for _ in 0..times {
        out.extend_from_slice(vote);
    }
    out
}

/// How long a refusals hash outlives its hour: the dashboard shows the last 48 hours, and
/// a week more leaves room to look back.
pub const REFUSALS_TTL_S: i64 = 8 * 86_400;

/// How long a refusals hash of `board` lives: [`REFUSALS_TTL_S`], or a family instance's
/// TTL when that is shorter (a refused write is a write the instance's keys expire after).
pub(super) fn refusals_ttl_s(board: &BoardKeys) -> i64 {
    match board.ttl_ms() {
        0 => REFUSALS_TTL_S,
        ttl => REFUSALS_TTL_S.min((ttl + 999) / 1000),
    }
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
    pub increment: Increment,
    pub write: WriteFacts<'a>,
    /// The rolling windows the vote counts in.
    pub windows: &'a [WindowTarget],
}

impl VoteCall<'_> {
    /// This vote alone as a call (the benchmark replays such calls straight at Redis).
    pub fn invocation(&self) -> Invocation {
        let call = Call::of(&[&self.segment()]);
        let mut inv = VOTE.prepare_invoke();
        for key in &call.keys {
            inv.key(key.as_slice());
        }
        for arg in &call.args {
            inv.arg(arg.as_slice());
        }
        inv
    }

    /// This vote's KEYS and ARGV: its header's and its own.
    pub(super) fn segment(&self) -> Segment {
        let w = &self.write;
        let (idem_key, idem_ttl) = w.idempotency_record(self.board, true);
        let mut header = Part::default();
        header
            .key(self.board.votes_per_hour())
            .key(self.board.refusals(w.hour))
            .key(self.board.late_writes())
            .key(self.board.headroom());
        for t in self.targets {
            let next = t.next.as_ref().unwrap_or(&t.current);
            header
                .key(self.board.scores(View::Real, &t.current))
                .key(self.board.scores(View::Display, &t.current))
                .key(self.board.scores(View::Display, next));
        }
        for bucket in w.voters {
            header.key(self.board.participants(bucket));
        }
        header.key(self.board.ledger());
        for w in self.windows {
            for key in &w.window.keys {
                header.key(key);
            }
        }
        let periods: String = self
            .targets
            .iter()
            .map(|t| match t.next {
                _ if !t.current.period.is_periodic() => 'a',
                Some(_) => '1',
                None => '0',
            })
            .collect();
        header
            .arg(self.targets.len())
            .arg(w.voters.len())
            .arg(w.rules.len())
            .arg(self.windows.len())
            .arg(MAX_UNITS)
            .arg(w.hour)
            .arg(refusals_ttl_s(self.board))
            .arg(if w.late { "1" } else { "0" })
            .arg(periods)
            .arg(self.board.ttl_ms());
        rules::push_args(w.rules, w.at_ms, &mut header);
        for w in self.windows {
            w.args(&mut header);
        }

        let mut own = Part::default();
        own.key(idem_key);
        for bucket in w.voters {
            own.key(self.board.member_participants(bucket, w.member));
        }
        rules::push_keys(w.rules, self.board, &mut own);
        // Only a rolling rule's log names the vote's entries.
        let tag = if w
            .rules
            .iter()
            .any(|r| matches!(r.counter, Counter::Rolling { .. }))
        {
            format!("{:016x}", rand::random::<u64>())
        } else {
            String::new()
        };
        rules::push_fields(w.rules, &mut own);
        own.arg(w.member)
            .arg(self.increment.real)
            .arg(self.increment.display)
            .arg(self.increment.carry)
            .arg(w.voter.unwrap_or(""))
            .arg(idem_ttl)
            .arg(if w.idempotency.is_some() {
                w.receipt
            } else {
                ""
            })
            .arg(w.at_ms)
            .arg(tag)
            .arg(w.ledger.unwrap_or(""));
        Segment { header, own }
    }
}

/// New scores in one period: (real units, display units).
pub type PeriodScores = (i64, i64);

/// How a vote went: its new scores are one pair per target (then per rolling window).
pub type VoteReply = WriteReply<PeriodScores>;

/// Reads a vote's reply: `targets` pairs of scores (a replay's may be fewer or more: the
/// board's periods may have changed since).
fn vote_reply(value: &Value, targets: usize) -> Result<VoteReply, RedisFailure> {
    WriteReply::parse(
        "vote",
        value,
        |units, replayed| pairs(Some(units), if replayed { usize::MAX } else { targets }),
        Some,
    )
}

fn pairs(units: Option<Vec<i64>>, expected: usize) -> Option<Vec<PeriodScores>> {
    let units = units?;
    if units.len() % 2 != 0 || (expected != usize::MAX && units.len() != expected * 2) {
        return None;
    }
    Some(units.chunks(2).map(|c| (c[0], c[1])).collect())
}

impl RedisStore {
    /// Casts votes, each atomically and independently, in order per board (see
    /// [`group_commit`](super::group_commit): they may share a call with other requests'
    /// votes). Each vote answers on its own, also when Redis refuses some of them; the
    /// whole call fails when Redis did not answer for some board, and then the votes may
    /// or may not have counted.
    pub async fn cast_votes(
        &self,
        calls: &[VoteCall<'_>],
    ) -> Result<Vec<Result<VoteReply, RedisFailure>>, RedisFailure> {
        let mut boards: Vec<(&str, Vec<usize>)> = Vec::new();
        for (i, call) in calls.iter().enumerate() {
            let slot = call.board.slot();
            match boards.iter_mut().find(|(s, _)| *s == slot) {
                Some((_, at)) => at.push(i),
                None => boards.push((slot, vec![i])),
            }
        }
        let committed = futures_util::future::join_all(boards.iter().map(|(slot, at)| {
            let segments = at.iter().map(|&i| calls[i].segment()).collect();
            self.commit_votes(slot, segments)
        }))
        .await;
        let mut replies: Vec<Option<Result<VoteReply, RedisFailure>>> =
            calls.iter().map(|_| None).collect();
        for ((_, at), board_replies) in boards.iter().zip(committed) {
            for (&i, reply) in at.iter().zip(board_replies?) {
                let c = &calls[i];
                replies[i] =
                    Some(reply.and_then(|r| vote_reply(&r, c.targets.len() + c.windows.len())));
            }
        }
        replies
            .into_iter()
            .map(|r| r.ok_or_else(|| RedisFailure::Reply("vote: a vote had no reply".to_owned())))
            .collect()
    }
}
