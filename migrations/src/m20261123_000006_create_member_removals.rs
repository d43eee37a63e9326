//! Member removals waiting for Redis: a deleted member's scores leave Redis after the
//! SQL delete commits, and a row here keeps that step until it is done, so a failed or
//! interrupted Redis step is finished at the next start-up.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(MemberRemovals::Table)
                    .if_not_exists()
                    .col(big_pk_auto(MemberRemovals::Id))
                    .col(big_integer(MemberRemovals::BoardId))
                    .col(string_len(MemberRemovals::MemberId, 64))
                    .col(date_time(MemberRemovals::RemovedAt))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(MemberRemovals::Table).to_owned())
            .await
    }
}

#[derive(DeriveIden)]
enum MemberRemovals {
    Table,
    Id,
    BoardId,
    MemberId,
    RemovedAt,
}
