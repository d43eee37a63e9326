//! Watches: per board, what makes votes look like a vote farm's (see `domain::watch`). A
//! deleted watch keeps its row, marked, so the votes it held still name it.

use sea_orm_migration::{prelude::*, schema::*};

use crate::m20261122_000001_create_boards::Boards;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(Watches::Table)
                    .if_not_exists()
                    .col(big_pk_auto(Watches::Id))
                    .col(big_integer(Watches::BoardId))
                    .col(string_len(Watches::Name, 200))
                    .col(string_len(Watches::Dimensions, 64))
                    .col(string_len(Watches::Window, 32))
                    .col(big_integer(Watches::Threshold))
                    .col(date_time(Watches::CreatedAt))
                    .col(date_time(Watches::UpdatedAt))
                    .col(date_time_null(Watches::DeletedAt))
                    .foreign_key(
                        ForeignKey::create()
                            .name("fk_watches_board")
                            .from(Watches::Table, Watches::BoardId)
                            .to(Boards::Table, Boards::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("ix_watches_board")
                    .table(Watches::Table)
                    .col(Watches::BoardId)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(Watches::Table).to_owned())
            .await
    }
}

#[derive(DeriveIden)]
enum Watches {
    Table,
    Id,
    BoardId,
    Name,
    Dimensions,
    Window,
    Threshold,
    CreatedAt,
    UpdatedAt,
    DeletedAt,
}
