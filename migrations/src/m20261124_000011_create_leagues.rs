//! Leagues: their settings (tiers with ratios in thousandths and rewards as JSON, bracket
//! size, season length and zone, webhook URL and secret); seasons and their state; each
//! player's tier for the next season; recorded results and rewards of closed seasons;
//! and the outbox of webhook deliveries.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(Leagues::Table)
                    .if_not_exists()
                    .col(big_pk_auto(Leagues::Id))
                    .col(string_len_uniq(Leagues::Slug, 64))
                    .col(string_len(Leagues::Title, 200))
                    .col(text(Leagues::Tiers))
                    .col(big_integer(Leagues::BracketSize))
                    .col(string_len(Leagues::Season, 8))
                    .col(string_len(Leagues::Timezone, 64))
                    .col(text(Leagues::Rewards))
                    .col(string_len_null(Leagues::WebhookUrl, 2048))
                    .col(string_len(Leagues::WebhookSecret, 128))
                    .col(date_time(Leagues::CreatedAt))
                    .col(date_time(Leagues::UpdatedAt))
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(LeagueSeasons::Table)
                    .if_not_exists()
                    .col(big_pk_auto(LeagueSeasons::Id))
                    .col(big_integer(LeagueSeasons::LeagueId))
                    .col(string_len(LeagueSeasons::Label, 32))
                    .col(date_time(LeagueSeasons::StartsAt))
                    .col(date_time(LeagueSeasons::EndsAt))
                    .col(string_len(LeagueSeasons::State, 16))
                    .col(date_time_null(LeagueSeasons::ClosedAt))
                    .to_owned(),
            )
            .await?;
        unique(
            manager,
            "ux_league_seasons",
            LeagueSeasons::Table,
            [
                LeagueSeasons::LeagueId.into_iden(),
                LeagueSeasons::Label.into_iden(),
            ],
        )
        .await?;
        manager
            .create_table(
                Table::create()
                    .table(LeaguePlayers::Table)
                    .if_not_exists()
                    .col(big_pk_auto(LeaguePlayers::Id))
                    .col(big_integer(LeaguePlayers::LeagueId))
                    .col(string_len(LeaguePlayers::Player, 64))
                    .col(integer(LeaguePlayers::Tier))
                    .col(date_time(LeaguePlayers::UpdatedAt))
                    .to_owned(),
            )
            .await?;
        unique(
            manager,
            "ux_league_players",
            LeaguePlayers::Table,
            [
                LeaguePlayers::LeagueId.into_iden(),
                LeaguePlayers::Player.into_iden(),
            ],
        )
        .await?;
        manager
            .create_table(
                Table::create()
                    .table(LeagueResults::Table)
                    .if_not_exists()
                    .col(big_pk_auto(LeagueResults::Id))
                    .col(big_integer(LeagueResults::SeasonId))
                    .col(string_len(LeagueResults::Player, 64))
                    .col(integer(LeagueResults::Tier))
                    .col(big_integer(LeagueResults::Bracket))
                    .col(big_integer(LeagueResults::Rank))
                    .col(big_integer(LeagueResults::Score))
                    .col(string_len(LeagueResults::Zone, 8))
                    .col(integer(LeagueResults::NextTier))
                    .to_owned(),
            )
            .await?;
        unique(
            manager,
            "ux_league_results",
            LeagueResults::Table,
            [
                LeagueResults::SeasonId.into_iden(),
                LeagueResults::Player.into_iden(),
            ],
        )
        .await?;
        manager
            .create_table(
                Table::create()
                    .table(LeagueRewards::Table)
                    .if_not_exists()
                    .col(big_pk_auto(LeagueRewards::Id))
                    .col(big_integer(LeagueRewards::LeagueId))
                    .col(big_integer(LeagueRewards::SeasonId))
                    .col(string_len(LeagueRewards::Player, 64))
                    .col(string_len(LeagueRewards::Reward, 64))
                    .col(date_time_null(LeagueRewards::DeliveredAt))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("ix_league_rewards_player")
                    .table(LeagueRewards::Table)
                    .col(LeagueRewards::LeagueId)
                    .col(LeagueRewards::Player)
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(WebhookDeliveries::Table)
                    .if_not_exists()
                    .col(big_pk_auto(WebhookDeliveries::Id))
                    .col(big_integer(WebhookDeliveries::LeagueId))
                    .col(big_integer(WebhookDeliveries::SeasonId))
                    .col(string_len(WebhookDeliveries::Url, 2048))
                    .col(text(WebhookDeliveries::Body))
                    .col(string_len(WebhookDeliveries::Signature, 128))
                    .col(integer(WebhookDeliveries::Attempts))
                    .col(date_time(WebhookDeliveries::NextAttemptAt))
                    .col(date_time_null(WebhookDeliveries::DeliveredAt))
                    .col(integer_null(WebhookDeliveries::LastStatus))
                    .col(string_len_null(WebhookDeliveries::LastError, 512))
                    .col(date_time(WebhookDeliveries::CreatedAt))
                    .to_owned(),
            )
            .await?;
        unique(
            manager,
            "ux_webhook_deliveries_season",
            WebhookDeliveries::Table,
            [WebhookDeliveries::SeasonId.into_iden()],
        )
        .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for table in [
            WebhookDeliveries::Table.into_iden(),
            LeagueRewards::Table.into_iden(),
            LeagueResults::Table.into_iden(),
            LeaguePlayers::Table.into_iden(),
            LeagueSeasons::Table.into_iden(),
            Leagues::Table.into_iden(),
        ] {
            manager
                .drop_table(Table::drop().table(table).to_owned())
                .await?;
        }
        Ok(())
    }
}

async fn unique<const N: usize>(
    manager: &SchemaManager<'_>,
    name: &str,
    table: impl IntoIden,
    cols: [DynIden; N],
) -> Result<(), DbErr> {
    let mut index = Index::create();
    index.name(name).table(table).unique();
    for col in cols {
        index.col(col);
    }
    manager.create_index(index.to_owned()).await
}

#[derive(DeriveIden)]
enum Leagues {
    Table,
    Id,
    Slug,
    Title,
    Tiers,
    BracketSize,
    Season,
    Timezone,
    Rewards,
    WebhookUrl,
    WebhookSecret,
    CreatedAt,
    UpdatedAt,
}

#[derive(DeriveIden)]
enum LeagueSeasons {
    Table,
    Id,
    LeagueId,
    Label,
    StartsAt,
    EndsAt,
    State,
    ClosedAt,
}

#[derive(DeriveIden)]
enum LeaguePlayers {
    Table,
    Id,
    LeagueId,
    Player,
    Tier,
    UpdatedAt,
}

#[derive(DeriveIden)]
enum LeagueResults {
    Table,
    Id,
    SeasonId,
    Player,
    Tier,
    Bracket,
    Rank,
    Score,
    Zone,
    NextTier,
}

#[derive(DeriveIden)]
enum LeagueRewards {
    Table,
    Id,
    LeagueId,
    SeasonId,
    Player,
    Reward,
    DeliveredAt,
}

#[derive(DeriveIden)]
enum WebhookDeliveries {
    Table,
    Id,
    LeagueId,
    SeasonId,
    Url,
    Body,
    Signature,
    Attempts,
    NextAttemptAt,
    DeliveredAt,
    LastStatus,
    LastError,
    CreatedAt,
}
