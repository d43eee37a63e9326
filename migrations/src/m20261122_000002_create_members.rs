//! Members: the registered candidates of each board.

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
                    .table(Members::Table)
                    .if_not_exists()
                    .col(big_pk_auto(Members::Id))
                    .col(big_integer(Members::BoardId))
                    .col(string_len(Members::MemberId, 64))
                    .col(string_len(Members::Name, 200))
                    .col(text_null(Members::ImageUrl))
                    .col(big_integer(Members::InitialVotes))
                    .col(big_integer_null(Members::MultiplierMilli))
                    .col(boolean(Members::Enabled))
                    .col(text(Members::Profile))
                    .col(date_time(Members::CreatedAt))
                    .col(date_time(Members::UpdatedAt))
                    .foreign_key(
                        ForeignKey::create()
                            .name("fk_members_board")
                            .from(Members::Table, Members::BoardId)
                            .to(Boards::Table, Boards::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("ux_members_board_member")
                    .table(Members::Table)
                    .col(Members::BoardId)
                    .col(Members::MemberId)
                    .unique()
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(Members::Table).to_owned())
            .await
    }
}

#[derive(DeriveIden)]
enum Members {
    Table,
    Id,
    BoardId,
    MemberId,
    Name,
    ImageUrl,
    InitialVotes,
    MultiplierMilli,
    Enabled,
    Profile,
    CreatedAt,
    UpdatedAt,
}
