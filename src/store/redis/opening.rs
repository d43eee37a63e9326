//! `instances_open.lua` and `instances_unopen.lua`: a family's rooms opened before the
//! writes that open them, in the family's own slot, against its most live rooms and its
//! rules of rooms opened per creator; and taken back when those writes were refused.
//!
//! A room's keys live under a hash tag of its own and the family's listing under the
//! family's, so on a cluster no one script can check the budget and write the room: the
//! budget is checked and consumed first, atomically, and given back when the write is
//! refused (as a sharded board's reservation is). A room is never written past the
//! budget; a refused write that opened a room leaves it listed (and counted) only until
//! the give-back, or, when Redis failed in between, until its TTL.

use std::sync::LazyLock;

use redis::{Script, Value};

use super::keys::BoardKeys;
use super::refund::Refund;
use super::reply::{as_array, as_int, as_text, reply_error};
use super::rules::{self, RuleCheck};
use super::vote::REFUSALS_TTL_S;
use super::{RedisFailure, RedisStore};

static OPEN: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        include_str!("ring.lua"),
        include_str!("rules.lua"),
        include_str!("instances_open.lua")
    ))
});
static UNOPEN: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("instances_unopen.lua")));

/// The rooms of one family one creator's call writes, to open where they are not live.
#[derive(Debug)]
pub struct Openings {
    pub family: BoardKeys,
    /// The rooms' TTL: a listing entry older than this has expired.
    pub ttl_ms: i64,
    /// The most rooms live at once.
    pub max_live: i64,
    pub now_ms: i64,
    /// The family's rules of rooms opened, for the call's creator.
    pub rules: Vec<RuleCheck>,
    /// The rooms, each once.
    pub instances: Vec<String>,
    /// Names this call's entries in rolling logs (`<tag>:<room's index + 1>`).
    pub tag: String,
}

/// What opening a room found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opening {
    /// Open already: written within its TTL.
    Live,
    /// Opened by this call: listed now, its rules consumed.
    Opened,
    /// The family holds its most live rooms.
    Full,
    /// Rule `rule_index` (of the call's rules) refuses; it admits again after `retry_ms`
    /// (`None`: never, in its window).
    Limited {
        rule_index: usize,
        retry_ms: Option<i64>,
    },
}

impl RedisStore {
    /// Opens each room of `openings` that is not live, in order, as far as the family's
    /// budget allows: one answer per room.
    pub async fn open_instances(&self, openings: &Openings) -> Result<Vec<Opening>, RedisFailure> {
        let o = openings;
        let mut call = OPEN.key(o.family.instances());
        call.key(o.family.refusals(o.now_ms.div_euclid(3_600_000)));
        rules::push_keys(&o.rules, &o.family, &mut call);
        call.arg(o.now_ms)
            .arg(o.ttl_ms)
            .arg(o.max_live)
            .arg(o.rules.len())
            .arg(REFUSALS_TTL_S)
            .arg(&o.tag);
        rules::push_args(&o.rules, o.now_ms, &mut call);
        rules::push_fields(&o.rules, &mut call);
        for instance in &o.instances {
            call.arg(instance.as_str());
        }
        let reply = self
            .run_script_all("instances_open", &OPEN, &[call])
            .await?;
        let value = reply.first().unwrap_or(&Value::Nil);
        let bad = || reply_error("instances_open", value);
        let answers = as_array(value).ok_or_else(bad)?;
        if answers.len() != o.instances.len() {
            return Err(bad());
        }
        answers
            .iter()
            .map(|answer| {
                if let Some(items) = as_array(answer) {
                    let (Some(index), Some(retry)) =
                        (items.get(1).and_then(as_int), items.get(2).and_then(as_int))
                    else {
                        return Err(bad());
                    };
                    return Ok(Opening::Limited {
                        rule_index: usize::try_from(index)
                            .ok()
                            .filter(|&i| i < o.rules.len())
                            .ok_or_else(bad)?,
                        retry_ms: (retry >= 0).then_some(retry),
                    });
                }
                match as_text(answer).as_deref() {
                    Some("live") => Ok(Opening::Live),
                    Some("opened") => Ok(Opening::Opened),
                    Some("full") => Ok(Opening::Full),
                    _ => Err(bad()),
                }
            })
            .collect()
    }

    /// Takes back the rooms at `rooms` (indexes into `openings.instances`) that
    /// [`Self::open_instances`] opened, their writes refused: out of the listing (unless
    /// written since) and their rules' counts given back. A failure leaves them counted
    /// until they expire: the family under-admits, it never over-admits.
    pub async fn unopen_instances(&self, openings: &Openings, rooms: &[usize]) {
        if rooms.is_empty() {
            return;
        }
        let o = openings;
        let mut call = UNOPEN.key(o.family.instances());
        call.arg(o.now_ms);
        for &j in rooms {
            call.arg(o.instances[j].as_str());
        }
        if let Err(err) = self.run_script("instances_unopen", &UNOPEN, &[call]).await {
            tracing::warn!(error = %err, "could not take refused rooms out of their family's listing");
        }
        let tags: Vec<String> = rooms
            .iter()
            .map(|j| format!("{}:{}", o.tag, j + 1))
            .collect();
        let refunds: Vec<Refund<'_>> = tags
            .iter()
            .map(|tag| Refund {
                keys: &o.family,
                rules: o.rules.iter().collect(),
                count: 1,
                tag,
            })
            .collect();
        self.refund(&refunds).await;
    }
}
