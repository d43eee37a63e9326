//! The tops this instance watches for live subscribers (`engine::events`): per watched
//! board, period and view one watcher, which holds for each top size its subscribers have
//! asked for a broadcast channel and the last top of that size; and the open streams,
//! counted in all, per client address and apart for dashboard sessions.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::broadcast;

use crate::domain::limit::ip_subject;
use crate::domain::live::{Batch, History, Snapshot};
use crate::domain::period::Period;
use crate::domain::score::View;

/// What a watcher watches: the board (by name), the period and the view. Every top size
/// of it is read at once (the largest, sliced).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Watch {
    pub board: String,
    pub period: Period,
    pub view: View,
}

/// How long a top size with no subscriber left is still watched, so that a stream that
/// broke and comes back within it resumes from its last id.
pub const RESUME_GRACE: Duration = Duration::from_secs(30);

/// The subscribers of one top size: their channel, the last top of that size (a new
/// subscriber's first), its numbered changes (what a resumed stream missed), and since
/// when it has had no subscriber.
pub struct Sized {
    pub events: broadcast::Sender<Arc<Batch>>,
    pub last: Snapshot,
    pub history: History,
    idle_since: Option<Instant>,
}

impl Sized {
    /// A size starting at `last`, its channel and history holding `backlog` batches, its
    /// sequence named afresh.
    pub fn new(last: Snapshot, backlog: usize) -> Self {
        Self {
            events: broadcast::channel(backlog).0,
            last,
            history: History::new(rand::random(), backlog),
            idle_since: None,
        }
    }

    /// Whether this size is still watched at `now`: while it has subscribers, and for
    /// [`RESUME_GRACE`] after the last one left.
    pub fn wanted(&mut self, now: Instant) -> bool {
        if self.events.receiver_count() > 0 {
            self.idle_since = None;
            return true;
        }
        now.duration_since(*self.idle_since.get_or_insert(now)) < RESUME_GRACE
    }
}

/// A running watcher: each top size it serves.
#[derive(Default)]
pub struct Watcher {
    pub sizes: HashMap<i64, Sized>,
}

/// Who opens a stream, for the limits on open streams.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Viewer {
    /// A public page or an API client, by its address (counted as rate-limit rules count
    /// it: an IPv6 client by its /64); `None` when unknown.
    Client(Option<IpAddr>),
    /// A signed-in dashboard session: it may use the reserve.
    Dashboard,
}

/// Why a stream could not open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The instance holds as many streams as this viewer may open.
    Full,
    /// This client address holds its most.
    AddressFull,
}

/// The open streams: in all, and per client address.
#[derive(Default)]
struct Open {
    total: usize,
    by_address: HashMap<String, usize>,
}

/// Every watcher of this instance, and its open streams.
#[derive(Default)]
pub struct Watchers {
    running: Mutex<HashMap<Watch, Watcher>>,
    open: Arc<Mutex<Open>>,
}

/// One open stream, counted while it lives.
pub struct StreamSlot {
    open: Arc<Mutex<Open>>,
    address: Option<String>,
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        let mut open = lock(&self.open);
        open.total = open.total.saturating_sub(1);
        if let Some(address) = &self.address
            && let Some(n) = open.by_address.get_mut(address)
        {
            *n -= 1;
            if *n == 0 {
                open.by_address.remove(address);
            }
        }
    }
}

/// The limits a stream opens within.
#[derive(Debug, Clone, Copy)]
pub struct StreamLimits {
    /// Streams in all (`OVATION_EVENTS_MAX_STREAMS`).
    pub max: usize,
    /// Of them, kept for dashboard sessions (`OVATION_EVENTS_DASHBOARD_RESERVE`).
    pub reserve: usize,
    /// Streams one client address holds at most (`OVATION_EVENTS_MAX_STREAMS_PER_IP`).
    pub per_address: usize,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Watchers {
    /// The running watchers, locked.
    pub fn lock(&self) -> MutexGuard<'_, HashMap<Watch, Watcher>> {
        lock(&self.running)
    }

    /// A slot for one more stream of `viewer`: a client stops `reserve` short of `max`
    /// and at `per_address` streams of its address; a dashboard session may use every
    /// slot.
    pub fn open_stream(
        &self,
        viewer: &Viewer,
        limits: StreamLimits,
    ) -> Result<StreamSlot, Refusal> {
        let mut open = lock(&self.open);
        let (ceiling, address) = match viewer {
            Viewer::Dashboard => (limits.max, None),
            Viewer::Client(address) => (
                limits.max.saturating_sub(limits.reserve),
                address.map(ip_subject),
            ),
        };
        if open.total >= ceiling {
            return Err(Refusal::Full);
        }
        if let Some(address) = &address {
            let held = open.by_address.get(address).copied().unwrap_or(0);
            if held >= limits.per_address {
                return Err(Refusal::AddressFull);
            }
            open.by_address.insert(address.clone(), held + 1);
        }
        open.total += 1;
        Ok(StreamSlot {
            open: self.open.clone(),
            address,
        })
    }

    /// Stops every watcher: their subscribers' streams end (at shutdown).
    pub fn close_all(&self) {
        self.lock().clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clients_stop_at_their_address_and_short_of_the_reserve_the_dashboard_does_not() {
        let watchers = Watchers::default();
        let limits = StreamLimits {
            max: 5,
            reserve: 2,
            per_address: 2,
        };
        let a = Viewer::Client(Some("2001:db8:1:2::1".parse().unwrap()));
        let b = Viewer::Client(Some("203.0.113.2".parse().unwrap()));
        let held_a: Vec<StreamSlot> = (0..2)
            .map(|_| watchers.open_stream(&a, limits).unwrap())
            .collect();
        // Another address of the same /64 is the same client.
        let a_too = Viewer::Client(Some("2001:db8:1:2:ffff::9".parse().unwrap()));
        assert_eq!(
            watchers.open_stream(&a_too, limits).err(),
            Some(Refusal::AddressFull)
        );
        let held_b = watchers.open_stream(&b, limits).unwrap();
        // 3 open: clients have reached max - reserve; the dashboard has 2 more.
        assert_eq!(
            watchers.open_stream(&Viewer::Client(None), limits).err(),
            Some(Refusal::Full)
        );
        let dash: Vec<StreamSlot> = (0..2)
            .map(|_| watchers.open_stream(&Viewer::Dashboard, limits).unwrap())
            .collect();
        assert_eq!(
            watchers.open_stream(&Viewer::Dashboard, limits).err(),
            Some(Refusal::Full)
        );
        // A closed stream frees its address's slot and the total's.
        drop(held_a);
        drop(dash);
        assert!(watchers.open_stream(&a, limits).is_ok());
        drop(held_b);
        assert_eq!(lock(&watchers.open).by_address.len(), 0);
        assert_eq!(lock(&watchers.open).total, 0);
    }
}
