//! The `league_results` table: each player's final place in a closed season.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "league_results")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub season_id: i64,
    pub player: String,
    /// Tier index the player played in.
    pub tier: i32,
    /// The bracket's number within its tier.
    pub bracket: i64,
    pub rank: i64,
    pub score: i64,
    /// `promote`, `stay` or `demote`.
    pub zone: String,
    pub next_tier: i32,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
