//! `vote.lua`: a vote's keys and arguments in the order the script takes them, and its
//! reply.

use redis::{Script, ToRedisArgs, Value};
use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::sync::{Arc, LazyLock};

use super::group_commit::{self, Pace};
use super::keys::BoardKeys;
use super::refund::Refund;
use super::rules::{self, RuleArgs, RuleCheck};
use super::trend;
use super::window::{self, WindowTarget};
use super::write::{WriteFacts, WriteReply};
use super::{Invocation, RedisFailure, RedisStore, ScriptArgs};
use crate::domain::period::{Bucket, HalfLife};
use crate::domain::score::{Increment, View};

/// `vote.lua` with the libraries it uses in front (the benchmark loads it into a second
/// Redis to compare versions).
pub const VOTE_SOURCE: &str = concat!(
    include_str!("window.lua"),
    include_str!("ring.lua"),
    include_str!("rules.lua"),
    include_str!("trend.lua"),
    include_str!("instance.lua"),
    include_str!("vote.lua")
);

static VOTE: LazyLock<Script> = LazyLock::new(|| Script::new(VOTE_SOURCE));

/// How many ARGV end each vote of a `vote.lua` call (after its header's number and its
/// rules' fields): a call of one vote ends with them.
pub const VOTE_ARGS: usize = 12;

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
        key.write_redis_args(&mut self.keys);
        self
    }

    fn arg<T: ToRedisArgs>(&mut self, arg: T) -> &mut Self {
        arg.write_redis_args(&mut self.args);
        self
    }
}

/// One vote's part of a `vote.lua` call: what it shares with the call's other votes of
/// the same board, moment and rules (its header, built once for them: see [`header`]),
/// and its own facts.
#[derive(Debug)]
pub struct Segment {
    header: Arc<Part>,
    own: Part,
}

/// A whole `vote.lua` call, borrowing its votes' KEYS and ARGV.
#[derive(Debug, Default)]
pub(super) struct Call<'s> {
    keys: Vec<&'s [u8]>,
    args: Vec<Cow<'s, [u8]>>,
}

impl<'s> Call<'s> {
    /// The call that applies `votes` in order: each distinct header once, then each
    /// vote's own ARGV led by its header's number; the votes' own KEYS, then the
    /// headers'.
    pub(super) fn of(votes: &[&'s Segment]) -> Call<'s> {
        let mut headers: Vec<&'s Part> = Vec::new();
        let mut which = Vec::with_capacity(votes.len());
        for vote in votes {
            let header: &'s Part = &vote.header;
            let at = match headers
                .iter()
                .position(|h| std::ptr::eq(*h, header) || **h == *header)
            {
                Some(at) => at,
                None => {
                    headers.push(header);
                    headers.len() - 1
                }
            };
            which.push(at + 1);
        }
        let mut call = Call::default();
        let own_keys: usize = votes.iter().map(|v| v.own.keys.len()).sum();
        call.keys
            .reserve(own_keys + headers.iter().map(|h| h.keys.len()).sum::<usize>());
        call.number(headers.len())
            .number(votes.len())
            .number(own_keys);
        for header in &headers {
            call.number(header.keys.len()).number(header.args.len());
            call.borrow(&header.args);
        }
        for (vote, header) in votes.iter().zip(which) {
            call.number(header);
            call.borrow(&vote.own.args);
            call.keys.extend(vote.own.keys.iter().map(Vec::as_slice));
        }
        for header in &headers {
            call.keys.extend(header.keys.iter().map(Vec::as_slice));
        }
        call
    }

    fn number(&mut self, n: usize) -> &mut Self {
        self.args.push(Cow::Owned(n.to_string().into_bytes()));
        self
    }

    fn borrow(&mut self, args: &'s [Vec<u8>]) {
        self.args
            .extend(args.iter().map(|a| Cow::Borrowed(a.as_slice())));
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
        cmd.arg(self.keys.len());
        for key in &self.keys {
            cmd.arg(*key);
        }
        for arg in &self.args {
            cmd.arg(arg.as_ref());
        }
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
#[derive(Debug, Clone, PartialEq, Eq)]
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
    /// The trending periods the vote counts in.
    pub trends: &'a [HalfLife],
}

/// Where one step of a vote runs: the vote itself (in its shard on a sharded board), or
/// on a sharded board first a reserve step in each other slot that keeps some of its
/// rules' counters, checking and consuming only those (`records` false: no scores,
/// participants, hourly count, idempotency record or ledger entry).
#[derive(Debug)]
struct Step {
    keys: BoardKeys,
    /// The rules the step checks, by index into the vote's rules.
    rules: Vec<usize>,
    records: bool,
}

impl VoteCall<'_> {
    /// This vote alone as a call (the benchmark replays such calls straight at Redis).
    pub fn invocation(&self) -> Invocation {
        let (_, write) = self.steps();
        let segment = self.segment(&write, &self.tag(), "", "");
        let call = Call::of(&[&segment]);
        let mut inv = VOTE.prepare_invoke();
        for key in &call.keys {
            inv.key(*key);
        }
        for arg in &call.args {
            inv.arg(arg.as_ref());
        }
        inv
    }

    /// A tag unique to this vote, naming its entries in rolling rules' logs (in its
    /// reserve step, its write and its refund alike); '' when no rule keeps a log.
    fn tag(&self) -> String {
        if self.write.rules.iter().any(RuleCheck::keeps_log) {
            format!("{:016x}", rand::random::<u64>())
        } else {
            String::new()
        }
    }

    /// The steps of this vote: one, or on a board whose scores are sums over shards a
    /// reserve step in each slot other than the voter's shard that keeps some of its
    /// rules' counters (`RuleCheck::home`: the board's own slot, or on a board that
    /// spreads its rules the shards their subjects pick), then the vote in its voter's
    /// shard with the rules whose counters live there.
    fn steps(&self) -> (Vec<Step>, Step) {
        let w = &self.write;
        if !self.board.sums_shards() {
            let write = Step {
                keys: self.board.clone(),
                rules: (0..w.rules.len()).collect(),
                records: true,
            };
            return (Vec::new(), write);
        }
        let mut write = Step {
            keys: self.board.write_shard(w.member, w.voter),
            rules: Vec::new(),
            records: true,
        };
        let mut reserves: Vec<Step> = Vec::new();
        for (i, rule) in w.rules.iter().enumerate() {
            let home = rule.home(self.board, &write.keys);
            if home == write.keys {
                write.rules.push(i);
            } else if let Some(step) = reserves.iter_mut().find(|s| s.keys == home) {
                step.rules.push(i);
            } else {
                reserves.push(Step {
                    keys: home,
                    rules: vec![i],
                    records: false,
                });
            }
        }
        (reserves, write)
    }

    /// How calls of this vote's board run in a slot.
    fn pace(&self) -> Pace {
        group_commit::pace(self.board)
    }

    /// Whether reserve step `step` of this vote checks a watch.
    fn watches_in(&self, step: &Step) -> bool {
        step.rules.iter().any(|&i| self.write.rules[i].is_watch())
    }

    /// What giving back reserve step `step` of this vote takes.
    fn refund<'s>(&'s self, step: &'s Step, tag: &'s str) -> Refund<'s> {
        Refund {
            keys: &step.keys,
            rules: step.rules.iter().map(|&r| &self.write.rules[r]).collect(),
            count: self.increment.real,
            tag,
        }
    }

    /// What the write step of this vote is told when reserve step `step` held it (see
    /// `vote.lua`, a vote's eleventh argument): the watch, whether it flagged its
    /// subject, and the subject; `None` when `watch` is none of the step's watches.
    fn held_in(&self, step: &Step, watch: i64, flags: bool) -> Option<String> {
        step.rules
            .iter()
            .map(|&i| &self.write.rules[i])
            .find(|r| r.rule == watch && r.is_watch())
            .map(|r| format!("{watch}:{}:{}", u8::from(flags), r.counter.field()))
    }

    /// The KEYS and ARGV of one step of this vote: its header's and its own; `held` is
    /// what a reserve step's watch that held the vote tells its write step ('' for none),
    /// `others` the member's scores in the other shards that its answer adds ('' for
    /// none; see [`others_listed`]).
    fn segment(&self, step: &Step, tag: &str, held: &str, others: &str) -> Segment {
        let w = &self.write;
        let keys = &step.keys;
        let (targets, voters, windows, trends) = if step.records {
            (self.targets, w.voters, self.windows, self.trends)
        } else {
            (&[][..], &[][..], &[][..], &[][..])
        };
        let rules = || step.rules.iter().map(|&i| &w.rules[i]);
        // Counters' hashes are the same for every vote of a header, which then holds them;
        // a rolling log's keys name the vote's subject, so with one each vote holds them.
        let rule_keys: Vec<(String, String)> = if rules().any(RuleCheck::keeps_log) {
            Vec::new()
        } else {
            rules().map(|r| r.counter.keys(keys)).collect()
        };
        let header_holds_rules = rule_keys.len() == step.rules.len();
        let header = header(HeaderOf {
            keys: Cow::Borrowed(keys),
            max_units: self.board.max_units(),
            records: step.records,
            targets: Cow::Borrowed(targets),
            voters: Cow::Borrowed(voters),
            windows: Cow::Borrowed(windows),
            trends: Cow::Borrowed(trends),
            hour: w.hour,
            late: w.late && step.records,
            rules: rules().map(|r| RuleArgs::of(r, w.at_ms)).collect(),
            rule_keys,
        });

        let mut own = Part::default();
        let idem_ttl = if step.records {
            let (idem_key, idem_ttl) = w.idempotency_record(keys, true);
            own.key(idem_key);
            for bucket in voters {
                own.key(keys.member_participants(bucket, w.member));
            }
            idem_ttl
        } else {
            0
        };
        if !header_holds_rules {
            rules::push_keys(rules(), keys, &mut own);
        }
        rules::push_fields(rules(), &mut own);
        if !step.records {
            // A reserve step checks its rules and nothing else: the count, the time and
            // the tag are all it takes.
            own.arg(self.increment.real).arg(w.at_ms).arg(tag);
            return Segment { header, own };
        }
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
            .arg(w.ledger.unwrap_or(""))
            .arg(held)
            .arg(others);
        Segment { header, own }
    }
}

/// What a vote step's header is made of, and nothing else: [`HeaderOf::part`] reads only
/// these, so two steps whose `HeaderOf`s are equal have equal headers.
#[derive(Debug, Clone, PartialEq)]
struct HeaderOf<'a> {
    /// The board's or the shard's keys the step writes.
    keys: Cow<'a, BoardKeys>,
    /// The board's largest allowed score (see `BoardKeys::max_units`).
    max_units: i64,
    /// Whether the step is the vote's write rather than a reservation (see `Step`); a
    /// reservation has no targets, voters, windows or trending periods.
    records: bool,
    targets: Cow<'a, [VoteTarget]>,
    voters: Cow<'a, [Bucket]>,
    windows: Cow<'a, [WindowTarget]>,
    trends: Cow<'a, [HalfLife]>,
    hour: i64,
    late: bool,
    /// The arguments of the rules the step checks.
    rules: Vec<RuleArgs>,
    /// Their keys (two each) when none keeps a rolling log, else none: the votes then
    /// carry them.
    rule_keys: Vec<(String, String)>,
}

impl HeaderOf<'_> {
    /// The header's KEYS and ARGV, in the order `vote.lua` takes them.
    fn part(&self) -> Part {
        let keys = self.keys.as_ref();
        let mut header = Part::default();
        header
            .key(keys.vote_counts())
            .key(keys.refusals(self.hour))
            .key(keys.late_writes())
            .key(keys.headroom());
        for t in self.targets.iter() {
            let next = t.next.as_ref().unwrap_or(&t.current);
            header
                .key(keys.scores(View::Real, &t.current))
                .key(keys.scores(View::Display, &t.current))
                .key(keys.scores(View::Display, next));
        }
        for bucket in self.voters.iter() {
            header.key(keys.participants(bucket));
        }
        header.key(keys.ledger());
        for w in self.windows.iter() {
            w.keys(&mut header);
        }
        trend::push_keys(keys, &self.trends, &mut header);
        for (first, second) in &self.rule_keys {
            header.key(first).key(second);
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
            .arg(self.voters.len())
            .arg(self.rules.len())
            .arg(self.windows.len())
            .arg(self.max_units)
            .arg(if self.records {
                self.hour.to_string()
            } else {
                String::new()
            })
            .arg(refusals_ttl_s(keys))
            .arg(if self.late { "1" } else { "0" })
            .arg(periods)
            .arg(keys.ttl_ms())
            .arg(self.trends.len());
        for rule in &self.rules {
            rule.push(&mut header);
        }
        for w in self.windows.iter() {
            w.args(&mut header);
        }
        trend::push_args(&self.trends, &mut header);
        header
    }

    fn into_owned(self) -> HeaderOf<'static> {
        HeaderOf {
            keys: Cow::Owned(self.keys.into_owned()),
            max_units: self.max_units,
            records: self.records,
            targets: Cow::Owned(self.targets.into_owned()),
            voters: Cow::Owned(self.voters.into_owned()),
            windows: Cow::Owned(self.windows.into_owned()),
            trends: Cow::Owned(self.trends.into_owned()),
            hour: self.hour,
            late: self.late,
            rules: self.rules,
            rule_keys: self.rule_keys,
        }
    }
}

/// How many headers each thread keeps: a sharded board's shards and its own slot, and a
/// few more boards or moments.
const HEADERS_KEPT: usize = 16;

thread_local! {
    /// The headers this thread built last, the newest last.
    static HEADERS: RefCell<VecDeque<(HeaderOf<'static>, Arc<Part>)>> =
        RefCell::new(VecDeque::with_capacity(HEADERS_KEPT));
}

/// The header made of `of`: one this thread built for an equal `HeaderOf`, or a new one.
/// The votes of a hot board at one moment share a header, which names some twenty keys;
/// formatting them for every vote was about a tenth of the server's CPU per vote.
fn header(of: HeaderOf<'_>) -> Arc<Part> {
    HEADERS.with_borrow_mut(|kept| {
        if let Some((_, part)) = kept.iter().rev().find(|(k, _)| *k == of) {
            return Arc::clone(part);
        }
        let part = Arc::new(of.part());
        if kept.len() == HEADERS_KEPT {
            kept.pop_front();
        }
        kept.push_back((of.into_owned(), Arc::clone(&part)));
        part
    })
}

/// New scores in one period: (real units, display units).
pub type PeriodScores = (i64, i64);

/// How a vote went: its new scores are one pair per target (then per rolling window).
pub type VoteReply = WriteReply<PeriodScores>;

/// Reads a vote step's reply: `targets` pairs of scores (a replay's may be fewer or more:
/// the board's periods may have changed since); `rules` are the vote's rules the step
/// checked.
fn vote_reply(value: &Value, targets: usize, rules: &[usize]) -> Result<VoteReply, RedisFailure> {
    WriteReply::parse(
        "vote",
        value,
        |units, replayed| pairs(Some(units), if replayed { usize::MAX } else { targets }),
        |i| rules.get(i).copied(),
    )
}

/// A vote's answer from its reserve steps that did not pass: `first`, what one answered
/// before (`None`: none yet), or `next`. Of two rules that refuse, the one that keeps
/// refusing longest answers, as one script answers for the rules it checks.
fn refusal(
    first: Option<Result<VoteReply, RedisFailure>>,
    next: Result<VoteReply, RedisFailure>,
) -> Result<VoteReply, RedisFailure> {
    let until = |retry_ms: Option<i64>| retry_ms.unwrap_or(i64::MAX);
    match (first, next) {
        (
            Some(Ok(VoteReply::Limited { retry_ms: was, .. })),
            Ok(VoteReply::Limited {
                rule_index,
                retry_ms,
            }),
        ) if until(retry_ms) > until(was) => Ok(VoteReply::Limited {
            rule_index,
            retry_ms,
        }),
        (Some(first), _) => first,
        (None, next) => next,
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
    /// Casts votes, each atomically and independently, in order per board (see
    /// [`group_commit`](super::group_commit): they may share a call with other requests'
    /// votes). Each vote answers on its own, also when Redis refuses some of them; the
    /// whole call fails when Redis did not answer for some board, and then the votes may
    /// or may not have counted.
    ///
    /// On a board whose scores are sums over shards a vote takes more than one step when
    /// some of its rules count elsewhere than in its voter's shard: those are reserved
    /// where their counters live (`steps`), all at once, then the vote is cast in its
    /// voter's shard. What the reserve steps took is given back when one of them refuses,
    /// or when the shard refuses the vote or replays an earlier answer. A watch that holds
    /// the vote in a reserve step consumes what it counts there, and the shard then holds
    /// the vote (once its own rules admit it). Its answer is the member's scores in its
    /// shard, atomically with the vote, plus those in the other shards, read beside the
    /// reserve steps (after the vote arrived, so every vote answered before it was sent
    /// counts in its answer); its idempotency record keeps both.
    pub async fn cast_votes(
        &self,
        calls: &[VoteCall<'_>],
    ) -> Result<Vec<Result<VoteReply, RedisFailure>>, RedisFailure> {
        let tags: Vec<String> = calls.iter().map(VoteCall::tag).collect();
        let steps: Vec<(Vec<Step>, Step)> = calls.iter().map(VoteCall::steps).collect();
        let mut outcomes: Vec<Option<Result<VoteReply, RedisFailure>>> =
            calls.iter().map(|_| None).collect();

        // A retry reserves as its first attempt did, and the shard replays the first
        // answer (reading its record atomically with the vote), which gives back what the
        // retry reserved. A vote some reserve step holds a watch for reads its record
        // first instead: a retry must not count towards a watch's threshold, whose flag
        // is not given back.
        let read_first: Vec<bool> = (0..calls.len())
            .map(|i| steps[i].0.iter().any(|s| calls[i].watches_in(s)))
            .collect();
        let records_first = (0..calls.len())
            .filter(|&i| read_first[i])
            .map(|i| (i, &steps[i].1.keys, &calls[i].write));
        for (i, record) in self.recorded(records_first).await? {
            outcomes[i] = Some(vote_reply(&record, calls[i].targets.len(), &[]));
        }

        // Every reserve step of every vote not answered yet, in one round, and beside them
        // the members' scores in the other shards.
        let reserving: Vec<(usize, usize)> = (0..calls.len())
            .filter(|&i| outcomes[i].is_none())
            .flat_map(|i| (0..steps[i].0.len()).map(move |r| (i, r)))
            .collect();
        let summing: Vec<usize> = (0..calls.len())
            .filter(|&i| outcomes[i].is_none() && calls[i].board.sums_shards())
            .collect();
        let (reserved, read) = futures_util::future::join(
            self.commit_steps(reserving.iter().map(|&(i, r)| {
                let step = &steps[i].0[r];
                let c = &calls[i];
                (
                    step.keys.slot(),
                    c.pace(),
                    c.segment(step, &tags[i], "", ""),
                )
            })),
            self.other_shards(calls, &summing),
        )
        .await;
        let mut taken: Vec<Vec<usize>> = vec![Vec::new(); calls.len()];
        // The first watch that held each vote in a reserve step: its write step holds it.
        let mut held: Vec<Option<String>> = vec![None; calls.len()];
        for (&(i, r), reply) in reserving.iter().zip(reserved?) {
            let step = &steps[i].0[r];
            match reply.and_then(|v| vote_reply(&v, 0, &step.rules)) {
                Ok(VoteReply::Written(_)) => taken[i].push(r),
                Ok(VoteReply::Held { watch, flags, .. }) => {
                    taken[i].push(r);
                    match calls[i].held_in(step, watch, flags) {
                        Some(told) => {
                            held[i].get_or_insert(told);
                        }
                        None => {
                            let unknown = RedisFailure::Reply(format!(
                                "vote: a reserve step held the vote for watch {watch}, none of its own"
                            ));
                            outcomes[i] = Some(refusal(outcomes[i].take(), Err(unknown)));
                        }
                    }
                }
                other => outcomes[i] = Some(refusal(outcomes[i].take(), other)),
            }
        }
        let mut others: Vec<Option<Vec<PeriodScores>>> = vec![None; calls.len()];
        for (&i, parts) in summing.iter().zip(read) {
            match parts {
                Ok(parts) => others[i] = Some(parts),
                Err(failure) => outcomes[i] = Some(refusal(outcomes[i].take(), Err(failure))),
            }
        }
        // A retry some reserve step refused (its first attempt's count may be what fills
        // the rule) answers its first answer, as its shard would have.
        let refused_keyed = (0..calls.len())
            .filter(|&i| !read_first[i] && !steps[i].0.is_empty() && outcomes[i].is_some())
            .map(|i| (i, &steps[i].1.keys, &calls[i].write));
        for (i, record) in self.recorded(refused_keyed).await? {
            outcomes[i] = Some(vote_reply(&record, calls[i].targets.len(), &[]));
        }
        let mut refunds = Vec::new();
        // A vote one reserve step refused gives back what the others took.
        for (i, taken) in taken.iter().enumerate() {
            if outcomes[i].is_some() {
                let given_back = taken.iter().map(|&r| &steps[i].0[r]);
                refunds.extend(given_back.map(|step| calls[i].refund(step, &tags[i])));
            }
        }

        let listed: Vec<String> = others
            .iter()
            .map(|o| o.as_deref().map(others_listed).unwrap_or_default())
            .collect();
        let mut writing: Vec<usize> = (0..calls.len())
            .filter(|&i| outcomes[i].is_none())
            .collect();
        // A call that found a rolling window out of its keys' reach changed nothing: bring
        // the window to the clock and cast again (once per idle gap, first write, or slot
        // whose drain outlived the next; see window.lua), with the windows as
        // `advance_windows` answers them.
        let mut recast: Vec<Option<Vec<WindowTarget>>> = vec![None; calls.len()];
        for attempt in 0..=window::WINDOW_ATTEMPTS {
            let written = self
                .commit_steps(writing.iter().map(|&i| {
                    let step = &steps[i].1;
                    let windows = recast[i].as_deref().unwrap_or(calls[i].windows);
                    let call = VoteCall {
                        windows,
                        ..calls[i]
                    };
                    let held = held[i].as_deref().unwrap_or("");
                    let segment = call.segment(step, &tags[i], held, &listed[i]);
                    (step.keys.slot(), call.pace(), segment)
                }))
                .await?;
            let mut behind = Vec::new();
            for (&i, reply) in writing.iter().zip(written) {
                let c = &calls[i];
                let Some(reply) = window::settled(reply, attempt) else {
                    behind.push(i);
                    continue;
                };
                let targets = c.targets.len() + c.windows.len();
                let mut reply = reply.and_then(|v| vote_reply(&v, targets, &steps[i].1.rules));
                // A held vote consumed its rules, as a counted one does.
                if let Ok(r) = &reply
                    && !matches!(r, VoteReply::Written(_) | VoteReply::Held { .. })
                {
                    refunds.extend(steps[i].0.iter().map(|step| c.refund(step, &tags[i])));
                }
                // A held vote answers its shard's scores, which its record adds up with the
                // other shards' (as a counted vote's answer does already).
                if let (Ok(VoteReply::Held { scores, .. }), Some(others)) = (&mut reply, &others[i])
                {
                    for (pair, other) in scores.iter_mut().zip(others) {
                        *pair = (pair.0 + other.0, pair.1 + other.1);
                    }
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
            .map(|o| o.unwrap_or_else(|| Err(RedisFailure::Reply("a vote went unanswered".into()))))
            .collect())
    }

    /// Runs vote steps, each in the slot it names at the pace it gives, grouped per slot
    /// (see [`commit_votes`](Self::commit_votes)): each step's reply, in order.
    async fn commit_steps<'s>(
        &self,
        steps: impl Iterator<Item = (&'s str, Pace, Segment)>,
    ) -> Result<Vec<Result<Value, RedisFailure>>, RedisFailure> {
        let mut slots: Vec<(&str, Pace, Vec<usize>, Vec<Segment>)> = Vec::new();
        let mut count = 0;
        for (i, (slot, pace, segment)) in steps.enumerate() {
            count += 1;
            match slots.iter_mut().find(|(s, ..)| *s == slot) {
                Some((.., at, segments)) => {
                    at.push(i);
                    segments.push(segment);
                }
                None => slots.push((slot, pace, vec![i], vec![segment])),
            }
        }
        let mut at_of = Vec::with_capacity(slots.len());
        let runs = slots.into_iter().map(|(slot, pace, at, segments)| {
            at_of.push(at);
            self.commit_votes(slot, pace, segments)
        });
        let committed = futures_util::future::join_all(runs).await;
        let mut replies: Vec<Option<Result<Value, RedisFailure>>> = vec![None; count];
        for (at, slot_replies) in at_of.into_iter().zip(committed) {
            for (i, reply) in at.into_iter().zip(slot_replies?) {
                replies[i] = Some(reply);
            }
        }
        replies
            .into_iter()
            .map(|r| r.ok_or_else(|| RedisFailure::Reply("vote: a vote had no reply".to_owned())))
            .collect()
    }

    /// Each vote's member's scores in the shards of its board other than its own, per
    /// target (real, display), for the votes `summing` of boards whose scores are sums
    /// over shards, in that order: read after this call began, together with other reads
    /// of the same keys (see `score_reads`).
    async fn other_shards(
        &self,
        calls: &[VoteCall<'_>],
        summing: &[usize],
    ) -> Vec<Result<Vec<PeriodScores>, RedisFailure>> {
        let reads = summing.iter().map(|&i| {
            let c = &calls[i];
            let shards = c.board.shards();
            // Per target, both views, every shard's key.
            let mut keys = Vec::with_capacity(c.targets.len() * 2 * shards.len());
            for t in c.targets {
                for view in [View::Real, View::Display] {
                    keys.extend(shards.iter().map(|s| s.scores(view, &t.current)));
                }
            }
            self.scores_of(keys, c.write.member.to_owned())
        });
        let read = futures_util::future::join_all(reads).await;
        summing
            .iter()
            .zip(read)
            .map(|(&i, parts)| {
                let c = &calls[i];
                let shards = c.board.shards().len();
                let own = c.board.write_source(c.write.member, c.write.voter);
                let others = |part: &[i64]| -> i64 {
                    let all: i64 = part.iter().sum();
                    all - part.get(own).copied().unwrap_or(0)
                };
                Ok(parts?
                    .chunks(2 * shards)
                    .map(|of_target| {
                        let (real, display) = of_target.split_at(shards);
                        (others(real), others(display))
                    })
                    .collect())
            })
            .collect()
    }
}

/// Scores per target as `vote.lua` takes a vote's other shards' part (its twelfth
/// argument): `real_0,display_0,real_1,display_1,...`.
fn others_listed(scores: &[PeriodScores]) -> String {
    let mut listed = String::with_capacity(scores.len() * 12);
    for (k, (real, display)) in scores.iter().enumerate() {
        if k > 0 {
            listed.push(',');
        }
        listed.push_str(&real.to_string());
        listed.push(',');
        listed.push_str(&display.to_string());
    }
    listed
}

#[cfg(test)]
mod tests {
    use chrono_tz::Tz;

    use super::*;
    use crate::domain::period::{Period, parse_instant};
    use crate::domain::scoring::Storage;
    use crate::store::redis::keys::{Keys, Spread, shard_of};
    use crate::store::redis::rules::{Counter, CounterOf};

    /// Buckets of `periods` at `at`, each carrying over into its next.
    fn targets(periods: &[Period], at: &str) -> Vec<VoteTarget> {
        let at = parse_instant(at).unwrap();
        periods
            .iter()
            .map(|&p| {
                let current = Bucket::containing(p, Tz::UTC, at).unwrap();
                let next = current.next(Tz::UTC);
                VoteTarget { current, next }
            })
            .collect()
    }

    fn rule(rule: i64, limit: i64, rolling: bool) -> RuleCheck {
        let of = CounterOf {
            owner: crate::store::redis::Owner::Rule(rule),
            window: if rolling { "rolling:1h" } else { "day" }.to_owned(),
            subject: "viewer-1".to_owned(),
        };
        RuleCheck {
            rule,
            per_member: false,
            per_voter: true,
            limit,
            counter: if rolling {
                Counter::Rolling {
                    of,
                    ttl_s: 3_600,
                    horizon_ms: 3_600_000,
                }
            } else {
                Counter::Fixed {
                    of,
                    start: Some(1_764_201_600),
                    ttl_s: 86_400,
                    ends_ms: Some(1_764_288_000_000),
                }
            },
        }
    }

    const PERIODS: [Period; 3] = [Period::Hour, Period::Day, Period::All];

    /// 2026-11-27T10:15Z on a board of [`PERIODS`]: the vote's buckets, its time in ms,
    /// and the voter buckets it counts its voter in.
    struct Moment {
        now: Vec<VoteTarget>,
        at_ms: i64,
        voters: Vec<Bucket>,
    }

    fn moment() -> Moment {
        let now = targets(&PERIODS, "2026-11-27T10:15:00Z");
        let at_ms = parse_instant("2026-11-27T10:15:00Z")
            .unwrap()
            .timestamp_millis();
        let voters = now.iter().map(|t| t.current.clone()).collect();
        Moment { now, at_ms, voters }
    }

    /// The segment a vote of one unit with these inputs makes.
    fn segment_of(board: &BoardKeys, targets: &[VoteTarget], write: WriteFacts<'_>) -> Segment {
        let call = VoteCall {
            board,
            targets,
            increment: Increment {
                real: 1,
                display: 1_000_000,
                carry: 100_000,
            },
            write,
            windows: &[],
            trends: &[],
        };
        let (_, step) = call.steps();
        call.segment(&step, "", "", "")
    }

    /// The header a vote of one unit with these inputs gets.
    fn header_of(board: &BoardKeys, targets: &[VoteTarget], write: WriteFacts<'_>) -> Arc<Part> {
        segment_of(board, targets, write).header
    }

    /// The header a vote with these inputs gets, and the one built for them afresh.
    fn headers(
        board: &BoardKeys,
        targets: &[VoteTarget],
        write: WriteFacts<'_>,
    ) -> (Arc<Part>, Part) {
        let kept = header_of(board, targets, write);
        HEADERS.with_borrow_mut(VecDeque::clear);
        let fresh = header_of(board, targets, write);
        (kept, Arc::unwrap_or_clone(fresh))
    }

    // The benchmark rewrites a captured call's voter and ledger entry where these
    // constants say: the last VOTE_ARGS arguments of a vote are its own, its voter and
    // its entry where VOTER_ARG and LEDGER_ARG put them.
    #[test]
    fn the_benchmarks_argument_positions_name_the_voter_and_the_entry() {
        let keys = Keys::new("ov:");
        let board = keys.board(7, Storage::Full, Spread::Members, Tz::UTC);
        let Moment { now, at_ms, .. } = moment();
        let entry = r#"{"id":7}"#;
        let write = WriteFacts {
            ledger: Some(entry),
            ..WriteFacts::at("m1", Some("viewer-1"), at_ms)
        };
        let own = segment_of(&board, &now, write).own.args;
        let first = own.len() - VOTE_ARGS;
        let arg = |k: usize| String::from_utf8(own[first + k - 1].clone()).unwrap();
        assert_eq!(arg(1), "m1");
        assert_eq!(arg(VOTER_ARG), "viewer-1");
        assert_eq!(arg(LEDGER_ARG), entry);
    }

    // A header is shared by the votes whose header inputs are all equal, and by no
    // other: each input changed alone gives a header of its own, equal to one built
    // afresh; a vote's own facts (member, voter, time of a vote without rolling rules)
    // do not change it.
    #[test]
    fn a_kept_header_serves_only_votes_of_the_same_inputs() {
        let keys = Keys::new("ov:");
        let board = keys.board(7, Storage::Full, Spread::Members, Tz::UTC);
        let other_board = keys.board(8, Storage::Full, Spread::Members, Tz::UTC);
        let Moment { now, at_ms, voters } = moment();
        let next_hour = targets(&PERIODS, "2026-11-27T11:15:00Z");
        let day_rules = [rule(1, 1000, false), rule(2, 100, false)];
        let other_limit = [rule(1, 1000, false), rule(2, 99, false)];
        let rolling = [rule(1, 1000, false), rule(3, 100, true)];
        let write = |member, at_ms, rules| WriteFacts {
            rules,
            voters: &voters,
            ..WriteFacts::at(member, Some("viewer-1"), at_ms)
        };
        HEADERS.with_borrow_mut(VecDeque::clear);
        let base = header_of(&board, &now, write("m1", at_ms, &day_rules));

        // The same inputs, another member, voter and moment of the hour: the kept header.
        let same = [
            write("m2", at_ms, &day_rules),
            WriteFacts {
                voter: Some("viewer-2"),
                ..write("m1", at_ms + 60_000, &day_rules)
            },
        ];
        for facts in same {
            let header = header_of(&board, &now, facts);
            assert!(Arc::ptr_eq(&header, &base), "{facts:?}");
        }

        // Each input changed alone: a header of its own, as built afresh.
        let late = WriteFacts {
            late: true,
            ..write("m1", at_ms, &day_rules)
        };
        let other_hour = WriteFacts {
            hour: write("m1", at_ms, &day_rules).hour + 1,
            ..write("m1", at_ms, &day_rules)
        };
        let no_voters = WriteFacts {
            voters: &[],
            ..write("m1", at_ms, &day_rules)
        };
        let changed: [(&BoardKeys, &[VoteTarget], WriteFacts<'_>); 6] = [
            (&other_board, &now, write("m1", at_ms, &day_rules)),
            (&board, &next_hour, write("m1", at_ms, &day_rules)),
            (&board, &now, late),
            (&board, &now, other_hour),
            (&board, &now, no_voters),
            (&board, &now, write("m1", at_ms, &other_limit)),
        ];
        for (board, targets, facts) in changed {
            let (kept, fresh) = headers(board, targets, facts);
            assert_ne!(*kept, *base, "{facts:?}");
            assert_eq!(*kept, fresh, "{facts:?}");
        }

        // A rolling rule's arguments follow the vote's time: another millisecond is
        // another header.
        let (first, _) = headers(&board, &now, write("m1", at_ms, &rolling));
        let (later, fresh) = headers(&board, &now, write("m1", at_ms + 1, &rolling));
        assert_ne!(*first, *later);
        assert_eq!(*later, fresh);
    }

    // A header whose rules keep no rolling log holds their counters' keys once, after
    // all its other keys, and its votes carry only their record and participants; with a
    // rolling rule every vote carries every rule's two keys, and the header none.
    #[test]
    fn a_header_holds_its_counters_keys_unless_a_rule_keeps_a_log() {
        let keys = Keys::new("ov:");
        let board = keys.board(7, Storage::Full, Spread::Members, Tz::UTC);
        let Moment { now, at_ms, voters } = moment();
        let counters = [rule(1, 1000, false), rule(2, 100, false)];
        let with_log = [rule(1, 1000, false), rule(3, 100, true)];
        let segment = |rules| {
            let write = WriteFacts {
                rules,
                voters: &voters,
                ..WriteFacts::at("m1", Some("viewer-1"), at_ms)
            };
            segment_of(&board, &now, write)
        };
        let rule_keys = |rules: &[RuleCheck]| -> Vec<Vec<u8>> {
            rules
                .iter()
                .flat_map(|r| {
                    let (first, second) = r.counter.keys(&board);
                    [first.into_bytes(), second.into_bytes()]
                })
                .collect()
        };
        // The record and the member's participants in each voter bucket.
        let own_keys = 1 + voters.len();

        let held = segment(&counters);
        assert_eq!(held.own.keys.len(), own_keys);
        let header = &held.header.keys;
        assert_eq!(header[header.len() - 4..], rule_keys(&counters)[..]);

        let carried = segment(&with_log);
        assert_eq!(carried.own.keys.len(), own_keys + 4);
        assert_eq!(carried.own.keys[own_keys..], rule_keys(&with_log)[..]);
        assert_eq!(carried.header.keys.len(), header.len() - 4);
    }

    /// A day rule of dimension `per` (`voter` counts per voter) with subject `subject`.
    fn rule_on(rule: i64, per_voter: bool, subject: &str) -> RuleCheck {
        let mut check = self::rule(rule, 1000, false);
        check.per_voter = per_voter;
        if let Counter::Fixed { of, .. } = &mut check.counter {
            of.subject = subject.to_owned();
        }
        check
    }

    // On an evenly placed sharded votes board no rule counts in the board's own slot: a
    // rule that does not count per voter is reserved in the shard its subject picks (in
    // the vote's own step when that is the voter's shard), rules of one subject share a
    // step; a board placed before keeps them in its own slot.
    #[test]
    fn a_sharded_vote_reserves_each_rule_where_its_subject_picks() {
        let keys = Keys::new("ov:");
        let even = keys.board(7, Storage::sharded(6), Spread::Voters, Tz::UTC);
        let hashed = keys.board(
            7,
            Storage::Sharded {
                shards: 6,
                placement: crate::domain::scoring::Placement::Hashed,
            },
            Spread::Voters,
            Tz::UTC,
        );
        let now = targets(&[Period::Day], "2026-11-27T10:15:00Z");
        let at_ms = parse_instant("2026-11-27T10:15:00Z")
            .unwrap()
            .timestamp_millis();
        // Subjects in shards other than the voter's, and one in the voter's.
        let voter = "viewer-1";
        let own = shard_of(voter, 6);
        let subject_not_in = |shards: &[i64]| {
            (0..)
                .map(|i| format!("10.0.0.{i}"))
                .find(|s| !shards.contains(&shard_of(s, 6)))
                .unwrap()
        };
        let a = &subject_not_in(&[own]);
        let b = &subject_not_in(&[own, shard_of(a, 6)]);
        let same = (0..)
            .map(|i| format!("m{i}"))
            .find(|s| shard_of(s, 6) == own)
            .unwrap();
        let rules = [
            rule_on(1, true, voter),
            rule_on(2, false, a),
            rule_on(3, false, &same),
            rule_on(4, false, a),
            rule_on(5, false, b),
        ];
        let steps = |board: &BoardKeys| {
            VoteCall {
                board,
                targets: &now,
                increment: Increment {
                    real: 1,
                    display: 1_000_000,
                    carry: 0,
                },
                write: WriteFacts {
                    rules: &rules,
                    ..WriteFacts::at("m1", Some(voter), at_ms)
                },
                windows: &[],
                trends: &[],
            }
            .steps()
        };
        let (reserves, write) = steps(&even);
        assert_eq!(write.keys, even.write_shard("m1", Some(voter)));
        assert_eq!(write.rules, [0, 2]);
        let placed: Vec<(BoardKeys, Vec<usize>)> =
            reserves.into_iter().map(|s| (s.keys, s.rules)).collect();
        assert_eq!(
            placed,
            [
                (even.rule_home(a), vec![1, 3]),
                (even.rule_home(b), vec![4])
            ]
        );
        assert!(
            placed
                .iter()
                .all(|(k, _)| *k != even && k.slot() != even.slot())
        );

        let (reserves, write) = steps(&hashed);
        assert_eq!(write.rules, [0]);
        let placed: Vec<(BoardKeys, Vec<usize>)> =
            reserves.into_iter().map(|s| (s.keys, s.rules)).collect();
        assert_eq!(placed, [(hashed.clone(), vec![1, 2, 3, 4])]);
    }

    // A reserve step's vote carries its rules' fields, the count, the time and the tag:
    // no idempotency record, member, voter or entry; its rules' keys too when one keeps a
    // rolling log (else its header holds them).
    #[test]
    fn a_reserve_step_carries_only_what_its_rules_check() {
        let keys = Keys::new("ov:");
        let board = keys.board(7, Storage::sharded(6), Spread::Voters, Tz::UTC);
        let now = targets(&[Period::Day], "2026-11-27T10:15:00Z");
        let at_ms = parse_instant("2026-11-27T10:15:00Z")
            .unwrap()
            .timestamp_millis();
        let voter = "viewer-1";
        let subject = (0..)
            .map(|i| format!("10.0.0.{i}"))
            .find(|s| shard_of(s, 6) != shard_of(voter, 6))
            .unwrap();
        let mut rolling = rule(3, 100, true);
        rolling.per_voter = false;
        if let Counter::Rolling { of, .. } = &mut rolling.counter {
            of.subject = subject.clone();
        }
        let idempotency = crate::domain::ids::IdempotencyKey::parse("key-1").unwrap();
        let reserve_of = |rules: &[RuleCheck]| {
            let call = VoteCall {
                board: &board,
                targets: &now,
                increment: Increment {
                    real: 3,
                    display: 3_000_000,
                    carry: 0,
                },
                write: WriteFacts {
                    rules,
                    idempotency: Some(("caller", &idempotency, std::time::Duration::from_secs(60))),
                    ledger: Some(r#"{"id":7}"#),
                    ..WriteFacts::at("m1", Some(voter), at_ms)
                },
                windows: &[],
                trends: &[],
            };
            let (reserves, _) = call.steps();
            assert_eq!(reserves.len(), 1);
            let segment = call.segment(&reserves[0], "0123456789abcdef", "", "");
            let text = |args: &[Vec<u8>]| -> Vec<String> {
                args.iter()
                    .map(|a| String::from_utf8(a.clone()).unwrap())
                    .collect()
            };
            (text(&segment.own.keys), text(&segment.own.args))
        };
        let when = at_ms.to_string();

        let counter = rule_on(2, false, &subject);
        let (own_keys, own_args) = reserve_of(std::slice::from_ref(&counter));
        assert!(own_keys.is_empty());
        let field = counter.counter.field();
        assert_eq!(own_args, [field, "3", &when, "0123456789abcdef"]);

        let (own_keys, own_args) = reserve_of(std::slice::from_ref(&rolling));
        let (log, total) = rolling.counter.keys(&board.rule_home(&subject));
        assert_eq!(own_keys, [log, total]);
        assert_eq!(own_args, ["", "3", &when, "0123456789abcdef"]);
    }

    #[test]
    fn of_two_refusals_the_longest_answers() {
        let limited = |rule_index, retry_ms| {
            Ok::<_, RedisFailure>(VoteReply::Limited {
                rule_index,
                retry_ms,
            })
        };
        let answer = |first, next| match refusal(first, next) {
            Ok(VoteReply::Limited {
                rule_index,
                retry_ms,
            }) => (rule_index, retry_ms),
            other => panic!("{other:?}"),
        };
        assert_eq!(answer(None, limited(2, Some(5))), (2, Some(5)));
        assert_eq!(
            answer(Some(limited(2, Some(5))), limited(1, Some(9))),
            (1, Some(9))
        );
        assert_eq!(
            answer(Some(limited(2, Some(9))), limited(1, Some(5))),
            (2, Some(9))
        );
        assert_eq!(
            answer(Some(limited(2, Some(9))), limited(4, None)),
            (4, None)
        );
        assert_eq!(
            answer(Some(limited(4, None)), limited(1, Some(9))),
            (4, None)
        );
    }
}
