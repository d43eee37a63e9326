//! The Rust side of the rolling windows (`window.lua`, the library `vote.lua` and
//! `window_page.lua` share): what one window's part of a vote or a read carries, in the
//! order the scripts take it.

use crate::domain::period::Rolling;
use crate::domain::score::View;

use super::keys::BoardKeys;

/// Slots of at least this many members leave a window's totals through one
/// ZUNIONSTORE (O(totals + slot)); smaller ones member by member (O(slot · log totals)).
pub const UNION_FROM: i64 = 256;

/// A rolling window as a script sees it at one moment.
#[derive(Debug, Clone)]
pub struct WindowAt {
    /// Its keys, as [`BoardKeys::window`] names them.
    pub keys: Vec<String>,
    pub slots: i64,
    /// The caller's clock, as a slot number.
    pub clock: i64,
    /// See [`UNION_FROM`]; tests set it to cover both ways.
    pub union_from: i64,
}

impl WindowAt {
    pub fn new(board: &BoardKeys, window: Rolling, clock: i64) -> Self {
        Self {
            keys: board.window(window),
            slots: window.slots(),
            clock,
            union_from: UNION_FROM,
        }
    }
}

/// One rolling window's part of a vote: the window, and the slot of the vote's time.
#[derive(Debug, Clone)]
pub struct WindowTarget {
    pub window: WindowAt,
    pub at: i64,
    /// Its period's name (`rolling:24h`), for the vote's answer.
    pub name: &'static str,
}

impl WindowTarget {
    /// Appends this window's arguments to a `vote.lua` call (its keys go in separately,
    /// after the rules').
    pub(super) fn args(&self, inv: &mut super::Invocation) {
        inv.arg(self.window.slots)
            .arg(self.window.clock)
            .arg(self.at)
            .arg(self.window.union_from);
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
    pub(super) fn invocation(&self) -> super::Invocation {
        let mut inv = super::WINDOW_PAGE.prepare_invoke();
        for key in &self.window.keys {
            inv.key(key);
        }
        inv.arg(self.window.slots)
            .arg(self.window.clock)
            .arg(self.window.union_from)
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
