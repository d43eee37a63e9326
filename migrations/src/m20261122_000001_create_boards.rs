//! Boards: one row per leaderboard with its settings.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(Boards::Table)
                    .if_not_exists()
                    .col(big_pk_auto(Boards::Id))
                    .col(string_len_uniq(Boards::Slug, 64))
                    .col(string_len(Boards::Title, 200))
                    .col(text(Boards::Description))
                    .col(string_len(Boards::Membership, 16))
                    .col(string_len(Boards::Periods, 64))
                    .col(string_len(Boards::Timezone, 64))
                    .col(big_integer(Boards::MultiplierMilli))
                    .col(big_integer(Boards::CarryOverMilli))
                    .col(date_time_null(Boards::StartsAt))
                    .col(date_time_null(Boards::EndsAt))
                    .col(boolean(Boards::PublicPage))
                    .col(big_integer(Boards::MaxCount))
                    .col(date_time(Boards::CreatedAt))
                    .col(date_time(Boards::UpdatedAt))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(Boards::Table).to_owned())
            .await
    }
}

#[derive(DeriveIden)]
pub enum Boards {
    Table,
    Id,
    Slug,
    Title,
    Description,
    Membership,
    Periods,
    Timezone,
    MultiplierMilli,
    CarryOverMilli,
    StartsAt,
    EndsAt,
    PublicPage,
    MaxCount,
    CreatedAt,
    UpdatedAt,
}
