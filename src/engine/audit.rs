//! The audit log: an entry for each change made through the admin API or the dashboard
//! (who, what, on which target, with the detail), and the newest entries read back.

use serde_json::Value;

use super::error::EngineError;
use super::state::AppState;
use crate::store::sql;
pub use crate::store::sql::audit::{AuditEntry, AuditFilter};

/// Writes an audit entry for a change that has been made. The change stands even if the
/// entry cannot be written; the failure is logged with everything the entry would hold.
pub(crate) async fn record(
    state: &AppState,
    actor: &str,
    action: &str,
    target: &str,
    detail: Value,
) {
    let detail = detail.to_string();
    if let Err(err) = sql::audit::record(&state.db, actor, action, target, &detail).await {
        tracing::error!(error = %err, actor, action, target, detail, "failed to write an audit entry");
    }
}

/// The newest audit log entries matching `filter`, at most `limit`.
pub async fn newest(
    state: &AppState,
    filter: &AuditFilter,
    limit: u64,
) -> Result<Vec<AuditEntry>, EngineError> {
    Ok(sql::audit::list(&state.db, filter, limit).await?)
}
