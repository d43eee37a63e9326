//! Builds the application from settings and runs it.

use std::net::TcpListener;
use std::sync::Arc;

use actix_web::dev::Server;
use actix_web::{App, HttpServer, web};
use anyhow::Context;
use sea_orm::DatabaseConnection;
use tokio::task::JoinSet;
use tracing_actix_web::TracingLogger;

use actix_web::cookie::Key;

use crate::api;
use crate::config::Settings;
use crate::domain::auth::hash_key;
use crate::domain::session::SessionPolicy;
use crate::engine::background::Background;
use crate::engine::config::ConfigCache;
use crate::engine::config_sync;
use crate::engine::durability::Durability;
use crate::engine::jwks::Jwks;
use crate::engine::read_cache::ReadCache;
use crate::engine::readiness;
use crate::engine::state::AppState;
use crate::engine::users;
use crate::engine::{archive, board_webhooks, league_close, ledger, reconcile, webhooks};
use crate::store::redis::RedisStore;
use crate::store::sql;
use crate::telemetry::RequestSpan;
use crate::web as pages;

/// A bound, ready-to-run server.
pub struct Application {
    port: u16,
    server: Server,
    stopper: Stopper,
    /// The background tasks (archive, configuration, webhooks …), ended once the server
    /// has stopped.
    tasks: JoinSet<()>,
    /// The ledger's drain, on a thread of its own (`engine::background`).
    drain: Background,
    db: DatabaseConnection,
}

/// Stops a running application gracefully: its live event streams end first (they
/// would otherwise hold the shutdown until its timeout), then the server stops taking
/// connections and finishes the requests in flight.
#[derive(Clone)]
pub struct Stopper {
    server: actix_web::dev::ServerHandle,
    watchers: Arc<crate::engine::watchers::Watchers>,
}

impl Stopper {
    pub async fn stop(&self) {
        self.watchers.close_all();
        self.server.stop(true).await;
    }
}

impl Application {
    /// Connects ([`connect`]), starts the configuration listener, creates the first admin
    /// user when there is none, and binds the listener (`:0` picks a free port).
    pub async fn build(settings: Settings) -> anyhow::Result<Self> {
        let state = connect(settings).await?;
        let mut tasks = JoinSet::new();
        tasks.spawn(config_sync::listen(
            state.clone(),
            state.settings.config_check,
        ));
        tasks.spawn(config_sync::check_version(
            state.clone(),
            state.settings.config_check,
        ));
        readiness::warn_at_start(&state).await;
        if let Err(err) = ledger::find_gaps_at_start(&state).await {
            tracing::warn!(error = %err, "could not compare the ledgers in SQL with Redis at start-up; the drain does as it goes");
        }
        tasks.spawn(readiness::watch(state.clone(), readiness::WATCH));
        let leagues = state.config.leagues();
        let slugs: Vec<&str> = leagues.iter().map(|l| l.league.slug.as_str()).collect();
        crate::metrics::register_known(&slugs);
        tasks.spawn(reconcile::watch(state.clone(), state.settings.config_check));
        tasks.spawn(archive::run(state.clone(), state.settings.archive_check));
        let drain = ledger::start(state.clone(), state.settings.ledger_drain)
            .context("failed to start the ledger drain's thread")?;
        tasks.spawn(league_close::run(
            state.clone(),
            state.settings.league_check,
        ));
        tasks.spawn(webhooks::run(state.clone(), state.settings.league_check));
        tasks.spawn(board_webhooks::run(state.clone()));
        if let Some(password) =
            users::ensure_admin(&state, state.settings.admin_password.as_deref())
                .await
                .map_err(|e| anyhow::anyhow!("failed to create the first admin user: {e}"))?
        {
            // Printed once: the hash is all that is kept.
            tracing::warn!(
                user = "admin",
                %password,
                "created the first dashboard user with a random password; change it with `ovation user passwd admin`"
            );
        }
        let settings = &state.settings;
        let session_key = match &settings.session_key {
            Some(key) => Key::derive_from(key.as_bytes()),
            None => Key::generate(),
        };
        let secure_cookies = settings.cookie_secure;
        let cors_origins = settings.cors_origins.clone();

        let listener = TcpListener::bind(settings.bind)
            .with_context(|| format!("failed to bind {}", settings.bind))?;
        let port = listener.local_addr()?.port();
        let workers = settings.workers;
        let stall_timeout = settings.stall_timeout;
        let watchers = state.watchers.clone();
        let db = state.db.clone();
        let data = web::Data::new(state);
        let mut routes = api::route_table();
        routes.extend(pages::route_patterns());
        crate::routes::install(routes);
        let server = HttpServer::new(move || {
            App::new()
                .wrap(actix_web::middleware::from_fn(crate::metrics::record_http))
                .wrap(TracingLogger::<RequestSpan>::new())
                .app_data(data.clone())
                .configure(|cfg| api::routes(cfg, &cors_origins))
                .configure(|cfg| pages::routes(cfg, session_key.clone(), secure_cookies))
        })
        .workers(workers)
        // Answers go out as soon as they are written: with Nagle's algorithm a client
        // reusing its connection can wait on a delayed ACK.
        .tcp_nodelay(true)
        // A client that takes none of what waits for it is cut off: actix stops reading
        // a response's body while its buffer is full, so without this a live subscriber
        // that stopped reading would hold its connection for good.
        .on_connect(move |conn, _| {
            if let Some(tcp) = conn.downcast_ref::<actix_web::rt::net::TcpStream>()
                && let Err(err) =
                    socket2::SockRef::from(tcp).set_tcp_user_timeout(Some(stall_timeout))
            {
                tracing::warn!(error = %err, "failed to set TCP_USER_TIMEOUT");
            }
        })
        // `run` handles the signals: the event streams end before the server stops.
        .disable_signals()
        .listen(listener)?
        .run();
        tracing::info!(port, workers, "ovation listening");
        let stopper = Stopper {
            server: server.handle(),
            watchers,
        };
        Ok(Self {
            port,
            server,
            stopper,
            tasks,
            drain,
            db,
        })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// What stops this application once it runs.
    pub fn stopper(&self) -> Stopper {
        self.stopper.clone()
    }

    /// Serves until the process gets SIGINT or SIGTERM (or [`Stopper::stop`]), then stops
    /// gracefully: the server finishes the requests in flight, the background tasks and
    /// the drain's thread end (a drain cut short is taken up again by the next one, see
    /// `engine::ledger`), and the SQL connections close ([`sql::close`]).
    pub async fn run(mut self) -> std::io::Result<()> {
        let stopper = self.stopper.clone();
        tokio::spawn(async move {
            stop_signal().await;
            tracing::info!("stopping: ending live streams, finishing requests");
            stopper.stop().await;
        });
        let served = self.server.await;
        self.tasks.shutdown().await;
        self.drain.stop().await;
        sql::close(&self.db).await;
        served
    }
}

/// SIGINT or SIGTERM.
async fn stop_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut terminate =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(terminate) => terminate,
                Err(err) => {
                    tracing::warn!(error = %err, "SIGTERM cannot be handled; SIGINT still stops");
                    let _ = interrupt.await;
                    return;
                }
            };
        tokio::select! {
            _ = interrupt => {}
            _ = terminate.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = interrupt.await;
    }
}

/// Connects to SQL (applying migrations), prepares Redis and loads configuration: the
/// state the server and the CLI's admin commands share.
pub async fn connect(settings: Settings) -> anyhow::Result<AppState> {
    let db = sql::connect(&settings.database_url, settings.sql_pool).await?;
    let applied = sql::migrate(&db, &settings.database_url).await?;
    tracing::info!(
        database = %sql::redact(&settings.database_url),
        applied,
        "database ready: migrations applied"
    );
    let redis = RedisStore::new(
        &settings.redis,
        &settings.key_prefix,
        settings.redis_timeout,
    )
    .context("invalid OVATION_REDIS_URL or OVATION_REDIS_CLUSTER")?
    .with_vote_group(settings.vote_group);
    let cache = Arc::new(
        ConfigCache::load(&db, redis.keys().clone())
            .await
            .context("failed to load configuration from the database")?,
    );
    Ok(AppState {
        metrics: crate::metrics::handle(),
        durability: Arc::new(Durability::new(settings.allow_eviction)),
        backlogs: Arc::default(),
        watchers: Arc::default(),
        exports: Arc::new(tokio::sync::Semaphore::new(settings.exports_max)),
        jwks: Arc::new(Jwks::new(
            settings.webhook_allow_private,
            settings.jwks_refetch,
        )),
        reads: Arc::new(ReadCache::new(settings.read_cache)),
        sessions: SessionPolicy {
            idle: settings.session_idle,
            absolute: settings.session_absolute,
        },
        master_key_hash: settings.master_key.as_deref().map(hash_key),
        settings: Arc::new(settings),
        db,
        redis,
        config: cache,
    })
}

/// Copies the SQLite database to `file` while the service may run (a consistent
/// snapshot); refuses another backend, whose own tools back it up.
pub async fn backup(settings: &Settings, file: &std::path::Path) -> anyhow::Result<()> {
    let db = sql::connect(&settings.database_url, 1).await?;
    let done = sql::backup(&db, file).await;
    sql::close(&db).await;
    done
}

/// Applies migrations and exits.
pub async fn migrate(settings: &Settings) -> anyhow::Result<()> {
    let db = sql::connect(&settings.database_url, settings.sql_pool).await?;
    let applied = sql::migrate(&db, &settings.database_url).await;
    sql::close(&db).await;
    let applied = applied?;
    tracing::info!(database = %sql::redact(&settings.database_url), applied, "migrations applied");
    Ok(())
}

/// Connects ([`connect`]), runs `work` (a command of the command line), then closes the
/// SQL connections ([`sql::close`]), whatever `work` answered.
pub async fn with_state<T>(
    settings: Settings,
    work: impl AsyncFnOnce(&AppState) -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    let state = connect(settings).await?;
    let done = work(&state).await;
    sql::close(&state.db).await;
    done
}
