//! Board rows.

use chrono::Utc;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, Set,
};

use super::entities::board;
use super::{SqlError, from_naive, to_naive};
use crate::domain::board::{Board, BoardSettings, Instances, Membership, parse_periods};
use crate::domain::identity::Voters;
use crate::domain::ids::BoardSlug;
use crate::domain::period::parse_timezone;
use crate::domain::retention::Retention;
use crate::domain::score::Milli;
use crate::domain::scoring::{Scoring, Storage};

fn to_domain(row: board::Model) -> Result<Board, SqlError> {
    let corrupt = |what: &str, e: crate::domain::Invalid| {
        SqlError::Corrupt(format!("board {} has a bad {what}: {e}", row.id))
    };
    let periods: Vec<&str> = row.periods.split(',').filter(|p| !p.is_empty()).collect();
    Ok(Board {
        id: row.id,
        slug: BoardSlug::parse(&row.slug).map_err(|e| corrupt("slug", e))?,
        settings: BoardSettings {
            membership: Membership::parse(&row.membership).map_err(|e| corrupt("membership", e))?,
            periods: parse_periods(&periods).map_err(|e| corrupt("periods", e))?,
            timezone: parse_timezone(&row.timezone).map_err(|e| corrupt("timezone", e))?,
            multiplier: Milli::from_thousandths(row.multiplier_milli),
            carry_over: Milli::from_thousandths(row.carry_over_milli),
            starts_at: row.starts_at.map(from_naive),
            ends_at: row.ends_at.map(from_naive),
            public_page: row.public_page,
            max_count: row.max_count,
            embed_origins: row
                .embed_origins
                .split(',')
                .filter(|o| !o.is_empty())
                .map(str::to_owned)
                .collect(),
            display_decimals: u8::try_from(row.display_decimals)
                .map_err(|_| SqlError::Corrupt(format!("board {} display_decimals", row.id)))?,
            scoring: Scoring::parse(&row.scoring, Some(i64::from(row.score_decimals)))
                .map_err(|e| corrupt("scoring", e))?,
            storage: Storage::decode(&row.storage).map_err(|e| corrupt("storage", e))?,
            retention: Retention::decode(&row.retention).map_err(|e| corrupt("retention", e))?,
            archive_top: row.archive_top,
            instances: row
                .instance_ttl_s
                .map(|ttl_s| {
                    Instances {
                        ttl_s,
                        max_live: row.instance_max_live,
                        pages: row.instance_pages,
                        ledger_days: row.instance_ledger_days,
                    }
                    .checked()
                })
                .transpose()
                .map_err(|e| corrupt("instances", e))?,
            ledger: row.ledger,
            late_grace_s: row.late_grace_s,
            tell_held: row.tell_held,
            voters: Voters::parse(&row.voters).map_err(|e| corrupt("voters", e))?,
            providers: row
                .identity_providers
                .split(',')
                .filter(|p| !p.is_empty())
                .map(str::to_owned)
                .collect(),
            title: row.title,
            description: row.description,
        },
        votes_counted_from: row
            .votes_counted_from_ms
            .and_then(chrono::DateTime::from_timestamp_millis),
    })
}

fn settings_columns(model: &mut board::ActiveModel, s: &BoardSettings) {
    model.title = Set(s.title.clone());
    model.description = Set(s.description.clone());
    model.membership = Set(s.membership.as_str().to_owned());
    model.periods = Set(s
        .periods
        .iter()
        .map(|p| p.as_str())
        .collect::<Vec<_>>()
        .join(","));
    model.timezone = Set(s.timezone.name().to_owned());
    model.multiplier_milli = Set(s.multiplier.thousandths());
    model.carry_over_milli = Set(s.carry_over.thousandths());
    model.starts_at = Set(s.starts_at.map(to_naive));
    model.ends_at = Set(s.ends_at.map(to_naive));
    model.public_page = Set(s.public_page);
    model.max_count = Set(s.max_count);
    model.display_decimals = Set(i16::from(s.display_decimals));
    model.embed_origins = Set(s.embed_origins.join(","));
    model.scoring = Set(s.scoring.as_str().to_owned());
    model.score_decimals = Set(i16::from(s.scoring.decimals()));
    model.storage = Set(s.storage.encode());
    model.retention = Set(s.retention.encode());
    model.archive_top = Set(s.archive_top);
    model.instance_ttl_s = Set(s.instances.map(|i| i.ttl_s));
    let family = s.instances.unwrap_or(Instances {
        ttl_s: 0,
        max_live: crate::domain::board::bounds::MAX_LIVE_DEFAULT,
        pages: false,
        ledger_days: crate::domain::board::bounds::INSTANCE_LEDGER_DAYS_DEFAULT,
    });
    model.instance_max_live = Set(family.max_live);
    model.instance_pages = Set(family.pages);
    model.instance_ledger_days = Set(family.ledger_days);
    model.ledger = Set(s.ledger);
    model.late_grace_s = Set(s.late_grace_s);
    model.tell_held = Set(s.tell_held);
    model.voters = Set(s.voters.as_str().to_owned());
    model.identity_providers = Set(s.providers.join(","));
    model.updated_at = Set(to_naive(Utc::now()));
}

/// Every board, by slug.
pub async fn list_boards(db: &impl ConnectionTrait) -> Result<Vec<Board>, SqlError> {
    board::Entity::find()
        .order_by_asc(board::Column::Slug)
        .all(db)
        .await?
        .into_iter()
        .map(to_domain)
        .collect()
}

/// The board with this slug, if any.
pub async fn find_board(
    db: &impl ConnectionTrait,
    slug: &BoardSlug,
) -> Result<Option<Board>, SqlError> {
    board::Entity::find()
        .filter(board::Column::Slug.eq(slug.as_str()))
        .one(db)
        .await?
        .map(to_domain)
        .transpose()
}

/// Creates a board; a taken slug is a `Conflict`.
pub async fn insert_board(
    db: &impl ConnectionTrait,
    slug: &BoardSlug,
    settings: &BoardSettings,
) -> Result<Board, SqlError> {
    let now = to_naive(Utc::now());
    let mut model = board::ActiveModel {
        slug: Set(slug.as_str().to_owned()),
        created_at: Set(now),
        ..Default::default()
    };
    settings_columns(&mut model, settings);
    let row = model.insert(db).await.map_err(SqlError::from_write)?;
    to_domain(row)
}

/// Saves a board's settings.
pub async fn update_board(db: &impl ConnectionTrait, board: &Board) -> Result<(), SqlError> {
    let mut model = board::ActiveModel {
        id: Set(board.id),
        ..Default::default()
    };
    settings_columns(&mut model, &board.settings);
    model.update(db).await.map_err(SqlError::from_write)?;
    Ok(())
}

/// Deletes a board with its members and rules (explicitly: SQLite enforces foreign keys
/// only when asked to).
pub async fn delete_board(db: &impl ConnectionTrait, id: i64) -> Result<(), SqlError> {
    super::entities::rate_rule::Entity::delete_many()
        .filter(super::entities::rate_rule::Column::BoardId.eq(id))
        .exec(db)
        .await?;
    super::entities::member::Entity::delete_many()
        .filter(super::entities::member::Column::BoardId.eq(id))
        .exec(db)
        .await?;
    board::Entity::delete_by_id(id).exec(db).await?;
    Ok(())
}
