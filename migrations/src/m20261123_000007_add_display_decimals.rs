//! Boards' `display_decimals`: how many decimals pages show of a score (the API keeps
//! exact values).

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(Boards::Table)
                    .add_column(small_integer(Boards::DisplayDecimals).default(0))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(Boards::Table)
                    .drop_column(Boards::DisplayDecimals)
                    .to_owned(),
            )
            .await
    }
}

#[derive(DeriveIden)]
enum Boards {
    Table,
    DisplayDecimals,
}
