//! The vote ledger in SQL: entries in `seq` order per board, and per Redis ledger the
//! last entry moved here (its cursor), written in the same transaction as the entries
//! it covers, so a drain stopped anywhere resumes without a gap or a duplicate.
//!
//! A row (`ledger_records`) holds its entry whole, as the JSON Redis held, beside the
//! columns it is looked up by (`seq`, the entry's id, its time, its voter, its
//! revocation): the drain stores a row without taking the entry apart. Readers that pick
//! entries by member read it from the JSON in SQL (`member_in_json`), each backend with
//! its own JSON function.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashSet};

use chrono::{DateTime, Utc};

use futures_util::{Stream, StreamExt};
use sea_orm::sea_query::{Expr, ExprTrait};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, DbBackend, EntityTrait,
    PaginatorTrait, QueryFilter, QueryOrder, QuerySelect, Set, Statement, StreamTrait,
};

use super::entities::{ledger_cursor, ledger_gap, ledger_record, revocation};
use super::{SqlError, from_naive, ledger_voters, to_naive};
use crate::domain::adjustment;
use crate::domain::ledger::{Entry, EntryHead, Recorded, Revocation, RevocationRequest};
use crate::domain::period::Bucket;

/// Rows per INSERT (7 bound values each) and `seq`s per `IN` list: far below every
/// backend's limit.
const CHUNK: usize = 1000;

/// The start of a batch's INSERT: the columns a drain writes, in the order its SELECT
/// gives them.
const INSERT_RECORDS: &str =
    "INSERT INTO ledger_records (board_id, instance, seq, entry_id, at_ms, voter, entry)";

/// An entry on its way into SQL: its id, and its JSON as Redis holds it (the drain
/// stores the text it read, not an encoding of its own). Its time and voter, the columns
/// beside it, are read from the text where it is stored: by SQLite from the JSON, by the
/// others' drain from the text's head ([`EntryHead`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewEntry<'a> {
    pub id: i64,
    pub text: Cow<'a, str>,
    /// Whether a watch held it: it is recorded for review too (`store::sql::held`).
    pub held: bool,
}

impl<'a> NewEntry<'a> {
    /// `entry`, encoded.
    pub fn of(entry: &'a Entry) -> Self {
        Self {
            id: entry.id,
            text: Cow::Owned(entry.encode()),
            held: entry.held.is_some(),
        }
    }

    /// Its time and voter, from its text.
    fn head(&self) -> Result<EntryHead<'_>, SqlError> {
        EntryHead::decode(&self.text)
            .ok_or_else(|| SqlError::Corrupt(format!("ledger entry {} does not read", self.id)))
    }
}

/// An entry's member, read from its JSON by the backend.
fn member_in_json(backend: DbBackend) -> Expr {
    Expr::cust(match backend {
        DbBackend::Postgres => "(entry::jsonb ->> 'member')",
        DbBackend::Sqlite => "(entry ->> '$.member')",
        _ => "JSON_VALUE(entry, '$.member')",
    })
}

/// How far back (in `seq`) the drain looks for entries SQL already holds, after Redis
/// lost its data or went back in time: far more than a replica lags.
const RECENT: i64 = 1_000_000;

/// Which board's ledger: a plain board's, or one instance's of a family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LedgerOf<'a> {
    pub board_id: i64,
    /// The family instance's name; "" for a plain board.
    pub instance: &'a str,
}

impl LedgerOf<'static> {
    /// A plain board's ledger.
    pub fn board(board_id: i64) -> Self {
        Self {
            board_id,
            instance: "",
        }
    }
}

/// The id of the last entry of the board's Redis ledger `source` that SQL holds.
pub async fn cursor(
    db: &impl ConnectionTrait,
    of: LedgerOf<'_>,
    source: i32,
) -> Result<Option<i64>, SqlError> {
    Ok(
        ledger_cursor::Entity::find_by_id((of.board_id, of.instance.to_owned(), source))
            .one(db)
            .await?
            .map(|c| c.last_entry_id),
    )
}

/// Of `ids`, those among the board's latest entries in SQL.
pub async fn known_ids(
    db: &impl ConnectionTrait,
    of: LedgerOf<'_>,
    ids: &[i64],
) -> Result<HashSet<i64>, SqlError> {
    let last = last_seq(db, of).await?;
    let mut known = HashSet::new();
    for chunk in ids.chunks(CHUNK) {
        let rows: Vec<i64> = entries(of)
            .filter(ledger_record::Column::Seq.gt(last - RECENT))
            .filter(ledger_record::Column::EntryId.is_in(chunk.iter().copied()))
            .select_only()
            .column(ledger_record::Column::EntryId)
            .into_tuple()
            .all(db)
            .await?;
        known.extend(rows);
    }
    Ok(known)
}

fn entries(of: LedgerOf<'_>) -> sea_orm::Select<ledger_record::Entity> {
    ledger_record::Entity::find()
        .filter(ledger_record::Column::BoardId.eq(of.board_id))
        .filter(ledger_record::Column::Instance.eq(of.instance))
}

/// The board's last `seq` (0 before its first entry): its last entry's, or the end of a
/// gap recorded after it (new entries are numbered after a gap, never into it).
///
/// Read as the first `seq` in descending order rather than `MAX(seq)`: the order is the
/// primary key's, so every planner reads one index entry. PostgreSQL planned the MAX,
/// before its statistics knew the table had grown, as a scan of the board's every entry
/// through another index: each drain batch then cost more than the one before.
pub async fn last_seq(db: &impl ConnectionTrait, of: LedgerOf<'_>) -> Result<i64, SqlError> {
    let last: Option<i64> = entries(of)
        .select_only()
        .column(ledger_record::Column::Seq)
        .order_by_desc(ledger_record::Column::Seq)
        .limit(1)
        .into_tuple()
        .one(db)
        .await?;
    let gap: Option<i64> = ledger_gap::Entity::find()
        .filter(ledger_gap::Column::BoardId.eq(of.board_id))
        .filter(ledger_gap::Column::Instance.eq(of.instance))
        .select_only()
        .column(ledger_gap::Column::ToSeq)
        .order_by_desc(ledger_gap::Column::ToSeq)
        .limit(1)
        .into_tuple()
        .one(db)
        .await?;
    Ok(std::cmp::max(last.unwrap_or(0), gap.unwrap_or(0)))
}

/// A range of a ledger's `seq` SQL lost after Redis had trimmed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gap {
    pub board_id: i64,
    pub instance: String,
    pub from: i64,
    pub to: i64,
    /// When it was found (ms since the epoch).
    pub found_ms: i64,
}

/// Records that `of` lost `from ..= to` (once: a gap found again, by another drain,
/// is the same row); answers whether this call recorded it.
pub async fn record_gap(
    db: &DatabaseConnection,
    of: LedgerOf<'_>,
    from: i64,
    to: i64,
) -> Result<bool, SqlError> {
    let inserted = ledger_gap::ActiveModel {
        board_id: Set(of.board_id),
        instance: Set(of.instance.to_owned()),
        from_seq: Set(from),
        to_seq: Set(to),
        found_ms: Set(Utc::now().timestamp_millis()),
    }
    .insert(db)
    .await
    .map_err(SqlError::from_write);
    match inserted {
        Ok(_) => Ok(true),
        Err(SqlError::Conflict) => Ok(false),
        Err(err) => Err(err),
    }
}

/// The gaps of every ledger (at most `limit`, the newest found first), or of one board
/// (its rooms' too) when `board_id` is given.
pub async fn gaps(
    db: &impl ConnectionTrait,
    board_id: Option<i64>,
    limit: u64,
) -> Result<Vec<Gap>, SqlError> {
    let mut query = ledger_gap::Entity::find();
    if let Some(id) = board_id {
        query = query.filter(ledger_gap::Column::BoardId.eq(id));
    }
    let rows = query
        .order_by_desc(ledger_gap::Column::FoundMs)
        .limit(limit)
        .all(db)
        .await?;
    Ok(rows
        .into_iter()
        .map(|r| Gap {
            board_id: r.board_id,
            instance: r.instance,
            from: r.from_seq,
            to: r.to_seq,
            found_ms: r.found_ms,
        })
        .collect())
}

/// Stores `new` after the board's last entry, numbered on from its last `seq`, and moves
/// the cursor of `source` from `from` (what the drain read; `None`: no cursor yet) to
/// `to`, all in one transaction; answers the `seq` of the entry `to` (the last stored,
/// or, when `new` is empty, the one SQL already held). [`SqlError::Conflict`] when the
/// cursor is no longer at `from` (another drain stored these entries first): nothing is
/// written.
pub async fn append(
    db: &DatabaseConnection,
    of: LedgerOf<'_>,
    source: i32,
    from: Option<i64>,
    to: i64,
    new: &[NewEntry<'_>],
) -> Result<i64, SqlError> {
    let txn = super::begin_write(db).await?;
    let now_ms = chrono::Utc::now().timestamp_millis();
    match from {
        Some(from) => {
            let moved = ledger_cursor::Entity::update_many()
                .col_expr(ledger_cursor::Column::LastEntryId, Expr::value(to))
                .col_expr(ledger_cursor::Column::UpdatedMs, Expr::value(now_ms))
                .filter(ledger_cursor::Column::BoardId.eq(of.board_id))
                .filter(ledger_cursor::Column::Instance.eq(of.instance))
                .filter(ledger_cursor::Column::Source.eq(source))
                .filter(ledger_cursor::Column::LastEntryId.eq(from))
                .exec(&txn)
                .await?;
            if moved.rows_affected != 1 {
                return Err(SqlError::Conflict);
            }
        }
        None => {
            ledger_cursor::ActiveModel {
                board_id: Set(of.board_id),
                instance: Set(of.instance.to_owned()),
                source: Set(source),
                last_entry_id: Set(to),
                updated_ms: Set(now_ms),
            }
            .insert(&txn)
            .await
            .map_err(SqlError::from_write)?;
        }
    }
    let mut seq = last_seq(&txn, of).await?;
    let last = if new.is_empty() {
        seq_of(&txn, of, to).await?.unwrap_or(seq)
    } else {
        seq + new.len() as i64
    };
    let held = new
        .iter()
        .zip(seq + 1..)
        .filter(|(e, _)| e.held)
        .map(|(e, at)| Ok((at, decode(at, &e.text)?)))
        .collect::<Result<Vec<_>, SqlError>>()?;
    if !held.is_empty() {
        super::held::insert(&txn, of.board_id, &held).await?;
    }
    match ConnectionTrait::get_database_backend(&txn) {
        _ if new.is_empty() => {}
        DbBackend::Postgres => insert_unnested(&txn, of, seq, new).await?,
        DbBackend::Sqlite => insert_from_json(&txn, of, seq, new).await?,
        _ => {
            for chunk in new.chunks(CHUNK) {
                let rows = chunk
                    .iter()
                    .map(|e| {
                        seq += 1;
                        row(of, seq, e)
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                ledger_record::Entity::insert_many(rows)
                    .exec(&txn)
                    .await
                    .map_err(SqlError::from_write)?;
            }
        }
    }
    txn.commit().await?;
    Ok(last)
}

/// Deletes the ledgers (entries, their voter index and the drain's places) of
/// `board_id`'s family instances whose drain last moved before `before_ms`, `limit`
/// instances at most, in one transaction; answers how many instances' ledgers it deleted.
pub async fn prune_instances(
    db: &DatabaseConnection,
    board_id: i64,
    before_ms: i64,
    limit: u64,
) -> Result<u64, SqlError> {
    let stale: Vec<String> = ledger_cursor::Entity::find()
        .select_only()
        .column(ledger_cursor::Column::Instance)
        .filter(ledger_cursor::Column::BoardId.eq(board_id))
        .filter(ledger_cursor::Column::Instance.ne(""))
        .group_by(ledger_cursor::Column::Instance)
        .having(ExprTrait::lt(
            ledger_cursor::Column::UpdatedMs.max(),
            before_ms,
        ))
        .limit(limit)
        .into_tuple()
        .all(db)
        .await?;
    if stale.is_empty() {
        return Ok(0);
    }
    let txn = super::begin_write(db).await?;
    ledger_record::Entity::delete_many()
        .filter(ledger_record::Column::BoardId.eq(board_id))
        .filter(ledger_record::Column::Instance.is_in(stale.iter().map(String::as_str)))
        .exec(&txn)
        .await?;
    ledger_cursor::Entity::delete_many()
        .filter(ledger_cursor::Column::BoardId.eq(board_id))
        .filter(ledger_cursor::Column::Instance.is_in(stale.iter().map(String::as_str)))
        .exec(&txn)
        .await?;
    ledger_voters::delete_instances(&txn, board_id, &stale).await?;
    txn.commit().await?;
    Ok(stale.len() as u64)
}

/// SQLite's INSERT of `new`, numbered on after `last`: the entries as one JSON array of
/// their texts as they are, taken apart by `jsonb_each`; each row's id, time and voter
/// read from its entry, and the entry stored as the text it was (`json` of what
/// `jsonb_each` parsed gives it back byte for byte). The statement has 4 parameters
/// however many rows it carries, so it is prepared once per connection, and the drain
/// neither reads the entries' fields nor escapes their texts into a JSON of its own
/// (bench/notes/2026-11-28-ledger-cost.md, bench/notes/tv-final.md).
async fn insert_from_json(
    txn: &impl ConnectionTrait,
    of: LedgerOf<'_>,
    last: i64,
    new: &[NewEntry<'_>],
) -> Result<(), SqlError> {
    let mut rows = String::with_capacity(new.iter().map(|e| e.text.len() + 1).sum::<usize>() + 1);
    for e in new {
        rows.push(if rows.is_empty() { '[' } else { ',' });
        rows.push_str(&e.text);
    }
    rows.push(']');
    let sql = format!(
        "{INSERT_RECORDS} SELECT ?, ?, ? + key + 1, value ->> 'id', value ->> 'at', \
        value ->> 'voter', json(value) FROM jsonb_each(?) ORDER BY key"
    );
    txn.execute_raw(Statement::from_sql_and_values(
        DbBackend::Sqlite,
        sql,
        [
            of.board_id.into(),
            of.instance.into(),
            last.into(),
            rows.into(),
        ],
    ))
    .await
    .map_err(SqlError::from_write)?;
    Ok(())
}

/// PostgreSQL's INSERT of `new`, numbered on after `last`: one array per column through
/// UNNEST, so the statement has 7 parameters however many rows it carries (a voter
/// array carries NULL as '': a voter is never empty). A multi-row
/// VALUES cost PostgreSQL far more CPU a row to bind and plan than the insert itself.
async fn insert_unnested(
    txn: &impl ConnectionTrait,
    of: LedgerOf<'_>,
    last: i64,
    new: &[NewEntry<'_>],
) -> Result<(), SqlError> {
    let heads = new
        .iter()
        .map(NewEntry::head)
        .collect::<Result<Vec<_>, _>>()?;
    let values: Vec<sea_orm::Value> = vec![
        of.board_id.into(),
        of.instance.into(),
        (last + 1..=last + new.len() as i64)
            .collect::<Vec<i64>>()
            .into(),
        new.iter().map(|e| e.id).collect::<Vec<i64>>().into(),
        heads.iter().map(|h| h.at).collect::<Vec<i64>>().into(),
        heads
            .iter()
            .map(|h| h.voter.as_deref().unwrap_or_default().to_owned())
            .collect::<Vec<String>>()
            .into(),
        new.iter()
            .map(|e| e.text.clone().into_owned())
            .collect::<Vec<String>>()
            .into(),
    ];
    let sql = format!(
        "{INSERT_RECORDS} SELECT $1, $2, s, i, a, NULLIF(v, ''), e FROM UNNEST($3::bigint[], \
        $4::bigint[], $5::bigint[], $6::text[], $7::text[]) AS u(s, i, a, v, e)"
    );
    txn.execute_raw(Statement::from_sql_and_values(
        DbBackend::Postgres,
        sql,
        values,
    ))
    .await
    .map_err(SqlError::from_write)?;
    Ok(())
}

fn row(
    of: LedgerOf<'_>,
    seq: i64,
    e: &NewEntry<'_>,
) -> Result<ledger_record::ActiveModel, SqlError> {
    let head = e.head()?;
    Ok(ledger_record::ActiveModel {
        board_id: Set(of.board_id),
        instance: Set(of.instance.to_owned()),
        seq: Set(seq),
        entry_id: Set(e.id),
        at_ms: Set(head.at),
        voter: Set(head.voter.map(Cow::into_owned)),
        revoked: Set(None),
        entry: Set(e.text.clone().into_owned()),
    })
}

fn decode(seq: i64, text: &str) -> Result<Entry, SqlError> {
    Entry::decode(text)
        .ok_or_else(|| SqlError::Corrupt(format!("ledger entry {seq} does not read")))
}

fn recorded(m: ledger_record::Model) -> Result<Recorded, SqlError> {
    Ok(Recorded {
        seq: m.seq,
        revoked: m.revoked,
        entry: decode(m.seq, &m.entry)?,
    })
}

/// Up to `limit` entries after `seq` `after`, in order.
pub async fn page(
    db: &impl ConnectionTrait,
    of: LedgerOf<'_>,
    after: i64,
    limit: u64,
) -> Result<Vec<Recorded>, SqlError> {
    entries(of)
        .filter(ledger_record::Column::Seq.gt(after))
        .order_by_asc(ledger_record::Column::Seq)
        .limit(limit)
        .all(db)
        .await?
        .into_iter()
        .map(recorded)
        .collect()
}

/// The entries at `seqs`, in `seq` order.
pub async fn at_seqs(
    db: &impl ConnectionTrait,
    of: LedgerOf<'_>,
    seqs: &[i64],
) -> Result<Vec<Recorded>, SqlError> {
    let mut out = Vec::with_capacity(seqs.len());
    for chunk in seqs.chunks(CHUNK) {
        for row in of_seqs(of, chunk)
            .order_by_asc(ledger_record::Column::Seq)
            .all(db)
            .await?
        {
            out.push(recorded(row)?);
        }
    }
    Ok(out)
}

/// How many entries the board's ledger holds, revoked ones apart.
pub async fn counted(db: &impl ConnectionTrait, of: LedgerOf<'_>) -> Result<u64, SqlError> {
    Ok(entries(of)
        .filter(ledger_record::Column::Revoked.is_null())
        .count(db)
        .await?)
}

/// Every entry not revoked, in time order (`at`, then `seq`), read from one SQL cursor as
/// the stream is polled.
pub async fn stream_in_time<'a, C: ConnectionTrait + StreamTrait + Send>(
    db: &'a C,
    of: LedgerOf<'_>,
) -> Result<impl Stream<Item = Result<Recorded, SqlError>> + Send + 'a, SqlError> {
    let rows = entries(of)
        .filter(ledger_record::Column::Revoked.is_null())
        .order_by_asc(ledger_record::Column::AtMs)
        .order_by_asc(ledger_record::Column::Seq)
        .stream(db)
        .await?;
    Ok(rows.map(|row| row.map_err(SqlError::from).and_then(recorded)))
}

/// Every entry at or after `from_ms` with a `seq` up to `until` (revoked ones too), read
/// from one SQL cursor as the stream is polled.
pub async fn stream_since<'a, C: ConnectionTrait + StreamTrait + Send>(
    db: &'a C,
    of: LedgerOf<'_>,
    from_ms: i64,
    until: i64,
) -> Result<impl Stream<Item = Result<Recorded, SqlError>> + Send + 'a, SqlError> {
    let rows = entries(of)
        .filter(ledger_record::Column::AtMs.gte(from_ms))
        .filter(ledger_record::Column::Seq.lte(until))
        .stream(db)
        .await?;
    Ok(rows.map(|row| row.map_err(SqlError::from).and_then(recorded)))
}

/// The `seq` of the entry with id `id`, among the board's latest.
pub async fn seq_of(
    db: &impl ConnectionTrait,
    of: LedgerOf<'_>,
    id: i64,
) -> Result<Option<i64>, SqlError> {
    let last = last_seq(db, of).await?;
    Ok(entries(of)
        .filter(ledger_record::Column::Seq.gt(last - RECENT))
        .filter(ledger_record::Column::EntryId.eq(id))
        .select_only()
        .column(ledger_record::Column::Seq)
        .into_tuple()
        .one(db)
        .await?)
}

/// What `member`'s entries not revoked, up to `seq` `upto`, that count in `bucket` (its
/// writes, and its adjustments of that bucket), by the voters `keep` takes (`None`:
/// entries naming no voter), add up to: (votes, display units, carried units).
pub async fn member_sums(
    db: &impl ConnectionTrait,
    of: LedgerOf<'_>,
    member: &str,
    upto: i64,
    bucket: &Bucket,
    keep: &(dyn Fn(Option<&str>) -> bool + Sync),
) -> Result<(i64, i64, i64), SqlError> {
    let from_ms = bucket.start.map_or(i64::MIN, |t| t.timestamp_millis());
    let to_ms = bucket.end.map_or(i64::MAX, |t| t.timestamp_millis());
    let backend = ConnectionTrait::get_database_backend(db);
    let rows: Vec<(i64, String)> = entries(of)
        .filter(ledger_record::Column::Revoked.is_null())
        .filter(ledger_record::Column::Seq.lte(upto))
        .filter(ledger_record::Column::AtMs.gte(from_ms))
        .filter(ledger_record::Column::AtMs.lt(to_ms))
        .filter(member_in_json(backend).eq(member))
        .select_only()
        .column(ledger_record::Column::Seq)
        .column(ledger_record::Column::Entry)
        .into_tuple()
        .all(db)
        .await?;
    let target = adjustment::target(bucket);
    let mut sums = (0, 0, 0);
    for (seq, text) in rows {
        let e = decode(seq, &text)?;
        if e.counts() && e.adjusts.as_ref().is_none_or(|a| *a == target) && keep(e.voter.as_deref())
        {
            sums = (sums.0 + e.count, sums.1 + e.display, sums.2 + e.carry);
        }
    }
    Ok(sums)
}

/// Every entry after `seq` `after`, in order, read from one SQL cursor as the stream is
/// polled: memory stays flat however long the ledger.
pub async fn stream<'a, C: ConnectionTrait + StreamTrait + Send>(
    db: &'a C,
    of: LedgerOf<'_>,
    after: i64,
) -> Result<impl Stream<Item = Result<Recorded, SqlError>> + Send + 'a, SqlError> {
    let rows = entries(of)
        .filter(ledger_record::Column::Seq.gt(after))
        .order_by_asc(ledger_record::Column::Seq)
        .stream(db)
        .await?;
    Ok(rows.map(|row| row.map_err(SqlError::from).and_then(recorded)))
}

/// Strikes out every entry of `request`'s voter in its time range that is not struck
/// out yet, and records the revocation, in one transaction; answers it with the entries
/// it struck out.
pub async fn revoke(
    db: &DatabaseConnection,
    of: LedgerOf<'_>,
    request: &RevocationRequest,
    actor: &str,
) -> Result<(Revocation, Vec<Entry>), SqlError> {
    let txn = super::begin_write(db).await?;
    let seqs = ledger_voters::seqs_of(&txn, of, request.voter.as_str()).await?;
    let mut struck: Vec<Recorded> = Vec::new();
    for chunk in seqs.chunks(CHUNK) {
        let mut query = of_seqs(of, chunk).filter(ledger_record::Column::Revoked.is_null());
        if let Some(from) = request.from {
            query = query.filter(ledger_record::Column::AtMs.gte(from.timestamp_millis()));
        }
        if let Some(to) = request.to {
            query = query.filter(ledger_record::Column::AtMs.lt(to.timestamp_millis()));
        }
        for row in query
            .order_by_asc(ledger_record::Column::Seq)
            .all(&txn)
            .await?
        {
            struck.push(recorded(row)?);
        }
    }
    let mut by_member = BTreeMap::new();
    // A held vote is struck out with the rest, and counted among none of them.
    for r in struck.iter().filter(|r| r.entry.counts()) {
        *by_member.entry(r.entry.member.clone()).or_insert(0) += r.entry.count;
    }
    let votes = by_member.values().sum();
    let now = Utc::now();
    let row = revocation::ActiveModel {
        board_id: Set(of.board_id),
        voter: Set(request.voter.to_string()),
        from_ms: Set(request.from.map(|t| t.timestamp_millis())),
        to_ms: Set(request.to.map(|t| t.timestamp_millis())),
        reason: Set(request.reason.clone()),
        actor: Set(actor.to_owned()),
        created_at: Set(to_naive(now)),
        votes: Set(votes),
        by_member: Set(serde_json::to_string(&by_member).unwrap_or_default()),
        applied: Set(false),
        ..Default::default()
    }
    .insert(&txn)
    .await?;
    let seqs: Vec<i64> = struck.iter().map(|r| r.seq).collect();
    for chunk in seqs.chunks(CHUNK) {
        entries_of_seqs(of, chunk)
            .col_expr(ledger_record::Column::Revoked, Expr::value(row.id))
            .exec(&txn)
            .await?;
    }
    txn.commit().await?;
    Ok((
        to_revocation(row)?,
        struck.into_iter().map(|r| r.entry).collect(),
    ))
}

/// The board's entries whose `seq` is among `seqs`.
fn of_seqs(of: LedgerOf<'_>, seqs: &[i64]) -> sea_orm::Select<ledger_record::Entity> {
    entries(of).filter(ledger_record::Column::Seq.is_in(seqs.iter().copied()))
}

fn entries_of_seqs(of: LedgerOf<'_>, seqs: &[i64]) -> sea_orm::UpdateMany<ledger_record::Entity> {
    ledger_record::Entity::update_many()
        .filter(ledger_record::Column::BoardId.eq(of.board_id))
        .filter(ledger_record::Column::Instance.eq(of.instance))
        .filter(ledger_record::Column::Seq.is_in(seqs.iter().copied()))
}

fn to_revocation(row: revocation::Model) -> Result<Revocation, SqlError> {
    let time = |ms: Option<i64>| ms.and_then(DateTime::from_timestamp_millis);
    Ok(Revocation {
        id: row.id,
        by_member: serde_json::from_str(&row.by_member)
            .map_err(|e| SqlError::Corrupt(format!("revocation {} by_member: {e}", row.id)))?,
        voter: row.voter,
        from: time(row.from_ms),
        to: time(row.to_ms),
        reason: row.reason,
        actor: row.actor,
        created_at: from_naive(row.created_at),
        votes: row.votes,
    })
}

/// Records that revocation `id`'s Redis step is done.
pub async fn mark_applied(db: &impl ConnectionTrait, id: i64) -> Result<(), SqlError> {
    revocation::Entity::update_many()
        .col_expr(revocation::Column::Applied, Expr::value(true))
        .filter(revocation::Column::Id.eq(id))
        .exec(db)
        .await?;
    Ok(())
}

/// The board's revocations whose Redis step is not done, with their entries.
pub async fn unapplied(
    db: &impl ConnectionTrait,
    of: LedgerOf<'_>,
) -> Result<Vec<(i64, Vec<Entry>)>, SqlError> {
    let ids: Vec<i64> = revocation::Entity::find()
        .filter(revocation::Column::BoardId.eq(of.board_id))
        .filter(revocation::Column::Applied.eq(false))
        .select_only()
        .column(revocation::Column::Id)
        .into_tuple()
        .all(db)
        .await?;
    let mut out = Vec::new();
    for id in ids {
        let struck = entries(of)
            .filter(ledger_record::Column::Revoked.eq(id))
            .all(db)
            .await?
            .into_iter()
            .map(|m| recorded(m).map(|r| r.entry))
            .collect::<Result<_, _>>()?;
        out.push((id, struck));
    }
    Ok(out)
}

/// The board's revocations, newest first, at most `limit`.
pub async fn revocations(
    db: &impl ConnectionTrait,
    of: LedgerOf<'_>,
    limit: u64,
) -> Result<Vec<Revocation>, SqlError> {
    revocation::Entity::find()
        .filter(revocation::Column::BoardId.eq(of.board_id))
        .order_by_desc(revocation::Column::Id)
        .limit(limit)
        .all(db)
        .await?
        .into_iter()
        .map(to_revocation)
        .collect()
}

/// A voter's entries on the board, per member: (member, votes counted, votes struck
/// out), by member.
pub async fn voter_votes(
    db: &impl ConnectionTrait,
    of: LedgerOf<'_>,
    voter: &str,
) -> Result<Vec<(String, i64, i64)>, SqlError> {
    let seqs = ledger_voters::seqs_of(db, of, voter).await?;
    let mut by_member: BTreeMap<String, (i64, i64)> = BTreeMap::new();
    for chunk in seqs.chunks(CHUNK) {
        for row in of_seqs(of, chunk).all(db).await? {
            let r = recorded(row)?;
            if !r.entry.counts() {
                continue;
            }
            let e = by_member.entry(r.entry.member).or_default();
            if r.revoked.is_some() {
                e.1 += r.entry.count;
            } else {
                e.0 += r.entry.count;
            }
        }
    }
    Ok(by_member
        .into_iter()
        .map(|(m, (counted, struck))| (m, counted, struck))
        .collect())
}

/// The distinct voters of the entries not struck out, up to `seq` `upto` (`None`: all),
/// after `seq` `after`, from `from_ms` to `to_ms`, of `member` when given: one SQL cursor.
pub async fn voters_of<'a, C: ConnectionTrait + StreamTrait + Send>(
    db: &'a C,
    of: LedgerOf<'_>,
    seqs: (i64, i64),
    (from_ms, to_ms): (i64, i64),
    member: Option<&str>,
) -> Result<impl Stream<Item = Result<String, SqlError>> + Send + 'a, SqlError> {
    let backend = ConnectionTrait::get_database_backend(db);
    let mut query = entries(of)
        .filter(ledger_record::Column::Revoked.is_null())
        .filter(ledger_record::Column::Voter.is_not_null())
        .filter(ledger_record::Column::Seq.gt(seqs.0))
        .filter(ledger_record::Column::Seq.lte(seqs.1))
        .filter(ledger_record::Column::AtMs.gte(from_ms))
        .filter(ledger_record::Column::AtMs.lt(to_ms));
    if let Some(member) = member {
        query = query.filter(member_in_json(backend).eq(member));
    }
    let rows = query
        .select_only()
        .column(ledger_record::Column::Voter)
        .distinct()
        .into_tuple::<String>()
        .stream(db)
        .await?;
    Ok(rows.map(|row| row.map_err(SqlError::from)))
}
