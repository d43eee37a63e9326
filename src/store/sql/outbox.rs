//! What both webhook outboxes (`webhook_deliveries` for season closes,
//! `board_webhook_deliveries` for board webhooks) do alike: find the deliveries that are
//! due, claim one for an attempt (a compare-and-set on its next attempt, so two
//! instances never send it at once), and record an attempt's outcome.

use chrono::{DateTime, Utc};
use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect};

use super::{SqlError, to_naive};
use crate::domain::webhook::Outcome;

/// An outbox table's columns.
pub(super) struct Columns<E: EntityTrait> {
    pub id: E::Column,
    pub attempts: E::Column,
    pub next_attempt_at: E::Column,
    pub delivered_at: E::Column,
    pub gave_up_at: E::Column,
    pub last_status: E::Column,
    pub last_error: E::Column,
}

/// Rows neither delivered nor given up whose next attempt is due by `now`, oldest first.
pub(super) async fn due<E: EntityTrait>(
    db: &impl ConnectionTrait,
    c: &Columns<E>,
    now: DateTime<Utc>,
    limit: u64,
) -> Result<Vec<E::Model>, SqlError> {
    Ok(E::find()
        .filter(c.delivered_at.is_null())
        .filter(c.gave_up_at.is_null())
        .filter(c.next_attempt_at.lte(to_naive(now)))
        .order_by_asc(c.id)
        .limit(limit)
        .all(db)
        .await?)
}

/// Moves row `id`'s next attempt from `due_at` to `until`, unless another instance moved
/// it first; answers whether the claim is the caller's.
pub(super) async fn claim<E: EntityTrait>(
    db: &impl ConnectionTrait,
    c: &Columns<E>,
    id: i64,
    due_at: DateTime<Utc>,
    until: DateTime<Utc>,
) -> Result<bool, SqlError> {
    let done = E::update_many()
        .col_expr(c.next_attempt_at, Expr::value(to_naive(until)))
        .filter(c.id.eq(id))
        .filter(c.next_attempt_at.eq(to_naive(due_at)))
        .filter(c.delivered_at.is_null())
        .filter(c.gave_up_at.is_null())
        .exec(db)
        .await?;
    Ok(done.rows_affected == 1)
}

/// Records attempt number `attempt` of row `id`: its answer, and what it leaves the
/// delivery in.
pub(super) async fn record<E: EntityTrait>(
    db: &impl ConnectionTrait,
    c: &Columns<E>,
    id: i64,
    attempt: i32,
    status: Option<i32>,
    error: Option<String>,
    outcome: Outcome,
) -> Result<(), SqlError> {
    let now = Utc::now();
    let stamp = |done: bool| done.then(|| to_naive(now));
    let next = match outcome {
        Outcome::Retry(at) => at,
        Outcome::Delivered | Outcome::GaveUp => now,
    };
    E::update_many()
        .col_expr(c.attempts, Expr::value(attempt))
        .col_expr(c.last_status, Expr::value(status))
        .col_expr(
            c.last_error,
            Expr::value(error.map(|e| e.chars().take(500).collect::<String>())),
        )
        .col_expr(
            c.delivered_at,
            Expr::value(stamp(outcome == Outcome::Delivered)),
        )
        .col_expr(c.gave_up_at, Expr::value(stamp(outcome == Outcome::GaveUp)))
        .col_expr(c.next_attempt_at, Expr::value(to_naive(next)))
        .filter(c.id.eq(id))
        .exec(db)
        .await?;
    Ok(())
}
