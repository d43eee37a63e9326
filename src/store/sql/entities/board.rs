//! The `boards` table.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "boards")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    #[sea_orm(unique)]
    pub slug: String,
    pub title: String,
    pub description: String,
    pub membership: String,
    /// Comma-separated period names.
    pub periods: String,
    pub timezone: String,
    pub multiplier_milli: i64,
    pub carry_over_milli: i64,
    pub starts_at: Option<DateTime>,
    pub ends_at: Option<DateTime>,
    pub public_page: bool,
    pub max_count: i64,
    pub display_decimals: i16,
    /// Comma-separated origins.
    pub embed_origins: String,
    /// `votes` or `scores`.
    pub scoring: String,
    /// A scores board's decimals.
    pub score_decimals: i16,
    /// `full`, `top_n:<retain>:<trim_at>` or `sharded:<shards>`.
    pub storage: String,
    /// Days per period kind, `hour,day,week,month`, `-` for forever.
    pub retention: String,
    pub archive_top: i64,
    /// A family's instance lifetime in seconds; null for a plain board.
    pub instance_ttl_s: Option<i64>,
    /// A family's most live instances at once.
    pub instance_max_live: i64,
    /// Whether a family's instances have public voting pages.
    pub instance_pages: bool,
    /// Days an expired instance's ledger stays in SQL.
    pub instance_ledger_days: i64,
    /// `anyone` or `signed_in`.
    pub voters: String,
    /// The names of the identity providers the board accepts, comma-separated.
    pub identity_providers: String,
    /// Whether accepted writes are recorded in the ledger.
    pub ledger: bool,
    /// Seconds after `ends_at` a write stamped before it is still taken.
    pub late_grace_s: i64,
    /// Whether a held vote answers "held for review".
    pub tell_held: bool,
    /// From when each bucket's votes are counted (ms since the epoch); null: from the
    /// start.
    pub votes_counted_from_ms: Option<i64>,
    pub created_at: DateTime,
    pub updated_at: DateTime,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
