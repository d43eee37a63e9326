//! The `watches` table.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "watches")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub board_id: i64,
    pub name: String,
    /// Comma-separated dimension codes, sorted (`member,ip/24`).
    pub dimensions: String,
    /// The window as written in rules: `hour`, `rolling:10m`, `campaign`.
    pub window: String,
    pub threshold: i64,
    pub created_at: DateTime,
    pub updated_at: DateTime,
    /// Set when the watch is deleted: its row stays for the votes it held.
    pub deleted_at: Option<DateTime>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
