//! Held votes and their reviews in SQL (`held_votes`, `held_reviews`): a row per held
//! vote, written by the drain in the transaction that stores its ledger entry, and each
//! review's outcome, written before its Redis step (a release's), which is then marked
//! done — as revocations are.

use std::collections::BTreeMap;

use chrono::Utc;
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter,
    QueryOrder, QuerySelect, Set,
};

use super::entities::{held_review, held_vote};
use super::{SqlError, to_naive};
use crate::domain::held::{Flagged, HeldState, HeldVote, Review, ReviewAction, ReviewRequest};
use crate::domain::ledger::Entry;

/// Voters and addresses a flagged subject shows.
const SAMPLE: usize = 5;
/// Held votes updated per statement.
const CHUNK: usize = 1000;

/// Records the held votes among a batch the drain stores: `(seq, entry)` each.
pub async fn insert(
    db: &impl ConnectionTrait,
    board_id: i64,
    held: &[(i64, Entry)],
) -> Result<(), SqlError> {
    for chunk in held.chunks(CHUNK) {
        let rows = chunk.iter().filter_map(|(seq, e)| {
            let mark = e.held.as_ref()?;
            Some(held_vote::ActiveModel {
                board_id: Set(board_id),
                seq: Set(*seq),
                entry_id: Set(e.id),
                watch_id: Set(mark.watch),
                subject: Set(mark.subject.clone()),
                member: Set(e.member.clone()),
                voter: Set(e.voter.clone()),
                ip: Set(e.ip.clone()),
                at_ms: Set(e.at),
                votes: Set(e.count),
                state: Set(HeldState::Held.as_str().to_owned()),
                review_id: Set(None),
            })
        });
        held_vote::Entity::insert_many(rows)
            .exec(db)
            .await
            .map_err(SqlError::from_write)?;
    }
    Ok(())
}

fn held(row: held_vote::Model) -> Result<HeldVote, SqlError> {
    Ok(HeldVote {
        state: HeldState::parse(&row.state).ok_or_else(|| {
            SqlError::Corrupt(format!("held vote {} has state {:?}", row.seq, row.state))
        })?,
        seq: row.seq,
        entry_id: row.entry_id,
        watch: row.watch_id,
        subject: row.subject,
        member: row.member,
        voter: row.voter,
        ip: row.ip,
        at_ms: row.at_ms,
        votes: row.votes,
    })
}

/// The board's flagged subjects, those with votes still held first, then the latest.
pub async fn queue(db: &impl ConnectionTrait, board_id: i64) -> Result<Vec<Flagged>, SqlError> {
    let rows = held_vote::Entity::find()
        .filter(held_vote::Column::BoardId.eq(board_id))
        .order_by_asc(held_vote::Column::Seq)
        .all(db)
        .await?;
    let mut subjects: BTreeMap<(i64, String), Flagged> = BTreeMap::new();
    for row in rows {
        let v = held(row)?;
        let f = subjects
            .entry((v.watch, v.subject.clone()))
            .or_insert_with(|| Flagged {
                watch: v.watch,
                subject: v.subject.clone(),
                first_ms: v.at_ms,
                ..Flagged::default()
            });
        f.first_ms = f.first_ms.min(v.at_ms);
        f.last_ms = f.last_ms.max(v.at_ms);
        match v.state {
            HeldState::Held => {
                f.held += v.votes;
                *f.members.entry(v.member).or_insert(0) += v.votes;
                for (sample, value) in [(&mut f.voters, v.voter), (&mut f.ips, v.ip)] {
                    if let Some(value) = value
                        && sample.len() < SAMPLE
                        && !sample.contains(&value)
                    {
                        sample.push(value);
                    }
                }
            }
            HeldState::Released => f.released += v.votes,
            HeldState::Dropped => f.dropped += v.votes,
        }
    }
    let mut flagged: Vec<Flagged> = subjects.into_values().collect();
    flagged.sort_by_key(|f| (f.held == 0, -f.last_ms));
    Ok(flagged)
}

/// How a review went in SQL.
#[derive(Debug)]
pub enum Reviewed {
    /// Recorded, with the votes it reviewed.
    Done(Review, Vec<HeldVote>),
    /// The watch has no such subject (or the subject no votes for that member).
    Unknown,
    /// Its votes were all reviewed before.
    AlreadyReviewed,
}

/// Reviews `request`'s votes still held, and records the review (done at once for a
/// drop; a release's Redis step is marked done by [`mark_applied`]), in one transaction.
/// `check` sees the votes before anything is written and may refuse them.
pub async fn review<E>(
    db: &DatabaseConnection,
    board_id: i64,
    request: &ReviewRequest,
    actor: &str,
    check: impl FnOnce(&[HeldVote]) -> Result<(), E>,
) -> Result<Result<Reviewed, E>, SqlError> {
    let txn = super::begin_write(db).await?;
    let mut query = held_vote::Entity::find()
        .filter(held_vote::Column::BoardId.eq(board_id))
        .filter(held_vote::Column::WatchId.eq(request.watch))
        .filter(held_vote::Column::Subject.eq(request.subject.as_str()));
    if let Some(member) = &request.member {
        query = query.filter(held_vote::Column::Member.eq(member.as_str()));
    }
    let all = query
        .order_by_asc(held_vote::Column::Seq)
        .all(&txn)
        .await?
        .into_iter()
        .map(held)
        .collect::<Result<Vec<_>, _>>()?;
    if all.is_empty() {
        return Ok(Ok(Reviewed::Unknown));
    }
    let votes: Vec<HeldVote> = all
        .into_iter()
        .filter(|v| v.state == HeldState::Held)
        .collect();
    if votes.is_empty() {
        return Ok(Ok(Reviewed::AlreadyReviewed));
    }
    if let Err(refused) = check(&votes) {
        return Ok(Err(refused));
    }
    let total = votes.iter().map(|v| v.votes).sum();
    let row = held_review::ActiveModel {
        board_id: Set(board_id),
        watch_id: Set(request.watch),
        subject: Set(request.subject.clone()),
        member: Set(request.member.clone()),
        action: Set(request.action.as_str().to_owned()),
        actor: Set(actor.to_owned()),
        created_at: Set(to_naive(Utc::now())),
        votes: Set(total),
        applied: Set(request.action != ReviewAction::Release),
        ..Default::default()
    }
    .insert(&txn)
    .await?;
    let seqs: Vec<i64> = votes.iter().map(|v| v.seq).collect();
    let mut moved = 0;
    for chunk in seqs.chunks(CHUNK) {
        moved += held_vote::Entity::update_many()
            .col_expr(
                held_vote::Column::State,
                Expr::value(request.action.outcome().as_str()),
            )
            .col_expr(held_vote::Column::ReviewId, Expr::value(row.id))
            .filter(held_vote::Column::BoardId.eq(board_id))
            .filter(held_vote::Column::Seq.is_in(chunk.iter().copied()))
            .filter(held_vote::Column::State.eq(HeldState::Held.as_str()))
            .exec(&txn)
            .await?
            .rows_affected;
    }
    if moved != seqs.len() as u64 {
        // Another review took some of them first (two at once, on PostgreSQL or MariaDB,
        // where reads do not wait for the other's writes): this one reviews nothing.
        return Ok(Ok(Reviewed::AlreadyReviewed));
    }
    txn.commit().await?;
    let review = Review {
        id: row.id,
        request: request.clone(),
        actor: actor.to_owned(),
        votes: total,
    };
    Ok(Ok(Reviewed::Done(review, votes)))
}

/// The board's flagged subjects (watch, subject) with votes still held, none of them
/// cast at or after `before_ms`.
pub async fn stale(
    db: &impl ConnectionTrait,
    board_id: i64,
    before_ms: i64,
) -> Result<Vec<(i64, String)>, SqlError> {
    let rows: Vec<(i64, String, i64)> = held_vote::Entity::find()
        .filter(held_vote::Column::BoardId.eq(board_id))
        .filter(held_vote::Column::State.eq(HeldState::Held.as_str()))
        .select_only()
        .column(held_vote::Column::WatchId)
        .column(held_vote::Column::Subject)
        .column(held_vote::Column::AtMs)
        .into_tuple()
        .all(db)
        .await?;
    let mut newest: BTreeMap<(i64, String), i64> = BTreeMap::new();
    for (watch, subject, at) in rows {
        let n = newest.entry((watch, subject)).or_insert(at);
        *n = (*n).max(at);
    }
    Ok(newest
        .into_iter()
        .filter(|(_, at)| *at < before_ms)
        .map(|(key, _)| key)
        .collect())
}

/// The board's releases whose Redis step is not done, with their votes.
pub async fn unapplied(
    db: &impl ConnectionTrait,
    board_id: i64,
) -> Result<Vec<(i64, Vec<HeldVote>)>, SqlError> {
    let ids: Vec<i64> = held_review::Entity::find()
        .filter(held_review::Column::BoardId.eq(board_id))
        .filter(held_review::Column::Applied.eq(false))
        .select_only()
        .column(held_review::Column::Id)
        .into_tuple()
        .all(db)
        .await?;
    let mut out = Vec::new();
    for id in ids {
        let votes = held_vote::Entity::find()
            .filter(held_vote::Column::BoardId.eq(board_id))
            .filter(held_vote::Column::ReviewId.eq(id))
            .order_by_asc(held_vote::Column::Seq)
            .all(db)
            .await?
            .into_iter()
            .map(held)
            .collect::<Result<_, _>>()?;
        out.push((id, votes));
    }
    Ok(out)
}

/// Records that release `id`'s Redis step is done.
pub async fn mark_applied(db: &impl ConnectionTrait, id: i64) -> Result<(), SqlError> {
    held_review::Entity::update_many()
        .col_expr(held_review::Column::Applied, Expr::value(true))
        .filter(held_review::Column::Id.eq(id))
        .exec(db)
        .await?;
    Ok(())
}
