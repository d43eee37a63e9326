//! The `ledger_gaps` table: `seq` ranges SQL lost after Redis had trimmed them.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "ledger_gaps")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub board_id: i64,
    #[sea_orm(primary_key, auto_increment = false)]
    pub instance: String,
    #[sea_orm(primary_key, auto_increment = false)]
    pub from_seq: i64,
    pub to_seq: i64,
    /// When the drain found it (ms since the epoch).
    pub found_ms: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
