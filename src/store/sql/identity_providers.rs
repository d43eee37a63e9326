//! Identity provider rows.

use chrono::Utc;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, Set,
};

use super::entities::identity_provider;
use super::{SqlError, from_naive, to_naive};
use crate::domain::identity::{Algorithm, Provider, ProviderKind, ProviderSpec};

fn to_domain(row: identity_provider::Model) -> Result<Provider, SqlError> {
    let corrupt =
        |what: &str| SqlError::Corrupt(format!("identity provider {} has a bad {what}", row.id));
    let kind = match (row.kind.as_str(), &row.jwks_url) {
        ("jwks", Some(url)) => ProviderKind::Jwks {
            url: url.clone(),
            algorithms: row
                .algorithms
                .split(',')
                .filter(|a| !a.is_empty())
                .map(|a| Algorithm::from_header(a).ok_or_else(|| corrupt("algorithm")))
                .collect::<Result<_, _>>()?,
        },
        ("hmac", _) if row.secret.is_some() => ProviderKind::Hmac,
        _ => return Err(corrupt("kind")),
    };
    Ok(Provider {
        id: row.id,
        spec: ProviderSpec {
            name: row.name,
            kind,
            issuer: row.issuer,
            audience: row.audience,
            voter_claim: row.voter_claim,
            channel_claim: row.channel_claim,
            terminal_claim: row.terminal_claim,
            max_age_s: row.max_age_s,
            leeway_s: row.leeway_s,
            login_url: row.login_url,
        },
        secret: row.secret,
        created_at: from_naive(row.created_at),
    })
}

fn spec_columns(model: &mut identity_provider::ActiveModel, spec: &ProviderSpec) {
    model.name = Set(spec.name.clone());
    model.kind = Set(spec.kind.as_str().to_owned());
    model.issuer = Set(spec.issuer.clone());
    model.audience = Set(spec.audience.clone());
    model.jwks_url = Set(match &spec.kind {
        ProviderKind::Jwks { url, .. } => Some(url.clone()),
        ProviderKind::Hmac => None,
    });
    model.algorithms = Set(spec
        .kind
        .algorithms()
        .iter()
        .map(|a| a.as_str())
        .collect::<Vec<_>>()
        .join(","));
    model.voter_claim = Set(spec.voter_claim.clone());
    model.channel_claim = Set(spec.channel_claim.clone());
    model.terminal_claim = Set(spec.terminal_claim.clone());
    model.max_age_s = Set(spec.max_age_s);
    model.leeway_s = Set(spec.leeway_s);
    model.login_url = Set(spec.login_url.clone());
}

/// Stores a new provider (`secret` for an `hmac` one); `Conflict` when the name is taken.
pub async fn insert_provider(
    db: &impl ConnectionTrait,
    spec: &ProviderSpec,
    secret: Option<String>,
) -> Result<Provider, SqlError> {
    let mut model = identity_provider::ActiveModel {
        secret: Set(secret),
        created_at: Set(to_naive(Utc::now())),
        ..Default::default()
    };
    spec_columns(&mut model, spec);
    to_domain(model.insert(db).await.map_err(SqlError::from_write)?)
}

/// Every provider, by name.
pub async fn list_providers(db: &impl ConnectionTrait) -> Result<Vec<Provider>, SqlError> {
    identity_provider::Entity::find()
        .order_by_asc(identity_provider::Column::Name)
        .all(db)
        .await?
        .into_iter()
        .map(to_domain)
        .collect()
}

/// Replaces the settings of provider `id` (its kind and secret stay).
pub async fn update_provider(
    db: &impl ConnectionTrait,
    id: i64,
    spec: &ProviderSpec,
) -> Result<Option<Provider>, SqlError> {
    let Some(row) = identity_provider::Entity::find_by_id(id).one(db).await? else {
        return Ok(None);
    };
    let mut model: identity_provider::ActiveModel = row.into();
    spec_columns(&mut model, spec);
    Ok(Some(to_domain(
        model.update(db).await.map_err(SqlError::from_write)?,
    )?))
}

/// Removes the provider named `name`; whether it was there.
pub async fn delete_provider(db: &impl ConnectionTrait, name: &str) -> Result<bool, SqlError> {
    let done = identity_provider::Entity::delete_many()
        .filter(identity_provider::Column::Name.eq(name))
        .exec(db)
        .await?;
    Ok(done.rows_affected > 0)
}
