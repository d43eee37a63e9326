//! `refund.lua`: giving back what a reserve step consumed (in a sharded board's own slot,
//! or in the shard a rule's subject picks) when the write it reserved for was refused or
//! replayed in its shard, or another reserve step of the same vote refused (`score.rs`,
//! `vote.rs`).

use std::sync::LazyLock;

use redis::Script;

use super::keys::BoardKeys;
use super::rules::{self, RuleCheck};
use super::{Invocation, RedisStore};

static REFUND: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        include_str!("ring.lua"),
        include_str!("refund.lua")
    ))
});

/// A reserve step to give back: the rules it consumed, in the slot it ran in (`keys`), by
/// how much (a score write counts 1, a vote its count), and the write's tag.
pub(super) struct Refund<'a> {
    pub keys: &'a BoardKeys,
    pub rules: Vec<&'a RuleCheck>,
    pub count: i64,
    pub tag: &'a str,
}

impl Refund<'_> {
    fn invocation(&self) -> Invocation {
        let mut inv = REFUND.prepare_invoke();
        rules::push_keys(self.rules.iter().copied(), self.keys, &mut inv);
        for rule in &self.rules {
            let (kind, slot) = rule.counter.kind();
            inv.arg(kind)
                .arg(rule.counter.field())
                .arg(slot.map_or_else(String::new, |s| s.to_string()));
        }
        inv.arg(self.count).arg(self.tag);
        inv
    }
}

impl RedisStore {
    /// Gives back `refunds`. One that fails leaves its reservation consumed: the board
    /// under-admits, it never over-admits.
    pub(super) async fn refund(&self, refunds: &[Refund<'_>]) {
        let calls: Vec<Invocation> = refunds.iter().map(Refund::invocation).collect();
        if let Err(err) = self.run_script("refund", &REFUND, &calls).await {
            tracing::warn!(error = %err, "could not refund reserved rule counts");
        }
    }
}
