//! API keys: hashed secrets with scopes and an optional channel binding.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(ApiKeys::Table)
                    .if_not_exists()
                    .col(big_pk_auto(ApiKeys::Id))
                    .col(string_len(ApiKeys::Name, 200))
                    .col(string_len_uniq(ApiKeys::KeyHash, 64))
                    .col(string_len(ApiKeys::KeyPrefix, 16))
                    .col(string_len(ApiKeys::Scopes, 64))
                    .col(string_len_null(ApiKeys::Channel, 64))
                    .col(date_time(ApiKeys::CreatedAt))
                    .col(date_time_null(ApiKeys::RevokedAt))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(ApiKeys::Table).to_owned())
            .await
    }
}

#[derive(DeriveIden)]
enum ApiKeys {
    Table,
    Id,
    Name,
    KeyHash,
    KeyPrefix,
    Scopes,
    Channel,
    CreatedAt,
    RevokedAt,
}
