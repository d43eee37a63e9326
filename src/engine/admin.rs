//! Configuration changes (boards, members, rules, API keys): SQL first, Redis where scores
//! depend on them, then every instance's cache.
//!
//! SQL commits first; the Redis step that follows is repeatable (initial votes are
//! applied by target value, member removals are kept in SQL until Redis did them), and
//! `engine::reconcile` finishes whatever a failure left undone.

use std::sync::Arc;

use rand::Rng;
use serde_json::{Value, json};

use super::audit;
use super::error::EngineError;
use crate::domain::auth::{ApiKey, KeySpec, hash_key};
use crate::domain::board::{Board, BoardSettings, Member};
use crate::domain::code::Code;
use crate::domain::ids::{BoardSlug, MemberId};
use crate::domain::limit::{RateRule, RuleSpec, bounds as limit_bounds};
use crate::engine::archive::{self, ArchiveReport};
use crate::engine::config::{BoardConfig, Change};
use crate::engine::config_sync;
use crate::engine::identity;
use crate::engine::reconcile;
use crate::engine::state::AppState;
use crate::store::sql;

/// The cached board with this slug, or `board_not_found`.
pub use super::boards::board_of;

async fn changed(state: &AppState, change: Change) -> Result<(), EngineError> {
    config_sync::changed(state, change).await
}

/// Creates a board.
pub async fn create_board(
    state: &AppState,
    actor: &str,
    slug: BoardSlug,
    settings: BoardSettings,
) -> Result<Arc<BoardConfig>, EngineError> {
    settings.check()?;
    identity::check_board_providers(state, &settings.providers)?;
    sql::boards::insert_board(&state.db, &slug, &settings)
        .await
        .map_err(|e| match e {
            sql::SqlError::Conflict => {
                EngineError::conflict(Code::BoardExists, format!("board {slug} already exists"))
            }
            other => other.into(),
        })?;
    changed(state, Change::Board(slug.clone())).await?;
    audit::record(
        state,
        actor,
        "board.create",
        &format!("board {slug}"),
        json!({"title": settings.title}),
    )
    .await;
    board_of(state, &slug)
}

/// Saves new settings of an existing board.
pub async fn update_board(
    state: &AppState,
    actor: &str,
    slug: &BoardSlug,
    settings: BoardSettings,
) -> Result<Arc<BoardConfig>, EngineError> {
    settings.check()?;
    identity::check_board_providers(state, &settings.providers)?;
    let current = board_of(state, slug)?;
    current.board.settings.check_change(&settings)?;
    if !current.watches.is_empty() && !settings.ledger {
        return Err(EngineError::conflict(
            Code::LedgerRequired,
            format!("board {slug} has watches, and held votes wait for review in its ledger"),
        ));
    }
    let board = Board {
        id: current.board.id,
        slug: slug.clone(),
        settings,
        votes_counted_from: current.board.votes_counted_from,
    };
    sql::boards::update_board(&state.db, &board).await?;
    changed(state, Change::Board(slug.clone())).await?;
    audit::record(
        state,
        actor,
        "board.update",
        &format!("board {slug}"),
        settings_json(&board.settings),
    )
    .await;
    board_of(state, slug)
}

/// Deletes a board; its Redis keys (a family's instances' too, on every node) are removed
/// in the background.
pub async fn delete_board(
    state: &AppState,
    actor: &str,
    slug: &BoardSlug,
) -> Result<(), EngineError> {
    let current = board_of(state, slug)?;
    let txn = sql::begin_write(&state.db)
        .await
        .map_err(sql::SqlError::from)?;
    sql::boards::delete_board(&txn, current.board.id).await?;
    sql::archive::delete_board(&txn, current.board.id).await?;
    txn.commit().await.map_err(sql::SqlError::from)?;
    changed(state, Change::Board(slug.clone())).await?;
    audit::record(
        state,
        actor,
        "board.delete",
        &format!("board {slug}"),
        json!({}),
    )
    .await;
    let redis = state.redis.clone();
    let keys = current.keys.clone();
    let family = current.board.settings.instances.is_some();
    tokio::spawn(async move {
        match redis.unlink_board(&keys).await {
            Ok(n) => tracing::info!(keys = n, "removed a deleted board's redis keys"),
            Err(err) => {
                tracing::warn!(error = %err, "failed to remove a deleted board's redis keys")
            }
        }
        if family {
            match redis.unlink_instances(&keys).await {
                Ok(n) => tracing::info!(keys = n, "removed a deleted family's instances"),
                Err(err) => {
                    tracing::warn!(error = %err, "failed to remove a deleted family's instances; they expire")
                }
            }
        }
    });
    Ok(())
}

/// Archives a board's closed buckets now and releases the keys of those past their
/// retention (`archive::archive_now`), and records it in the audit log.
pub async fn archive_board(
    state: &AppState,
    actor: &str,
    slug: &BoardSlug,
) -> Result<ArchiveReport, EngineError> {
    let board = board_of(state, slug)?;
    let report = archive::archive_now(state, &board).await?;
    audit::record(
        state,
        actor,
        "board.archive",
        &format!("board {slug}"),
        json!({"archived": report.archived.len(), "released": report.released.len()}),
    )
    .await;
    Ok(report)
}

/// Inserts or replaces members; their initial votes move the all-time display board.
///
/// SQL commits first; then Redis brings the initial votes to the new values, by target
/// (`initial.lua`), so the step can be repeated: when Redis fails here, the answer is a
/// 503, a retry of the same request finishes it, and start-up reconciles every board.
/// The 2^53 bound is checked in Redis before anything is written.
pub async fn upsert_members(
    state: &AppState,
    actor: &str,
    slug: &BoardSlug,
    members: Vec<Member>,
) -> Result<usize, EngineError> {
    let board = board_of(state, slug)?;
    for m in &members {
        m.check()
            .and_then(|()| board.board.settings.admits_member(m))
            .map_err(|e| EngineError::invalid(e.code, format!("member {}: {}", m.id, e.message)))?;
    }
    let targets: Vec<(&str, i64)> = members
        .iter()
        .map(|m| (m.id.as_str(), m.initial_votes))
        .collect();
    if let Some(member) = state
        .redis
        .check_initial_votes(&board.keys, &targets)
        .await?
    {
        return Err(overflow(&member));
    }
    let txn = sql::begin_write(&state.db)
        .await
        .map_err(sql::SqlError::from)?;
    sql::members::upsert_members(&txn, board.board.id, &members).await?;
    txn.commit().await.map_err(sql::SqlError::from)?;
    changed(state, Change::Board(slug.clone())).await?;
    let ids: Vec<&str> = members.iter().take(50).map(|m| m.id.as_str()).collect();
    audit::record(
        state,
        actor,
        "members.upsert",
        &format!("board {slug}"),
        json!({"count": members.len(), "members": ids}),
    )
    .await;
    if let Some(member) = state
        .redis
        .apply_initial_votes(&board.keys, &targets)
        .await?
    {
        // Only votes cast since the check can bring a member this close to the bound.
        tracing::error!(%member, board = %slug, "initial votes left unapplied: past 2^53 units");
        return Err(overflow(&member));
    }
    Ok(members.len())
}

fn overflow(member: &str) -> EngineError {
    EngineError::invalid(
        Code::ScoreOverflow,
        format!(
            "member {member}: these initial votes would take its score past 2^53 units, the \
             most a board holds exactly; nothing was changed"
        ),
    )
}

/// Deletes a member. Its scores leave the current and next buckets of every period and
/// the all-time board; older buckets keep their history.
///
/// SQL commits first, together with a pending removal; the Redis step then runs, and
/// when it fails it is retried in the background (and at start-up) until it is done.
pub async fn delete_member(
    state: &AppState,
    actor: &str,
    slug: &BoardSlug,
    member: &MemberId,
) -> Result<(), EngineError> {
    let board = board_of(state, slug)?;
    if !board.members.contains_key(member) {
        return Err(EngineError::not_found(
            Code::MemberNotFound,
            format!("{member} is not a member of board {slug}"),
        ));
    }
    let now = chrono::Utc::now();
    let txn = sql::begin_write(&state.db)
        .await
        .map_err(sql::SqlError::from)?;
    sql::members::delete_member(&txn, board.board.id, member).await?;
    sql::members::record_removal(&txn, board.board.id, member, now).await?;
    txn.commit().await.map_err(sql::SqlError::from)?;
    changed(state, Change::Board(slug.clone())).await?;
    audit::record(
        state,
        actor,
        "member.delete",
        &format!("member {member} on {slug}"),
        json!({}),
    )
    .await;
    if let Err(err) = reconcile::finish_removals(state).await {
        tracing::warn!(error = %err, "a member's scores stay in redis for now; retrying");
        tokio::spawn(reconcile::until_done(state.clone()));
    }
    Ok(())
}

/// Adds a rate-limit rule to a board.
pub async fn create_rule(
    state: &AppState,
    actor: &str,
    slug: &BoardSlug,
    spec: RuleSpec,
) -> Result<RateRule, EngineError> {
    spec.check()?;
    let board = board_of(state, slug)?;
    rule_fits(&board, &spec)?;
    if board.all_rules().count() >= limit_bounds::RULES_PER_BOARD {
        return Err(EngineError::conflict(
            Code::TooManyRules,
            format!(
                "a board holds at most {} rules",
                limit_bounds::RULES_PER_BOARD
            ),
        ));
    }
    let rule = sql::rules::insert_rule(&state.db, board.board.id, &spec).await?;
    changed(state, Change::Board(slug.clone())).await?;
    audit::record(
        state,
        actor,
        "rule.create",
        &format!("rule {} on {slug}", rule.id),
        json!({"rule": crate::engine::limits::describe(crate::i18n::Lang::En, &rule.spec)}),
    )
    .await;
    Ok(rule)
}

/// Refuses a rule of rooms opened (`["creator"]`) on a board that is not a family: it
/// has no rooms to open.
fn rule_fits(board: &BoardConfig, spec: &RuleSpec) -> Result<(), EngineError> {
    if spec.opens_rooms() && board.board.settings.instances.is_none() {
        return Err(EngineError::invalid(
            Code::InvalidDimension,
            format!(
                "creator counts the rooms each creator opens in a family, and board {} is \
                 not a family",
                board.board.slug
            ),
        ));
    }
    Ok(())
}

/// The board's rule with this id, or `rule_not_found`.
pub fn rule_of(board: &BoardConfig, id: i64) -> Result<RateRule, EngineError> {
    board
        .all_rules()
        .find(|r| r.id == id)
        .cloned()
        .ok_or_else(|| {
            EngineError::not_found(
                Code::RuleNotFound,
                format!("board {} has no rule {id}", board.board.slug),
            )
        })
}

/// Saves a rule's new settings. Counters carry on: raising today's limit keeps today's
/// count; a rule that counts over other dimensions or another window starts afresh.
pub async fn update_rule(
    state: &AppState,
    actor: &str,
    slug: &BoardSlug,
    rule: RateRule,
) -> Result<RateRule, EngineError> {
    rule.spec.check()?;
    let board = board_of(state, slug)?;
    rule_of(&board, rule.id)?;
    rule_fits(&board, &rule.spec)?;
    sql::rules::update_rule(&state.db, board.board.id, &rule).await?;
    changed(state, Change::Board(slug.clone())).await?;
    audit::record(
        state,
        actor,
        "rule.update",
        &format!("rule {} on {slug}", rule.id),
        json!({"rule": crate::engine::limits::describe(crate::i18n::Lang::En, &rule.spec)}),
    )
    .await;
    Ok(rule)
}

/// Deletes a rule; its counters expire with their windows.
pub async fn delete_rule(
    state: &AppState,
    actor: &str,
    slug: &BoardSlug,
    id: i64,
) -> Result<(), EngineError> {
    let board = board_of(state, slug)?;
    if !sql::rules::delete_rule(&state.db, board.board.id, id).await? {
        return Err(EngineError::not_found(
            Code::RuleNotFound,
            format!("board {slug} has no rule {id}"),
        ));
    }
    changed(state, Change::Board(slug.clone())).await?;
    audit::record(
        state,
        actor,
        "rule.delete",
        &format!("rule {id} on {slug}"),
        json!({}),
    )
    .await;
    Ok(())
}

/// Creates an API key; the secret is in the answer and nowhere else.
pub async fn create_api_key(
    state: &AppState,
    actor: &str,
    spec: &KeySpec,
) -> Result<(ApiKey, String), EngineError> {
    let secret = new_secret();
    let key =
        sql::api_keys::insert_api_key(&state.db, spec, &hash_key(&secret), &secret[..12]).await?;
    changed(state, Change::ApiKeys).await?;
    audit::record(
        state,
        actor,
        "api_key.create",
        &format!("api key {} {}", key.id, spec.name),
        json!({
            "scopes": spec.scopes.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
            "channel": spec.channel.as_ref().map(|c| c.as_str()),
            "boards": spec.reach.board_names(),
            "leagues": spec.reach.league_names(),
        }),
    )
    .await;
    Ok((key, secret))
}

/// Every key, revoked ones included, newest first.
pub async fn list_api_keys(state: &AppState) -> Result<Vec<ApiKey>, EngineError> {
    Ok(sql::api_keys::list_api_keys(&state.db)
        .await?
        .into_iter()
        .map(|(_, k)| k)
        .collect())
}

/// Revokes a key at once on every instance.
pub async fn revoke_api_key(state: &AppState, actor: &str, id: i64) -> Result<(), EngineError> {
    if !sql::api_keys::revoke_api_key(&state.db, id).await? {
        return Err(EngineError::not_found(
            Code::ApiKeyNotFound,
            format!("no live API key {id}"),
        ));
    }
    changed(state, Change::ApiKeys).await?;
    audit::record(
        state,
        actor,
        "api_key.revoke",
        &format!("api key {id}"),
        json!({}),
    )
    .await;
    Ok(())
}

/// A board's settings as the audit log shows them.
fn settings_json(s: &BoardSettings) -> Value {
    json!({
        "title": s.title,
        "membership": s.membership.as_str(),
        "periods": s.periods.iter().map(|p| p.as_str()).collect::<Vec<_>>(),
        "timezone": s.timezone.name(),
        "multiplier": s.multiplier.as_f64(),
        "carry_over": s.carry_over.as_f64(),
        "starts_at": s.starts_at,
        "ends_at": s.ends_at,
        "public_page": s.public_page,
        "max_count": s.max_count,
        "display_decimals": s.display_decimals,
        "embed_origins": s.embed_origins,
        "scoring": s.scoring.as_str(),
        "decimals": s.scoring.decimals(),
        "storage": s.storage.encode(),
        "retention": s.retention.encode(),
        "archive_top": s.archive_top,
        "voters": s.voters.as_str(),
        "identity_providers": s.providers,
        "tell_held": s.tell_held,
    })
}

/// `ovk_` and 40 random alphanumerics (about 238 bits).
fn new_secret() -> String {
    format!("ovk_{}", random_text(40))
}

/// `len` random alphanumerics (about 5.95 bits each): secrets made for clients.
pub(crate) fn random_text(len: usize) -> String {
    let mut rng = rand::rng();
    (0..len)
        .map(|_| rng.sample(rand::distr::Alphanumeric) as char)
        .collect()
}
