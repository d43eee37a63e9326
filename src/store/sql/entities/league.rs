//! The `leagues` table.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "leagues")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    #[sea_orm(unique)]
    pub slug: String,
    pub title: String,
    /// JSON: `[{"name", "promote", "demote"}]`, ratios in thousandths, lowest first.
    pub tiers: String,
    pub bracket_size: i64,
    /// `day`, `week` or `month`.
    pub season: String,
    pub timezone: String,
    /// JSON: `[{"tier", "first", "last", "reward"}]`.
    pub rewards: String,
    pub webhook_url: Option<String>,
    pub webhook_secret: String,
    /// The secret the last rotation replaced, and when.
    pub webhook_secret_previous: Option<String>,
    pub webhook_secret_rotated_at: Option<DateTime>,
    /// JSON: `[{"name", "per", "window", "limit"}]`; null for none.
    pub limits: Option<String>,
    pub created_at: DateTime,
    pub updated_at: DateTime,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
