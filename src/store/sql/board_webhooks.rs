//! Board webhook rows and their outbox (`board_webhook_deliveries`): a delivery is made
//! due when a watched top changes, claimed by one instance per attempt (a compare-and-set
//! on its next attempt), and marked delivered, retried or given up.

use chrono::{DateTime, Utc};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter,
    QueryOrder, QuerySelect, Set, TransactionTrait,
};

use super::entities::{board_webhook, board_webhook_delivery};
use super::outbox::{self, Columns};
use super::{SqlError, from_naive, to_naive};
use crate::domain::board_webhook::{BoardDelivery, BoardWebhook, EVENT_KINDS};
use crate::domain::period::Period;
use crate::domain::score::View;
use crate::domain::webhook::Outcome;

fn webhook(row: board_webhook::Model) -> Result<BoardWebhook, SqlError> {
    let corrupt =
        |what: &str| SqlError::Corrupt(format!("board webhook {} has a bad {what}", row.id));
    let events = row
        .events
        .split(',')
        .map(|name| EVENT_KINDS.iter().find(|k| **k == name).copied())
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| corrupt("events"))?;
    Ok(BoardWebhook {
        id: row.id,
        board_id: row.board_id,
        period: Period::parse(&row.period).map_err(|_| corrupt("period"))?,
        view: View::parse(&row.view).map_err(|_| corrupt("view"))?,
        top: i64::from(row.top),
        events,
        url: row.url,
        secret: row.secret,
        created_at: from_naive(row.created_at),
    })
}

fn delivery(row: board_webhook_delivery::Model) -> BoardDelivery {
    BoardDelivery {
        id: row.id,
        webhook_id: row.webhook_id,
        board_id: row.board_id,
        url: row.url,
        body: row.body,
        attempts: row.attempts,
        next_attempt_at: from_naive(row.next_attempt_at),
        created_at: from_naive(row.created_at),
        delivered_at: row.delivered_at.map(from_naive),
        gave_up_at: row.gave_up_at.map(from_naive),
        last_status: row.last_status,
        last_error: row.last_error,
    }
}

/// Stores a new webhook (its id is made here).
pub async fn insert(
    db: &impl ConnectionTrait,
    hook: &BoardWebhook,
) -> Result<BoardWebhook, SqlError> {
    let row = board_webhook::ActiveModel {
        board_id: Set(hook.board_id),
        url: Set(hook.url.clone()),
        period: Set(hook.period.to_string()),
        view: Set(hook.view.as_str().to_owned()),
        top: Set(i32::try_from(hook.top).unwrap_or(i32::MAX)),
        events: Set(hook.events.join(",")),
        secret: Set(hook.secret.clone()),
        created_at: Set(to_naive(hook.created_at)),
        ..Default::default()
    }
    .insert(db)
    .await?;
    webhook(row)
}

/// A board's webhooks, oldest first.
pub async fn of_board(
    db: &impl ConnectionTrait,
    board_id: i64,
) -> Result<Vec<BoardWebhook>, SqlError> {
    board_webhook::Entity::find()
        .filter(board_webhook::Column::BoardId.eq(board_id))
        .order_by_asc(board_webhook::Column::Id)
        .all(db)
        .await?
        .into_iter()
        .map(webhook)
        .collect()
}

/// Every board's webhooks, by board then age.
pub async fn all(db: &impl ConnectionTrait) -> Result<Vec<BoardWebhook>, SqlError> {
    board_webhook::Entity::find()
        .order_by_asc(board_webhook::Column::BoardId)
        .order_by_asc(board_webhook::Column::Id)
        .all(db)
        .await?
        .into_iter()
        .map(webhook)
        .collect()
}

/// One webhook of a board.
pub async fn find(
    db: &impl ConnectionTrait,
    board_id: i64,
    id: i64,
) -> Result<Option<BoardWebhook>, SqlError> {
    board_webhook::Entity::find_by_id(id)
        .filter(board_webhook::Column::BoardId.eq(board_id))
        .one(db)
        .await?
        .map(webhook)
        .transpose()
}

/// Deletes a board's webhook and its deliveries (those not sent yet are never sent);
/// answers whether there was one.
pub async fn delete(db: &DatabaseConnection, board_id: i64, id: i64) -> Result<bool, SqlError> {
    let txn = db.begin().await?;
    let done = board_webhook::Entity::delete_many()
        .filter(board_webhook::Column::Id.eq(id))
        .filter(board_webhook::Column::BoardId.eq(board_id))
        .exec(&txn)
        .await?;
    board_webhook_delivery::Entity::delete_many()
        .filter(board_webhook_delivery::Column::WebhookId.eq(id))
        .filter(board_webhook_delivery::Column::BoardId.eq(board_id))
        .exec(&txn)
        .await?;
    txn.commit().await?;
    Ok(done.rows_affected == 1)
}

/// Puts a delivery of `body` to `hook` in the outbox, due now; answers its id.
pub async fn enqueue(
    db: &impl ConnectionTrait,
    hook: &BoardWebhook,
    body: &str,
) -> Result<i64, SqlError> {
    let now = to_naive(Utc::now());
    let row = board_webhook_delivery::ActiveModel {
        webhook_id: Set(hook.id),
        board_id: Set(hook.board_id),
        url: Set(hook.url.clone()),
        body: Set(body.to_owned()),
        attempts: Set(0),
        next_attempt_at: Set(now),
        created_at: Set(now),
        ..Default::default()
    }
    .insert(db)
    .await?;
    Ok(row.id)
}

/// The outbox's columns.
const COLUMNS: Columns<board_webhook_delivery::Entity> = Columns {
    id: board_webhook_delivery::Column::Id,
    attempts: board_webhook_delivery::Column::Attempts,
    next_attempt_at: board_webhook_delivery::Column::NextAttemptAt,
    delivered_at: board_webhook_delivery::Column::DeliveredAt,
    gave_up_at: board_webhook_delivery::Column::GaveUpAt,
    last_status: board_webhook_delivery::Column::LastStatus,
    last_error: board_webhook_delivery::Column::LastError,
};

/// Deliveries neither delivered nor given up whose next attempt is due by `now`, oldest
/// first.
pub async fn due(
    db: &impl ConnectionTrait,
    now: DateTime<Utc>,
    limit: u64,
) -> Result<Vec<BoardDelivery>, SqlError> {
    Ok(outbox::due(db, &COLUMNS, now, limit)
        .await?
        .into_iter()
        .map(delivery)
        .collect())
}

/// Claims a due delivery for one attempt (see [`outbox::claim`]).
pub async fn claim(
    db: &impl ConnectionTrait,
    delivery: &BoardDelivery,
    until: DateTime<Utc>,
) -> Result<bool, SqlError> {
    outbox::claim(db, &COLUMNS, delivery.id, delivery.next_attempt_at, until).await
}

/// Records one attempt and what it leaves the delivery in.
pub async fn record_attempt(
    db: &impl ConnectionTrait,
    delivery: &BoardDelivery,
    status: Option<i32>,
    error: Option<String>,
    outcome: Outcome,
) -> Result<(), SqlError> {
    let attempt = delivery.attempts + 1;
    outbox::record(db, &COLUMNS, delivery.id, attempt, status, error, outcome).await
}

/// A board's most recent deliveries, newest first.
pub async fn recent(
    db: &impl ConnectionTrait,
    board_id: i64,
    limit: u64,
) -> Result<Vec<BoardDelivery>, SqlError> {
    Ok(board_webhook_delivery::Entity::find()
        .filter(board_webhook_delivery::Column::BoardId.eq(board_id))
        .order_by_desc(board_webhook_delivery::Column::Id)
        .limit(limit)
        .all(db)
        .await?
        .into_iter()
        .map(delivery)
        .collect())
}
