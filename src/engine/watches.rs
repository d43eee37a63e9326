//! Watches' configuration: added, changed and deleted per board, SQL first, then every
//! instance's configuration (see `domain::watch` for what a watch does to a vote).
//!
//! A watch needs a `votes` board that keeps a ledger (a held vote is a ledger entry, and
//! its review reads the ledger) and is not a family.

use serde_json::json;

use super::audit;
use super::boards::board_of;
use super::config::{BoardConfig, Change};
use super::config_sync;
use super::error::EngineError;
use super::state::AppState;
use crate::domain::code::Code;
use crate::domain::ids::BoardSlug;
use crate::domain::watch::{Watch, WatchSpec, bounds};
use crate::store::sql;

/// Refuses a board a watch cannot run on.
pub fn board_takes_watches(board: &BoardConfig) -> Result<(), EngineError> {
    let settings = &board.board.settings;
    let slug = &board.board.slug;
    if settings.scoring.is_scores() {
        return Err(EngineError::conflict(
            Code::WrongScoring,
            format!("board {slug} keeps scores: watches hold votes"),
        ));
    }
    if settings.instances.is_some() {
        return Err(EngineError::invalid(
            Code::NotForFamily,
            format!("board {slug} is a family: its rooms take no watches"),
        ));
    }
    if !settings.ledger {
        return Err(EngineError::conflict(
            Code::LedgerRequired,
            format!("board {slug} keeps no ledger, where held votes wait for review"),
        ));
    }
    Ok(())
}

/// Adds a watch to a board.
pub async fn create(
    state: &AppState,
    actor: &str,
    slug: &BoardSlug,
    spec: WatchSpec,
) -> Result<Watch, EngineError> {
    spec.check()?;
    let board = board_of(state, slug)?;
    board_takes_watches(&board)?;
    if board.watches.len() >= bounds::WATCHES_PER_BOARD {
        return Err(EngineError::conflict(
            Code::TooManyWatches,
            format!(
                "a board holds at most {} watches",
                bounds::WATCHES_PER_BOARD
            ),
        ));
    }
    let watch = sql::watches::insert(&state.db, board.board.id, &spec).await?;
    config_sync::changed(state, Change::Board(slug.clone())).await?;
    audit::record(
        state,
        actor,
        "watch.create",
        &format!("watch {} on {slug}", watch.id),
        described(&watch.spec),
    )
    .await;
    Ok(watch)
}

/// The board's live watch with this id, or `watch_not_found`.
pub fn watch_of(board: &BoardConfig, id: i64) -> Result<Watch, EngineError> {
    board
        .watches
        .iter()
        .find(|w| w.id == id)
        .cloned()
        .ok_or_else(|| {
            EngineError::not_found(
                Code::WatchNotFound,
                format!("board {} has no watch {id}", board.board.slug),
            )
        })
}

/// Saves a watch's new settings. Its counts carry on while its dimensions and window
/// stay (a raised threshold lets a subject's next votes count); other dimensions or
/// another window count afresh.
pub async fn update(
    state: &AppState,
    actor: &str,
    slug: &BoardSlug,
    watch: Watch,
) -> Result<Watch, EngineError> {
    watch.spec.check()?;
    let board = board_of(state, slug)?;
    watch_of(&board, watch.id)?;
    sql::watches::update(&state.db, board.board.id, &watch).await?;
    config_sync::changed(state, Change::Board(slug.clone())).await?;
    audit::record(
        state,
        actor,
        "watch.update",
        &format!("watch {} on {slug}", watch.id),
        described(&watch.spec),
    )
    .await;
    Ok(watch)
}

/// Deletes a watch: it holds no more votes; those it held stay held until reviewed.
pub async fn delete(
    state: &AppState,
    actor: &str,
    slug: &BoardSlug,
    id: i64,
) -> Result<(), EngineError> {
    let board = board_of(state, slug)?;
    if !sql::watches::delete(&state.db, board.board.id, id).await? {
        return Err(EngineError::not_found(
            Code::WatchNotFound,
            format!("board {slug} has no watch {id}"),
        ));
    }
    config_sync::changed(state, Change::Board(slug.clone())).await?;
    audit::record(
        state,
        actor,
        "watch.delete",
        &format!("watch {id} on {slug}"),
        json!({}),
    )
    .await;
    Ok(())
}

fn described(spec: &WatchSpec) -> serde_json::Value {
    json!({
        "name": spec.name,
        "dimensions": spec.dimensions.iter().map(|d| d.code()).collect::<Vec<_>>(),
        "window": spec.window.code(),
        "threshold": spec.threshold,
    })
}
