//! **Reviewing held votes**: a board's flagged subjects (the review queue), and a review
//! that releases or drops a subject's held votes, or one member's among them.
//!
//! A review is recorded in SQL first (`store::sql::held`): the votes' new state and the
//! review, in one transaction. A drop is then done. A release counts each vote through
//! the write path (`engine::writes`) as a backfill at the vote's own time, without rules
//! or watches (the vote consumed them when it was cast): the buckets of its time in both
//! views, carry-over, participants, rolling windows and trending periods, a closed
//! bucket as a late write; its ledger entry names the held one (`releases`). Each vote's
//! write has an idempotency key of its own (`release-<entry id>`), so a release stopped
//! half-way and finished later (by the next review or queue read of the board) counts
//! each vote once.

use chrono::{DateTime, Utc};
use serde_json::json;

use super::audit;
use super::auth::Caller;
use super::config::BoardConfig;
use super::error::EngineError;
use super::ledger::{settle, votes_ledger_board};
use super::state::AppState;
use super::writes::{self, What, Write};
use crate::domain::auth::{Reach, Scope};
use crate::domain::code::Code;
use crate::domain::held::{Flagged, HeldVote, Review, ReviewAction, ReviewRequest};
use crate::domain::idempotency::Idempotency;
use crate::domain::ids::{
    BoardName, BoardSlug, Channel, IdempotencyKey, MemberId, Terminal, VoterId,
};
use crate::domain::period::Bucket;
use crate::domain::watch::Watch;
use crate::metrics::{self, WriteKind};
use crate::store::sql::held::{self as sql, Reviewed};
use crate::store::sql::ledger::{self as ledger_sql, LedgerOf};
use crate::store::sql::watches as watches_sql;

/// Held votes released per write call.
const RELEASE_STEP: usize = 100;

/// A board whose held votes are reviewed: a plain `votes` board (one with watches, or
/// that had some).
fn review_board(
    state: &AppState,
    slug: &BoardSlug,
) -> Result<std::sync::Arc<BoardConfig>, EngineError> {
    votes_ledger_board(state, slug, "it holds no votes")
}

/// The board's flagged subjects, each with its watch (a deleted one too), once every
/// vote accepted before now is in SQL (and any release left half-way is finished).
pub async fn queue(
    state: &AppState,
    slug: &BoardSlug,
) -> Result<Vec<(Flagged, Option<Watch>)>, EngineError> {
    let board = review_board(state, slug)?;
    settle(state, &board).await?;
    finish(state, &board).await?;
    let watches = watches_sql::list(&state.db, board.board.id, true).await?;
    Ok(sql::queue(&state.db, board.board.id)
        .await?
        .into_iter()
        .map(|f| {
            let watch = watches.iter().find(|w| w.id == f.watch).cloned();
            (f, watch)
        })
        .collect())
}

/// Reviews a subject's votes still held (or one member's among them): 404
/// `subject_not_found` when the watch never held such votes, 409 `already_reviewed` when
/// they were all reviewed before, 409 `bucket_released` when a release would count a vote
/// in a bucket Redis has let go after the archive (nothing is reviewed then).
pub async fn review(
    state: &AppState,
    actor: &str,
    slug: &BoardSlug,
    request: ReviewRequest,
) -> Result<Review, EngineError> {
    let board = review_board(state, slug)?;
    settle(state, &board).await?;
    finish(state, &board).await?;
    let now = Utc::now();
    let check = |votes: &[HeldVote]| match request.action {
        ReviewAction::Release => still_in_redis(&board, votes, now),
        ReviewAction::Drop | ReviewAction::Expire => Ok(()),
    };
    let reviewed = sql::review(&state.db, board.board.id, &request, actor, check).await??;
    let (review, votes) = match reviewed {
        Reviewed::Done(review, votes) => (review, votes),
        Reviewed::Unknown => {
            return Err(EngineError::not_found(
                Code::SubjectNotFound,
                format!(
                    "watch {} held no votes of subject {:?}{}",
                    request.watch,
                    request.subject,
                    request
                        .member
                        .as_ref()
                        .map(|m| format!(" for member {m}"))
                        .unwrap_or_default()
                ),
            ));
        }
        Reviewed::AlreadyReviewed => {
            return Err(EngineError::conflict(
                Code::AlreadyReviewed,
                format!(
                    "every held vote of subject {:?} was reviewed before",
                    request.subject
                ),
            ));
        }
    };
    if request.action == ReviewAction::Release {
        release(state, &board, review.id, &votes).await?;
    }
    metrics::held_votes(
        slug.as_str(),
        request.watch,
        request.action.outcome().as_str(),
        review.votes,
    );
    audit::record(
        state,
        actor,
        &format!("held.{}", request.action.as_str()),
        &format!("board {slug}"),
        json!({"id": review.id, "watch": request.watch, "subject": request.subject,
            "member": request.member, "votes": review.votes}),
    )
    .await;
    Ok(review)
}

/// Drops the held votes of every flagged subject whose newest held vote is older than
/// `OVATION_HELD_RETENTION_DAYS` at `now`, one review (`expire`, audited) per subject;
/// answers the votes dropped. The archive task runs it, under its lease.
pub async fn expire(state: &AppState, now: DateTime<Utc>) -> Result<i64, EngineError> {
    let retention = chrono::Duration::from_std(state.settings.held_retention)
        .map_err(|e| anyhow::anyhow!("held retention: {e}"))?;
    let before_ms = (now - retention).timestamp_millis();
    let mut dropped = 0;
    for board in state.config.boards() {
        if board.board.settings.instances.is_some() || board.board.settings.scoring.is_scores() {
            continue;
        }
        for (watch, subject) in sql::stale(&state.db, board.board.id, before_ms).await? {
            let request = ReviewRequest {
                watch,
                subject,
                member: None,
                action: ReviewAction::Expire,
            };
            let check = |_: &[HeldVote]| Ok::<(), EngineError>(());
            let reviewed =
                sql::review(&state.db, board.board.id, &request, RETENTION, check).await??;
            if let Reviewed::Done(review, _) = reviewed {
                metrics::held_votes(board.board.slug.as_str(), watch, "dropped", review.votes);
                audit::record(
                    state,
                    RETENTION,
                    "held.expire",
                    &format!("board {}", board.board.slug),
                    json!({"id": review.id, "watch": watch, "subject": request.subject,
                        "votes": review.votes}),
                )
                .await;
                dropped += review.votes;
            }
        }
    }
    Ok(dropped)
}

/// Who drops held votes left unreviewed, as the audit log names it.
const RETENTION: &str = "held vote retention";

/// Refuses a release that would count a vote in a closed bucket Redis has let go (its
/// retention after it closed has passed).
fn still_in_redis(
    board: &BoardConfig,
    votes: &[HeldVote],
    now: DateTime<Utc>,
) -> Result<(), EngineError> {
    let settings = &board.board.settings;
    for v in votes {
        let at = DateTime::from_timestamp_millis(v.at_ms).unwrap_or_default();
        for &period in settings.periods.iter().filter(|p| p.is_periodic()) {
            let bucket = Bucket::containing(period, settings.timezone, at)?;
            if settings
                .retention
                .release_at(&bucket)
                .is_some_and(|gone| gone <= now)
            {
                return Err(EngineError::conflict(
                    Code::BucketReleased,
                    format!(
                        "{period} {} has closed and left Redis for the archive: the held \
                         votes cast in it can be dropped, not released",
                        bucket.label
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Finishes the board's releases whose Redis step did not finish.
async fn finish(state: &AppState, board: &BoardConfig) -> Result<(), EngineError> {
    for (id, votes) in sql::unapplied(&state.db, board.board.id).await? {
        release(state, board, id, &votes).await?;
    }
    Ok(())
}

/// Counts release `id`'s votes, each once, and records that it is done.
async fn release(
    state: &AppState,
    board: &BoardConfig,
    id: i64,
    votes: &[HeldVote],
) -> Result<(), EngineError> {
    let of = LedgerOf::board(board.board.id);
    let seqs: Vec<i64> = votes.iter().map(|v| v.seq).collect();
    let entries = ledger_sql::at_seqs(&state.db, of, &seqs).await?;
    let caller = Caller {
        scopes: vec![Scope::Vote, Scope::Backfill],
        channel: None,
        reach: Reach::EVERYWHERE,
        actor: "review".to_owned(),
        id: "review".to_owned(),
        signed_in: None,
    };
    for step in entries.chunks(RELEASE_STEP) {
        let writes = step
            .iter()
            .map(|r| released(&board.board.slug, &r.entry, id))
            .collect();
        for (answer, r) in writes::apply(state, &caller, WriteKind::Vote, writes)
            .await?
            .into_iter()
            .zip(step)
        {
            match answer {
                Ok(_) => {}
                // The board can no longer take this vote (its member deleted or disabled,
                // a score at its limit): it is left out, as a refused vote is, so the
                // release can finish.
                Err(
                    err @ (EngineError::NotFound { .. }
                    | EngineError::Conflict { .. }
                    | EngineError::Invalid { .. }),
                ) => tracing::warn!(
                    board = %board.board.slug,
                    seq = r.seq,
                    error = %err,
                    "a released vote cannot be counted: left out"
                ),
                Err(err) => return Err(err),
            }
        }
    }
    sql::mark_applied(&state.db, id).await?;
    Ok(())
}

/// The write that counts held `entry` at its own time, for release `id`.
fn released(
    slug: &BoardSlug,
    entry: &crate::domain::ledger::Entry,
    id: i64,
) -> Result<Write, EngineError> {
    let key = IdempotencyKey::parse(&format!("release-{}", entry.id))?;
    let review = id.to_string();
    Ok(Write {
        board: BoardName {
            slug: slug.clone(),
            instance: None,
        },
        member: MemberId::parse(&entry.member)?,
        what: What::Vote { count: entry.count },
        voter: entry.voter.as_deref().map(VoterId::parse).transpose()?,
        channel: entry.channel.as_deref().map(Channel::parse).transpose()?,
        terminal: entry.terminal.as_deref().map(Terminal::parse).transpose()?,
        idempotency: Some(Idempotency::new(key, &[("review", Some(&review))])),
        at: Some(DateTime::from_timestamp_millis(entry.at).unwrap_or_default()),
        ip: entry.ip.as_deref().and_then(|ip| ip.parse().ok()),
        skip_limits: true,
        releases: Some(entry.id),
    })
}
