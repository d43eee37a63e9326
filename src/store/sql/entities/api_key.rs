//! The `api_keys` table.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "api_keys")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub name: String,
    /// SHA-256 of the key, hex.
    #[sea_orm(unique)]
    pub key_hash: String,
    /// The key's first characters, to tell keys apart in lists.
    pub key_prefix: String,
    /// Comma-separated scope names.
    pub scopes: String,
    pub channel: Option<String>,
    /// The boards the key may reach, comma-separated; `NULL` for every one.
    pub boards: Option<String>,
    /// The leagues the key may reach, comma-separated; `NULL` for every one.
    pub leagues: Option<String>,
    pub created_at: DateTime,
    pub revoked_at: Option<DateTime>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
