//! Boards' `embed_origins`: the sites (origins, comma-separated) that may show the board's
//! voting page in a frame.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(Boards::Table)
                    .add_column(string_len(Boards::EmbedOrigins, 2048).default(""))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(Boards::Table)
                    .drop_column(Boards::EmbedOrigins)
                    .to_owned(),
            )
            .await
    }
}

#[derive(DeriveIden)]
enum Boards {
    Table,
    EmbedOrigins,
}
