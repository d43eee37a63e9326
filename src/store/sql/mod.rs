//! Configuration in SQL through sea-orm: boards, members, rate-limit rules and API keys.
//!
//! Functions here take and return domain types; rows never leave this module.

pub mod api_keys;
pub mod archive;
pub mod audit;
pub mod board_webhooks;
pub mod boards;
pub mod entities;
pub mod held;
pub mod identity_providers;
pub mod leagues;
pub mod ledger;
pub mod ledger_voters;
pub mod members;
mod outbox;
pub mod rules;
pub mod users;
pub mod watches;

use std::time::Duration;

use anyhow::Context;
use chrono::{DateTime, NaiveDateTime, Utc};
use migrations::{Migrator, MigratorTrait};
use sea_orm::{
    ConnectOptions, ConnectionTrait, Database, DatabaseConnection, DatabaseTransaction, DbBackend,
    DbErr, SqliteTransactionMode, Statement, TransactionOptions, TransactionTrait,
};

/// What can go wrong reading or writing configuration.
#[derive(Debug, thiserror::Error)]
pub enum SqlError {
    #[error("database error: {0}")]
    Db(#[from] DbErr),
    /// A unique key is taken (a board slug, say).
    #[error("already exists")]
    Conflict,
    /// A stored row no longer parses; someone edited the database by hand.
    #[error("corrupt row: {0}")]
    Corrupt(String),
}

impl SqlError {
    fn from_write(err: DbErr) -> Self {
        match err.sql_err() {
            Some(sea_orm::SqlErr::UniqueConstraintViolation(_)) => Self::Conflict,
            _ => Self::Db(err),
        }
    }
}

/// The page size of a SQLite database Ovation creates: 16 KiB, not SQLite's 4. The drain's
/// commits then write a quarter as many pages to the write-ahead log and back into the
/// file, a system call each: SQLite's CPU a ledger row 15 % less in the drain bench
/// (bench/notes/2026-11-30-ledger-p99-parts.md). SQLite changes an existing database's
/// page size only in a VACUUM outside WAL mode, which connecting does not do.
const SQLITE_PAGE: u32 = 16 * 1024;

/// Closes `db`'s pool once the connections in use are given back. On SQLite the last
/// connection to close writes the write-ahead log into the database file and removes
/// it, so a stopped service's file holds every row on its own.
pub async fn close(db: &DatabaseConnection) {
    if let Err(err) = db.close_by_ref().await {
        tracing::warn!(error = %err, "failed to close the database connections");
    }
}

/// Connects to `url` with a pool of at most `pool` connections, creating the directory
/// of a SQLite file when needed.
pub async fn connect(url: &str, pool: u32) -> anyhow::Result<DatabaseConnection> {
    if let Some(path) = url.strip_prefix("sqlite://") {
        let file = path.split('?').next().unwrap_or(path);
        if let Some(dir) = std::path::Path::new(file).parent()
            && !dir.as_os_str().is_empty()
        {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("failed to create directory {}", dir.display()))?;
        }
    }
    let mut options = ConnectOptions::new(url.to_owned());
    options
        .max_connections(pool)
        .connect_timeout(Duration::from_secs(5))
        .acquire_timeout(Duration::from_secs(5))
        .sqlx_logging(false)
        // A statement's rollback journal (a multi-row INSERT's, the drain's) in memory,
        // not in a temporary file written on every statement: it only ever undoes a
        // statement of a live transaction, so a crash loses nothing it held. A database
        // SQLite creates here takes pages of `SQLITE_PAGE`; one that exists keeps its own.
        .map_sqlx_sqlite_opts(|o| o.pragma("temp_store", "memory").page_size(SQLITE_PAGE));
    let db = Database::connect(options)
        .await
        .with_context(|| format!("failed to connect to the database at {}", redact(url)))?;
    if url.starts_with("sqlite:") {
        // Readers then never block the writer: a long ledger export or recount reads
        // while the drain keeps committing.
        db.execute_unprepared("PRAGMA journal_mode=WAL")
            .await
            .context("failed to turn on SQLite's write-ahead log")?;
    }
    Ok(db)
}

/// Begins a transaction that writes. On SQLite it takes the write lock at its start
/// (`BEGIN IMMEDIATE`, waiting out a writer that holds it): a transaction that read first
/// would fail at its first write, at once and without waiting ("database is locked"),
/// when another connection had written since its read — the drain, the archive and an
/// admin change do write at the same time. PostgreSQL and MariaDB begin as always.
pub async fn begin_write(db: &DatabaseConnection) -> Result<DatabaseTransaction, DbErr> {
    db.begin_with_options(TransactionOptions {
        sqlite_transaction_mode: Some(SqliteTransactionMode::Immediate),
        ..TransactionOptions::default()
    })
    .await
}

/// Applies pending migrations under a lock, so instances started together wait for one
/// another rather than race (the first applies them, the others find none pending);
/// answers how many this call applied. `url` is the database's, for SQLite's lock file.
pub async fn migrate(db: &DatabaseConnection, url: &str) -> anyhow::Result<usize> {
    let lock = MigrationLock::take(db, url)
        .await
        .context("failed to take the migration lock")?;
    let applied = async {
        let pending = Migrator::get_pending_migrations(db)
            .await
            .context("failed to read which database migrations are applied")?
            .len();
        Migrator::up(db, None)
            .await
            .context("failed to apply database migrations")?;
        Ok::<_, anyhow::Error>(pending)
    }
    .await;
    lock.release().await;
    applied
}

/// How long an instance waits for another's migrations, at most (seconds).
const MIGRATION_WAIT_S: u32 = 600;

/// The lock migrations run under: PostgreSQL's transaction-scoped advisory lock and
/// MariaDB's named lock, each held by a transaction of its own (one pinned connection)
/// while the migrations run on others; for SQLite, an exclusive lock on a file beside
/// the database (its instances share one host).
enum MigrationLock {
    Held(DatabaseTransaction),
    File(std::fs::File),
    None,
}

impl MigrationLock {
    async fn take(db: &DatabaseConnection, url: &str) -> anyhow::Result<Self> {
        match db.get_database_backend() {
            DbBackend::Postgres => {
                let txn = db.begin().await?;
                // Any constant both sides agree on: "ovation migrations".
                txn.execute_unprepared("SELECT pg_advisory_xact_lock(7152005341)")
                    .await?;
                Ok(Self::Held(txn))
            }
            DbBackend::MySql => {
                let txn = db.begin().await?;
                let got = txn
                    .query_one_raw(Statement::from_string(
                        DbBackend::MySql,
                        format!("SELECT GET_LOCK('ovation_migrations', {MIGRATION_WAIT_S})"),
                    ))
                    .await?
                    .and_then(|row| row.try_get_by_index::<i64>(0).ok());
                anyhow::ensure!(
                    got == Some(1),
                    "another instance held the migration lock for {MIGRATION_WAIT_S} s"
                );
                Ok(Self::Held(txn))
            }
            DbBackend::Sqlite => match sqlite_file(url) {
                Some(file) => {
                    let path = format!("{file}.migrate-lock");
                    let lock = tokio::task::spawn_blocking(move || {
                        let lock = std::fs::OpenOptions::new()
                            .create(true)
                            .truncate(false)
                            .write(true)
                            .open(&path)
                            .with_context(|| format!("failed to open {path}"))?;
                        lock.lock()
                            .with_context(|| format!("failed to lock {path}"))?;
                        Ok::<_, anyhow::Error>(lock)
                    })
                    .await??;
                    Ok(Self::File(lock))
                }
                None => Ok(Self::None),
            },
            _ => Ok(Self::None),
        }
    }

    async fn release(self) {
        match self {
            Self::Held(txn) => {
                if txn.get_database_backend() == DbBackend::MySql
                    && let Err(err) = txn
                        .execute_unprepared("SELECT RELEASE_LOCK('ovation_migrations')")
                        .await
                {
                    tracing::warn!(error = %err, "could not release the migration lock; it goes with the connection");
                }
                if let Err(err) = txn.commit().await {
                    tracing::warn!(error = %err, "could not end the migration lock's transaction");
                }
            }
            Self::File(file) => {
                if let Err(err) = file.unlock() {
                    tracing::warn!(error = %err, "could not unlock the migration lock file; it goes with the process");
                }
            }
            Self::None => {}
        }
    }
}

/// The file of a SQLite URL (`sqlite://./data/ovation.db?mode=rwc`), unless it is in
/// memory.
fn sqlite_file(url: &str) -> Option<String> {
    let path = url
        .strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))?;
    let file = path.split('?').next().unwrap_or(path);
    (!file.is_empty() && !file.contains(":memory:")).then(|| file.to_owned())
}

/// Copies a SQLite database to `file` (`VACUUM INTO`: a consistent snapshot, taken
/// while writers go on; the file must not exist). Other backends are refused: their own
/// tools (`pg_dump`, `mariadb-dump`) back them up consistently.
pub async fn backup(db: &DatabaseConnection, file: &std::path::Path) -> anyhow::Result<()> {
    anyhow::ensure!(
        db.get_database_backend() == DbBackend::Sqlite,
        "ovation backup copies a SQLite database; back up PostgreSQL with pg_dump and \
         MariaDB with mariadb-dump (docs/operations/data-lifecycle.md)"
    );
    anyhow::ensure!(!file.exists(), "{} exists already", file.display());
    let path = file
        .to_str()
        .ok_or_else(|| anyhow::anyhow!("{} is not a UTF-8 path", file.display()))?;
    db.execute_raw(Statement::from_sql_and_values(
        DbBackend::Sqlite,
        "VACUUM INTO ?",
        [path.into()],
    ))
    .await
    .with_context(|| format!("failed to copy the database to {path}"))?;
    Ok(())
}

/// Answers whether the database responds.
pub async fn ping(db: &DatabaseConnection) -> Result<(), DbErr> {
    db.execute_unprepared("SELECT 1").await.map(|_| ())
}

/// A database URL without its password, for logs.
pub fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let userinfo = &url[scheme + 3..at];
            let user = userinfo.split(':').next().unwrap_or("");
            format!("{}{user}:***{}", &url[..scheme + 3], &url[at..])
        }
        _ => url.to_owned(),
    }
}

fn to_naive(t: DateTime<Utc>) -> NaiveDateTime {
    t.naive_utc()
}

fn from_naive(t: NaiveDateTime) -> DateTime<Utc> {
    t.and_utc()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one value `sql` reads from a SQLite database.
    async fn one_value(db: &DatabaseConnection, sql: &str) -> i64 {
        let row = db
            .query_one_raw(sea_orm::Statement::from_string(DbBackend::Sqlite, sql))
            .await
            .unwrap()
            .unwrap();
        row.try_get_by_index(0).unwrap()
    }

    async fn page_size(db: &DatabaseConnection) -> i64 {
        one_value(db, "PRAGMA page_size").await
    }

    /// A SQLite database created on connecting has 16 KiB pages.
    #[tokio::test]
    async fn a_new_sqlite_database_has_pages_of_16_kib() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}?mode=rwc", dir.path().join("t.db").display());
        let db = connect(&url, 2).await.unwrap();
        db.execute_unprepared("CREATE TABLE t (v INTEGER)")
            .await
            .unwrap();
        assert_eq!(page_size(&db).await, 16_384);
    }

    /// A SQLite database created with SQLite's default pages (4 KiB, as before Ovation
    /// chose its own) keeps them, and reads and writes as before; its backup
    /// (`VACUUM INTO`) has 16 KiB pages and the same rows.
    #[tokio::test]
    async fn an_existing_sqlite_database_keeps_its_pages() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}?mode=rwc", dir.path().join("t.db").display());
        let old = Database::connect(url.as_str()).await.unwrap();
        old.execute_unprepared("CREATE TABLE t (v INTEGER); INSERT INTO t VALUES (1)")
            .await
            .unwrap();
        assert_eq!(page_size(&old).await, 4_096);
        old.close().await.unwrap();

        let db = connect(&url, 2).await.unwrap();
        db.execute_unprepared("INSERT INTO t VALUES (2)")
            .await
            .unwrap();
        assert_eq!(page_size(&db).await, 4_096);
        assert_eq!(one_value(&db, "SELECT SUM(v) FROM t").await, 3);

        let copy = dir.path().join("copy.db");
        backup(&db, &copy).await.unwrap();
        let copied = Database::connect(format!("sqlite://{}", copy.display()).as_str())
            .await
            .unwrap();
        assert_eq!(page_size(&copied).await, 16_384);
        assert_eq!(one_value(&copied, "SELECT SUM(v) FROM t").await, 3);
    }

    /// A write transaction that reads first, while another connection writes and commits:
    /// begun with `begin_write` it holds the lock, so the other waits and both succeed (a
    /// plain deferred BEGIN fails its first write with "database is locked").
    #[tokio::test(flavor = "multi_thread")]
    async fn a_write_transaction_that_reads_first_is_not_refused_on_sqlite() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}?mode=rwc", dir.path().join("t.db").display());
        let db = connect(&url, 8).await.unwrap();
        db.execute_unprepared("CREATE TABLE t (v INTEGER)")
            .await
            .unwrap();
        let txn = begin_write(&db).await.unwrap();
        txn.execute_unprepared("SELECT COUNT(*) FROM t")
            .await
            .unwrap();
        let other = {
            let db = db.clone();
            tokio::spawn(async move { db.execute_unprepared("INSERT INTO t VALUES (2)").await })
        };
        tokio::time::sleep(Duration::from_millis(200)).await;
        txn.execute_unprepared("INSERT INTO t VALUES (1)")
            .await
            .unwrap();
        txn.commit().await.unwrap();
        other.await.unwrap().unwrap();
        let rows = db
            .query_all_raw(sea_orm::Statement::from_string(
                db.get_database_backend(),
                "SELECT v FROM t ORDER BY v",
            ))
            .await
            .unwrap();
        let values: Vec<i64> = rows.iter().map(|r| r.try_get("", "v").unwrap()).collect();
        assert_eq!(
            values,
            [1, 2],
            "the first transaction's write, then the other's"
        );
    }
}
