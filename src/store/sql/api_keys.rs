//! API key rows.

use chrono::Utc;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, Set,
};

use super::entities::api_key;
use super::{SqlError, from_naive, to_naive};
use crate::domain::auth::{ApiKey, KeySpec, Reach, parse_scopes};
use crate::domain::ids::{BoardSlug, Channel, LeagueSlug};

/// A list of slugs as its column keeps it: comma-separated (slugs hold no comma), `NULL`
/// for every one.
fn slugs_column(names: Option<Vec<&str>>) -> Option<String> {
    names.map(|n| n.join(","))
}

fn slugs_of<T>(
    column: Option<&str>,
    parse: impl Fn(&str) -> Result<T, crate::domain::Invalid>,
) -> Result<Option<Vec<T>>, crate::domain::Invalid> {
    column
        .map(|c| c.split(',').filter(|s| !s.is_empty()).map(&parse).collect())
        .transpose()
}

fn to_domain(row: api_key::Model) -> Result<(String, ApiKey), SqlError> {
    let corrupt = |e: crate::domain::Invalid| SqlError::Corrupt(format!("api key {}: {e}", row.id));
    let scopes: Vec<&str> = row.scopes.split(',').filter(|s| !s.is_empty()).collect();
    let key = ApiKey {
        id: row.id,
        scopes: parse_scopes(&scopes).map_err(corrupt)?,
        channel: row
            .channel
            .as_deref()
            .map(Channel::parse)
            .transpose()
            .map_err(corrupt)?,
        reach: Reach {
            boards: slugs_of(row.boards.as_deref(), BoardSlug::parse).map_err(corrupt)?,
            leagues: slugs_of(row.leagues.as_deref(), LeagueSlug::parse).map_err(corrupt)?,
        },
        name: row.name,
        prefix: row.key_prefix,
        created_at: from_naive(row.created_at),
        revoked_at: row.revoked_at.map(from_naive),
    };
    Ok((row.key_hash, key))
}

/// Stores a new key by its hash.
pub async fn insert_api_key(
    db: &impl ConnectionTrait,
    spec: &KeySpec,
    key_hash: &str,
    prefix: &str,
) -> Result<ApiKey, SqlError> {
    let row = api_key::ActiveModel {
        name: Set(spec.name.clone()),
        key_hash: Set(key_hash.to_owned()),
        key_prefix: Set(prefix.to_owned()),
        scopes: Set(spec
            .scopes
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join(",")),
        channel: Set(spec.channel.as_ref().map(|c| c.as_str().to_owned())),
        boards: Set(slugs_column(spec.reach.board_names())),
        leagues: Set(slugs_column(spec.reach.league_names())),
        created_at: Set(to_naive(Utc::now())),
        revoked_at: Set(None),
        ..Default::default()
    }
    .insert(db)
    .await
    .map_err(SqlError::from_write)?;
    Ok(to_domain(row)?.1)
}

/// Every key with its hash, newest first, revoked ones included.
pub async fn list_api_keys(db: &impl ConnectionTrait) -> Result<Vec<(String, ApiKey)>, SqlError> {
    api_key::Entity::find()
        .order_by_desc(api_key::Column::Id)
        .all(db)
        .await?
        .into_iter()
        .map(to_domain)
        .collect()
}

/// Marks a key revoked; answers whether a live key was revoked.
pub async fn revoke_api_key(db: &impl ConnectionTrait, id: i64) -> Result<bool, SqlError> {
    let result = api_key::Entity::update_many()
        .col_expr(
            api_key::Column::RevokedAt,
            sea_orm::sea_query::Expr::value(to_naive(Utc::now())),
        )
        .filter(api_key::Column::Id.eq(id))
        .filter(api_key::Column::RevokedAt.is_null())
        .exec(db)
        .await?;
    Ok(result.rows_affected > 0)
}
