//! The archive of closed buckets: boards' `retention` (days per period kind a closed
//! bucket stays in Redis once archived, `hour,day,week,month`, `-` for forever) and
//! `archive_top`; each archived bucket with its counts; its entries (both views, best
//! first); and per board and period the end of the last bucket archived in order, where
//! the archive task resumes.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // One column per statement: SQLite alters one column at a time.
        let columns = [
            string_len(Boards::Retention, 64)
                .default("3,60,400,800")
                .to_owned(),
            big_integer(Boards::ArchiveTop).default(1000).to_owned(),
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
            .create_table(
                Table::create()
                    .table(ArchivedBuckets::Table)
                    .if_not_exists()
                    .col(big_pk_auto(ArchivedBuckets::Id))
                    .col(big_integer(ArchivedBuckets::BoardId))
                    .col(string_len(ArchivedBuckets::Period, 8))
                    .col(string_len(ArchivedBuckets::Label, 32))
                    .col(date_time(ArchivedBuckets::StartsAt))
                    .col(date_time(ArchivedBuckets::EndsAt))
                    .col(big_integer(ArchivedBuckets::TotalMembers))
                    .col(big_integer(ArchivedBuckets::Participants))
                    .col(integer(ArchivedBuckets::Writes))
                    .col(big_integer(ArchivedBuckets::LateSeen))
                    .col(date_time(ArchivedBuckets::ArchivedAt))
                    .col(date_time_null(ArchivedBuckets::ExpiresAt))
                    .col(date_time_null(ArchivedBuckets::ReleasedAt))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("ux_archived_buckets_board_bucket")
                    .table(ArchivedBuckets::Table)
                    .col(ArchivedBuckets::BoardId)
                    .col(ArchivedBuckets::Period)
                    .col(ArchivedBuckets::Label)
                    .unique()
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(ArchivedEntries::Table)
                    .if_not_exists()
                    .col(big_pk_auto(ArchivedEntries::Id))
                    .col(big_integer(ArchivedEntries::BucketId))
                    .col(string_len(ArchivedEntries::View, 8))
                    .col(integer(ArchivedEntries::Position))
                    .col(string_len(ArchivedEntries::Member, 64))
                    .col(big_integer(ArchivedEntries::Units))
                    .col(big_integer(ArchivedEntries::Rank))
                    .col(big_integer(ArchivedEntries::Voters))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("ux_archived_entries_position")
                    .table(ArchivedEntries::Table)
                    .col(ArchivedEntries::BucketId)
                    .col(ArchivedEntries::View)
                    .col(ArchivedEntries::Position)
                    .unique()
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("ix_archived_entries_member")
                    .table(ArchivedEntries::Table)
                    .col(ArchivedEntries::Member)
                    .col(ArchivedEntries::BucketId)
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(ArchiveCursors::Table)
                    .if_not_exists()
                    .col(big_pk_auto(ArchiveCursors::Id))
                    .col(big_integer(ArchiveCursors::BoardId))
                    .col(string_len(ArchiveCursors::Period, 8))
                    .col(date_time(ArchiveCursors::DoneUntil))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("ux_archive_cursors_board_period")
                    .table(ArchiveCursors::Table)
                    .col(ArchiveCursors::BoardId)
                    .col(ArchiveCursors::Period)
                    .unique()
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for table in [
            ArchiveCursors::Table.into_iden(),
            ArchivedEntries::Table.into_iden(),
            ArchivedBuckets::Table.into_iden(),
        ] {
            manager
                .drop_table(Table::drop().table(table).to_owned())
                .await?;
        }
        for column in [Boards::Retention, Boards::ArchiveTop] {
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
    Retention,
    ArchiveTop,
}

#[derive(DeriveIden)]
enum ArchivedBuckets {
    Table,
    Id,
    BoardId,
    Period,
    Label,
    StartsAt,
    EndsAt,
    TotalMembers,
    Participants,
    Writes,
    LateSeen,
    ArchivedAt,
    ExpiresAt,
    ReleasedAt,
}

#[derive(DeriveIden)]
enum ArchivedEntries {
    Table,
    Id,
    BucketId,
    View,
    Position,
    Member,
    Units,
    Rank,
    Voters,
}

#[derive(DeriveIden)]
enum ArchiveCursors {
    Table,
    Id,
    BoardId,
    Period,
    DoneUntil,
}
