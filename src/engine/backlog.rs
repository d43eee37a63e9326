//! What the ledger's drain last saw: per board, the ledgers (the board's own, or a
//! family's rooms') holding entries not yet in SQL and when the oldest of them was
//! accepted. `/readyz` and `/metrics` report it; every
//! instance looks at every board's ledger on each pass, holder of its lease or not.
//! Also the family instances whose ledger entries this instance could not note for the
//! drain (`Backlogs::unnoted`), which its drain notes on its next pass. And the boards
//! whose voter index this instance knows to be complete (`Backlogs::voters_indexed`).

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

/// One board's backlog.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Backlog {
    /// Ledgers with entries waiting: 1 for a plain board whose entries wait (0 when none
    /// does), each such room of a family.
    pub pending: u64,
    /// When the oldest pending entry was accepted (ms since the epoch).
    pub oldest_ms: Option<i64>,
}

impl Backlog {
    /// Seconds since the oldest pending entry was accepted; 0 when none is pending.
    pub fn lag_s(&self, now_ms: i64) -> f64 {
        self.oldest_ms
            .map_or(0.0, |t| (now_ms - t).max(0) as f64 / 1000.0)
    }
}

/// Every board's backlog, by board id, and the token this instance's drain holds the
/// boards' leases with (a recount drains with it too, so it never waits on itself).
#[derive(Debug)]
pub struct Backlogs {
    boards: Mutex<HashMap<i64, Backlog>>,
    token: String,
    /// A rebuild from the ledgers due or under way (from the moment Redis was found
    /// empty): board id -> (replayed, to replay) of the boards it reached.
    rebuilds: Mutex<Option<HashMap<i64, (i64, i64)>>>,
    /// Family id -> instance -> when its entries were appended (ms): instances whose
    /// writes appended ledger entries the family's note of them did not reach.
    unnoted: Mutex<HashMap<i64, HashMap<String, i64>>>,
    /// Boards whose voter index this instance's drain brought up to their last entry and
    /// that it has stored no entry for since. Empty at start: every board is looked at
    /// once.
    indexed: Mutex<HashSet<i64>>,
}

impl Default for Backlogs {
    fn default() -> Self {
        Self {
            boards: Mutex::default(),
            token: format!("{:016x}", rand::random::<u64>()),
            rebuilds: Mutex::default(),
            unnoted: Mutex::default(),
            indexed: Mutex::default(),
        }
    }
}

impl Backlogs {
    /// Redis was found empty: a rebuild is due until [`Self::rebuilt`].
    pub fn rebuild_due(&self) {
        if let Ok(mut rebuilds) = self.rebuilds.lock() {
            rebuilds.get_or_insert_with(HashMap::new);
        }
    }

    /// Records a board's rebuild progress: `done` of `until` entries replayed.
    pub fn rebuilding(&self, board: i64, done: i64, until: i64) {
        if let Ok(mut rebuilds) = self.rebuilds.lock() {
            rebuilds
                .get_or_insert_with(HashMap::new)
                .insert(board, (done, until));
        }
    }

    /// Every rebuild is done.
    pub fn rebuilt(&self) {
        if let Ok(mut rebuilds) = self.rebuilds.lock() {
            *rebuilds = None;
        }
    }

    /// A rebuild due or under way: (boards reached, entries replayed, entries to
    /// replay).
    pub fn rebuild_progress(&self) -> Option<(usize, i64, i64)> {
        let rebuilds = self.rebuilds.lock().ok()?;
        rebuilds.as_ref().map(|boards| {
            boards
                .values()
                .fold((boards.len(), 0, 0), |(n, d, u), (done, until)| {
                    (n, d + done, u + until)
                })
        })
    }

    /// Instances of family `family` whose ledger entries (appended at `ms`) the drain
    /// was not told of: it notes them on its next pass.
    pub fn unnoted(&self, family: i64, instances: &[&str], ms: i64) {
        if let Ok(mut unnoted) = self.unnoted.lock() {
            let waiting = unnoted.entry(family).or_default();
            for instance in instances {
                let at = waiting.entry((*instance).to_owned()).or_insert(ms);
                *at = (*at).min(ms);
            }
        }
    }

    /// Takes the instances waiting to be noted, by family.
    pub fn take_unnoted(&self) -> HashMap<i64, HashMap<String, i64>> {
        self.unnoted
            .lock()
            .map(|mut u| std::mem::take(&mut *u))
            .unwrap_or_default()
    }

    /// Whether this instance knows `board`'s voter index to be complete.
    pub fn voters_indexed(&self, board: i64) -> bool {
        self.indexed.lock().is_ok_and(|i| i.contains(&board))
    }

    /// Records whether `board`'s voter index is complete (`false`: the drain stored
    /// entries after it).
    pub fn set_voters_indexed(&self, board: i64, complete: bool) {
        if let Ok(mut indexed) = self.indexed.lock() {
            if complete {
                indexed.insert(board);
            } else {
                indexed.remove(&board);
            }
        }
    }

    /// This instance's drain token.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// Replaces what is known with one pass's findings (boards left out are gone).
    pub fn replace(&self, seen: HashMap<i64, Backlog>) {
        if let Ok(mut boards) = self.boards.lock() {
            *boards = seen;
        }
    }

    /// The largest lag of any board, and the ledgers waiting over all of them.
    pub fn total(&self, now_ms: i64) -> (f64, u64) {
        let Ok(boards) = self.boards.lock() else {
            return (0.0, 0);
        };
        boards.values().fold((0.0, 0), |(lag, pending), b| {
            (lag.max(b.lag_s(now_ms)), pending + b.pending)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_total_lag_is_the_oldest_boards_and_pending_adds_up() {
        let backlogs = Backlogs::default();
        assert_eq!(backlogs.total(10_000), (0.0, 0));
        backlogs.replace(HashMap::from([
            (
                1,
                Backlog {
                    pending: 3,
                    oldest_ms: Some(8_500),
                },
            ),
            (
                2,
                Backlog {
                    pending: 2,
                    oldest_ms: Some(9_000),
                },
            ),
            (3, Backlog::default()),
        ]));
        assert_eq!(backlogs.total(10_000), (1.5, 5));
        backlogs.replace(HashMap::new());
        assert_eq!(backlogs.total(10_000), (0.0, 0));
    }
}
