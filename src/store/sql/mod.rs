//! Configuration in SQL through sea-orm: boards, members, rate-limit rules and API keys.
//!
//! Functions here take and return domain types; rows never leave this module.

pub mod api_keys;
pub mod archive;
pub mod audit;
pub mod board_webhooks;
pub mod boards;
pub mod entities;
pub mod leagues;
pub mod ledger;
pub mod members;
mod outbox;
pub mod rules;
pub mod users;

use std::time::Duration;

use anyhow::Context;
use chrono::{DateTime, NaiveDateTime, Utc};
use migrations::{Migrator, MigratorTrait};
use sea_orm::{
    ConnectOptions, ConnectionTrait, Database, DatabaseConnection, DatabaseTransaction, DbErr,
    SqliteTransactionMode, TransactionOptions, TransactionTrait,
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

/// SQL connections each instance keeps at most.
pub const POOL_SIZE: u32 = 8;

/// Connects to `url`, creating the directory of a SQLite file when needed.
pub async fn connect(url: &str) -> anyhow::Result<DatabaseConnection> {
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
        .max_connections(POOL_SIZE)
        .connect_timeout(Duration::from_secs(5))
        .acquire_timeout(Duration::from_secs(5))
        .sqlx_logging(false)
        // A statement's rollback journal (a multi-row INSERT's, the drain's) in memory,
        // not in a temporary file written on every statement: it only ever undoes a
        // statement of a live transaction, so a crash loses nothing it held.
        .map_sqlx_sqlite_opts(|o| o.pragma("temp_store", "memory"));
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

/// Applies pending migrations; answers how many there were.
pub async fn migrate(db: &DatabaseConnection) -> anyhow::Result<usize> {
    let pending = Migrator::get_pending_migrations(db)
        .await
        .context("failed to read which database migrations are applied")?
        .len();
    Migrator::up(db, None)
        .await
        .context("failed to apply database migrations")?;
    Ok(pending)
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

    /// A write transaction that reads first, while another connection writes and commits:
    /// begun with `begin_write` it holds the lock, so the other waits and both succeed (a
    /// plain deferred BEGIN fails its first write with "database is locked").
    #[tokio::test(flavor = "multi_thread")]
    async fn a_write_transaction_that_reads_first_is_not_refused_on_sqlite() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}?mode=rwc", dir.path().join("t.db").display());
        let db = connect(&url).await.unwrap();
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
