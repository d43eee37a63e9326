//! The Rust side of the rolling windows (`window.lua`, the library `vote.lua` and
//! `window_page.lua` share): what one window's part of a vote or a read carries, in the
//! order the scripts take it.

use crate::domain::period::Rolling;
use crate::domain::score::View;

use std::sync::LazyLock;

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use redis::{Script, Value};

use super::keys::{BoardKeys, WindowKeys};
use super::page::PageReply;
use super::reply::{as_array, as_int, as_text};
use super::{Invocation, RedisFailure, RedisStore, ScriptArgs};

/// The most members of slots that left a window one call subtracts from its totals: about
/// about 2 µs each on the machine BENCHMARKS.md's figures come from, so a call stays within a
/// few milliseconds however big the slot. A read calls again until none are left.
pub const DRAIN_BUDGET: i64 = 1_000;

/// A rolling window as a script sees it at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WindowAt {
    /// Its keys (see [`BoardKeys::window`]).
    pub keys: WindowKeys,
    pub slots: i64,
    /// The caller's clock, as a slot number.
    pub clock: i64,
    /// See [`DRAIN_BUDGET`]; tests set it small, to drain over many calls.
    pub budget: i64,
    /// A family instance's TTL: its window's state and totals expire this long after a
    /// write. 0 on a plain board.
    pub ttl_ms: i64,
    /// A family instance's slots expire this long after a vote writes them: the
    /// instance's TTL, or the window's longest span when that is longer (a slot must last
    /// until it has left the window and been subtracted). 0 on a plain board.
    pub ring_ttl_ms: i64,
}

impl WindowAt {
    pub fn new(board: &BoardKeys, window: Rolling, clock: i64) -> Self {
        let ttl = board.ttl_ms();
        Self {
            keys: board.window(window),
            slots: window.slots(),
            clock,
            budget: DRAIN_BUDGET,
            ttl_ms: ttl,
            ring_ttl_ms: if ttl > 0 {
                ttl.max(window.max_span_ms())
            } else {
                0
            },
        }
    }

    /// The `window_advance.lua` call bringing this window to its clock.
    fn advance(&self) -> Invocation {
        let mut inv = WINDOW_ADVANCE.prepare_invoke();
        for key in self.keys.every() {
            inv.key(key);
        }
        inv.arg(self.slots)
            .arg(self.clock)
            .arg(self.budget)
            .arg(self.ttl_ms);
        inv
    }
}

/// One rolling window's part of a vote: the window, and the slot of the vote's time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WindowTarget {
    pub window: WindowAt,
    pub at: i64,
}

impl WindowTarget {
    /// The window `window` of `board` for a vote stamped `at` and cast at `now`: the
    /// clock is never before the vote's slot.
    pub fn new(
        board: &BoardKeys,
        window: Rolling,
        tz: Tz,
        now: DateTime<Utc>,
        at: DateTime<Utc>,
    ) -> Self {
        let at = window.slot(tz, at);
        Self {
            window: WindowAt::new(board, window, window.slot(tz, now).max(at)),
            at,
        }
    }

    /// Appends this window's 13 keys to a `vote.lua` call: its state, its totals, and the
    /// ring keys of the clock's slot and of the next.
    pub(super) fn keys(&self, part: &mut impl ScriptArgs) {
        let keys = &self.window.keys;
        part.key(keys.state())
            .key(keys.total(View::Real))
            .key(keys.total(View::Display));
        for key in keys
            .at(self.window.clock)
            .into_iter()
            .chain(keys.at(self.window.clock + 1))
        {
            part.key(key);
        }
    }

    /// Appends this window's arguments to a `vote.lua` call (its keys go in separately,
    /// after the rules').
    pub(super) fn args(&self, inv: &mut impl ScriptArgs) {
        inv.arg(self.window.slots)
            .arg(self.window.clock)
            .arg(self.at)
            .arg(self.window.budget)
            .arg(self.window.ring_ttl_ms);
    }
}

/// What `vote.lua` and `score.lua` answer, having changed nothing, when a rolling window
/// was out of the reach of the keys the call gave it.
pub(super) fn is_behind(reply: &Value) -> bool {
    match reply {
        Value::BulkString(text) => text == b"advance",
        Value::SimpleString(text) => text == "advance",
        _ => false,
    }
}

/// How many times a write is made again after bringing its rolling windows to its clock:
/// once is enough unless another instance moves a window on in between.
pub(super) const WINDOW_ATTEMPTS: usize = 3;

/// A write's reply once its rolling windows were within reach: `None` when the call
/// answered `advance` and may go again (after [`RedisStore::advance_windows`]), else the
/// reply (an error once [`WINDOW_ATTEMPTS`] more calls found a window out of reach).
pub(super) fn settled(
    reply: Result<Value, RedisFailure>,
    attempt: usize,
) -> Option<Result<Value, RedisFailure>> {
    match reply {
        Ok(v) if is_behind(&v) && attempt < WINDOW_ATTEMPTS => None,
        Ok(v) if is_behind(&v) => Some(Err(RedisFailure::Unavailable(
            "a rolling window kept moving out of the write's reach".to_owned(),
        ))),
        other => Some(other),
    }
}

/// A page of a rolling window: by offset, or around an anchor member.
#[derive(Debug, Clone)]
pub struct WindowPageQuery {
    pub window: WindowAt,
    pub view: View,
    /// Offset, or the radius when `anchor` is set.
    pub offset: i64,
    pub limit: i64,
    pub anchor: Option<String>,
}

impl WindowPageQuery {
    /// The `window_page.lua` call.
    pub(super) fn invocation(&self) -> Invocation {
        let mut inv = WINDOW_PAGE.prepare_invoke();
        for key in self.window.keys.every() {
            inv.key(key);
        }
        inv.arg(self.window.slots)
            .arg(self.window.clock)
            .arg(self.window.budget)
            .arg(match self.view {
                View::Real => 0,
                View::Display => 1,
            })
            .arg(self.offset)
            .arg(self.limit)
            .arg(self.anchor.as_deref().unwrap_or(""));
        inv
    }
}

static WINDOW_PAGE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        include_str!("window.lua"),
        include_str!("paging.lua"),
        include_str!("window_page.lua")
    ))
});

static WINDOW_ADVANCE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        include_str!("window.lua"),
        include_str!("window_advance.lua")
    ))
});

/// How many calls a read makes at most while a rolling window drains a slot that left it
/// (10,000 × [`DRAIN_BUDGET`] members).
const MAX_DRAIN_CALLS: usize = 10_000;

impl RedisStore {
    /// Reads pages of rolling windows in one round trip, each first brought to its clock.
    pub async fn window_pages(
        &self,
        queries: &[WindowPageQuery],
    ) -> Result<Vec<PageReply>, RedisFailure> {
        let mut pages: Vec<Option<PageReply>> = vec![None; queries.len()];
        // A window still draining a slot that left it answers `pending`: each call drains
        // a bounded share, so ask again until every page is read.
        for _ in 0..MAX_DRAIN_CALLS {
            let waiting: Vec<usize> = (0..queries.len()).filter(|&i| pages[i].is_none()).collect();
            if waiting.is_empty() {
                break;
            }
            let calls: Vec<Invocation> = waiting.iter().map(|&i| queries[i].invocation()).collect();
            let replies = self
                .run_script_all("window_page", &WINDOW_PAGE, &calls)
                .await?;
            for (i, reply) in waiting.into_iter().zip(&replies) {
                let pending = as_array(reply)
                    .and_then(|items| items.first())
                    .and_then(as_text)
                    .is_some_and(|tag| tag == "pending");
                if !pending {
                    pages[i] = Some(PageReply::parse(reply)?);
                }
            }
        }
        pages
            .into_iter()
            .map(|p| {
                p.ok_or_else(|| {
                    RedisFailure::Unavailable(format!(
                        "a rolling window was still draining after {MAX_DRAIN_CALLS} calls"
                    ))
                })
            })
            .collect()
    }

    /// Brings each rolling window of the writes whose windows are `of_writes` to its
    /// clock with every key, calling again until its head is there and its drains are
    /// empty (a write found it out of its keys' reach: see `window.lua`). Windows named
    /// twice are brought once, to the later clock. Answers each write's windows as it is
    /// to be made again: a window whose head another instance's clock moved more than a
    /// slot past this write's clock is taken at the head's slot less one, whose keys reach
    /// the head (the write lands in the head slot, as one from a clock a slot behind does).
    pub(super) async fn advance_windows(
        &self,
        of_writes: &[&[WindowTarget]],
    ) -> Result<Vec<Vec<WindowTarget>>, RedisFailure> {
        let mut waiting: Vec<&WindowAt> = Vec::new();
        for w in of_writes.iter().flat_map(|ws| ws.iter().map(|w| &w.window)) {
            match waiting.iter_mut().find(|o| o.keys == w.keys) {
                Some(o) if o.clock < w.clock => *o = w,
                Some(_) => {}
                None => waiting.push(w),
            }
        }
        let mut heads: Vec<(&WindowKeys, i64)> = Vec::new();
        for _ in 0..MAX_DRAIN_CALLS {
            if waiting.is_empty() {
                let head_of = |keys: &WindowKeys| {
                    heads
                        .iter()
                        .find(|(k, _)| *k == keys)
                        .map(|&(_, head)| head)
                };
                return Ok(of_writes
                    .iter()
                    .map(|ws| {
                        ws.iter()
                            .map(|w| {
                                let mut w = w.clone();
                                if let Some(head) = head_of(&w.window.keys)
                                    && head > w.window.clock + 1
                                {
                                    w.window.clock = head - 1;
                                }
                                w
                            })
                            .collect()
                    })
                    .collect());
            }
            let calls: Vec<Invocation> = waiting.iter().map(|w| w.advance()).collect();
            let replies = self
                .run_script_all("window_advance", &WINDOW_ADVANCE, &calls)
                .await?;
            let mut still = Vec::new();
            for (w, reply) in waiting.into_iter().zip(&replies) {
                let (head, pending) = as_array(reply)
                    .and_then(|items| Some((as_int(items.first()?)?, as_int(items.get(1)?)?)))
                    .ok_or_else(|| RedisFailure::Reply(format!("window_advance: {reply:?}")))?;
                if head < w.clock || pending > 0 {
                    still.push(w);
                } else {
                    heads.push((&w.keys, head));
                }
            }
            waiting = still;
        }
        Err(RedisFailure::Unavailable(format!(
            "a rolling window was still draining after {MAX_DRAIN_CALLS} calls"
        )))
    }
}
