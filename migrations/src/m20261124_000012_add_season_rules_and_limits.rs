//! `league_seasons.rules`: what a season ran with (tiers, bracket size, rewards; JSON),
//! so its results read with its own tier names after the league's settings change; and
//! `leagues.limits`: the league's score limits (rate-limit rules, JSON).

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(LeagueSeasons::Table)
                    .add_column(text_null(LeagueSeasons::Rules))
                    .to_owned(),
            )
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(Leagues::Table)
                    .add_column(text_null(Leagues::Limits))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(Leagues::Table)
                    .drop_column(Leagues::Limits)
                    .to_owned(),
            )
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(LeagueSeasons::Table)
                    .drop_column(LeagueSeasons::Rules)
                    .to_owned(),
            )
            .await
    }
}

#[derive(DeriveIden)]
enum LeagueSeasons {
    Table,
    Rules,
}

#[derive(DeriveIden)]
enum Leagues {
    Table,
    Limits,
}
