//! `ledger_records`: the vote ledger in SQL, one row per entry holding the entry whole
//! (its JSON, as Redis held it), beside the columns its readers look up by: the board's
//! `seq`, the entry's id, its time, its voter (what the voter index is filled from) and
//! the revocation that struck it out. It replaces `ledger_entries`, which took each
//! entry apart into 16 columns: on SQLite that cost five times the row itself
//! (bench/notes/2026-11-29-ledger-records.md). The entries already stored are copied
//! over, each made into the same JSON, and the old table is dropped.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;
use sea_orm_migration::sea_orm::{ConnectionTrait, DbBackend};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(LedgerRecords::Table)
                    .if_not_exists()
                    .col(big_integer(LedgerRecords::BoardId))
                    .col(string_len(LedgerRecords::Instance, 64).default(""))
                    .col(big_integer(LedgerRecords::Seq))
                    .col(big_integer(LedgerRecords::EntryId))
                    .col(big_integer(LedgerRecords::AtMs))
                    .col(string_len_null(LedgerRecords::Voter, 128))
                    .col(big_integer_null(LedgerRecords::Revoked))
                    .col(text(LedgerRecords::Entry))
                    .primary_key(
                        Index::create()
                            .col(LedgerRecords::BoardId)
                            .col(LedgerRecords::Instance)
                            .col(LedgerRecords::Seq),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("ix_ledger_records_at")
                    .table(LedgerRecords::Table)
                    .col(LedgerRecords::BoardId)
                    .col(LedgerRecords::Instance)
                    .col(LedgerRecords::AtMs)
                    .to_owned(),
            )
            .await?;
        // Each backend's JSON object of an entry's columns, with the names and values
        // `domain::ledger::Entry` reads (a null field reads as absent).
        let object = match manager.get_database_backend() {
            DbBackend::Sqlite => "json_object",
            DbBackend::Postgres => "json_build_object",
            _ => "JSON_OBJECT",
        };
        let cast = if manager.get_database_backend() == DbBackend::Postgres {
            "::text"
        } else {
            ""
        };
        manager
            .get_connection()
            .execute_unprepared(&format!(
                "INSERT INTO ledger_records (board_id, instance, seq, entry_id, at_ms, voter, \
                 revoked, entry) SELECT board_id, instance, seq, entry_id, at_ms, voter, \
                 revoked, {object}('id', entry_id, 'at', at_ms, 'recorded', recorded_ms, \
                 'member', member, 'voter', voter, 'channel', channel, 'terminal', terminal, \
                 'count', count, 'op', op, 'value', value, 'display', display, 'carry', carry, \
                 'adjusts', adjusts){cast} FROM ledger_entries"
            ))
            .await?;
        manager
            .drop_table(Table::drop().table(LedgerEntries::Table).to_owned())
            .await
    }

    async fn down(&self, _manager: &SchemaManager) -> Result<(), DbErr> {
        Err(DbErr::Migration(
            "ledger_records is not taken apart into ledger_entries again; restore a backup \
             taken before this version"
                .to_owned(),
        ))
    }
}

#[derive(DeriveIden)]
enum LedgerRecords {
    Table,
    BoardId,
    Instance,
    Seq,
    EntryId,
    AtMs,
    Voter,
    Revoked,
    Entry,
}

#[derive(DeriveIden)]
enum LedgerEntries {
    Table,
}
