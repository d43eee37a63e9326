//! Rate-limit rules: any number per board, checked together on every vote.

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
                    .table(RateRules::Table)
                    .if_not_exists()
                    .col(big_pk_auto(RateRules::Id))
                    .col(big_integer(RateRules::BoardId))
                    .col(string_len(RateRules::Name, 200))
                    .col(string_len(RateRules::Dimensions, 64))
                    .col(string_len(RateRules::Window, 32))
                    // `limit` is a reserved word in SQL.
                    .col(big_integer(RateRules::VoteLimit))
                    .col(text(RateRules::Overrides))
                    .col(string_len(RateRules::Missing, 16))
                    .col(date_time(RateRules::CreatedAt))
                    .col(date_time(RateRules::UpdatedAt))
                    .foreign_key(
                        ForeignKey::create()
                            .name("fk_rate_rules_board")
                            .from(RateRules::Table, RateRules::BoardId)
                            .to(Boards::Table, Boards::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("ix_rate_rules_board")
                    .table(RateRules::Table)
                    .col(RateRules::BoardId)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(RateRules::Table).to_owned())
            .await
    }
}

#[derive(DeriveIden)]
enum RateRules {
    Table,
    Id,
    BoardId,
    Name,
    Dimensions,
    Window,
    VoteLimit,
    Overrides,
    Missing,
    CreatedAt,
    UpdatedAt,
}
