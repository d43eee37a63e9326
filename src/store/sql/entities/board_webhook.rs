//! The `board_webhooks` table: receivers of a board's rank events.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "board_webhooks")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub board_id: i64,
    pub url: String,
    pub period: String,
    pub view: String,
    pub top: i32,
    /// The rank events it wants, comma-separated (`entered_top,left_top,overtook`).
    pub events: String,
    pub secret: String,
    pub created_at: DateTime,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
