//! Integration tests: the app on port 0 against a real redis-server and a real SQL database.

#![allow(clippy::unwrap_used)] // Test helpers panic on purpose when the app misbehaves.

mod adjustments;
mod admin;
mod archive;
mod board_webhooks;
mod browser;
mod cli;
mod cluster;
mod contract;
mod crash;
mod docs;
mod drain_crash;
mod durability;
mod events;
mod families;
mod faults;
mod group_commit;
mod harness;
mod held;
mod idempotency;
mod keys;
mod layouts;
mod league_play;
mod leagues;
mod ledger;
mod limits;
mod ops;
mod pages;
mod proxy;
mod reads;
mod retries;
mod scores;
mod sessions;
mod sharded_votes;
mod sync;
mod trending;
mod voters;
mod votes;
mod webhook_verify;
mod webhooks;
mod windows;
