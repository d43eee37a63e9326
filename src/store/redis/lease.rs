//! `lease.lua`: a lock with a lease in Redis, so one instance at a time runs a background
//! job (the archive, a board's webhook watcher) and another takes over when the holder
//! stops renewing it.

use std::sync::LazyLock;
use std::time::Duration;

use redis::Script;

use super::keys::BoardKeys;
use super::reply::{as_int, reply_error};
use super::{RedisFailure, RedisStore};

static LEASE: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("lease.lua")));

/// One instance's claim on a lease.
#[derive(Debug, Clone)]
pub struct Lease {
    pub key: String,
    /// Unique to the holder.
    pub token: String,
    pub length: Duration,
}

impl RedisStore {
    /// The archive's lease for the holder `token`.
    pub fn archive_lease(&self, token: &str, length: Duration) -> Lease {
        Lease {
            key: self.keys.archive_lease(),
            token: token.to_owned(),
            length,
        }
    }

    async fn lease(&self, lease: &Lease, op: &str) -> Result<bool, RedisFailure> {
        let mut call = LEASE.key(&lease.key);
        call.arg(op)
            .arg(&lease.token)
            .arg(lease.length.as_millis() as u64);
        let reply = self.run_script_all("lease", &LEASE, &[call]).await?;
        let held = reply.first().and_then(as_int);
        held.map(|h| h == 1)
            .ok_or_else(|| reply_error("lease", &redis::Value::Array(reply)))
    }

    /// The lease that lets one instance at a time watch `board`'s tops for its webhooks,
    /// for the holder `token`.
    pub fn webhook_lease(&self, board: &BoardKeys, token: &str, length: Duration) -> Lease {
        Lease {
            key: board.webhook_lease(),
            token: token.to_owned(),
            length,
        }
    }

    /// Takes the lease when it is free (or already the caller's); answers whether the
    /// caller holds it.
    pub async fn take_lease(&self, lease: &Lease) -> Result<bool, RedisFailure> {
        self.lease(lease, "take").await
    }

    /// Extends the caller's lease; `false` when it is no longer the caller's.
    pub async fn renew_lease(&self, lease: &Lease) -> Result<bool, RedisFailure> {
        self.lease(lease, "renew").await
    }

    /// Lets the caller's lease go.
    pub async fn release_lease(&self, lease: &Lease) -> Result<bool, RedisFailure> {
        self.lease(lease, "release").await
    }
}
