//! Board webhooks: `board_webhooks` (a receiver of a board's rank events: which top it
//! watches — period, view, size — which events it wants, and the secret its deliveries
//! are signed with) and `board_webhook_deliveries` (their outbox, like
//! `webhook_deliveries` for season closes).

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(BoardWebhooks::Table)
                    .if_not_exists()
                    .col(big_pk_auto(BoardWebhooks::Id))
                    .col(big_integer(BoardWebhooks::BoardId))
                    .col(string_len(BoardWebhooks::Url, 2048))
                    .col(string_len(BoardWebhooks::Period, 32))
                    .col(string_len(BoardWebhooks::View, 16))
                    .col(integer(BoardWebhooks::Top))
                    .col(string_len(BoardWebhooks::Events, 64))
                    .col(string_len(BoardWebhooks::Secret, 128))
                    .col(date_time(BoardWebhooks::CreatedAt))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("ix_board_webhooks_board")
                    .table(BoardWebhooks::Table)
                    .col(BoardWebhooks::BoardId)
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(BoardWebhookDeliveries::Table)
                    .if_not_exists()
                    .col(big_pk_auto(BoardWebhookDeliveries::Id))
                    .col(big_integer(BoardWebhookDeliveries::WebhookId))
                    .col(big_integer(BoardWebhookDeliveries::BoardId))
                    .col(string_len(BoardWebhookDeliveries::Url, 2048))
                    .col(text(BoardWebhookDeliveries::Body))
                    .col(integer(BoardWebhookDeliveries::Attempts))
                    .col(date_time(BoardWebhookDeliveries::NextAttemptAt))
                    .col(date_time_null(BoardWebhookDeliveries::DeliveredAt))
                    .col(date_time_null(BoardWebhookDeliveries::GaveUpAt))
                    .col(integer_null(BoardWebhookDeliveries::LastStatus))
                    .col(string_len_null(BoardWebhookDeliveries::LastError, 512))
                    .col(date_time(BoardWebhookDeliveries::CreatedAt))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("ix_board_webhook_deliveries_board")
                    .table(BoardWebhookDeliveries::Table)
                    .col(BoardWebhookDeliveries::BoardId)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for table in [
            BoardWebhookDeliveries::Table.into_iden(),
            BoardWebhooks::Table.into_iden(),
        ] {
            manager
                .drop_table(Table::drop().table(table).to_owned())
                .await?;
        }
        Ok(())
    }
}

#[derive(DeriveIden)]
enum BoardWebhooks {
    Table,
    Id,
    BoardId,
    Url,
    Period,
    View,
    Top,
    Events,
    Secret,
    CreatedAt,
}

#[derive(DeriveIden)]
enum BoardWebhookDeliveries {
    Table,
    Id,
    WebhookId,
    BoardId,
    Url,
    Body,
    Attempts,
    NextAttemptAt,
    DeliveredAt,
    GaveUpAt,
    LastStatus,
    LastError,
    CreatedAt,
}
