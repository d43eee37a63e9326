//! The `audit_log` table.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "audit_log")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub at: DateTime,
    /// `user:<name>`, `key:<id> <name>` or `master key`.
    pub actor: String,
    /// `board.create`, `rule.update`, …
    pub action: String,
    /// What changed: `board stars`, `rule 3 on stars`, …
    pub target: String,
    /// JSON: the request's fields.
    pub detail: String,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
