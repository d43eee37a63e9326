//! Ovation's SQL schema, as sea-orm migrations applied in order at start-up.

pub use sea_orm_migration::prelude::*;

mod m20261122_000001_create_boards;
mod m20261122_000002_create_members;
mod m20261122_000003_create_api_keys;
mod m20261122_000004_create_rate_rules;
mod m20261122_000005_create_admin_users;
mod m20261123_000006_create_member_removals;
mod m20261123_000007_add_display_decimals;
mod m20261123_000008_add_embed_origins;
mod m20261123_000009_add_scoring;
mod m20261124_000010_create_archive;
mod m20261124_000011_create_leagues;
mod m20261124_000012_add_season_rules_and_limits;
mod m20261125_000013_add_key_reach;
mod m20261125_000014_add_reward_delivered_to;
mod m20261125_000015_webhook_guards;
mod m20261125_000016_index_bracket_results;
mod m20261125_000017_add_board_instances;
mod m20261125_000018_create_ledger;
mod m20261126_000019_create_board_webhooks;
mod m20261126_000020_add_ledger_adjusts;
mod m20261126_000021_add_votes_counted_from;
mod m20261128_000022_add_room_budget;
mod m20261128_000023_create_ledger_gaps;
mod m20261128_000024_create_identity_providers;
mod m20261128_000025_create_ledger_voters;
mod m20261129_000026_create_ledger_records;
mod m20261129_000027_create_watches;
mod m20261129_000028_create_held_votes;
mod m20261129_000029_add_tell_held;

/// Applies every migration in order.
pub struct Migrator;

#[async_trait::async_trait]
impl MigratorTrait for Migrator {
    fn migrations() -> Vec<Box<dyn MigrationTrait>> {
        vec![
            Box::new(m20261122_000001_create_boards::Migration),
            Box::new(m20261122_000002_create_members::Migration),
            Box::new(m20261122_000003_create_api_keys::Migration),
            Box::new(m20261122_000004_create_rate_rules::Migration),
            Box::new(m20261122_000005_create_admin_users::Migration),
            Box::new(m20261123_000006_create_member_removals::Migration),
            Box::new(m20261123_000007_add_display_decimals::Migration),
            Box::new(m20261123_000008_add_embed_origins::Migration),
            Box::new(m20261123_000009_add_scoring::Migration),
            Box::new(m20261124_000010_create_archive::Migration),
            Box::new(m20261124_000011_create_leagues::Migration),
            Box::new(m20261124_000012_add_season_rules_and_limits::Migration),
            Box::new(m20261125_000013_add_key_reach::Migration),
            Box::new(m20261125_000014_add_reward_delivered_to::Migration),
            Box::new(m20261125_000015_webhook_guards::Migration),
            Box::new(m20261125_000016_index_bracket_results::Migration),
            Box::new(m20261125_000017_add_board_instances::Migration),
            Box::new(m20261125_000018_create_ledger::Migration),
            Box::new(m20261126_000019_create_board_webhooks::Migration),
            Box::new(m20261126_000020_add_ledger_adjusts::Migration),
            Box::new(m20261126_000021_add_votes_counted_from::Migration),
            Box::new(m20261128_000022_add_room_budget::Migration),
            Box::new(m20261128_000023_create_ledger_gaps::Migration),
            Box::new(m20261128_000024_create_identity_providers::Migration),
            Box::new(m20261128_000025_create_ledger_voters::Migration),
            Box::new(m20261129_000026_create_ledger_records::Migration),
            Box::new(m20261129_000027_create_watches::Migration),
            Box::new(m20261129_000028_create_held_votes::Migration),
            Box::new(m20261129_000029_add_tell_held::Migration),
        ]
    }
}
