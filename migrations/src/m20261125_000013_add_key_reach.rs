//! API keys' `boards` and `leagues`: the boards and leagues a key may reach
//! (comma-separated slugs; `NULL`, as for every key made before, reaches every one).

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for column in [ApiKeys::Boards, ApiKeys::Leagues] {
            manager
                .alter_table(
                    Table::alter()
                        .table(ApiKeys::Table)
                        .add_column(text_null(column))
                        .to_owned(),
                )
                .await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for column in [ApiKeys::Leagues, ApiKeys::Boards] {
            manager
                .alter_table(
                    Table::alter()
                        .table(ApiKeys::Table)
                        .drop_column(column)
                        .to_owned(),
                )
                .await?;
        }
        Ok(())
    }
}

#[derive(DeriveIden, Clone, Copy)]
enum ApiKeys {
    Table,
    Boards,
    Leagues,
}
