//! The `held_reviews` table.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "held_reviews")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub board_id: i64,
    pub watch_id: i64,
    pub subject: String,
    /// The one member whose votes were reviewed; `None`: the whole subject.
    pub member: Option<String>,
    /// `release`, `drop` or `expire` (dropped unreviewed after the retention).
    pub action: String,
    pub actor: String,
    pub created_at: DateTime,
    pub votes: i64,
    /// Whether a release's Redis step is done (a drop has none: true at once).
    pub applied: bool,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
