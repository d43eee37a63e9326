//! The `ledger_entries` table.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "ledger_entries")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub board_id: i64,
    /// A family instance's name; empty for a plain board.
    #[sea_orm(primary_key, auto_increment = false)]
    pub instance: String,
    /// 1, 2, 3, … per board, without gaps.
    #[sea_orm(primary_key, auto_increment = false)]
    pub seq: i64,
    /// Unique per write: how the drain tells an entry SQL holds.
    pub entry_id: i64,
    pub at_ms: i64,
    pub recorded_ms: i64,
    pub member: String,
    pub voter: Option<String>,
    pub channel: Option<String>,
    pub terminal: Option<String>,
    pub count: i64,
    pub op: Option<String>,
    pub value: Option<i64>,
    pub display: i64,
    pub carry: i64,
    /// An adjustment's bucket (`<period>:<label>`); null for a write.
    pub adjusts: Option<String>,
    /// The revocation that struck it out.
    pub revoked: Option<i64>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
