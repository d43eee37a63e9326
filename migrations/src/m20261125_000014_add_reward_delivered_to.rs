//! `league_rewards.delivered_to`: the caller (`master`, `key:<id>`) a join handed the
//! reward to, so an operator sees who took it.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(LeagueRewards::Table)
                    .add_column(string_len_null(LeagueRewards::DeliveredTo, 80))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(LeagueRewards::Table)
                    .drop_column(LeagueRewards::DeliveredTo)
                    .to_owned(),
            )
            .await
    }
}

#[derive(DeriveIden)]
enum LeagueRewards {
    Table,
    DeliveredTo,
}
