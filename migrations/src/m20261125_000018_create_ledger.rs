//! The vote ledger: `boards.ledger` (whether a board's accepted writes are recorded; on
//! for the `votes` boards that exist, as for new ones), `boards.late_grace_s` (how long
//! after `ends_at` a write stamped before it is still taken), `ledger_entries` (every accepted
//! write, numbered per board by `seq` without gaps; indexed by voter for revocations and
//! by time for recounts), `revocations` (a voter's votes struck out, with the reason)
//! and `ledger_cursors` (per board and
//! Redis source, the last entry moved to SQL: the drain's place, committed with the
//! entries it covers).

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // One column per statement: SQLite alters one column at a time.
        let columns = [
            boolean(Boards::Ledger).default(false).to_owned(),
            big_integer(Boards::LateGraceS).default(0).to_owned(),
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
            .exec_stmt(
                Query::update()
                    .table(Boards::Table)
                    .value(Boards::Ledger, true)
                    .and_where(Expr::col(Boards::Scoring).eq("votes"))
                    .and_where(Expr::col(Boards::InstanceTtlS).is_null())
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(LedgerEntries::Table)
                    .if_not_exists()
                    .col(big_integer(LedgerEntries::BoardId))
                    .col(string_len(LedgerEntries::Instance, 64).default(""))
                    .col(big_integer(LedgerEntries::Seq))
                    .col(big_integer(LedgerEntries::EntryId))
                    .col(big_integer(LedgerEntries::AtMs))
                    .col(big_integer(LedgerEntries::RecordedMs))
                    .col(string_len(LedgerEntries::Member, 64))
                    .col(string_len_null(LedgerEntries::Voter, 128))
                    .col(string_len_null(LedgerEntries::Channel, 64))
                    .col(string_len_null(LedgerEntries::Terminal, 64))
                    .col(big_integer(LedgerEntries::Count))
                    .col(string_len_null(LedgerEntries::Op, 8))
                    .col(big_integer_null(LedgerEntries::Value))
                    .col(big_integer(LedgerEntries::Display))
                    .col(big_integer(LedgerEntries::Carry))
                    .col(big_integer_null(LedgerEntries::Revoked))
                    .primary_key(
                        Index::create()
                            .col(LedgerEntries::BoardId)
                            .col(LedgerEntries::Instance)
                            .col(LedgerEntries::Seq),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("ix_ledger_entries_voter")
                    .table(LedgerEntries::Table)
                    .col(LedgerEntries::BoardId)
                    .col(LedgerEntries::Voter)
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("ix_ledger_entries_at")
                    .table(LedgerEntries::Table)
                    .col(LedgerEntries::BoardId)
                    .col(LedgerEntries::Instance)
                    .col(LedgerEntries::AtMs)
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(LedgerCursors::Table)
                    .if_not_exists()
                    .col(big_integer(LedgerCursors::BoardId))
                    .col(string_len(LedgerCursors::Instance, 64).default(""))
                    .col(integer(LedgerCursors::Source))
                    .col(big_integer(LedgerCursors::LastEntryId))
                    .primary_key(
                        Index::create()
                            .col(LedgerCursors::BoardId)
                            .col(LedgerCursors::Instance)
                            .col(LedgerCursors::Source),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(Revocations::Table)
                    .if_not_exists()
                    .col(big_pk_auto(Revocations::Id))
                    .col(big_integer(Revocations::BoardId))
                    .col(string_len(Revocations::Voter, 128))
                    .col(big_integer_null(Revocations::FromMs))
                    .col(big_integer_null(Revocations::ToMs))
                    .col(text(Revocations::Reason))
                    .col(string_len(Revocations::Actor, 200))
                    .col(date_time(Revocations::CreatedAt))
                    .col(big_integer(Revocations::Votes))
                    .col(text(Revocations::ByMember))
                    .col(boolean(Revocations::Applied).default(false))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("ix_revocations_board")
                    .table(Revocations::Table)
                    .col(Revocations::BoardId)
                    .col(Revocations::Id)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(Revocations::Table).to_owned())
            .await?;
        manager
            .drop_table(Table::drop().table(LedgerCursors::Table).to_owned())
            .await?;
        manager
            .drop_table(Table::drop().table(LedgerEntries::Table).to_owned())
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(Boards::Table)
                    .drop_column(Boards::Ledger)
                    .to_owned(),
            )
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(Boards::Table)
                    .drop_column(Boards::LateGraceS)
                    .to_owned(),
            )
            .await
    }
}

#[derive(DeriveIden)]
enum Boards {
    Table,
    Ledger,
    LateGraceS,
    Scoring,
    InstanceTtlS,
}

#[derive(DeriveIden)]
enum LedgerEntries {
    Table,
    BoardId,
    Instance,
    Seq,
    EntryId,
    AtMs,
    RecordedMs,
    Member,
    Voter,
    Channel,
    Terminal,
    Count,
    Op,
    Value,
    Display,
    Carry,
    Revoked,
}

#[derive(DeriveIden)]
enum Revocations {
    Table,
    Id,
    BoardId,
    Voter,
    FromMs,
    ToMs,
    Reason,
    Actor,
    CreatedAt,
    Votes,
    ByMember,
    Applied,
}

#[derive(DeriveIden)]
enum LedgerCursors {
    Table,
    BoardId,
    Instance,
    Source,
    LastEntryId,
}
