//! Votes, rate limits, leaderboards and configuration: domain rules and stores put together.

pub mod activity;
pub mod admin;
pub mod archive;
pub mod auth;
pub mod backlog;
pub mod boards;
pub mod config;
pub mod config_sync;
pub mod durability;
pub mod error;
pub mod leaderboard;
pub mod league_close;
pub mod league_play;
pub mod leagues;
pub mod ledger;
pub mod limits;
pub mod read_cache;
pub mod readiness;
pub mod rebuild;
pub mod reconcile;
pub mod recount;
pub mod revocations;
pub mod state;
pub mod users;
pub mod webhooks;
pub mod writes;
