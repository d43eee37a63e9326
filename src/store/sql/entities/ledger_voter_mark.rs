//! The `ledger_voter_marks` table: per board's ledger, how far its voter index reaches.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "ledger_voter_marks")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub board_id: i64,
    #[sea_orm(primary_key, auto_increment = false)]
    pub instance: String,
    /// Every entry up to this `seq` is in `ledger_voters`; later ones are not yet.
    pub seq: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
