//! `ledger_entries.adjusts`: the bucket an adjustment changes (`<period>:<label>`), where
//! it alone counts; null for a write, which counts in every period.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(LedgerEntries::Table)
                    .add_column(string_len_null(LedgerEntries::Adjusts, 64))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(LedgerEntries::Table)
                    .drop_column(LedgerEntries::Adjusts)
                    .to_owned(),
            )
            .await
    }
}

#[derive(DeriveIden)]
enum LedgerEntries {
    Table,
    Adjusts,
}
