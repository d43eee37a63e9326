//! The `ledger_records` table: one row per ledger entry, the entry whole.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "ledger_records")]
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
    /// The write's time (ms since the epoch), as the entry says.
    pub at_ms: i64,
    /// The entry's voter, as the entry says: what the voter index is filled from.
    pub voter: Option<String>,
    /// The revocation that struck it out.
    pub revoked: Option<i64>,
    /// The entry (`domain::ledger::Entry`) as JSON, as Redis held it.
    #[sea_orm(column_type = "Text")]
    pub entry: String,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
