//! A short-lived in-process cache of rendered reads (top-N pages and board metadata),
//! with single flight: a burst of identical requests makes one Redis call (or one
//! rendering), and every one of them gets its answer. Entries live
//! `OVATION_READ_CACHE_MS` (default 250 ms; 0 turns it off), so a live ranking or a
//! board's settings are at most that stale.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use tokio::sync::OnceCell;

use super::error::EngineError;

/// Entries kept before expired ones are swept.
const SWEEP_AT: usize = 10_000;

struct Slot {
    born: Instant,
    value: OnceCell<Bytes>,
}

/// Rendered answers by request key.
pub struct ReadCache {
    ttl: Duration,
    slots: Mutex<HashMap<String, Arc<Slot>>>,
}

impl ReadCache {
    pub fn new(ttl: Duration) -> Self {
        Self {
            ttl,
            slots: Mutex::default(),
        }
    }

    /// The answer for `key`: cached, or made by `make` once for all concurrent callers.
    /// A failure is not cached; the next caller tries again.
    pub async fn get_or_make<F, Fut>(&self, key: String, make: F) -> Result<Bytes, EngineError>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<Bytes, EngineError>>,
    {
        if self.ttl.is_zero() {
            crate::metrics::read_cache(false);
            return make().await;
        }
        let slot = {
            let mut slots = self
                .slots
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let fresh = |s: &Arc<Slot>| s.born.elapsed() < self.ttl;
            match slots.get(&key) {
                Some(slot) if fresh(slot) => {
                    crate::metrics::read_cache(true);
                    slot.clone()
                }
                _ => {
                    crate::metrics::read_cache(false);
                    if slots.len() >= SWEEP_AT {
                        slots.retain(|_, s| fresh(s));
                    }
                    let slot = Arc::new(Slot {
                        born: Instant::now(),
                        value: OnceCell::new(),
                    });
                    slots.insert(key, slot.clone());
                    slot
                }
            }
        };
        slot.value.get_or_try_init(make).await.cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[tokio::test]
    async fn a_burst_of_identical_reads_makes_one_call_until_the_entry_expires() {
        let cache = Arc::new(ReadCache::new(Duration::from_millis(200)));
        let calls = Arc::new(AtomicUsize::new(0));
        let mut readers = Vec::new();
        for _ in 0..50 {
            let (cache, calls) = (cache.clone(), calls.clone());
            readers.push(tokio::spawn(async move {
                cache
                    .get_or_make("top".into(), || async {
                        calls.fetch_add(1, Ordering::SeqCst);
                        tokio::time::sleep(Duration::from_millis(20)).await;
                        Ok(Bytes::from_static(b"page"))
                    })
                    .await
                    .unwrap()
            }));
        }
        for r in readers {
            assert_eq!(r.await.unwrap(), Bytes::from_static(b"page"));
        }
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        tokio::time::sleep(Duration::from_millis(250)).await;
        cache
            .get_or_make("top".into(), || async {
                calls.fetch_add(1, Ordering::SeqCst);
                Ok(Bytes::new())
            })
            .await
            .unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn failures_are_not_cached_and_zero_ttl_turns_it_off() {
        let cache = ReadCache::new(Duration::from_secs(10));
        let failed = cache
            .get_or_make("k".into(), || async {
                Err(EngineError::Unavailable("down".into()))
            })
            .await;
        assert!(matches!(failed, Err(EngineError::Unavailable(cause)) if cause == "down"));
        let ok = cache
            .get_or_make("k".into(), || async { Ok(Bytes::from_static(b"x")) })
            .await;
        assert_eq!(ok.unwrap(), Bytes::from_static(b"x"));
        let off = ReadCache::new(Duration::ZERO);
        for expected in [b"1", b"2"] {
            let got = off
                .get_or_make(
                    "k".into(),
                    || async move { Ok(Bytes::from_static(expected)) },
                )
                .await
                .unwrap();
            assert_eq!(got, Bytes::from_static(expected));
        }
    }
}
