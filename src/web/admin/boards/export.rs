//! A ranking as CSV, with cells a spreadsheet would run made safe.

use actix_web::{HttpResponse, web};

use super::live::LiveQuery;
use super::ranked_board;
use crate::engine::leaderboard;
use crate::engine::state::AppState;
use crate::error::PageError;
use crate::web::session::AdminUser;

/// A text cell a spreadsheet will not run: one that starts like a formula (`=`, `+`,
/// `-`, `@`, a tab or a carriage return) gets a leading `'`, as OWASP advises against
/// CSV injection.
fn spreadsheet_safe(cell: &str) -> String {
    if cell.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{cell}")
    } else {
        cell.to_owned()
    }
}

/// A ranking as CSV: rank, member, name, score.
pub(super) async fn export_ranking(
    state: web::Data<AppState>,
    _user: AdminUser,
    path: web::Path<String>,
    query: web::Query<LiveQuery>,
) -> Result<HttpResponse, PageError> {
    let board = ranked_board(&state, &path)?;
    let sel = query.select(board.clone())?;
    let mut out = csv::Writer::from_writer(Vec::new());
    let write_err =
        |e: csv::Error| PageError::Internal(anyhow::anyhow!("failed to write CSV: {e}"));
    out.write_record(["rank", "member", "name", "score"])
        .map_err(write_err)?;
    let mut offset = 0;
    loop {
        let pages = leaderboard::tops(&state, std::slice::from_ref(&sel), offset, 1000).await?;
        let entries = &pages[0].entries;
        for e in entries {
            out.write_record([
                e.rank.to_string(),
                spreadsheet_safe(&e.member),
                spreadsheet_safe(e.name.as_deref().unwrap_or_default()),
                e.score.to_string(),
            ])
            .map_err(write_err)?;
        }
        if entries.len() < 1000 {
            break;
        }
        offset += 1000;
    }
    let body = out
        .into_inner()
        .map_err(|e| PageError::Internal(anyhow::anyhow!("failed to write CSV: {e}")))?;
    let file = format!(
        "{}-{}-{}-{}.csv",
        board.name().replace(':', "-"),
        sel.bucket.period,
        sel.bucket.label,
        sel.view.as_str()
    );
    Ok(HttpResponse::Ok()
        .content_type("text/csv; charset=utf-8")
        .insert_header((
            "Content-Disposition",
            format!("attachment; filename=\"{file}\""),
        ))
        .body(body))
}
