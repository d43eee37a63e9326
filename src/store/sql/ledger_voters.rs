//! The ledger's voter index in SQL: which entries of a board's ledger name each voter
//! (for revocations and a voter's own votes). The drain writes it in batches, sorted by
//! voter, rather than with every entry it stores: an index on the entries' voters took
//! each entry into a random page, and each commit rewrote most of them
//! (bench/notes/2026-11-28-ledger-cost.md). Per ledger, a mark says up to which `seq` the
//! index reaches; a voter's entries are those the index names and those after the mark
//! that name the voter.

use sea_orm::sea_query::{Expr, Query};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter,
    QuerySelect, Set,
};

use super::SqlError;
use super::entities::{ledger_record, ledger_voter, ledger_voter_mark};
use super::ledger::{LedgerOf, last_seq};

/// The `seq` up to which `of`'s entries are in the voter index; `None` before its first.
async fn mark(db: &impl ConnectionTrait, of: LedgerOf<'_>) -> Result<Option<i64>, SqlError> {
    Ok(
        ledger_voter_mark::Entity::find_by_id((of.board_id, of.instance.to_owned()))
            .one(db)
            .await?
            .map(|m| m.seq),
    )
}

/// How many of `of`'s `seq`s the voter index is behind its last entry.
pub async fn behind(db: &impl ConnectionTrait, of: LedgerOf<'_>) -> Result<i64, SqlError> {
    let mark = mark(db, of).await?.unwrap_or(0);
    Ok((last_seq(db, of).await? - mark).max(0))
}

/// Takes `of`'s entries after the mark, up to `max` `seq`s of them, into the voter index
/// and moves the mark past them, in one transaction, when the index is at least `min`
/// `seq`s behind; answers how many `seq`s the mark moved (0 when it was less behind).
/// [`SqlError::Conflict`] when another drain moved the mark first: nothing is written.
pub async fn index_next(
    db: &DatabaseConnection,
    of: LedgerOf<'_>,
    min: i64,
    max: i64,
) -> Result<i64, SqlError> {
    let from = mark(db, of).await?;
    let start = from.unwrap_or(0);
    let last = last_seq(db, of).await?;
    if last - start < min.max(1) {
        return Ok(0);
    }
    let to = last.min(start + max);
    let txn = super::begin_write(db).await?;
    match from {
        Some(from) => {
            let moved = ledger_voter_mark::Entity::update_many()
                .col_expr(ledger_voter_mark::Column::Seq, Expr::value(to))
                .filter(ledger_voter_mark::Column::BoardId.eq(of.board_id))
                .filter(ledger_voter_mark::Column::Instance.eq(of.instance))
                .filter(ledger_voter_mark::Column::Seq.eq(from))
                .exec(&txn)
                .await?;
            if moved.rows_affected != 1 {
                return Err(SqlError::Conflict);
            }
        }
        None => {
            ledger_voter_mark::ActiveModel {
                board_id: Set(of.board_id),
                instance: Set(of.instance.to_owned()),
                seq: Set(to),
            }
            .insert(&txn)
            .await
            .map_err(SqlError::from_write)?;
        }
    }
    let rows = Query::select()
        .columns([
            ledger_record::Column::BoardId,
            ledger_record::Column::Voter,
            ledger_record::Column::Instance,
            ledger_record::Column::Seq,
        ])
        .from(ledger_record::Entity)
        .and_where(ledger_record::Column::BoardId.eq(of.board_id))
        .and_where(ledger_record::Column::Instance.eq(of.instance))
        .and_where(ledger_record::Column::Seq.gt(start))
        .and_where(ledger_record::Column::Seq.lte(to))
        .and_where(ledger_record::Column::Voter.is_not_null())
        .order_by(ledger_record::Column::Voter, sea_orm::Order::Asc)
        .order_by(ledger_record::Column::Seq, sea_orm::Order::Asc)
        .to_owned();
    let insert = Query::insert()
        .into_table(ledger_voter::Entity)
        .columns([
            ledger_voter::Column::BoardId,
            ledger_voter::Column::Voter,
            ledger_voter::Column::Instance,
            ledger_voter::Column::Seq,
        ])
        .select_from(rows)
        .map_err(|e| SqlError::Db(sea_orm::DbErr::Custom(e.to_string())))?
        .to_owned();
    let statement = txn.get_database_backend().build(&insert);
    txn.execute_raw(statement)
        .await
        .map_err(SqlError::from_write)?;
    txn.commit().await?;
    Ok(to - start)
}

/// The `seq`s of `voter`'s entries in `of`'s ledger, ascending: those the index names,
/// and those after its mark that name the voter. The mark is read first, so an entry the
/// index takes meanwhile is found one way or the other.
pub async fn seqs_of(
    db: &impl ConnectionTrait,
    of: LedgerOf<'_>,
    voter: &str,
) -> Result<Vec<i64>, SqlError> {
    let mark = mark(db, of).await?.unwrap_or(0);
    let mut seqs: Vec<i64> = ledger_voter::Entity::find()
        .filter(ledger_voter::Column::BoardId.eq(of.board_id))
        .filter(ledger_voter::Column::Voter.eq(voter))
        .filter(ledger_voter::Column::Instance.eq(of.instance))
        .select_only()
        .column(ledger_voter::Column::Seq)
        .into_tuple()
        .all(db)
        .await?;
    let tail: Vec<i64> = ledger_record::Entity::find()
        .filter(ledger_record::Column::BoardId.eq(of.board_id))
        .filter(ledger_record::Column::Instance.eq(of.instance))
        .filter(ledger_record::Column::Seq.gt(mark))
        .filter(ledger_record::Column::Voter.eq(voter))
        .select_only()
        .column(ledger_record::Column::Seq)
        .into_tuple()
        .all(db)
        .await?;
    seqs.extend(tail);
    seqs.sort_unstable();
    seqs.dedup();
    Ok(seqs)
}

/// Deletes the voter index of `board_id`'s family instances `instances`.
pub async fn delete_instances(
    db: &impl ConnectionTrait,
    board_id: i64,
    instances: &[String],
) -> Result<(), SqlError> {
    ledger_voter::Entity::delete_many()
        .filter(ledger_voter::Column::BoardId.eq(board_id))
        .filter(ledger_voter::Column::Instance.is_in(instances.iter().map(String::as_str)))
        .exec(db)
        .await?;
    ledger_voter_mark::Entity::delete_many()
        .filter(ledger_voter_mark::Column::BoardId.eq(board_id))
        .filter(ledger_voter_mark::Column::Instance.is_in(instances.iter().map(String::as_str)))
        .exec(db)
        .await?;
    Ok(())
}
