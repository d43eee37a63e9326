//! Webhook deliveries signed when sent: `webhook_deliveries.signature` goes (each attempt
//! signs with the league's secrets of that moment) and `gave_up_at` records a delivery
//! given up after failing for three days; `leagues.webhook_secret_previous` and
//! `webhook_secret_rotated_at` keep the secret a rotation replaced, which deliveries are
//! signed with too for a day.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(WebhookDeliveries::Table)
                    .drop_column(WebhookDeliveries::Signature)
                    .to_owned(),
            )
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(WebhookDeliveries::Table)
                    .add_column(date_time_null(WebhookDeliveries::GaveUpAt))
                    .to_owned(),
            )
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(Leagues::Table)
                    .add_column(string_len_null(Leagues::WebhookSecretPrevious, 128))
                    .to_owned(),
            )
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(Leagues::Table)
                    .add_column(date_time_null(Leagues::WebhookSecretRotatedAt))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for column in [
            Leagues::WebhookSecretRotatedAt,
            Leagues::WebhookSecretPrevious,
        ] {
            manager
                .alter_table(
                    Table::alter()
                        .table(Leagues::Table)
                        .drop_column(column)
                        .to_owned(),
                )
                .await?;
        }
        manager
            .alter_table(
                Table::alter()
                    .table(WebhookDeliveries::Table)
                    .drop_column(WebhookDeliveries::GaveUpAt)
                    .to_owned(),
            )
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(WebhookDeliveries::Table)
                    .add_column(string_len(WebhookDeliveries::Signature, 128).default(""))
                    .to_owned(),
            )
            .await
    }
}

#[derive(DeriveIden)]
enum WebhookDeliveries {
    Table,
    Signature,
    GaveUpAt,
}

#[derive(DeriveIden, Clone, Copy)]
enum Leagues {
    Table,
    WebhookSecretPrevious,
    WebhookSecretRotatedAt,
}
