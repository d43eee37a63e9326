//! The `ledger_cursors` table.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "ledger_cursors")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub board_id: i64,
    #[sea_orm(primary_key, auto_increment = false)]
    pub instance: String,
    /// Which of the board's ledgers in Redis: its shard, 0 for an unsharded board.
    #[sea_orm(primary_key, auto_increment = false)]
    pub source: i32,
    /// The id of the last entry of that ledger SQL holds.
    pub last_entry_id: i64,
    /// When the drain last moved it (ms since the epoch): a family instance's ledger
    /// leaves SQL its family's `ledger_days` after it expired.
    pub updated_ms: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
