//! The `revocations` table.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "revocations")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub board_id: i64,
    pub voter: String,
    /// The time range's start (ms since the epoch, inclusive); null: from the first vote.
    pub from_ms: Option<i64>,
    /// The time range's end (exclusive); null: up to the revocation.
    pub to_ms: Option<i64>,
    pub reason: String,
    pub actor: String,
    pub created_at: DateTime,
    /// Votes struck out (their counts summed).
    pub votes: i64,
    /// JSON object: member → votes struck out.
    pub by_member: String,
    /// Its Redis step (scores, counts, participants) is done.
    pub applied: bool,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
