//! The `league_rewards` table: what a closed season gave, and when it was handed over.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "league_rewards")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub league_id: i64,
    pub season_id: i64,
    pub player: String,
    pub reward: String,
    pub delivered_at: Option<DateTime>,
    /// The caller a join handed it to (`master`, `key:<id>`).
    pub delivered_to: Option<String>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
