//! `boards.instance_ttl_s`: set for a family (a board whose instances come into being
//! with their first write), the seconds an instance lives after its last write; null for
//! a plain board.

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
                    .add_column(big_integer_null(Boards::InstanceTtlS))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(Boards::Table)
                    .drop_column(Boards::InstanceTtlS)
                    .to_owned(),
            )
            .await
    }
}

#[derive(DeriveIden)]
enum Boards {
    Table,
    InstanceTtlS,
}
