//! The `ledger_voters` table: the ledger's voter index, written in batches.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "ledger_voters")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub board_id: i64,
    #[sea_orm(primary_key, auto_increment = false)]
    pub voter: String,
    #[sea_orm(primary_key, auto_increment = false)]
    pub instance: String,
    /// The entry's place in its board's ledger.
    #[sea_orm(primary_key, auto_increment = false)]
    pub seq: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
