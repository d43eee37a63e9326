//! An index of `league_results` by season, tier, bracket and rank: a closed season's
//! bracket is read on its own, not with every result of the season.

use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_index(
                Index::create()
                    .name("ix_league_results_bracket")
                    .table(LeagueResults::Table)
                    .col(LeagueResults::SeasonId)
                    .col(LeagueResults::Tier)
                    .col(LeagueResults::Bracket)
                    .col(LeagueResults::Rank)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_index(
                Index::drop()
                    .name("ix_league_results_bracket")
                    .table(LeagueResults::Table)
                    .to_owned(),
            )
            .await
    }
}

#[derive(DeriveIden)]
enum LeagueResults {
    Table,
    SeasonId,
    Tier,
    Bracket,
    Rank,
}
