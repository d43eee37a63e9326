//! Audit log rows: who changed what, and when.

use chrono::{DateTime, Utc};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder,
    QuerySelect, Set,
};

use super::entities::audit_entry;
use super::{SqlError, from_naive, to_naive};

/// One admin change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditEntry {
    pub id: i64,
    pub at: DateTime<Utc>,
    pub actor: String,
    pub action: String,
    pub target: String,
    pub detail: String,
}

/// Records a change.
pub async fn record(
    db: &impl ConnectionTrait,
    actor: &str,
    action: &str,
    target: &str,
    detail: &str,
) -> Result<(), SqlError> {
    audit_entry::ActiveModel {
        at: Set(to_naive(Utc::now())),
        actor: Set(actor.chars().take(128).collect()),
        action: Set(action.to_owned()),
        target: Set(target.chars().take(200).collect()),
        detail: Set(detail.to_owned()),
        ..Default::default()
    }
    .insert(db)
    .await?;
    Ok(())
}

/// What to list: every field is a case-sensitive substring filter.
#[derive(Debug, Clone, Default)]
pub struct AuditFilter {
    pub actor: Option<String>,
    pub action: Option<String>,
    pub target: Option<String>,
}

/// The newest entries matching `filter`, at most `limit`.
pub async fn list(
    db: &impl ConnectionTrait,
    filter: &AuditFilter,
    limit: u64,
) -> Result<Vec<AuditEntry>, SqlError> {
    let mut query = audit_entry::Entity::find().order_by_desc(audit_entry::Column::Id);
    if let Some(actor) = &filter.actor {
        query = query.filter(audit_entry::Column::Actor.contains(actor));
    }
    if let Some(action) = &filter.action {
        query = query.filter(audit_entry::Column::Action.contains(action));
    }
    if let Some(target) = &filter.target {
        query = query.filter(audit_entry::Column::Target.contains(target));
    }
    Ok(query
        .limit(limit)
        .all(db)
        .await?
        .into_iter()
        .map(|row| AuditEntry {
            id: row.id,
            at: from_naive(row.at),
            actor: row.actor,
            action: row.action,
            target: row.target,
            detail: row.detail,
        })
        .collect())
}
