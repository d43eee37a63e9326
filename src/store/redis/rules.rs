//! `rules.lua`: a write's rate-limit rules, as every write script takes them: two keys
//! and six arguments per rule.

use super::ScriptArgs;
use super::keys::{BoardKeys, Owner, RuleKeys, Spread};
use crate::domain::period::Tenths;

/// Whose count a counter holds: a rule or a watch, its window's code, and the subject
/// (the vote's values for its dimensions).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CounterOf {
    pub owner: Owner,
    pub window: String,
    pub subject: String,
}

/// How one rule's counter is kept in Redis.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Counter {
    /// A calendar window's or the campaign's count of votes (a field of the window's
    /// hash of counters).
    Fixed {
        of: CounterOf,
        /// The window's start (epoch seconds); `None` for the campaign.
        start: Option<i64>,
        ttl_s: i64,
        /// When the window restarts (ms since the epoch); `None` when it never does.
        ends_ms: Option<i64>,
    },
    /// A rule's rolling window: a log of admitted votes and its running total.
    Rolling {
        of: CounterOf,
        ttl_s: i64,
        /// Entries at or before this time (ms) have left the window.
        horizon_ms: i64,
    },
    /// A watch's rolling window, in slots (`domain::period::Tenths`): the subject's ring
    /// (`ring.lua`), a field of the hash of the window-long period of the write's time,
    /// or of the period before's when the write's lacks it.
    Slotted {
        of: CounterOf,
        slots: Tenths,
        /// The write's slot.
        slot: i64,
        ttl_s: i64,
    },
}

impl Counter {
    /// The counter's two keys in the order `vote.lua` and `usage.lua` take them: a fixed
    /// counter's hash twice (the scripts ignore the second), a rolling window's log and
    /// running total, a slotted window's hashes of the write's period and the one before.
    pub(super) fn keys(&self, board: &impl RuleKeys) -> (String, String) {
        match self {
            Self::Fixed { of, start, .. } => {
                let key = board.rule_counters(of.owner, &of.window, *start);
                (key.clone(), key)
            }
            Self::Rolling { of, .. } => (
                board.rule_log(of.owner, &of.window, &of.subject),
                board.rule_log_total(of.owner, &of.window, &of.subject),
            ),
            Self::Slotted {
                of, slots, slot, ..
            } => {
                let period = slots.period_of(*slot * slots.length_ms() / Tenths::COUNT);
                let key = |start_ms: i64| {
                    board.rule_counters(of.owner, &of.window, Some(start_ms / 1000))
                };
                (key(period), key(period - slots.length_ms()))
            }
        }
    }

    /// The kind `refund.lua` and `usage.lua` take, and the slot they take with it.
    pub(super) fn kind(&self) -> (&'static str, Option<i64>) {
        match self {
            Self::Fixed { .. } => ("c", None),
            Self::Rolling { .. } => ("l", None),
            Self::Slotted { slot, .. } => ("s", Some(*slot)),
        }
    }
}

impl Counter {
    /// The write's values for the rule's dimensions.
    pub(super) fn subject(&self) -> &str {
        &self.of().subject
    }

    /// A counter's field in its hash (the subject); a rule's rolling log has none ('').
    pub(super) fn field(&self) -> &str {
        match self {
            Self::Fixed { of, .. } | Self::Slotted { of, .. } => &of.subject,
            Self::Rolling { .. } => "",
        }
    }

    fn of(&self) -> &CounterOf {
        match self {
            Self::Fixed { of, .. } | Self::Rolling { of, .. } | Self::Slotted { of, .. } => of,
        }
    }

    fn owner(&self) -> Owner {
        self.of().owner
    }
}

/// One rule a vote must pass, or one watch that holds it when past (a watch's
/// [`CounterOf::owner`] is [`Owner::Watch`]; the scripts count it as a rule's counter,
/// and hold the vote where a rule would refuse it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleCheck {
    /// The rule's id, for the refusals counter; a watch's, for a held vote's entry.
    pub rule: i64,
    /// Whether the rule counts per member, and per voter: on a sharded board a rule that
    /// counts per what picks the write's shard ([`Spread`]) has its counters there, the
    /// others where [`RuleCheck::home`] puts them.
    pub per_member: bool,
    pub per_voter: bool,
    /// The limit for this vote (overrides applied).
    pub limit: i64,
    pub counter: Counter,
}

impl RuleCheck {
    /// Whether the rule counts in a rolling log (whose keys name the write's subject)
    /// rather than in a field of a hash.
    pub(super) fn keeps_log(&self) -> bool {
        matches!(self.counter, Counter::Rolling { .. })
    }

    /// Whether this is a watch's count rather than a rule's.
    pub(super) fn is_watch(&self) -> bool {
        matches!(self.counter.owner(), Owner::Watch(_))
    }

    /// Whether the rule's counters live in the write's shard on a sharded `board`.
    pub(super) fn in_shard(&self, board: &BoardKeys) -> bool {
        match board.spread() {
            Spread::Members => self.per_member,
            Spread::Voters => self.per_voter,
        }
    }

    /// Where the rule's counters live for a write to `board` whose own keys are `write`
    /// (its shard on a sharded board): there when the rule counts per what picks the
    /// shard, else where [`BoardKeys::rule_home`] puts its subject.
    pub(super) fn home(&self, board: &BoardKeys, write: &BoardKeys) -> BoardKeys {
        if board.storage().is_sharded() && self.in_shard(board) {
            write.clone()
        } else {
            board.rule_home(self.counter.subject())
        }
    }
}

/// Adds the rules' keys (two each) to a write script's call.
pub(super) fn push_keys<'a>(
    rules: impl IntoIterator<Item = &'a RuleCheck>,
    board: &impl RuleKeys,
    inv: &mut impl ScriptArgs,
) {
    for rule in rules {
        let (first, second) = rule.counter.keys(board);
        inv.key(first).key(second);
    }
}

/// Adds the rules' counter fields (one each: a fixed counter's subject, '' for a log) to
/// a write's own arguments.
pub(super) fn push_fields<'a>(
    rules: impl IntoIterator<Item = &'a RuleCheck>,
    inv: &mut impl ScriptArgs,
) {
    for rule in rules {
        inv.arg(rule.counter.field());
    }
}

/// Adds the rules' arguments (six each) to the call of a write at `at_ms` (see
/// [`RuleArgs`]).
pub(super) fn push_args<'a>(
    rules: impl IntoIterator<Item = &'a RuleCheck>,
    at_ms: i64,
    inv: &mut impl ScriptArgs,
) {
    for rule in rules {
        RuleArgs::of(rule, at_ms).push(inv);
    }
}

/// A rule's six arguments to a write script: what its counter was worked out with for the
/// write's time, made independent of it (a counter's restart, a log's length), so the
/// writes of one call share them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct RuleArgs {
    rule: i64,
    /// 'c' for a calendar window's or the campaign's count, 'l' for a rolling log; a
    /// watch's 'wc', or 'ws' for its rolling window in slots.
    kind: &'static str,
    limit: i64,
    ttl_s: i64,
    /// A log's or a slotted window's length (ms); 0 for a count.
    length_ms: i64,
    /// When a count restarts (ms), -1 for never; 0 for a log.
    ends_ms: i64,
}

impl RuleArgs {
    /// `rule`'s arguments for a write at `at_ms`.
    pub(super) fn of(rule: &RuleCheck, at_ms: i64) -> Self {
        let watch = rule.is_watch();
        let (kind, ttl_s, length_ms, ends_ms) = match &rule.counter {
            Counter::Fixed { ttl_s, ends_ms, .. } => (
                if watch { "wc" } else { "c" },
                *ttl_s,
                0,
                ends_ms.unwrap_or(-1),
            ),
            Counter::Rolling {
                ttl_s, horizon_ms, ..
            } => ("l", *ttl_s, at_ms - horizon_ms, 0),
            Counter::Slotted { slots, ttl_s, .. } => ("ws", *ttl_s, slots.length_ms(), 0),
        };
        Self {
            rule: rule.rule,
            kind,
            limit: rule.limit,
            ttl_s,
            length_ms,
            ends_ms,
        }
    }

    pub(super) fn push(&self, inv: &mut impl ScriptArgs) {
        inv.arg(self.rule)
            .arg(self.kind)
            .arg(self.limit)
            .arg(self.ttl_s)
            .arg(self.length_ms)
            .arg(self.ends_ms);
    }
}
