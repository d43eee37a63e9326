//! `ledger_gaps`: ranges of a ledger's `seq` that SQL lost after the drain had trimmed
//! them from Redis (SQL restored from a backup older than Redis's trim): recorded when
//! found, so new entries are numbered after them (no `seq` is ever given twice) and the
//! loss is reported, never hidden.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(LedgerGaps::Table)
                    .if_not_exists()
                    .col(big_integer(LedgerGaps::BoardId))
                    .col(string_len(LedgerGaps::Instance, 64).default(""))
                    .col(big_integer(LedgerGaps::FromSeq))
                    .col(big_integer(LedgerGaps::ToSeq))
                    .col(big_integer(LedgerGaps::FoundMs))
                    .primary_key(
                        Index::create()
                            .col(LedgerGaps::BoardId)
                            .col(LedgerGaps::Instance)
                            .col(LedgerGaps::FromSeq),
                    )
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(LedgerGaps::Table).to_owned())
            .await
    }
}

#[derive(DeriveIden)]
enum LedgerGaps {
    Table,
    BoardId,
    Instance,
    FromSeq,
    ToSeq,
    FoundMs,
}
