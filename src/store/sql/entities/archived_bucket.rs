//! The `archived_buckets` table.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "archived_buckets")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub board_id: i64,
    pub period: String,
    pub label: String,
    pub starts_at: DateTime,
    pub ends_at: DateTime,
    pub total_members: i64,
    pub participants: i64,
    /// How many times the bucket was archived (again after a late write).
    pub writes: i32,
    /// Late writes marked in the bucket's hours when it was archived: more marks since
    /// mean late writes changed it.
    pub late_seen: i64,
    pub archived_at: DateTime,
    /// When its Redis keys expire; `None` while they are kept.
    pub expires_at: Option<DateTime>,
    /// When an operator released its Redis keys.
    pub released_at: Option<DateTime>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
