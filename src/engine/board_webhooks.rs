//! **Board webhooks**: receivers told of a board's rank events. Staff add, list, test
//! and delete them; one instance at a time per board (a lease in Redis) watches each
//! distinct top its webhooks name — period, view, size — reading it every
//! `OVATION_EVENTS_INTERVAL_MS`, and when it changed puts one delivery per webhook that
//! wants some of its rank events in the outbox (`engine::webhooks` sends them, signed and
//! guarded like league webhooks). The first top read after taking a lease is the
//! baseline: changes while no instance held it (a failover, at most the lease's length)
//! are not told.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use serde_json::{Value, json};

use super::admin::random_text;
use super::audit;
use super::boards::{BoardRef, board_of};
use super::config::BoardConfig;
use super::error::EngineError;
use super::events::{checked_top, snapshot};
use super::leaderboard::select;
use super::state::AppState;
use crate::domain::board_webhook::{
    BoardDelivery, BoardWebhook, MAX_PER_BOARD, RankChangeList, parse_events,
};
use crate::domain::code::Code;
use crate::domain::ids::{BoardName, BoardSlug};
use crate::domain::live::{Snapshot, changes};
use crate::domain::period::Period;
use crate::domain::score::View;
use crate::domain::webhook::check_url_host;
use crate::store::sql;

/// How long a board's watch lease lasts unless renewed (each interval).
const LEASE: Duration = Duration::from_secs(10);

/// Deliveries the dashboard shows, most recent first.
pub const RECENT: u64 = 20;

/// What a new webhook asks for; unset fields take the board's defaults (its default
/// period, `display`, a top 10, every event).
pub struct NewWebhook {
    pub url: String,
    pub period: Option<String>,
    pub view: Option<String>,
    pub top: Option<i64>,
    pub events: Option<Vec<String>>,
}

/// A board that may have webhooks: not a family (its rooms come and go).
fn hooked_board(state: &AppState, slug: &BoardSlug) -> Result<Arc<BoardConfig>, EngineError> {
    let config = board_of(state, slug)?;
    if config.board.settings.instances.is_some() {
        return Err(EngineError::invalid(
            Code::NotForFamily,
            format!("board {slug} is a family: webhooks watch one board's tops"),
        ));
    }
    Ok(config)
}

/// The board of `config` as read.
fn board_ref(config: Arc<BoardConfig>) -> Result<BoardRef, EngineError> {
    let name = BoardName {
        slug: config.board.slug.clone(),
        instance: None,
    };
    BoardRef::of(config, &name)
}

/// Adds a webhook to `slug`: its URL checked like a league's, its top like a stream's
/// (a period the board keeps, a view, 1 to 100 members).
pub async fn create(
    state: &AppState,
    actor: &str,
    slug: &BoardSlug,
    new: NewWebhook,
) -> Result<BoardWebhook, EngineError> {
    let config = hooked_board(state, slug)?;
    check_url_host(&new.url, state.settings.webhook_allow_private)?;
    let top = checked_top(new.top.unwrap_or(10))?;
    let events = parse_events(new.events.as_deref())
        .map_err(|e| EngineError::invalid_field("events", e.message))?;
    let sel = select(
        board_ref(config.clone())?,
        new.period.as_deref(),
        None,
        new.view.as_deref(),
    )?;
    if sql::board_webhooks::of_board(&state.db, config.board.id)
        .await?
        .len()
        >= MAX_PER_BOARD
    {
        return Err(EngineError::conflict(
            Code::TooManyWebhooks,
            format!("a board has at most {MAX_PER_BOARD} webhooks"),
        ));
    }
    let hook = sql::board_webhooks::insert(
        &state.db,
        &BoardWebhook {
            id: 0,
            board_id: config.board.id,
            url: new.url,
            period: sel.bucket.period,
            view: sel.view,
            top,
            events,
            secret: random_text(40),
            created_at: Utc::now(),
        },
    )
    .await?;
    audit::record(
        state,
        actor,
        "board.webhook.create",
        slug.as_str(),
        json!({"id": hook.id, "url": hook.url, "period": hook.period.to_string(),
               "view": hook.view.as_str(), "top": hook.top, "events": hook.events}),
    )
    .await;
    Ok(hook)
}

/// A board's webhooks, oldest first.
pub async fn list(state: &AppState, slug: &BoardSlug) -> Result<Vec<BoardWebhook>, EngineError> {
    let config = hooked_board(state, slug)?;
    Ok(sql::board_webhooks::of_board(&state.db, config.board.id).await?)
}

/// A board's most recent deliveries, newest first.
pub async fn recent_deliveries(
    state: &AppState,
    slug: &BoardSlug,
) -> Result<Vec<BoardDelivery>, EngineError> {
    let config = hooked_board(state, slug)?;
    Ok(sql::board_webhooks::recent(&state.db, config.board.id, RECENT).await?)
}

fn missing(slug: &BoardSlug, id: i64) -> EngineError {
    EngineError::not_found(
        Code::WebhookNotFound,
        format!("board {slug} has no webhook {id}"),
    )
}

/// Deletes a board's webhook; deliveries not sent yet are dropped with it.
pub async fn delete(
    state: &AppState,
    actor: &str,
    slug: &BoardSlug,
    id: i64,
) -> Result<(), EngineError> {
    let config = hooked_board(state, slug)?;
    if !sql::board_webhooks::delete(&state.db, config.board.id, id).await? {
        return Err(missing(slug, id));
    }
    audit::record(
        state,
        actor,
        "board.webhook.delete",
        slug.as_str(),
        json!({"id": id}),
    )
    .await;
    Ok(())
}

/// Puts a test delivery (`{"type": "test"}`) for a board's webhook in the outbox;
/// answers its id.
pub async fn test(
    state: &AppState,
    actor: &str,
    slug: &BoardSlug,
    id: i64,
) -> Result<i64, EngineError> {
    let config = hooked_board(state, slug)?;
    let hook = sql::board_webhooks::find(&state.db, config.board.id, id)
        .await?
        .ok_or_else(|| missing(slug, id))?;
    let body = json!({"type": "test", "board": slug.as_str(), "webhook": id, "at": Utc::now()});
    let delivery = sql::board_webhooks::enqueue(&state.db, &hook, &body.to_string()).await?;
    audit::record(
        state,
        actor,
        "board.webhook.test",
        slug.as_str(),
        json!({"id": id, "delivery": delivery}),
    )
    .await;
    Ok(delivery)
}

/// A watched top: the board's id, and the period, view and size.
type Watched = (i64, Period, View, i64);

/// Watches the tops of every board with webhooks, each interval, until the process ends.
pub async fn run(state: AppState) {
    let token = random_text(24);
    let mut tick = tokio::time::interval(state.settings.events_interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut held: HashSet<i64> = HashSet::new();
    let mut last: HashMap<Watched, Snapshot> = HashMap::new();
    loop {
        tick.tick().await;
        let hooks = match sql::board_webhooks::all(&state.db).await {
            Ok(hooks) => hooks,
            Err(err) => {
                tracing::debug!(error = %err, "cannot read the board webhooks");
                continue;
            }
        };
        // A top no webhook watches any more is forgotten (a webhook added for it later
        // starts from a fresh baseline).
        let watched: HashSet<Watched> = hooks
            .iter()
            .map(|h| (h.board_id, h.period, h.view, h.top))
            .collect();
        last.retain(|w, _| watched.contains(w));
        let mut by_board: BTreeMap<i64, Vec<BoardWebhook>> = BTreeMap::new();
        for hook in hooks {
            by_board.entry(hook.board_id).or_default().push(hook);
        }
        let boards = state.config.boards();
        for (board_id, hooks) in &by_board {
            let Some(config) = boards.iter().find(|b| b.board.id == *board_id) else {
                continue;
            };
            let lease = state.redis.webhook_lease(&config.keys, &token, LEASE);
            let ours = if held.contains(board_id) {
                state.redis.renew_lease(&lease).await
            } else {
                state.redis.take_lease(&lease).await
            };
            if !matches!(ours, Ok(true)) {
                held.remove(board_id);
                last.retain(|w, _| w.0 != *board_id);
                continue;
            }
            held.insert(*board_id);
            watch(&state, config.clone(), hooks, &mut last).await;
        }
        // Boards whose last webhook went: their lease is let go.
        for board_id in held.clone() {
            if by_board.contains_key(&board_id) {
                continue;
            }
            held.remove(&board_id);
            last.retain(|w, _| w.0 != board_id);
            if let Some(config) = boards.iter().find(|b| b.board.id == board_id) {
                let lease = state.redis.webhook_lease(&config.keys, &token, LEASE);
                let _ = state.redis.release_lease(&lease).await;
            }
        }
    }
}

/// Reads each top `hooks` watch, and puts in the outbox what changed since the last read.
async fn watch(
    state: &AppState,
    config: Arc<BoardConfig>,
    hooks: &[BoardWebhook],
    last: &mut HashMap<Watched, Snapshot>,
) {
    let mut tops: BTreeMap<(String, &'static str, i64), Vec<&BoardWebhook>> = BTreeMap::new();
    for hook in hooks {
        tops.entry((hook.period.to_string(), hook.view.as_str(), hook.top))
            .or_default()
            .push(hook);
    }
    for ((period, view, top), hooks) in tops {
        let read = async {
            let sel = select(board_ref(config.clone())?, Some(&period), None, Some(view))?;
            let now = snapshot(state, &sel, top).await?;
            Ok::<_, EngineError>((sel, now))
        };
        let (sel, now) = match read.await {
            Ok(read) => read,
            Err(err) => {
                tracing::debug!(board = %config.board.slug, error = %err, "a webhook's top could not be read");
                continue;
            }
        };
        let key = (config.board.id, sel.bucket.period, sel.view, top);
        let Some(before) = last.insert(key, now.clone()) else {
            continue;
        };
        let changed = changes(&before, &now);
        if changed.is_empty() {
            continue;
        }
        for hook in hooks {
            let wanted = hook.wanted(&changed);
            if wanted.is_empty() {
                continue;
            }
            let body = rank_body(&config, hook, &now, &wanted);
            if let Err(err) = sql::board_webhooks::enqueue(&state.db, hook, &body.to_string()).await
            {
                tracing::warn!(board = %config.board.slug, webhook = hook.id, error = %err, "cannot queue a webhook delivery");
            }
        }
    }
}

/// A rank delivery's JSON: the board, the top watched, its bucket, and the events.
fn rank_body(
    config: &BoardConfig,
    hook: &BoardWebhook,
    now: &Snapshot,
    events: &RankChangeList,
) -> Value {
    json!({
        "type": "rank",
        "board": config.board.slug.as_str(),
        "webhook": hook.id,
        "period": hook.period.to_string(),
        "view": hook.view.as_str(),
        "top": hook.top,
        "bucket": now.bucket,
        "events": events,
        "at": Utc::now(),
    })
}
