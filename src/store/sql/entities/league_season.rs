//! The `league_seasons` table.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "league_seasons")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub league_id: i64,
    /// The season's number (1, 2, …), in decimal.
    pub label: String,
    pub starts_at: DateTime,
    /// When it ends, or ended (earlier when closed by hand).
    pub ends_at: DateTime,
    /// `open` or `closed`.
    pub state: String,
    pub closed_at: Option<DateTime>,
    /// What the season runs with: `{"tiers", "bracket_size", "rewards"}` (JSON); null
    /// for seasons recorded before it was kept.
    pub rules: Option<String>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
