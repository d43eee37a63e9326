//! Admin user rows.

use chrono::Utc;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, PaginatorTrait, QueryFilter, Set,
};

use super::entities::admin_user;
use super::{SqlError, to_naive};

/// The stored password hash of `username`, if the user exists.
pub async fn password_hash(
    db: &impl ConnectionTrait,
    username: &str,
) -> Result<Option<String>, SqlError> {
    Ok(admin_user::Entity::find()
        .filter(admin_user::Column::Username.eq(username))
        .one(db)
        .await?
        .map(|u| u.password_hash))
}

/// How many admin users exist.
pub async fn count_users(db: &impl ConnectionTrait) -> Result<u64, SqlError> {
    Ok(admin_user::Entity::find().count(db).await?)
}

/// Adds a user; a taken name is a `Conflict`.
pub async fn insert_user(
    db: &impl ConnectionTrait,
    username: &str,
    password_hash: &str,
) -> Result<(), SqlError> {
    let now = to_naive(Utc::now());
    admin_user::ActiveModel {
        username: Set(username.to_owned()),
        password_hash: Set(password_hash.to_owned()),
        created_at: Set(now),
        updated_at: Set(now),
        ..Default::default()
    }
    .insert(db)
    .await
    .map_err(SqlError::from_write)?;
    Ok(())
}

/// Replaces a user's password hash; answers whether the user exists.
pub async fn set_password(
    db: &impl ConnectionTrait,
    username: &str,
    password_hash: &str,
) -> Result<bool, SqlError> {
    let exists = self::password_hash(db, username).await?.is_some();
    if exists {
        admin_user::Entity::update_many()
            .col_expr(
                admin_user::Column::PasswordHash,
                sea_orm::sea_query::Expr::value(password_hash.to_owned()),
            )
            .col_expr(
                admin_user::Column::UpdatedAt,
                sea_orm::sea_query::Expr::value(to_naive(Utc::now())),
            )
            .filter(admin_user::Column::Username.eq(username))
            .exec(db)
            .await?;
    }
    Ok(exists)
}

/// Deletes a user; answers whether one was deleted.
pub async fn delete_user(db: &impl ConnectionTrait, username: &str) -> Result<bool, SqlError> {
    let result = admin_user::Entity::delete_many()
        .filter(admin_user::Column::Username.eq(username))
        .exec(db)
        .await?;
    Ok(result.rows_affected > 0)
}
