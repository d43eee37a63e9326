//! **The vote ledger**: the drain that moves every board's accepted writes from Redis
//! to SQL, and the reads an auditor makes of it.
//!
//! A write script appends each counted write's entry (`domain::ledger::Entry`) to its
//! board's ledger in Redis, in the same run as the scores (`vote.lua`, `score.lua`). On
//! every instance, [`run`] looks at every board's ledger each `OVATION_LEDGER_DRAIN_MS`;
//! where entries wait, the holder of the board's lease moves them to SQL, oldest first,
//! a batch at a time:
//!
//! 1. read the head of the ledger (up to [`BATCH`] entries, a few hundred a Redis call:
//!    `RedisStore::ledger_head`) and SQL's cursor (the id of the last entry SQL holds
//!    from that ledger);
//! 2. the cursor among them: a drain stopped between its commit and its trim; trim up to
//!    it and read again;
//! 3. otherwise store them in one transaction: numbered on from the board's last `seq`,
//!    and the cursor moved to the last of them only if it is still where step 1 read it
//!    (another drain that got there first makes this one stop);
//! 4. trim them from Redis, only if the head is still what step 1 read
//!    (`ledger_trim.lua`), remembering the last entry trimmed.
//!
//! So an entry reaches SQL once, in order, with no gap, whoever drains and wherever one
//! stops. The ledger's voter index (`store::sql::ledger_voters`) follows in batches: once
//! it is [`INDEX_BATCH`] behind a board that keeps receiving, and wholly once the board is
//! quiet. When Redis does not remember the last trimmed entry as SQL's cursor (it lost
//! its data, or a failover went back in time), entries SQL already holds may be at the
//! head again: the drain then leaves out those whose ids SQL holds among its latest.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use futures_util::{Stream, StreamExt};

use super::background::Background;
use super::backlog::Backlog;
use super::boards::{self, BoardRef};
use super::config::BoardConfig;
use super::error::EngineError;
use super::state::AppState;
use crate::domain::code::Code;
use crate::domain::ids::{BoardName, BoardSlug};
use crate::domain::ledger::{Entry, Recorded};
use crate::metrics;
use crate::store::redis::{BoardKeys, Lease};
use crate::store::sql::ledger::{self as sql, LedgerOf};
use crate::store::sql::{SqlError, ledger_voters};

/// Entries per read and per SQL transaction: a pass's worth at 16,000 votes a second
/// (with the default `OVATION_LEDGER_DRAIN_MS`), so a busy board's pass is one read, one
/// commit and one trim, not four (0.35 CPU µs a row less than batches of 1,000 in the
/// drain bench).
pub const BATCH: usize = 4000;

/// Batches one board's drain moves per pass before it looks at the next board.
const PASS_BATCHES: usize = 100;

/// How long a lease lasts unless renewed: another instance takes over a board this long
/// after its drain stopped.
const LEASE: Duration = Duration::from_secs(5);

/// SQL connections of the drain's own: it holds one at a time, and two let a recovery's
/// read go beside a held transaction.
const DRAIN_POOL: u32 = 2;

/// Starts the drain, on every instance: a pass over every board each `every`, on a
/// thread of its own at background priority (`engine::background`), with SQL
/// connections of its own ([`DRAIN_POOL`]) so SQLite's work for it runs at that
/// priority too. It stops, and closes them, when the handle is stopped or dropped.
pub fn start(state: AppState, every: Duration) -> std::io::Result<Background> {
    Background::spawn("ovation-drain", move |mut stopped| async move {
        let db = tokio::select! {
            db = drain_connections(&state, every) => db,
            _ = &mut stopped => return,
        };
        let state = AppState {
            db: db.clone(),
            ..state
        };
        tokio::select! {
            () = run(&state, every) => {}
            _ = stopped => {}
        }
        crate::store::sql::close(&db).await;
    })
}

/// The drain's SQL connections, tried each `every` until the database answers.
async fn drain_connections(state: &AppState, every: Duration) -> sea_orm::DatabaseConnection {
    loop {
        match crate::store::sql::connect(&state.settings.database_url, DRAIN_POOL).await {
            Ok(db) => return db,
            Err(err) => {
                tracing::warn!(error = %format!("{err:#}"), "the ledger drain could not connect to SQL; trying again");
                tokio::time::sleep(every).await;
            }
        }
    }
}

/// A pass over every board each `every`.
async fn run(state: &AppState, every: Duration) {
    let token = state.backlogs.token().to_owned();
    let mut ticks = tokio::time::interval(every);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        drain_all(state, &token).await;
    }
}

/// One pass: each board's ledgers looked at (a family's, its instances' that hold
/// entries), and drained where this instance holds (or takes) the board's lease; the
/// backlog recorded for `/readyz` and `/metrics`.
pub async fn drain_all(state: &AppState, token: &str) {
    let mut unnoted = state.backlogs.take_unnoted();
    let mut seen = HashMap::new();
    for board in state.config.boards() {
        let slug = board.board.slug.as_str();
        let drained = match board.board.settings.instances {
            Some(family) => {
                let unnoted = unnoted.remove(&board.board.id).unwrap_or_default();
                drain_family(state, &board, family.ttl_s * 1000, token, unnoted).await
            }
            None => drain_board(state, &board, token).await,
        };
        match drained {
            Ok(backlog) => {
                metrics::ledger_backlog(slug, backlog.pending, backlog.lag_s(now_ms()));
                seen.insert(board.board.id, backlog);
            }
            Err(err) => {
                tracing::warn!(board = slug, error = %err, "ledger drain stopped; the next pass resumes")
            }
        }
    }
    state.backlogs.replace(seen);
}

fn now_ms() -> i64 {
    Utc::now().timestamp_millis()
}

/// Drains `board` until every entry accepted before now is in SQL (this instance's
/// drain, or another's that holds the lease); 503 when that takes over 10 s.
pub async fn settle(state: &AppState, board: &BoardConfig) -> Result<(), EngineError> {
    let since = now_ms();
    let deadline = tokio::time::Instant::now() + SETTLE;
    loop {
        let waiting = drain_board(state, board, state.backlogs.token()).await?;
        // An entry still waiting was accepted after `since`: what came before is in SQL.
        if waiting.oldest_ms.is_none_or(|t| t > since) {
            return Ok(());
        }
        if tokio::time::Instant::now() > deadline {
            return Err(EngineError::Unavailable(
                "the ledger did not reach SQL within 10 s; try again".to_owned(),
            ));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The `seq` of the last entry trimmed from the board's Redis ledger `source` (one of a
/// sharded board's shards; `trimmed`, its id as Redis remembers it): every entry of that
/// ledger up to it is in SQL and out of Redis, every later one still in Redis. 0 before the first drain; 503 when Redis no longer knows (it came
/// back empty and the drain has not run since).
pub(super) async fn trimmed_seq(
    state: &AppState,
    of: LedgerOf<'_>,
    source: usize,
    trimmed: Option<i64>,
) -> Result<i64, EngineError> {
    let lost = || {
        EngineError::Unavailable(
            "Redis lost the ledger's place (it came back empty); try again once the drain has run"
                .to_owned(),
        )
    };
    match trimmed {
        Some(id) => sql::seq_of(&state.db, of, id).await?.ok_or_else(lost),
        None if sql::cursor(&state.db, of, source as i32).await?.is_none() => Ok(0),
        None => Err(lost()),
    }
}

/// How long [`settle`] waits for the drain.
const SETTLE: Duration = Duration::from_secs(10);

/// Drains one board when entries wait and this instance holds its lease; answers what
/// waits after.
async fn drain_board(
    state: &AppState,
    board: &BoardConfig,
    token: &str,
) -> Result<Backlog, EngineError> {
    let sources = board.keys.shards();
    let waiting = backlog(state, &sources).await?;
    let id = board.board.id;
    let of = LedgerOf::board(id);
    if waiting.oldest_ms.is_none() {
        // Quiet: the voter index takes every entry it lacks, under the lease.
        if !state.backlogs.voters_indexed(id) {
            if ledger_voters::behind(&state.db, of).await? > 0 {
                let lease: Lease = state.redis.ledger_lease(&board.keys, token, LEASE);
                if !state.redis.take_lease(&lease).await? {
                    return Ok(waiting);
                }
                index_voters(state, of, true).await?;
            }
            state.backlogs.set_voters_indexed(id, true);
        }
        return Ok(waiting);
    }
    let lease: Lease = state.redis.ledger_lease(&board.keys, token, LEASE);
    if !state.redis.take_lease(&lease).await? {
        return Ok(waiting);
    }
    // A votes board Redis lost is rebuilt from its ledger (`engine::rebuild`).
    let rebuilds = !board.board.settings.scoring.is_scores();
    let moved = drain_sources(state, of, &sources, rebuilds).await?;
    if moved == 0 {
        return Ok(waiting);
    }
    state.backlogs.set_voters_indexed(id, false);
    index_voters(state, of, false).await?;
    metrics::ledger_drained(board.board.slug.as_str(), moved);
    backlog(state, &sources).await
}

/// Instances of a family one pass looks at, those noted longest ago first.
const PASS_INSTANCES: usize = 1000;

/// Drains the instances of a family whose ledgers hold entries, when this instance holds
/// the family's lease; answers what waits after, over the [`PASS_INSTANCES`] noted
/// longest ago (the lag: since the oldest was noted). `unnoted`: instances this
/// instance's writes could not note, noted first.
async fn drain_family(
    state: &AppState,
    board: &BoardConfig,
    ttl_ms: i64,
    token: &str,
    unnoted: HashMap<String, i64>,
) -> Result<Backlog, EngineError> {
    let family = &board.keys;
    let unnoted: Vec<(String, i64)> = unnoted.into_iter().collect();
    if let Err(err) = state.redis.ledger_note(family, &unnoted).await {
        for (instance, ms) in &unnoted {
            state
                .backlogs
                .unnoted(board.board.id, &[instance.as_str()], *ms);
        }
        return Err(err.into());
    }
    let mut dirty = state.redis.ledger_dirty(family, PASS_INSTANCES).await?;
    if dirty.is_empty() {
        return Ok(Backlog::default());
    }
    let lease: Lease = state.redis.ledger_lease(family, token, LEASE);
    if state.redis.take_lease(&lease).await? {
        let mut moved = 0;
        for (instance, _) in &dirty {
            let sources = family.instance(instance, ttl_ms).shards();
            let of = LedgerOf {
                board_id: board.board.id,
                instance,
            };
            let stored = drain_sources(state, of, &sources, false).await?;
            if stored > 0 {
                index_voters(state, of, true).await?;
            }
            moved += stored;
            // Out first, then looked at again: a write that appended meanwhile notes its
            // instance after appending, so it is either seen here or noted after this.
            state.redis.ledger_clean(family, instance).await?;
            let left = backlog(state, &sources).await?;
            if let Some(since) = left.oldest_ms {
                state
                    .redis
                    .ledger_note(family, &[(instance.clone(), since)])
                    .await?;
            }
        }
        if moved > 0 {
            metrics::ledger_drained(board.board.slug.as_str(), moved);
        }
        dirty = state.redis.ledger_dirty(family, PASS_INSTANCES).await?;
    }
    // Every room waiting, from the set's size: a pass looks at the oldest noted only.
    Ok(Backlog {
        pending: state.redis.ledger_waiting(family).await?,
        oldest_ms: dirty.iter().map(|(_, ms)| *ms).min(),
    })
}

/// How many of a ledger's `seq`s its voter index takes in one transaction, and how far
/// it may fall behind while the board keeps receiving: a voter's entries after its mark
/// are found by reading the rows' voter column (`store::sql::ledger_voters`), 60 ms for
/// 500,000 rows on SQLite. The larger the batch, the fewer of the index's pages each
/// entry rewrites: onto an index of 500,000 entries, a batch of 500,000 cost SQLite
/// 1.1 µs an entry, one of 50,000 2.9, an index written with every entry 10
/// (bench/notes/2026-11-29-ledger-records.md). A burst of votes, up to this many a
/// board, is indexed once the board is quiet.
const INDEX_BATCH: i64 = 500_000;

/// Brings `of`'s voter index up to its last entry when `all`, else while it is a whole
/// [`INDEX_BATCH`] behind. Another drain that moved the index's mark first ends it.
async fn index_voters(state: &AppState, of: LedgerOf<'_>, all: bool) -> Result<(), EngineError> {
    let min = if all { 1 } else { INDEX_BATCH };
    loop {
        match ledger_voters::index_next(&state.db, of, min, INDEX_BATCH).await {
            Ok(0) | Err(SqlError::Conflict) => return Ok(()),
            moved => moved?,
        };
    }
}

/// Rooms whose SQL ledgers one pass removes at most.
const PRUNE_ROOMS: u64 = 1000;

/// Removes from SQL the ledgers (entries and the drain's place) of `board`'s rooms, when
/// it is a family, that expired `instances.ledger_days` ago: their drain last moved more
/// than the rooms' TTL and that many days before now. Answers how many rooms'.
pub async fn prune_rooms(state: &AppState, board: &BoardConfig) -> Result<u64, EngineError> {
    let Some(family) = board.board.settings.instances else {
        return Ok(0);
    };
    let before = now_ms() - family.ttl_s * 1000 - family.ledger_days * 86_400_000;
    Ok(sql::prune_instances(&state.db, board.board.id, before, PRUNE_ROOMS).await?)
}

/// What waits in a board's ledgers (`sources`: one, or a sharded board's shards'): the
/// board counts one when any entry waits.
async fn backlog(state: &AppState, sources: &[BoardKeys]) -> Result<Backlog, EngineError> {
    let mut total = Backlog::default();
    for source in sources {
        let head = state.redis.ledger_head(source, 1).await?;
        if let Some(first) = head.entries.first() {
            let at = decode(first)?.recorded;
            total.oldest_ms = Some(total.oldest_ms.map_or(at, |t| t.min(at)));
            total.pending = 1;
        }
    }
    Ok(total)
}

fn decode(text: &str) -> Result<Entry, EngineError> {
    Entry::decode(text).ok_or_else(|| unreadable(text))
}

fn unreadable(text: &str) -> EngineError {
    anyhow::anyhow!("a ledger entry in Redis does not read: {text:.200}").into()
}

/// Moves the entries of a board's ledgers (`sources`: one, or a sharded board's shards')
/// to SQL; answers how many it stored. `rebuilds`: the board is rebuilt from its ledger
/// when Redis loses it.
async fn drain_sources(
    state: &AppState,
    of: LedgerOf<'_>,
    sources: &[BoardKeys],
    rebuilds: bool,
) -> Result<usize, EngineError> {
    let mut moved = 0;
    for (source, keys) in sources.iter().enumerate() {
        moved += drain_source(state, of, source as i32, keys, rebuilds).await?;
    }
    Ok(moved)
}

/// Moves one ledger's entries to SQL, a batch at a time, up to its end as first found
/// (at most [`PASS_BATCHES`] batches); answers how many it stored.
/// `rebuilds`: the board is rebuilt from its ledger when Redis loses it.
async fn drain_source(
    state: &AppState,
    of: LedgerOf<'_>,
    source: i32,
    keys: &BoardKeys,
    rebuilds: bool,
) -> Result<usize, EngineError> {
    let mut moved = 0;
    for _ in 0..PASS_BATCHES {
        let head = state.redis.ledger_head(keys, BATCH).await?;
        let Some(last_text) = head.entries.last() else {
            break;
        };
        let mut new = head
            .entries
            .iter()
            .map(|text| {
                Ok(sql::NewEntry {
                    id: Entry::id_in(text).ok_or_else(|| unreadable(text))?,
                    text: text.as_str().into(),
                    held: Entry::held_in(text),
                })
            })
            .collect::<Result<Vec<_>, EngineError>>()?;
        let cursor = sql::cursor(&state.db, of, source).await?;
        if let Some(at) = cursor.and_then(|c| new.iter().position(|e| e.id == c)) {
            // Stored before, not trimmed: a drain stopped between the two.
            let seq = match sql::seq_of(&state.db, of, new[at].id).await? {
                Some(seq) => seq,
                None => sql::last_seq(&state.db, of).await?,
            };
            state
                .redis
                .ledger_trim(keys, at + 1, &head.entries[at], (new[at].id, seq))
                .await?;
            continue;
        }
        if head.trimmed.is_some() && head.trimmed != cursor {
            find_gap(state, of, head.trimmed_seq).await?;
        }
        let last_id = new[new.len() - 1].id;
        if rebuilds && cursor.is_some() && head.trimmed.is_none() {
            // Redis came back empty: what SQL holds now is what a rebuild replays, and
            // nothing of this new life may be stored before that is recorded.
            let last = sql::last_seq(&state.db, of).await?;
            state.redis.start_rebuild(keys, last).await?;
        }
        if cursor.is_some() && head.trimmed != cursor {
            let ids: Vec<i64> = new.iter().map(|e| e.id).collect();
            let known = sql::known_ids(&state.db, of, &ids).await?;
            new.retain(|e| !known.contains(&e.id));
        }
        let last_seq = match sql::append(&state.db, of, source, cursor, last_id, &new).await {
            Err(SqlError::Conflict) => break,
            stored => stored?,
        };
        moved += new.len();
        if !state
            .redis
            .ledger_trim(keys, head.entries.len(), last_text, (last_id, last_seq))
            .await?
        {
            break;
        }
        // A short batch was the ledger's end when read: what came in meanwhile waits for
        // the next pass. Read again at once, a busy board's drain ran without a pause,
        // one small transaction (and fsync) per few dozen votes.
        if head.entries.len() < BATCH {
            break;
        }
    }
    Ok(moved)
}

/// Finds whether SQL lost entries of `of`'s ledger that the drain had moved there and
/// Redis no longer holds — SQL restored from a backup older than Redis's trim: Redis
/// remembers the `seq` of the last entry it trimmed (`trimmed_seq`), and SQL's last `seq`
/// below it means the range between is gone from both. The gap is recorded in SQL once,
/// so new entries are numbered after it (no `seq` is ever given twice), logged, and
/// reported by `/readyz`, `/metrics` (`ovation_ledger_lost_entries`) and recounts. A
/// Redis behind SQL (a failover back in time) has a lower `seq`, and is no gap.
async fn find_gap(
    state: &AppState,
    of: LedgerOf<'_>,
    trimmed_seq: Option<i64>,
) -> Result<(), EngineError> {
    let Some(trimmed) = trimmed_seq else {
        return Ok(());
    };
    let last = sql::last_seq(&state.db, of).await?;
    if trimmed <= last {
        return Ok(());
    }
    if sql::record_gap(&state.db, of, last + 1, trimmed).await? {
        let slug = state
            .config
            .board_by_id(of.board_id)
            .map_or_else(|| of.board_id.to_string(), |b| b.board.slug.to_string());
        tracing::error!(
            board = %slug,
            instance = of.instance,
            from = last + 1,
            to = trimmed,
            "the SQL ledger lacks entries the drain had moved there and Redis no longer holds \
             (SQL restored from an older backup?): these seq are lost, and new entries are \
             numbered after them"
        );
        metrics::ledger_lost(&slug, trimmed - last);
    }
    Ok(())
}

/// At start-up: finds the gaps of every board's ledgers (see [`find_gap`]) that SQL's
/// state shows before any new entry comes, and puts the gaps SQL records in `/metrics`.
pub async fn find_gaps_at_start(state: &AppState) -> Result<(), EngineError> {
    for board in state.config.boards() {
        if board.board.settings.instances.is_some() {
            continue;
        }
        let of = LedgerOf::board(board.board.id);
        for (source, keys) in board.keys.shards().iter().enumerate() {
            let head = state.redis.ledger_head(keys, 1).await?;
            let cursor = sql::cursor(&state.db, of, source as i32).await?;
            if head.trimmed.is_some() && head.trimmed != cursor {
                find_gap(state, of, head.trimmed_seq).await?;
            }
        }
    }
    let mut lost: HashMap<i64, i64> = HashMap::new();
    for gap in sql::gaps(&state.db, None, 10_000).await? {
        *lost.entry(gap.board_id).or_default() += gap.to - gap.from + 1;
    }
    for board in state.config.boards() {
        let slug = board.board.slug.as_str();
        metrics::ledger_lost_set(slug, lost.get(&board.board.id).copied().unwrap_or(0));
    }
    Ok(())
}

/// A page of a board's ledger.
#[derive(Debug, Clone)]
pub struct LedgerPage {
    pub entries: Vec<Recorded>,
    /// The `seq` to ask after for the next page; `None` at the end.
    pub next_after: Option<i64>,
    /// Accepted writes not yet in SQL.
    pub pending: u64,
}

/// The largest page of a ledger.
pub const PAGE_MAX: i64 = 10_000;

/// The board's ledger entries after `seq` `after`, at most `limit` (1 to
/// [`PAGE_MAX`]).
pub async fn page(
    state: &AppState,
    name: &BoardName,
    after: i64,
    limit: i64,
) -> Result<LedgerPage, EngineError> {
    let board = boards::find(state, name)?;
    check_after(after)?;
    if !(1..=PAGE_MAX).contains(&limit) {
        return Err(EngineError::invalid_field(
            "limit",
            format!("limit must be between 1 and {PAGE_MAX}"),
        ));
    }
    let limit = limit as u64;
    // Redis first, then SQL: an entry leaves Redis only once SQL holds it, so a page read
    // after `pending` holds every entry that was not pending then. Read the other way
    // round (or at once), a drain committing between the two reads would give a page
    // short of entries beside `pending: 0`.
    let pending = state
        .redis
        .ledger_pending(std::slice::from_ref(&board.keys))
        .await?;
    let mut entries = sql::page(&state.db, ledger_of(&board), after, limit + 1).await?;
    let next_after = if entries.len() as u64 > limit {
        entries.truncate(limit as usize);
        entries.last().map(|e| e.seq)
    } else {
        None
    };
    Ok(LedgerPage {
        entries,
        next_after,
        pending,
    })
}

/// Accepted writes of the board not yet in SQL.
pub async fn pending(state: &AppState, name: &BoardName) -> Result<u64, EngineError> {
    let board = boards::find(state, name)?;
    Ok(state
        .redis
        .ledger_pending(std::slice::from_ref(&board.keys))
        .await?)
}

/// Which ledger `board` keeps in SQL: a plain board's, or an instance's.
fn ledger_of(board: &BoardRef) -> LedgerOf<'_> {
    LedgerOf {
        board_id: board.config.board.id,
        instance: board.instance.as_ref().map_or("", |i| i.as_str()),
    }
}

fn check_after(after: i64) -> Result<(), EngineError> {
    if after < 0 {
        return Err(EngineError::invalid_field(
            "after",
            "after must be a seq: 0 or more",
        ));
    }
    Ok(())
}

/// A board its ledger recounts and revokes votes on: any board but a family, whose
/// instances' scores expire with them, so the ledger is their only record (422
/// `not_for_family`).
pub(super) fn ledger_board(
    state: &AppState,
    slug: &BoardSlug,
) -> Result<Arc<BoardConfig>, EngineError> {
    let board = boards::board_of(state, slug)?;
    if board.board.settings.instances.is_some() {
        return Err(EngineError::invalid(
            Code::NotForFamily,
            format!(
                "board {slug} is a family: its instances' ledgers are read \
                 (GET …/{slug}:<instance>/ledger), not recounted or revoked from"
            ),
        ));
    }
    Ok(board)
}

/// A [`ledger_board`] that counts votes: a `scores` board is 409 `wrong_scoring`, its
/// message saying what `needs` votes.
pub(super) fn votes_ledger_board(
    state: &AppState,
    slug: &BoardSlug,
    needs: &str,
) -> Result<Arc<BoardConfig>, EngineError> {
    let board = ledger_board(state, slug)?;
    if board.board.settings.scoring.is_scores() {
        return Err(EngineError::conflict(
            Code::WrongScoring,
            format!("board {slug} keeps scores: {needs}"),
        ));
    }
    Ok(board)
}

/// Every entry of the board's ledger after `seq` `after`, in order, as the stream is
/// read: one SQL cursor in a task of its own, handing over a few entries at a time, so
/// memory stays flat however long the ledger.
///
/// An export takes one of `OVATION_EXPORTS_MAX` places (503 `too_many_exports` when
/// none is free) and its SQL connection before it answers, so a refusal comes before any
/// of the body; the connection is never one that `/readyz` or an admin write needs. A
/// reader that takes nothing for `OVATION_STALL_TIMEOUT_MS` is left: the cursor stops,
/// the connection and the place are freed, and the stream ends with an error (a body cut
/// short, never one that looks whole). An error of SQL ends the stream the same way.
pub async fn export(
    state: &AppState,
    name: &BoardName,
    after: i64,
) -> Result<impl Stream<Item = Result<Recorded, EngineError>> + use<>, EngineError> {
    let board = boards::find(state, name)?;
    check_after(after)?;
    let place = state
        .exports
        .clone()
        .try_acquire_owned()
        .map_err(|_| EngineError::Busy {
            code: Code::TooManyExports,
            message: format!(
                "this instance runs its most ledger exports at once ({}); try again shortly",
                state.settings.exports_max
            ),
        })?;
    let board_id = board.config.board.id;
    let instance = board.instance.map(|i| i.as_str().to_owned());
    let db = state.db.clone();
    let stall = state.settings.stall_timeout;
    let (opened_tx, opened) = tokio::sync::oneshot::channel::<Result<(), EngineError>>();
    // `None` after the last entry: a channel closed without it was cut short.
    let (tx, rx) = tokio::sync::mpsc::channel::<Option<Result<Recorded, EngineError>>>(256);
    tokio::spawn(async move {
        let _place = place;
        let of = LedgerOf {
            board_id,
            instance: instance.as_deref().unwrap_or(""),
        };
        let rows = match sql::stream(&db, of, after).await {
            Ok(rows) => rows,
            Err(err) => {
                let _ = opened_tx.send(Err(err.into()));
                return;
            }
        };
        if opened_tx.send(Ok(())).is_err() {
            return;
        }
        futures_util::pin_mut!(rows);
        while let Some(row) = rows.next().await {
            let failed = row.is_err();
            match tokio::time::timeout(stall, tx.send(Some(row.map_err(EngineError::from)))).await {
                Ok(Ok(())) if !failed => {}
                // The reader went away, or SQL failed (the reader has the error).
                Ok(_) => return,
                Err(_) => {
                    tracing::warn!(
                        board_id,
                        "a ledger export's reader stalled; the export stops"
                    );
                    return;
                }
            }
        }
        let _ = tx.send(None).await;
    });
    opened
        .await
        .map_err(|_| anyhow::anyhow!("the ledger export stopped before it opened"))??;
    Ok(futures_util::stream::unfold(
        (rx, false),
        |(mut rx, done)| async move {
            if done {
                return None;
            }
            match rx.recv().await {
                Some(Some(item)) => Some((item, (rx, false))),
                Some(None) => None,
                None => Some((
                    Err(EngineError::Unavailable(
                        "the ledger export stopped before its end".to_owned(),
                    )),
                    (rx, true),
                )),
            }
        },
    ))
}
