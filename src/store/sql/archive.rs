//! The archive of closed buckets: each bucket's final standings (both views, best first),
//! its counts, and per board and period how far the archive task has gone in order.
//!
//! A bucket is written in one transaction (its row, its entries, and the cursor when the
//! task archives in order), so a run stopped half-way leaves whole buckets and resumes
//! after the last one.

use chrono::{DateTime, Utc};
use sea_orm::sea_query::OnConflict;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter,
    QueryOrder, Set,
};

use super::entities::{archive_cursor, archived_bucket, archived_entry, board};
use super::{SqlError, from_naive, to_naive};
use crate::domain::period::{Bucket, Period};
use crate::domain::score::View;

/// One ranked entry of an archived view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchivedEntry {
    pub member: String,
    pub units: i64,
    pub rank: i64,
    /// The member's distinct voters in the bucket.
    pub voters: i64,
}

/// What the archive keeps of one closed bucket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Standings {
    pub total_members: i64,
    pub participants: i64,
    /// Late writes marked in the bucket's hours when it was read.
    pub late_seen: i64,
    /// Each view kept (one on a scores board), its best entries first.
    pub views: Vec<(View, Vec<ArchivedEntry>)>,
}

/// An archived bucket as read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchivedBucket {
    pub total_members: i64,
    pub participants: i64,
    /// How many times it was archived (again after a late write).
    pub writes: i32,
    /// When its Redis keys expire (`None`: kept).
    pub expires_at: Option<DateTime<Utc>>,
    /// When an operator released its Redis keys.
    pub released_at: Option<DateTime<Utc>>,
    pub entries: Vec<ArchivedEntry>,
}

impl ArchivedBucket {
    /// Whether its Redis keys are gone (released, or expired by `now`): what Redis holds
    /// of it now came after, from late writes.
    pub fn left_redis(&self, now: DateTime<Utc>) -> bool {
        gone(self.released_at, self.expires_at, now)
    }
}

fn gone(
    released_at: Option<DateTime<Utc>>,
    expires_at: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
) -> bool {
    released_at.is_some() || expires_at.is_some_and(|at| at <= now)
}

/// The row of one bucket of a board.
fn bucket_row(board_id: i64, bucket: &Bucket) -> sea_orm::Select<archived_bucket::Entity> {
    archived_bucket::Entity::find()
        .filter(archived_bucket::Column::BoardId.eq(board_id))
        .filter(archived_bucket::Column::Period.eq(bucket.period.as_str()))
        .filter(archived_bucket::Column::Label.eq(&bucket.label))
}

/// Rows per INSERT: far below every backend's limit on bound parameters.
const CHUNK: usize = 500;

/// Where the archive task resumes for `period` of a board: every bucket that ended by
/// then is archived. `None` before its first run.
pub async fn cursor(
    db: &impl ConnectionTrait,
    board_id: i64,
    period: Period,
) -> Result<Option<DateTime<Utc>>, SqlError> {
    Ok(archive_cursor::Entity::find()
        .filter(archive_cursor::Column::BoardId.eq(board_id))
        .filter(archive_cursor::Column::Period.eq(period.as_str()))
        .one(db)
        .await?
        .map(|c| from_naive(c.done_until)))
}

/// Moves the cursor of `period` to `until` (never back).
pub async fn advance(
    db: &impl ConnectionTrait,
    board_id: i64,
    period: Period,
    until: DateTime<Utc>,
) -> Result<(), SqlError> {
    if cursor(db, board_id, period)
        .await?
        .is_some_and(|done| done >= until)
    {
        return Ok(());
    }
    archive_cursor::Entity::insert(archive_cursor::ActiveModel {
        board_id: Set(board_id),
        period: Set(period.as_str().to_owned()),
        done_until: Set(to_naive(until)),
        ..Default::default()
    })
    .on_conflict(
        OnConflict::columns([
            archive_cursor::Column::BoardId,
            archive_cursor::Column::Period,
        ])
        .update_column(archive_cursor::Column::DoneUntil)
        .to_owned(),
    )
    .exec_without_returning(db)
    .await?;
    Ok(())
}

/// When the board was created: where its archive starts.
pub async fn board_created_at(
    db: &impl ConnectionTrait,
    board_id: i64,
) -> Result<Option<DateTime<Utc>>, SqlError> {
    Ok(board::Entity::find_by_id(board_id)
        .one(db)
        .await?
        .map(|b| from_naive(b.created_at)))
}

/// Writes a closed bucket's standings in one transaction, replacing an earlier archive
/// of it, with when its Redis keys expire, and moves the cursor to its end when
/// `in_order`. Answers how many times the bucket has now been archived.
pub async fn write_bucket(
    db: &DatabaseConnection,
    board_id: i64,
    bucket: &Bucket,
    standings: &Standings,
    in_order: bool,
    expires_at: Option<DateTime<Utc>>,
) -> Result<i32, SqlError> {
    let (Some(start), Some(end)) = (bucket.start, bucket.end) else {
        return Err(SqlError::Corrupt(format!(
            "bucket {} {} has no end to archive",
            bucket.period, bucket.label
        )));
    };
    let txn = super::begin_write(db).await?;
    let now = to_naive(Utc::now());
    let existing = bucket_row(board_id, bucket).one(&txn).await?;
    let (id, writes) = match existing {
        Some(row) => {
            archived_entry::Entity::delete_many()
                .filter(archived_entry::Column::BucketId.eq(row.id))
                .exec(&txn)
                .await?;
            let writes = row.writes + 1;
            let id = row.id;
            let mut row: archived_bucket::ActiveModel = row.into();
            row.total_members = Set(standings.total_members);
            row.participants = Set(standings.participants);
            row.writes = Set(writes);
            row.late_seen = Set(standings.late_seen);
            row.archived_at = Set(now);
            row.expires_at = Set(expires_at.map(to_naive));
            row.released_at = Set(None);
            row.update(&txn).await?;
            (id, writes)
        }
        None => {
            let row = archived_bucket::ActiveModel {
                board_id: Set(board_id),
                period: Set(bucket.period.as_str().to_owned()),
                label: Set(bucket.label.clone()),
                starts_at: Set(to_naive(start)),
                ends_at: Set(to_naive(end)),
                total_members: Set(standings.total_members),
                participants: Set(standings.participants),
                writes: Set(1),
                late_seen: Set(standings.late_seen),
                archived_at: Set(now),
                expires_at: Set(expires_at.map(to_naive)),
                released_at: Set(None),
                ..Default::default()
            }
            .insert(&txn)
            .await?;
            (row.id, 1)
        }
    };
    for (view, entries) in &standings.views {
        let rows: Vec<archived_entry::ActiveModel> = entries
            .iter()
            .enumerate()
            .map(|(i, e)| archived_entry::ActiveModel {
                bucket_id: Set(id),
                view: Set(view.as_str().to_owned()),
                position: Set(i as i32),
                member: Set(e.member.clone()),
                units: Set(e.units),
                rank: Set(e.rank),
                voters: Set(e.voters),
                ..Default::default()
            })
            .collect();
        for chunk in rows.chunks(CHUNK) {
            archived_entry::Entity::insert_many(chunk.to_vec())
                .exec_without_returning(&txn)
                .await?;
        }
    }
    if in_order {
        advance(&txn, board_id, bucket.period, end).await?;
    }
    txn.commit().await?;
    Ok(writes)
}

/// Whether the bucket was ever archived. Reads its row only.
pub async fn is_archived(
    db: &impl ConnectionTrait,
    board_id: i64,
    bucket: &Bucket,
) -> Result<bool, SqlError> {
    Ok(bucket_row(board_id, bucket).one(db).await?.is_some())
}

/// Records that the archive saw `late_seen` late writes in an archived bucket's hours
/// with nothing in Redis to add (its keys left Redis), so it is not looked at again
/// until another late write. Answers whether the bucket was archived.
pub async fn note_late_seen(
    db: &impl ConnectionTrait,
    board_id: i64,
    bucket: &Bucket,
    late_seen: i64,
) -> Result<bool, SqlError> {
    let done = archived_bucket::Entity::update_many()
        .col_expr(
            archived_bucket::Column::LateSeen,
            sea_orm::sea_query::Expr::value(late_seen),
        )
        .filter(archived_bucket::Column::BoardId.eq(board_id))
        .filter(archived_bucket::Column::Period.eq(bucket.period.as_str()))
        .filter(archived_bucket::Column::Label.eq(bucket.label.as_str()))
        .exec(db)
        .await?;
    Ok(done.rows_affected > 0)
}

/// A bucket's archive in one view, entries best first; `None` when it was never
/// archived.
pub async fn read_bucket(
    db: &impl ConnectionTrait,
    board_id: i64,
    bucket: &Bucket,
    view: View,
) -> Result<Option<ArchivedBucket>, SqlError> {
    let Some(row) = bucket_row(board_id, bucket).one(db).await? else {
        return Ok(None);
    };
    let entries = archived_entry::Entity::find()
        .filter(archived_entry::Column::BucketId.eq(row.id))
        .filter(archived_entry::Column::View.eq(view.as_str()))
        .order_by_asc(archived_entry::Column::Position)
        .all(db)
        .await?
        .into_iter()
        .map(|e| ArchivedEntry {
            member: e.member,
            units: e.units,
            rank: e.rank,
            voters: e.voters,
        })
        .collect();
    Ok(Some(ArchivedBucket {
        total_members: row.total_members,
        participants: row.participants,
        writes: row.writes,
        expires_at: row.expires_at.map(from_naive),
        released_at: row.released_at.map(from_naive),
        entries,
    }))
}

/// The late writes each archived bucket of a period had seen, by label.
pub async fn late_seen(
    db: &impl ConnectionTrait,
    board_id: i64,
    period: Period,
    labels: &[String],
) -> Result<std::collections::HashMap<String, i64>, SqlError> {
    Ok(archived_bucket::Entity::find()
        .filter(archived_bucket::Column::BoardId.eq(board_id))
        .filter(archived_bucket::Column::Period.eq(period.as_str()))
        .filter(archived_bucket::Column::Label.is_in(labels.to_vec()))
        .all(db)
        .await?
        .into_iter()
        .map(|b| (b.label, b.late_seen))
        .collect())
}

/// One member's archived entries in the given buckets of a period, by bucket label.
pub async fn member_entries(
    db: &impl ConnectionTrait,
    board_id: i64,
    period: Period,
    labels: &[String],
    view: View,
    member: &str,
) -> Result<Vec<(String, ArchivedEntry)>, SqlError> {
    let buckets = archived_bucket::Entity::find()
        .filter(archived_bucket::Column::BoardId.eq(board_id))
        .filter(archived_bucket::Column::Period.eq(period.as_str()))
        .filter(archived_bucket::Column::Label.is_in(labels.to_vec()))
        .all(db)
        .await?;
    let labels: std::collections::HashMap<i64, String> =
        buckets.into_iter().map(|b| (b.id, b.label)).collect();
    if labels.is_empty() {
        return Ok(Vec::new());
    }
    Ok(archived_entry::Entity::find()
        .filter(archived_entry::Column::BucketId.is_in(labels.keys().copied()))
        .filter(archived_entry::Column::View.eq(view.as_str()))
        .filter(archived_entry::Column::Member.eq(member))
        .all(db)
        .await?
        .into_iter()
        .filter_map(|e| {
            Some((
                labels.get(&e.bucket_id)?.clone(),
                ArchivedEntry {
                    member: e.member,
                    units: e.units,
                    rank: e.rank,
                    voters: e.voters,
                },
            ))
        })
        .collect())
}

/// Archived buckets of a board whose keys an operator has not released yet, by period
/// and label.
pub async fn unreleased(
    db: &impl ConnectionTrait,
    board_id: i64,
) -> Result<Vec<(String, String)>, SqlError> {
    Ok(archived_bucket::Entity::find()
        .filter(archived_bucket::Column::BoardId.eq(board_id))
        .filter(archived_bucket::Column::ReleasedAt.is_null())
        .order_by_asc(archived_bucket::Column::EndsAt)
        .all(db)
        .await?
        .into_iter()
        .map(|b| (b.period, b.label))
        .collect())
}

/// Records that a bucket's Redis keys were released.
pub async fn mark_released(
    db: &impl ConnectionTrait,
    board_id: i64,
    bucket: &Bucket,
) -> Result<(), SqlError> {
    archived_bucket::Entity::update_many()
        .col_expr(
            archived_bucket::Column::ReleasedAt,
            sea_orm::sea_query::Expr::value(to_naive(Utc::now())),
        )
        .filter(archived_bucket::Column::BoardId.eq(board_id))
        .filter(archived_bucket::Column::Period.eq(bucket.period.as_str()))
        .filter(archived_bucket::Column::Label.eq(&bucket.label))
        .exec(db)
        .await?;
    Ok(())
}

/// Deletes a deleted board's archive.
pub async fn delete_board(db: &impl ConnectionTrait, board_id: i64) -> Result<(), SqlError> {
    let ids: Vec<i64> = archived_bucket::Entity::find()
        .filter(archived_bucket::Column::BoardId.eq(board_id))
        .all(db)
        .await?
        .into_iter()
        .map(|b| b.id)
        .collect();
    for chunk in ids.chunks(CHUNK) {
        archived_entry::Entity::delete_many()
            .filter(archived_entry::Column::BucketId.is_in(chunk.to_vec()))
            .exec(db)
            .await?;
    }
    archived_bucket::Entity::delete_many()
        .filter(archived_bucket::Column::BoardId.eq(board_id))
        .exec(db)
        .await?;
    archive_cursor::Entity::delete_many()
        .filter(archive_cursor::Column::BoardId.eq(board_id))
        .exec(db)
        .await?;
    Ok(())
}
