//! Ovation: a real-time voting and leaderboard service.
//!
//! # Layout
//!
//! Read in this order:
//! - [`domain`]: pure types and rules (ids, periods and buckets, scores, boards, scopes).
//! - [`store`]: the only code that talks to SQL ([`store::sql`]) or Redis
//!   ([`store::redis`], with its Lua scripts).
//! - [`engine`]: votes, score writes, leaderboards, configuration cache and admin
//!   changes, and [`engine::state::AppState`], the services every handler shares.
//! - [`api`]: JSON handlers, one module per resource, and the OpenAPI document.
//! - [`web`]: HTML pages: the admin dashboard and the public voting page.
//! - [`i18n`]: English and Chinese messages, numbers, times and zones (`locales/`).
//! - [`config`], [`startup`], [`error`], [`telemetry`], [`metrics`],
//!   [`routes`], [`cli`]: running it.

pub mod api;
pub mod cli;
pub mod config;
pub mod domain;
pub mod engine;
pub mod error;
pub mod i18n;
pub mod metrics;
pub mod routes;
pub mod startup;
pub mod store;
pub mod telemetry;
pub mod web;

/// The version and the commit this binary is built from: `0.1.0 (abc123def456)`.
pub const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (", env!("OVATION_COMMIT"), ")");
