//! `boards.votes_counted_from_ms`: from when Redis counts the votes of each of the board's
//! buckets (`GET …/stats` answers `votes`). Boards that exist when this migration runs get
//! the time it runs (their earlier buckets' counts are incomplete, so reads answer none);
//! boards created later keep null: counted from the start.

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
                    .add_column(big_integer_null(Boards::VotesCountedFromMs))
                    .to_owned(),
            )
            .await?;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64);
        manager
            .exec_stmt(
                Query::update()
                    .table(Boards::Table)
                    .value(Boards::VotesCountedFromMs, now)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(Boards::Table)
                    .drop_column(Boards::VotesCountedFromMs)
                    .to_owned(),
            )
            .await
    }
}

#[derive(DeriveIden)]
enum Boards {
    Table,
    VotesCountedFromMs,
}
