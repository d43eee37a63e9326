//! The `rate_rules` table.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "rate_rules")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub board_id: i64,
    pub name: String,
    /// Comma-separated dimension names, sorted.
    pub dimensions: String,
    /// The window as written in rules: `day`, `rolling:1h`, `campaign`.
    pub window: String,
    pub vote_limit: i64,
    /// JSON: `[{"match": {"channel": "partner-a"}, "limit": 10}]`.
    pub overrides: String,
    pub missing: String,
    pub created_at: DateTime,
    pub updated_at: DateTime,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
