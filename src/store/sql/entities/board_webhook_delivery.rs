//! The `board_webhook_deliveries` table: the outbox of board webhooks' rank events.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "board_webhook_deliveries")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub webhook_id: i64,
    pub board_id: i64,
    pub url: String,
    pub body: String,
    pub attempts: i32,
    pub next_attempt_at: DateTime,
    pub delivered_at: Option<DateTime>,
    /// When it was given up after failing for three days.
    pub gave_up_at: Option<DateTime>,
    pub last_status: Option<i32>,
    pub last_error: Option<String>,
    pub created_at: DateTime,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
