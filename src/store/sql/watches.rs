//! Watch rows. A deleted watch keeps its row, marked (`deleted_at`), so the votes it held
//! still name it.

use chrono::Utc;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, Set,
};

use super::entities::watch;
use super::{SqlError, to_naive};
use crate::domain::limit::Window;
use crate::domain::watch::{Watch, WatchSpec, parse_dimensions};

fn to_domain(row: watch::Model) -> Result<Watch, SqlError> {
    let corrupt = |what: &str| SqlError::Corrupt(format!("watch {} has a bad {what}", row.id));
    let dims: Vec<&str> = row
        .dimensions
        .split(',')
        .filter(|d| !d.is_empty())
        .collect();
    Ok(Watch {
        id: row.id,
        spec: WatchSpec {
            dimensions: parse_dimensions(&dims).map_err(|_| corrupt("dimensions"))?,
            window: Window::parse(&row.window).map_err(|_| corrupt("window"))?,
            threshold: row.threshold,
            name: row.name,
        },
    })
}

fn spec_columns(model: &mut watch::ActiveModel, spec: &WatchSpec) {
    model.name = Set(spec.name.clone());
    model.dimensions = Set(spec
        .dimensions
        .iter()
        .map(|d| d.code())
        .collect::<Vec<_>>()
        .join(","));
    model.window = Set(spec.window.code());
    model.threshold = Set(spec.threshold);
    model.updated_at = Set(to_naive(Utc::now()));
}

/// A board's watches, oldest first: the live ones, or with `deleted` the deleted ones
/// too.
pub async fn list(
    db: &impl ConnectionTrait,
    board_id: i64,
    deleted: bool,
) -> Result<Vec<Watch>, SqlError> {
    let mut query = watch::Entity::find().filter(watch::Column::BoardId.eq(board_id));
    if !deleted {
        query = query.filter(watch::Column::DeletedAt.is_null());
    }
    query
        .order_by_asc(watch::Column::Id)
        .all(db)
        .await?
        .into_iter()
        .map(to_domain)
        .collect()
}

/// Adds a watch to a board.
pub async fn insert(
    db: &impl ConnectionTrait,
    board_id: i64,
    spec: &WatchSpec,
) -> Result<Watch, SqlError> {
    let mut model = watch::ActiveModel {
        board_id: Set(board_id),
        created_at: Set(to_naive(Utc::now())),
        deleted_at: Set(None),
        ..Default::default()
    };
    spec_columns(&mut model, spec);
    to_domain(model.insert(db).await.map_err(SqlError::from_write)?)
}

/// Saves a live watch's new settings. (MySQL counts only rows whose values changed, so
/// the caller checks that the watch exists, not the number of rows.)
pub async fn update(
    db: &impl ConnectionTrait,
    board_id: i64,
    watch: &Watch,
) -> Result<(), SqlError> {
    let mut model = <watch::ActiveModel as Default>::default();
    spec_columns(&mut model, &watch.spec);
    watch::Entity::update_many()
        .set(model)
        .filter(watch::Column::Id.eq(watch.id))
        .filter(watch::Column::BoardId.eq(board_id))
        .filter(watch::Column::DeletedAt.is_null())
        .exec(db)
        .await?;
    Ok(())
}

/// Marks a live watch deleted; answers whether the board had it.
pub async fn delete(db: &impl ConnectionTrait, board_id: i64, id: i64) -> Result<bool, SqlError> {
    let model = watch::ActiveModel {
        deleted_at: Set(Some(to_naive(Utc::now()))),
        ..Default::default()
    };
    let result = watch::Entity::update_many()
        .set(model)
        .filter(watch::Column::Id.eq(id))
        .filter(watch::Column::BoardId.eq(board_id))
        .filter(watch::Column::DeletedAt.is_null())
        .exec(db)
        .await?;
    Ok(result.rows_affected > 0)
}
