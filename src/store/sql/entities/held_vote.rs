//! The `held_votes` table.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "held_votes")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub board_id: i64,
    /// The held vote's place in the board's ledger.
    #[sea_orm(primary_key, auto_increment = false)]
    pub seq: i64,
    pub entry_id: i64,
    pub watch_id: i64,
    pub subject: String,
    pub member: String,
    pub voter: Option<String>,
    pub ip: Option<String>,
    pub at_ms: i64,
    pub votes: i64,
    /// `held`, `released` or `dropped`.
    pub state: String,
    pub review_id: Option<i64>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
