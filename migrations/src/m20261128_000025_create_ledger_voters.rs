//! The ledger's voter index, written in batches: `ledger_voters` (per board, each
//! entry's voter and place, ordered by voter) and `ledger_voter_marks` (per board's
//! ledger, the `seq` up to which its entries are in `ledger_voters`). The drain used to
//! insert every entry into an index on `(board_id, voter)` as it stored it; random voters
//! made each commit rewrite most of that index's pages. The entries already stored are
//! indexed here, and the old index is dropped.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;
use sea_orm_migration::sea_orm::{ConnectionTrait, DbBackend};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        if manager.get_database_backend() == DbBackend::Sqlite {
            // Clustered on its key: one B-tree, not a table and an index of the same rows.
            db.execute_unprepared(
                "CREATE TABLE IF NOT EXISTS ledger_voters (board_id integer NOT NULL, \
                 voter varchar(128) NOT NULL, instance varchar(64) NOT NULL DEFAULT '', \
                 seq integer NOT NULL, PRIMARY KEY (board_id, voter, instance, seq)) \
                 WITHOUT ROWID",
            )
            .await?;
        } else {
            manager
                .create_table(
                    Table::create()
                        .table(LedgerVoters::Table)
                        .if_not_exists()
                        .col(big_integer(LedgerVoters::BoardId))
                        .col(string_len(LedgerVoters::Voter, 128))
                        .col(string_len(LedgerVoters::Instance, 64).default(""))
                        .col(big_integer(LedgerVoters::Seq))
                        .primary_key(
                            Index::create()
                                .col(LedgerVoters::BoardId)
                                .col(LedgerVoters::Voter)
                                .col(LedgerVoters::Instance)
                                .col(LedgerVoters::Seq),
                        )
                        .to_owned(),
                )
                .await?;
        }
        manager
            .create_table(
                Table::create()
                    .table(LedgerVoterMarks::Table)
                    .if_not_exists()
                    .col(big_integer(LedgerVoterMarks::BoardId))
                    .col(string_len(LedgerVoterMarks::Instance, 64).default(""))
                    .col(big_integer(LedgerVoterMarks::Seq))
                    .primary_key(
                        Index::create()
                            .col(LedgerVoterMarks::BoardId)
                            .col(LedgerVoterMarks::Instance),
                    )
                    .to_owned(),
            )
            .await?;
        db.execute_unprepared(
            "INSERT INTO ledger_voters (board_id, voter, instance, seq) \
             SELECT board_id, voter, instance, seq FROM ledger_entries \
             WHERE voter IS NOT NULL ORDER BY board_id, voter, instance, seq",
        )
        .await?;
        db.execute_unprepared(
            "INSERT INTO ledger_voter_marks (board_id, instance, seq) \
             SELECT board_id, instance, MAX(seq) FROM ledger_entries \
             GROUP BY board_id, instance",
        )
        .await?;
        manager
            .drop_index(
                Index::drop()
                    .name("ix_ledger_entries_voter")
                    .table(LedgerEntries::Table)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
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
            .drop_table(Table::drop().table(LedgerVoterMarks::Table).to_owned())
            .await?;
        manager
            .drop_table(Table::drop().table(LedgerVoters::Table).to_owned())
            .await
    }
}

#[derive(DeriveIden)]
enum LedgerEntries {
    Table,
    BoardId,
    Voter,
}

#[derive(DeriveIden)]
enum LedgerVoters {
    Table,
    BoardId,
    Voter,
    Instance,
    Seq,
}

#[derive(DeriveIden)]
enum LedgerVoterMarks {
    Table,
    BoardId,
    Instance,
    Seq,
}
