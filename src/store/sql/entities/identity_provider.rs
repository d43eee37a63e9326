//! The `identity_providers` table.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "identity_providers")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    #[sea_orm(unique)]
    pub name: String,
    /// `jwks` or `hmac`.
    pub kind: String,
    pub issuer: String,
    pub audience: String,
    pub jwks_url: Option<String>,
    /// Comma-separated algorithm names (`RS256,ES256`); `HS256` for `hmac`.
    pub algorithms: String,
    /// An `hmac` provider's secret.
    pub secret: Option<String>,
    pub voter_claim: String,
    pub channel_claim: Option<String>,
    pub terminal_claim: Option<String>,
    pub max_age_s: i64,
    pub leeway_s: i64,
    pub login_url: Option<String>,
    pub created_at: DateTime,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
