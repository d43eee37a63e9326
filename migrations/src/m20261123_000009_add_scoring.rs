//! Boards' `scoring` (`votes` or `scores`), a scores board's decimals, and `storage`
//! (`full`, `top_n:<retain>:<trim_at>` or `sharded:<shards>`), all fixed at creation.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // One column per statement: SQLite alters one column at a time.
        let columns = [
            string_len(Boards::Scoring, 16).default("votes").to_owned(),
            small_integer(Boards::ScoreDecimals).default(0).to_owned(),
            string_len(Boards::Storage, 64).default("full").to_owned(),
        ];
        for mut column in columns {
            manager
                .alter_table(
                    Table::alter()
                        .table(Boards::Table)
                        .add_column(&mut column)
                        .to_owned(),
                )
                .await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for column in [Boards::Scoring, Boards::ScoreDecimals, Boards::Storage] {
            manager
                .alter_table(
                    Table::alter()
                        .table(Boards::Table)
                        .drop_column(column)
                        .to_owned(),
                )
                .await?;
        }
        Ok(())
    }
}

#[derive(DeriveIden)]
enum Boards {
    Table,
    Scoring,
    ScoreDecimals,
    Storage,
}
