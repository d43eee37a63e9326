//! Votes, leaderboards and configuration: domain rules and stores put together.

pub mod admin;
pub mod auth;
pub mod config;
pub mod leaderboard;
pub mod votes;
