//! Member rows.

use chrono::{DateTime, Utc};
use sea_orm::sea_query::OnConflict;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, Set,
};

use super::entities::{member, member_removal};
use super::{SqlError, from_naive, to_naive};
use crate::domain::board::Member;
use crate::domain::ids::MemberId;
use crate::domain::score::Milli;

/// Rows per INSERT statement: well under every backend's bound on bind parameters.
const CHUNK: usize = 500;

fn to_domain(row: member::Model) -> Result<Member, SqlError> {
    Ok(Member {
        id: MemberId::parse(&row.member_id)
            .map_err(|e| SqlError::Corrupt(format!("member row {}: {e}", row.id)))?,
        profile: serde_json::from_str(&row.profile)
            .map_err(|e| SqlError::Corrupt(format!("member row {} profile: {e}", row.id)))?,
        name: row.name,
        image_url: row.image_url,
        initial_votes: row.initial_votes,
        multiplier: row.multiplier_milli.map(Milli::from_thousandths),
        enabled: row.enabled,
    })
}

/// A board's members, by id.
pub async fn list_members(
    db: &impl ConnectionTrait,
    board_id: i64,
) -> Result<Vec<Member>, SqlError> {
    member::Entity::find()
        .filter(member::Column::BoardId.eq(board_id))
        .order_by_asc(member::Column::MemberId)
        .all(db)
        .await?
        .into_iter()
        .map(to_domain)
        .collect()
}

/// Inserts or replaces members of a board, keyed by member id.
pub async fn upsert_members(
    db: &impl ConnectionTrait,
    board_id: i64,
    members: &[Member],
) -> Result<(), SqlError> {
    let now = to_naive(Utc::now());
    for chunk in members.chunks(CHUNK) {
        let rows = chunk.iter().map(|m| member::ActiveModel {
            board_id: Set(board_id),
            member_id: Set(m.id.as_str().to_owned()),
            name: Set(m.name.clone()),
            image_url: Set(m.image_url.clone()),
            initial_votes: Set(m.initial_votes),
            multiplier_milli: Set(m.multiplier.map(Milli::thousandths)),
            enabled: Set(m.enabled),
            profile: Set(m.profile.to_string()),
            created_at: Set(now),
            updated_at: Set(now),
            ..Default::default()
        });
        member::Entity::insert_many(rows)
            .on_conflict(
                OnConflict::columns([member::Column::BoardId, member::Column::MemberId])
                    .update_columns([
                        member::Column::Name,
                        member::Column::ImageUrl,
                        member::Column::InitialVotes,
                        member::Column::MultiplierMilli,
                        member::Column::Enabled,
                        member::Column::Profile,
                        member::Column::UpdatedAt,
                    ])
                    .to_owned(),
            )
            .exec_without_returning(db)
            .await?;
    }
    Ok(())
}

/// Deletes one member; answers whether it existed.
pub async fn delete_member(
    db: &impl ConnectionTrait,
    board_id: i64,
    member_id: &MemberId,
) -> Result<bool, SqlError> {
    let result = member::Entity::delete_many()
        .filter(member::Column::BoardId.eq(board_id))
        .filter(member::Column::MemberId.eq(member_id.as_str()))
        .exec(db)
        .await?;
    Ok(result.rows_affected > 0)
}

/// A member whose scores still have to leave Redis.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingRemoval {
    pub id: i64,
    pub board_id: i64,
    pub member: MemberId,
    pub removed_at: DateTime<Utc>,
}

/// Records that a deleted member's scores must leave Redis; in the same transaction as
/// the delete, so the step cannot be forgotten.
pub async fn record_removal(
    db: &impl ConnectionTrait,
    board_id: i64,
    member_id: &MemberId,
    removed_at: DateTime<Utc>,
) -> Result<i64, SqlError> {
    let row = member_removal::ActiveModel {
        board_id: Set(board_id),
        member_id: Set(member_id.as_str().to_owned()),
        removed_at: Set(to_naive(removed_at)),
        ..Default::default()
    }
    .insert(db)
    .await?;
    Ok(row.id)
}

/// Removals not yet done in Redis, oldest first.
pub async fn pending_removals(db: &impl ConnectionTrait) -> Result<Vec<PendingRemoval>, SqlError> {
    member_removal::Entity::find()
        .order_by_asc(member_removal::Column::Id)
        .all(db)
        .await?
        .into_iter()
        .map(|row| {
            Ok(PendingRemoval {
                member: MemberId::parse(&row.member_id)
                    .map_err(|e| SqlError::Corrupt(format!("member removal {}: {e}", row.id)))?,
                id: row.id,
                board_id: row.board_id,
                removed_at: from_naive(row.removed_at),
            })
        })
        .collect()
}

/// Forgets a removal once Redis has done it.
pub async fn removal_done(db: &impl ConnectionTrait, id: i64) -> Result<(), SqlError> {
    member_removal::Entity::delete_by_id(id).exec(db).await?;
    Ok(())
}
