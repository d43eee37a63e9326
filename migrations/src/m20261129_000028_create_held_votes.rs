//! Held votes (see `domain::watch`): one row per vote a watch held, written by the drain
//! in the same transaction as its ledger entry, with its review's outcome; and the
//! reviews, each a release or a drop of one subject's held votes (or of one member's
//! among them).

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(HeldVotes::Table)
                    .if_not_exists()
                    .col(big_integer(HeldVotes::BoardId))
                    .col(big_integer(HeldVotes::Seq))
                    .col(big_integer(HeldVotes::EntryId))
                    .col(big_integer(HeldVotes::WatchId))
                    .col(string_len(HeldVotes::Subject, 400))
                    .col(string_len(HeldVotes::Member, 128))
                    .col(string_len_null(HeldVotes::Voter, 128))
                    .col(string_len_null(HeldVotes::Ip, 64))
                    .col(big_integer(HeldVotes::AtMs))
                    .col(big_integer(HeldVotes::Votes))
                    .col(string_len(HeldVotes::State, 16))
                    .col(big_integer_null(HeldVotes::ReviewId))
                    .primary_key(Index::create().col(HeldVotes::BoardId).col(HeldVotes::Seq))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("ix_held_votes_subject")
                    .table(HeldVotes::Table)
                    .col(HeldVotes::BoardId)
                    .col(HeldVotes::WatchId)
                    .col(HeldVotes::Subject)
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("ix_held_votes_state")
                    .table(HeldVotes::Table)
                    .col(HeldVotes::State)
                    .col(HeldVotes::AtMs)
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(HeldReviews::Table)
                    .if_not_exists()
                    .col(big_pk_auto(HeldReviews::Id))
                    .col(big_integer(HeldReviews::BoardId))
                    .col(big_integer(HeldReviews::WatchId))
                    .col(string_len(HeldReviews::Subject, 400))
                    .col(string_len_null(HeldReviews::Member, 128))
                    .col(string_len(HeldReviews::Action, 16))
                    .col(string_len(HeldReviews::Actor, 200))
                    .col(date_time(HeldReviews::CreatedAt))
                    .col(big_integer(HeldReviews::Votes))
                    .col(boolean(HeldReviews::Applied))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("ix_held_reviews_board")
                    .table(HeldReviews::Table)
                    .col(HeldReviews::BoardId)
                    .col(HeldReviews::Applied)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(HeldReviews::Table).to_owned())
            .await?;
        manager
            .drop_table(Table::drop().table(HeldVotes::Table).to_owned())
            .await
    }
}

#[derive(DeriveIden)]
enum HeldVotes {
    Table,
    BoardId,
    Seq,
    EntryId,
    WatchId,
    Subject,
    Member,
    Voter,
    Ip,
    AtMs,
    Votes,
    State,
    ReviewId,
}

#[derive(DeriveIden)]
enum HeldReviews {
    Table,
    Id,
    BoardId,
    WatchId,
    Subject,
    Member,
    Action,
    Actor,
    CreatedAt,
    Votes,
    Applied,
}
