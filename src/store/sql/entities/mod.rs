//! sea-orm entities, one per table of the `migrations` crate.

pub mod api_key;
pub mod board;
pub mod member;
pub mod rate_rule;
