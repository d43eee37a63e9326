//! How a configuration change reaches every instance's cache (`engine::config`).
//!
//! An admin change reloads the changed part on the instance that made it, then counts the
//! change in a version in Redis and publishes a notice in the same script (`announce`);
//! every other instance's listener reloads the same part from SQL. Three things keep a
//! notice from being lost for good:
//! - an announce that fails is retried in the background until Redis takes it;
//! - the listener pings its pub/sub connection and reconnects when it goes silent, and
//!   reloads everything after (re)subscribing;
//! - every instance reads the version every `OVATION_CONFIG_CHECK_MS` and reloads
//!   everything when it moved past the last change it applied.

use std::sync::atomic::Ordering;
use std::time::Duration;

use crate::store::redis::RedisStore;

use super::config::Change;
use super::error::EngineError;
use super::state::AppState;

/// Reloads `change` here, then tells the other instances. When Redis does not take the
/// notice, it is retried in the background: the change is saved and live here already.
pub async fn changed(state: &AppState, change: Change) -> Result<(), EngineError> {
    let (cache, db, redis) = (&*state.config, &state.db, &state.redis);
    cache.apply(db, &change).await?;
    let payload = change.encode();
    match redis.announce_config_change(&payload).await {
        Ok(version) => cache.applied(version),
        Err(err) => {
            tracing::warn!(error = %err, %payload, "failed to announce a configuration change; retrying");
            tokio::spawn(announce_until_taken(redis.clone(), payload));
        }
    }
    Ok(())
}

/// Longest pause between two tries of an announce.
const MAX_ANNOUNCE_DELAY: Duration = Duration::from_secs(5);

async fn announce_until_taken(redis: RedisStore, payload: String) {
    let mut delay = Duration::from_millis(100);
    loop {
        tokio::time::sleep(delay).await;
        match redis.announce_config_change(&payload).await {
            Ok(_) => {
                tracing::info!(%payload, "announced a configuration change after retrying");
                return;
            }
            Err(err) => tracing::debug!(error = %err, %payload, "announce failed again"),
        }
        delay = (delay * 2).min(MAX_ANNOUNCE_DELAY);
    }
}

/// Follows configuration notices until the process ends: reconnects after failures,
/// pings the connection every `check` and reconnects when it stays silent, and catches
/// up on everything after each (re)subscription, since notices sent meanwhile are lost.
pub async fn listen(state: AppState, check: Duration) {
    let (cache, db, redis) = (&state.config, &state.db, &state.redis);
    loop {
        match redis.config_notices().await {
            Ok(mut notices) => {
                match redis.config_version().await {
                    Ok(version) => {
                        if let Err(err) = cache.catch_up(db, version).await {
                            tracing::warn!(error = %err, "failed to reload configuration");
                        }
                    }
                    Err(err) => {
                        tracing::debug!(error = %err, "cannot read the configuration version")
                    }
                }
                let mut pings = tokio::time::interval(check);
                pings.reset();
                loop {
                    tokio::select! {
                        payload = notices.next() => {
                            let Some(payload) = payload else { break };
                            let Some((version, change)) = Change::decode(&payload) else {
                                tracing::warn!(%payload, "ignoring an unknown configuration notice");
                                continue;
                            };
                            match cache.apply(db, &change).await {
                                Ok(()) => cache.applied(version),
                                Err(err) => tracing::warn!(error = %err, ?change, "failed to reload configuration"),
                            }
                        }
                        _ = pings.tick() => {
                            if let Err(err) = notices.ping().await {
                                tracing::warn!(error = %err, "configuration listener went silent");
                                break;
                            }
                        }
                    }
                }
                tracing::warn!("configuration listener disconnected; reconnecting");
            }
            Err(err) => {
                tracing::debug!(error = %err, "configuration listener cannot connect; retrying")
            }
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Reads the configuration version every `check` and reloads everything when it moved
/// past the last change this instance applied: the backstop for notices that never
/// arrived.
pub async fn check_version(state: AppState, check: Duration) {
    let (cache, db, redis) = (&state.config, &state.db, &state.redis);
    let mut ticks = tokio::time::interval(check);
    // The first tick is immediate; start-up has just loaded everything.
    ticks.tick().await;
    loop {
        ticks.tick().await;
        let version = match redis.config_version().await {
            Ok(version) => version,
            Err(err) => {
                tracing::debug!(error = %err, "cannot read the configuration version");
                continue;
            }
        };
        if version != cache.version.load(Ordering::SeqCst) {
            tracing::info!(version, "configuration version moved; reloading");
            if let Err(err) = cache.catch_up(db, version).await {
                tracing::warn!(error = %err, "failed to reload configuration");
            }
        }
    }
}
