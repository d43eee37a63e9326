//! The tops this instance watches for live subscribers (`engine::events`): per watched
//! top its broadcast channel and the last top read; and how many streams are open.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::broadcast;

use crate::domain::live::{Event, Snapshot};
use crate::domain::period::Period;
use crate::domain::score::View;

/// What a watched top is: the board (by name), the period, the view and its size.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Watch {
    pub board: String,
    pub period: Period,
    pub view: View,
    pub top: i64,
}

/// A running watcher: its channel, and the last top it read (a new subscriber's first).
pub struct Watcher {
    pub events: broadcast::Sender<Arc<Vec<Event>>>,
    pub last: Snapshot,
}

/// Every watcher of this instance, and its open streams.
#[derive(Default)]
pub struct Watchers {
    running: Mutex<HashMap<Watch, Watcher>>,
    streams: Arc<AtomicUsize>,
}

/// One open stream, counted while it lives.
pub struct StreamSlot(Arc<AtomicUsize>);

impl Drop for StreamSlot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Watchers {
    /// The running watchers, locked.
    pub fn lock(&self) -> MutexGuard<'_, HashMap<Watch, Watcher>> {
        self.running.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A slot for one more stream, unless `max` are open.
    pub fn open_stream(&self, max: usize) -> Option<StreamSlot> {
        self.streams
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |open| {
                (open < max).then_some(open + 1)
            })
            .ok()
            .map(|_| StreamSlot(self.streams.clone()))
    }

    /// Stops every watcher: their subscribers' streams end (at shutdown).
    pub fn close_all(&self) {
        self.lock().clear();
    }
}
