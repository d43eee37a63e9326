//! The `archived_entries` table.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "archived_entries")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub bucket_id: i64,
    /// `real` or `display`.
    pub view: String,
    /// 0 for the first of the view, in ranking order.
    pub position: i32,
    pub member: String,
    pub units: i64,
    pub rank: i64,
    /// The member's distinct voters in the bucket.
    pub voters: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
