//! sea-orm entities, one per table of the `migrations` crate.

pub mod admin_user;
pub mod api_key;
pub mod archive_cursor;
pub mod archived_bucket;
pub mod archived_entry;
pub mod audit_entry;
pub mod board;
pub mod board_webhook;
pub mod board_webhook_delivery;
pub mod identity_provider;
pub mod league;
pub mod league_player;
pub mod league_result;
pub mod league_reward;
pub mod league_season;
pub mod ledger_cursor;
pub mod ledger_gap;
pub mod ledger_record;
pub mod ledger_voter;
pub mod ledger_voter_mark;
pub mod member;
pub mod member_removal;
pub mod rate_rule;
pub mod revocation;
pub mod watch;
pub mod webhook_delivery;
