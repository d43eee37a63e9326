//! A family's room budget: `boards.instance_max_live` (the most rooms live at once),
//! `boards.instance_pages` (whether each room has a public voting page; off for the
//! families that exist, as for new ones) and `boards.instance_ledger_days` (how long an
//! expired room's ledger stays in SQL); and `ledger_cursors.updated_ms`, when the drain
//! last moved a ledger's place, by which expired rooms' ledgers are found and removed
//! (rows that exist get the time this migration runs, so their retention starts now).

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // One column per statement: SQLite alters one column at a time.
        let columns = [
            big_integer(Boards::InstanceMaxLive)
                .default(100_000)
                .to_owned(),
            boolean(Boards::InstancePages).default(false).to_owned(),
            big_integer(Boards::InstanceLedgerDays)
                .default(90)
                .to_owned(),
        ];
        for mut column in columns {
            manager
                .alter_table(
                    Table::alter()
                        .table(Boards::Table)
                        .add_column(&mut column)
                        .to_owned(),
                )
                .await?;
        }
        manager
            .alter_table(
                Table::alter()
                    .table(LedgerCursors::Table)
                    .add_column(big_integer(LedgerCursors::UpdatedMs).default(0))
                    .to_owned(),
            )
            .await?;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64);
        manager
            .exec_stmt(
                Query::update()
                    .table(LedgerCursors::Table)
                    .value(LedgerCursors::UpdatedMs, now)
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("ix_ledger_cursors_updated")
                    .table(LedgerCursors::Table)
                    .col(LedgerCursors::BoardId)
                    .col(LedgerCursors::UpdatedMs)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_index(
                Index::drop()
                    .name("ix_ledger_cursors_updated")
                    .table(LedgerCursors::Table)
                    .to_owned(),
            )
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(LedgerCursors::Table)
                    .drop_column(LedgerCursors::UpdatedMs)
                    .to_owned(),
            )
            .await?;
        for column in [
            Boards::InstanceMaxLive,
            Boards::InstancePages,
            Boards::InstanceLedgerDays,
        ] {
            manager
                .alter_table(
                    Table::alter()
                        .table(Boards::Table)
                        .drop_column(column)
                        .to_owned(),
                )
                .await?;
        }
        Ok(())
    }
}

#[derive(DeriveIden)]
enum Boards {
    Table,
    InstanceMaxLive,
    InstancePages,
    InstanceLedgerDays,
}

#[derive(DeriveIden)]
enum LedgerCursors {
    Table,
    BoardId,
    UpdatedMs,
}
