//! Test harness: a real `redis-server` on a free port, a fresh SQL database, and the app
//! on port 0.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use ovation::config::Settings;
use ovation::startup::Application;
use ovation::store::redis::RedisTarget;
use reqwest::StatusCode;
use serde_json::{Value, json};

pub const MASTER_KEY: &str = "test-master-key-0123456789";
pub const ADMIN_PASSWORD: &str = "test-admin-password";

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A `redis-server` owned by the test process; a watchdog shell stops it when the test
/// process exits, so none outlives the run.
pub struct RedisServer {
    pub port: u16,
    watchdog: Option<Child>,
}

/// A connection to `server`, its command statistics just reset.
pub async fn reset_stats(server: &RedisServer) -> redis::aio::MultiplexedConnection {
    let mut conn = redis::Client::open(server.url())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let _: () = redis::cmd("CONFIG")
        .arg("RESETSTAT")
        .query_async(&mut conn)
        .await
        .unwrap();
    conn
}

impl RedisServer {
    pub fn start() -> Self {
        Self::start_on(free_port())
    }

    pub fn start_on(port: u16) -> Self {
        Self::start_with(port, "--save '' --appendonly no")
    }

    /// A server that writes every change to its append-only file before answering, with
    /// its data in `dir`: killed and started again on the same port and `dir`, it loses
    /// nothing it acknowledged.
    pub fn start_durable(port: u16, dir: &std::path::Path) -> Self {
        Self::start_with(
            port,
            &format!(
                "--save '' --appendonly yes --appendfsync always --dir '{}'",
                dir.display()
            ),
        )
    }

    fn start_with(port: u16, persistence: &str) -> Self {
        let script = format!(
            "redis-server --port {port} --bind 127.0.0.1 {persistence} --daemonize no --loglevel warning --enable-debug-command local & \
             r=$!; trap 'kill $r 2>/dev/null' TERM; while kill -0 {parent} 2>/dev/null && kill -0 $r 2>/dev/null; do sleep 0.2; done; kill $r 2>/dev/null",
            parent = std::process::id()
        );
        let watchdog = Command::new("sh")
            .arg("-c")
            .arg(script)
            .stdout(Stdio::null())
            .spawn()
            .expect("redis-server must be installed (make test installs it)");
        let server = Self {
            port,
            watchdog: Some(watchdog),
        };
        server.wait_until_up();
        server
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    fn wait_until_up(&self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if std::net::TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("redis-server did not start on port {}", self.port);
    }

    /// Kills the server with SIGKILL, as a crash would, and waits until its port closes.
    pub fn crash(&mut self) {
        let info = Command::new("redis-cli")
            .args(["-p", &self.port.to_string(), "INFO", "server"])
            .output()
            .expect("redis-cli runs");
        let info = String::from_utf8_lossy(&info.stdout);
        let pid = info
            .lines()
            .find_map(|l| l.strip_prefix("process_id:"))
            .expect("INFO names the process")
            .trim()
            .to_owned();
        let killed = Command::new("kill").args(["-9", &pid]).status().unwrap();
        assert!(killed.success());
        self.stop();
    }

    /// Stops the server and waits until its port is closed.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.watchdog.take() {
            let _ = Command::new("kill").arg(child.id().to_string()).status();
            let _ = child.wait();
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
            assert!(Instant::now() < deadline, "redis-server did not stop");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The Redis shared by tests that don't stop it; each test uses its own key prefix.
/// A client for the app under test. It drops pooled connections idle for 2 s, before the
/// server's 5 s keep-alive closes them: reusing a connection the server is closing at
/// that moment fails the request (`IncompleteMessage`), as it did after a slow CLI run.
pub fn client_builder() -> reqwest::ClientBuilder {
    reqwest::Client::builder().pool_idle_timeout(Duration::from_secs(2))
}

pub fn shared_redis() -> &'static RedisServer {
    static SHARED: OnceLock<RedisServer> = OnceLock::new();
    SHARED.get_or_init(RedisServer::start)
}

/// A store on the tests' shared single Redis, its keys under `prefix`: for tests that
/// drive the store with clocks of their own.
pub fn store_on_shared_redis(prefix: &str) -> ovation::store::redis::RedisStore {
    store_on(&RedisTarget::Single(shared_redis().url()), prefix)
}

/// A store on the shared backend the app under test uses (see [`shared_target`]): for
/// tests that add writes of their own to the app's.
pub fn store_on_shared_backend(prefix: &str) -> ovation::store::redis::RedisStore {
    store_on(&shared_target(), prefix)
}

fn store_on(target: &RedisTarget, prefix: &str) -> ovation::store::redis::RedisStore {
    ovation::store::redis::RedisStore::new(target, prefix, Duration::from_secs(5)).unwrap()
}

/// One runtime for the property tests that run async code in their cases.
pub fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| tokio::runtime::Runtime::new().unwrap())
}

/// A Redis Cluster of three masters (no replicas) on free loopback ports, owned by the
/// test process like [`RedisServer`].
pub struct RedisCluster {
    pub nodes: Vec<RedisServer>,
    _dir: tempfile::TempDir,
}

impl RedisCluster {
    pub fn start() -> Self {
        Self::start_with(3, 0)
    }

    /// `masters` masters with `replicas` replicas each; a replica takes over a master
    /// that stopped answering for a second.
    pub fn start_with(masters: usize, replicas: usize) -> Self {
        let dir = tempfile::tempdir().unwrap();
        // Redis's default of 15 s without replicas: no node is taken for failed under load.
        let timeout = if replicas > 0 { 1000 } else { 15_000 };
        let nodes: Vec<RedisServer> = (0..masters * (1 + replicas))
            .map(|_| {
                let (port, bus) = (free_port(), free_port());
                RedisServer::start_with(
                    port,
                    &format!(
                        "--save '' --appendonly no --cluster-enabled yes --cluster-port {bus} \
                         --cluster-node-timeout {timeout} \
                         --cluster-config-file nodes-{port}.conf --dir '{}'",
                        dir.path().display()
                    ),
                )
            })
            .collect();
        let created = Command::new("redis-cli")
            .args(["--cluster", "create"])
            .args(nodes.iter().map(|n| format!("127.0.0.1:{}", n.port)))
            .args(["--cluster-replicas", &replicas.to_string(), "--cluster-yes"])
            .stdout(Stdio::null())
            .status()
            .expect("redis-cli must be installed (make test installs it)");
        assert!(created.success(), "redis-cli --cluster create failed");
        let deadline = Instant::now() + Duration::from_secs(30);
        for node in &nodes {
            loop {
                let info = Command::new("redis-cli")
                    .args(["-p", &node.port.to_string(), "CLUSTER", "INFO"])
                    .output()
                    .unwrap();
                if String::from_utf8_lossy(&info.stdout).contains("cluster_state:ok") {
                    break;
                }
                assert!(Instant::now() < deadline, "the cluster did not come up");
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        // A replica takes over only once it has synced with its master.
        for node in &nodes {
            loop {
                let info = Command::new("redis-cli")
                    .args(["-p", &node.port.to_string(), "INFO", "replication"])
                    .output()
                    .unwrap();
                let info = String::from_utf8_lossy(&info.stdout);
                if info.contains("role:master") || info.contains("master_link_status:up") {
                    break;
                }
                assert!(Instant::now() < deadline, "a replica did not sync");
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        Self { nodes, _dir: dir }
    }

    pub fn seeds(&self) -> Vec<String> {
        self.nodes.iter().map(RedisServer::url).collect()
    }
}

pub fn shared_cluster() -> &'static RedisCluster {
    static SHARED: OnceLock<RedisCluster> = OnceLock::new();
    SHARED.get_or_init(RedisCluster::start)
}

/// Whether this run's shared backend is a Redis Cluster (`OVATION_TEST_REDIS=cluster`;
/// `make test` runs the backend-neutral modules both ways).
pub fn on_cluster() -> bool {
    std::env::var("OVATION_TEST_REDIS").is_ok_and(|v| v == "cluster")
}

/// The shared backend: one redis-server, or the 3-master cluster.
pub fn shared_target() -> RedisTarget {
    if on_cluster() {
        RedisTarget::Cluster(shared_cluster().seeds())
    } else {
        RedisTarget::Single(shared_redis().url())
    }
}

/// A plain client of the shared backend, for tests that look at keys themselves.
#[derive(Clone)]
pub enum RawRedis {
    Single(redis::aio::MultiplexedConnection),
    Cluster {
        conn: redis::cluster_async::ClusterConnection,
        nodes: Vec<redis::aio::MultiplexedConnection>,
    },
}

impl RawRedis {
    pub async fn connect() -> Self {
        async fn single(url: String) -> redis::aio::MultiplexedConnection {
            redis::Client::open(url)
                .unwrap()
                .get_multiplexed_async_connection()
                .await
                .unwrap()
        }
        match shared_target() {
            RedisTarget::Single(url) => Self::Single(single(url).await),
            RedisTarget::Cluster(seeds) => {
                let conn = redis::cluster::ClusterClient::new(seeds.clone())
                    .unwrap()
                    .get_async_connection()
                    .await
                    .unwrap();
                let mut nodes = Vec::new();
                for url in seeds {
                    nodes.push(single(url).await);
                }
                Self::Cluster { conn, nodes }
            }
        }
    }

    /// Runs a command on the node that holds its key.
    pub async fn query<T: redis::FromRedisValue>(&mut self, cmd: &redis::Cmd) -> T {
        match self {
            Self::Single(conn) => cmd.query_async(conn).await.unwrap(),
            Self::Cluster { conn, .. } => cmd.query_async(conn).await.unwrap(),
        }
    }

    /// The keys matching `pattern`, over every node (KEYS: for tests only).
    pub async fn keys(&mut self, pattern: &str) -> Vec<String> {
        let nodes = match self {
            Self::Single(conn) => std::slice::from_mut(conn),
            Self::Cluster { nodes, .. } => nodes.as_mut_slice(),
        };
        let mut keys = Vec::new();
        for node in nodes {
            let found: Vec<String> = redis::cmd("KEYS")
                .arg(pattern)
                .query_async(node)
                .await
                .unwrap();
            keys.extend(found);
        }
        keys
    }
}

fn unique(label: &str) -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    format!(
        "{label}{}x{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// A fresh database: a SQLite file by default; with `OVATION_TEST_DATABASE_URL` set to a
/// Postgres or MariaDB server URL, a new database created on that server.
pub struct TestDatabase {
    pub url: String,
    _dir: Option<tempfile::TempDir>,
}

impl TestDatabase {
    pub async fn create() -> Self {
        match std::env::var("OVATION_TEST_DATABASE_URL") {
            Ok(server) if !server.starts_with("sqlite") => {
                let name = unique("ovation_it_");
                let admin = sea_orm::Database::connect(&server)
                    .await
                    .expect("test database server reachable");
                sea_orm::ConnectionTrait::execute_unprepared(
                    &admin,
                    &format!("CREATE DATABASE {name}"),
                )
                .await
                .expect("create test database");
                let base = server.rsplit_once('/').map_or(server.as_str(), |(b, _)| b);
                Self {
                    url: format!("{base}/{name}"),
                    _dir: None,
                }
            }
            _ => {
                let dir = tempfile::tempdir().unwrap();
                Self {
                    url: format!(
                        "sqlite://{}?mode=rwc",
                        dir.path().join("ovation.db").display()
                    ),
                    _dir: Some(dir),
                }
            }
        }
    }
}

/// A running app and a client for it; clones share both.
#[derive(Clone)]
pub struct TestApp {
    pub base: String,
    pub client: reqwest::Client,
    pub prefix: String,
    pub database: std::sync::Arc<TestDatabase>,
    pub settings: Settings,
    /// Stops the app as SIGTERM does.
    pub stopper: ovation::startup::Stopper,
}

pub struct Options {
    pub redis: RedisTarget,
    pub prefix: String,
    pub database: Option<std::sync::Arc<TestDatabase>>,
    pub trusted_proxies: Vec<ipnet::IpNet>,
    /// Off by default, so a test reads its own writes at once.
    pub read_cache: Duration,
    /// How often a watched top is read for live subscribers (`OVATION_EVENTS_INTERVAL_MS`).
    pub events_interval: Duration,
    /// The most live streams the instance holds open (`OVATION_EVENTS_MAX_STREAMS`).
    pub events_max_streams: usize,
    /// The most of them one client address holds (every test client is 127.0.0.1).
    pub events_max_streams_per_ip: usize,
    /// Streams kept for dashboard sessions.
    pub events_dashboard_reserve: usize,
    /// Ledger exports running at once.
    pub exports_max: usize,
    /// A connection whose client takes no data this long is closed.
    pub stall_timeout: Duration,
    /// `OVATION_JWKS_REFETCH_MS`.
    pub jwks_refetch: Duration,
    /// How often the instance checks the configuration version and pings its notices.
    pub config_check: Duration,
    /// How often the archive task runs; an hour by default, so other tests see none.
    pub archive_check: Duration,
    /// How often the ledger's drain moves entries to SQL.
    pub ledger_drain: Duration,
    /// How often the league task closes seasons that are over and sends webhooks.
    pub league_check: Duration,
    /// Dashboard sessions' idle and absolute timeouts.
    pub session_idle: Duration,
    pub session_absolute: Duration,
    /// Origins allowed to read the API from a browser.
    pub cors_origins: Vec<String>,
    /// The most votes on one board one Redis call applies (group commit).
    pub vote_group: usize,
    /// The longest a request waits for Redis, its queue for a group-commit call included
    /// (`OVATION_REDIS_TIMEOUT_MS`).
    pub redis_timeout: Duration,
    /// `OVATION_WEBHOOK_ALLOW_PRIVATE`: test receivers listen on loopback.
    pub webhook_allow_private: bool,
    /// `OVATION_SESSION_KEY`: instances that share one share dashboard sessions.
    pub session_key: Option<String>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            redis: shared_target(),
            prefix: unique("t"),
            database: None,
            trusted_proxies: Vec::new(),
            read_cache: Duration::ZERO,
            events_interval: Duration::from_millis(100),
            events_max_streams: 20_000,
            events_max_streams_per_ip: 20_000,
            events_dashboard_reserve: 0,
            exports_max: 2,
            stall_timeout: Duration::from_secs(30),
            jwks_refetch: Duration::from_millis(200),
            config_check: Duration::from_secs(2),
            archive_check: Duration::from_secs(3600),
            ledger_drain: Duration::from_millis(100),
            league_check: Duration::from_millis(200),
            session_idle: Duration::from_secs(1800),
            session_absolute: Duration::from_secs(43_200),
            cors_origins: Vec::new(),
            vote_group: ovation::store::redis::DEFAULT_VOTE_GROUP,
            redis_timeout: Duration::from_millis(1000),
            webhook_allow_private: false,
            session_key: None,
        }
    }
}

impl TestApp {
    pub async fn spawn() -> Self {
        Self::spawn_with(Options::default()).await
    }

    /// An app for hundreds of votes at once: they queue for their group-commit calls,
    /// and on a loaded 2-core machine (a Redis Cluster's three masters on the same
    /// cores) the last of them waited past the default second of Redis timeout and were
    /// answered 503 unsent, which is not what such tests are about.
    pub async fn patient() -> Self {
        Self::spawn_with(Options {
            redis_timeout: Duration::from_secs(10),
            ..Options::default()
        })
        .await
    }

    /// Starts the app. Within a minute of a UTC hour's turn (a day's among them) it waits
    /// the turn out first, so that a test's votes at the present time and its reads of the
    /// present hour's or day's buckets fall in the same one.
    pub async fn spawn_with(opts: Options) -> Self {
        clear_of_the_turn(HOUR, Duration::from_secs(60)).await;
        let database = match opts.database {
            Some(db) => db,
            None => std::sync::Arc::new(TestDatabase::create().await),
        };
        let settings = Settings {
            bind: "127.0.0.1:0".parse().unwrap(),
            database_url: database.url.clone(),
            redis: opts.redis.clone(),
            key_prefix: format!("{}:", opts.prefix),
            master_key: Some(MASTER_KEY.to_owned()),
            redis_timeout: opts.redis_timeout,
            vote_group: opts.vote_group,
            idempotency_ttl: Duration::from_secs(86_400),
            workers: 2,
            log: "warn".to_owned(),
            trusted_proxies: opts.trusted_proxies,
            admin_password: Some(ADMIN_PASSWORD.to_owned()),
            session_key: opts.session_key,
            cookie_secure: false,
            read_cache: opts.read_cache,
            events_interval: opts.events_interval,
            events_max_streams: opts.events_max_streams,
            events_max_streams_per_ip: opts.events_max_streams_per_ip,
            events_dashboard_reserve: opts.events_dashboard_reserve,
            exports_max: opts.exports_max,
            sql_pool: 8,
            stall_timeout: opts.stall_timeout,
            jwks_refetch: opts.jwks_refetch,
            config_check: opts.config_check,
            archive_check: opts.archive_check,
            ledger_drain: opts.ledger_drain,
            league_check: opts.league_check,
            session_idle: opts.session_idle,
            session_absolute: opts.session_absolute,
            allow_eviction: false,
            webhook_allow_private: opts.webhook_allow_private,
            cors_origins: opts.cors_origins,
            held_retention: Duration::from_secs(30 * 86_400),
        };
        let app = Application::build(settings.clone())
            .await
            .expect("app builds");
        let base = format!("http://127.0.0.1:{}", app.port());
        let stopper = app.stopper();
        tokio::spawn(app.run());
        Self {
            base,
            client: client_builder().pool_max_idle_per_host(64).build().unwrap(),
            prefix: opts.prefix,
            database,
            settings,
            stopper,
        }
    }

    /// Sends a request with `key` (or none) and answers status and JSON body.
    pub async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        key: Option<&str>,
        body: Option<&Value>,
    ) -> (StatusCode, Value) {
        // A 408 is the server giving up on a request it never read whole (a busy host kept
        // this client from sending it within 5 s): nothing happened, and it is sent again.
        let resp = loop {
            let mut req = self
                .client
                .request(method.clone(), format!("{}{path}", self.base));
            if let Some(key) = key {
                req = req.bearer_auth(key);
            }
            if let Some(body) = body {
                req = req.json(body);
            }
            let resp = req.send().await.expect("request sent");
            if resp.status() != StatusCode::REQUEST_TIMEOUT {
                break resp;
            }
        };
        let status = resp.status();
        let text = resp.text().await.unwrap();
        let value = if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).unwrap_or(Value::String(text))
        };
        (status, value)
    }

    pub async fn get(&self, path: &str) -> (StatusCode, Value) {
        self.call(reqwest::Method::GET, path, Some(MASTER_KEY), None)
            .await
    }

    pub async fn post(&self, path: &str, body: Value) -> (StatusCode, Value) {
        self.call(reqwest::Method::POST, path, Some(MASTER_KEY), Some(&body))
            .await
    }

    pub async fn put(&self, path: &str, body: Value) -> (StatusCode, Value) {
        self.call(reqwest::Method::PUT, path, Some(MASTER_KEY), Some(&body))
            .await
    }

    pub async fn patch(&self, path: &str, body: Value) -> (StatusCode, Value) {
        self.call(reqwest::Method::PATCH, path, Some(MASTER_KEY), Some(&body))
            .await
    }

    pub async fn delete(&self, path: &str) -> (StatusCode, Value) {
        self.call(reqwest::Method::DELETE, path, Some(MASTER_KEY), None)
            .await
    }

    /// Creates a board from `settings` (slug and title included) and checks it worked.
    pub async fn board(&self, settings: Value) -> Value {
        let (status, body) = self.post("/api/v1/admin/boards", settings).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        body
    }

    /// Registers members with the given ids on a board.
    pub async fn members(&self, board: &str, ids: &[&str]) {
        let members: Vec<Value> = ids
            .iter()
            .map(|id| json!({"id": id, "name": format!("Name {id}")}))
            .collect();
        let (status, body) = self
            .put(
                &format!("/api/v1/admin/boards/{board}/members"),
                json!({"members": members}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }

    /// What `GET /metrics` answers.
    pub async fn metrics(&self) -> String {
        let resp = self
            .client
            .get(format!("{}/metrics", self.base))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::OK);
        resp.text().await.unwrap()
    }

    /// Casts one vote with the master key.
    pub async fn vote(&self, board: &str, body: Value) -> (StatusCode, Value) {
        self.post(&format!("/api/v1/boards/{board}/votes"), body)
            .await
    }

    /// The app's state as another of its instances would build it (the same SQL and
    /// Redis), and league `slug` as SQL holds it.
    pub async fn league_in_sql(
        &self,
        slug: &str,
    ) -> (
        ovation::engine::state::AppState,
        ovation::domain::league::League,
    ) {
        let state = ovation::startup::connect(self.settings.clone())
            .await
            .unwrap();
        let league = ovation::store::sql::leagues::find_league(
            &state.db,
            &ovation::domain::ids::LeagueSlug::parse(slug).unwrap(),
        )
        .await
        .unwrap()
        .unwrap();
        (state, league)
    }

    /// Creates an API key and answers its secret.
    pub async fn key(&self, scopes: &[&str], channel: Option<&str>) -> String {
        let (status, body) = self
            .post(
                "/api/v1/admin/api-keys",
                json!({"name": "test", "scopes": scopes, "channel": channel}),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        body["key"].as_str().unwrap().to_owned()
    }
}

/// The error code of each result of a batch's answer (null for a vote that passed).
pub fn error_codes(body: &Value) -> Vec<Value> {
    body["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["error"]["code"].clone())
        .collect()
}

/// A score from a JSON answer as f64.
pub fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// The votes (or writes) a board's stats count over all their hours.
pub fn hourly_total(stats: &Value) -> i64 {
    stats["votes_per_hour"]
        .as_array()
        .unwrap_or_else(|| panic!("no votes_per_hour: {stats}"))
        .iter()
        .map(|h| h["votes"].as_i64().unwrap())
        .sum()
}

/// The refusals a board's stats count for each rule over all their hours, as
/// `[{"rule": id, "votes": n}]` sorted by rule: what a test compares when the hour may
/// turn while it runs.
pub fn refused_total(stats: &Value) -> Value {
    let mut per_rule = std::collections::BTreeMap::<i64, i64>::new();
    for hour in stats["votes_per_hour"]
        .as_array()
        .unwrap_or_else(|| panic!("no votes_per_hour: {stats}"))
    {
        for r in hour["refused"].as_array().unwrap() {
            *per_rule.entry(r["rule"].as_i64().unwrap()).or_default() +=
                r["votes"].as_i64().unwrap();
        }
    }
    Value::Array(
        per_rule
            .into_iter()
            .map(|(rule, votes)| json!({"rule": rule, "votes": votes}))
            .collect(),
    )
}

/// Waits, when the next UTC period of length `period` (an hour, a day) begins within
/// `need`, until it has begun: for a test whose votes must all fall in one hour or one
/// day to say where they land.
pub async fn clear_of_the_turn(period: Duration, need: Duration) {
    let period_ms = period.as_millis() as i64;
    let to_next = period_ms - chrono::Utc::now().timestamp_millis().rem_euclid(period_ms);
    if (to_next as u128) < need.as_millis() {
        tokio::time::sleep(Duration::from_millis(to_next as u64 + 1_000)).await;
    }
}

/// An hour, for [`clear_of_the_turn`].
pub const HOUR: Duration = Duration::from_secs(3_600);

/// A day, for [`clear_of_the_turn`].
pub const DAY: Duration = Duration::from_secs(86_400);

/// The votes per hour of `stats` from one fixed hour on, the same for every call in this
/// test process (40 hours before its first call): what two snapshots taken a while apart
/// can compare, where a plain sum loses an hour's votes when the 48-hour window moves on
/// between them.
pub fn hourly_total_since_start(stats: &Value) -> i64 {
    static SINCE: std::sync::OnceLock<chrono::DateTime<chrono::Utc>> = std::sync::OnceLock::new();
    let since = *SINCE.get_or_init(|| chrono::Utc::now() - chrono::Duration::hours(40));
    stats["votes_per_hour"]
        .as_array()
        .unwrap_or_else(|| panic!("no votes_per_hour: {stats}"))
        .iter()
        .filter(|h| {
            let hour = chrono::DateTime::parse_from_rfc3339(h["hour"].as_str().unwrap()).unwrap();
            hour >= since
        })
        .map(|h| h["votes"].as_i64().unwrap())
        .sum()
}

/// What a [`Proxy`] does with the bytes it carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProxyMode {
    /// Forward both ways.
    Forward = 0,
    /// Stop forwarding on connections that subscribed to pub/sub, without closing them,
    /// as a NAT that dropped an idle flow does; other connections still work.
    SilenceSubscribers = 1,
    /// Close a connection as soon as it carries anything, and refuse new ones: Redis is
    /// unreachable, and nothing sent meanwhile reaches it.
    Down = 2,
}

/// A TCP proxy between the app and Redis whose forwarding a test can stop and resume.
pub struct Proxy {
    pub port: u16,
    mode: std::sync::Arc<std::sync::atomic::AtomicU8>,
}

impl Proxy {
    pub async fn start(target_port: u16) -> Self {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicBool, AtomicU8};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let mode = Arc::new(AtomicU8::new(ProxyMode::Forward as u8));
        let shared = mode.clone();
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                if shared.load(std::sync::atomic::Ordering::SeqCst) == ProxyMode::Down as u8 {
                    continue;
                }
                let Ok(server) = tokio::net::TcpStream::connect(("127.0.0.1", target_port)).await
                else {
                    continue;
                };
                let subscriber = Arc::new(AtomicBool::new(false));
                let (client_read, client_write) = client.into_split();
                let (server_read, server_write) = server.into_split();
                tokio::spawn(pump(
                    client_read,
                    server_write,
                    shared.clone(),
                    subscriber.clone(),
                    true,
                ));
                tokio::spawn(pump(
                    server_read,
                    client_write,
                    shared.clone(),
                    subscriber,
                    false,
                ));
            }
        });
        Self { port, mode }
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    pub fn set(&self, mode: ProxyMode) {
        self.mode
            .store(mode as u8, std::sync::atomic::Ordering::SeqCst);
    }
}

async fn pump(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    mode: std::sync::Arc<std::sync::atomic::AtomicU8>,
    subscriber: std::sync::Arc<std::sync::atomic::AtomicBool>,
    from_client: bool,
) {
    use std::sync::atomic::Ordering::SeqCst;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    // Returning drops both halves: the connection closes both ways.
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        if from_client
            && buf[..n]
                .windows(9)
                .any(|w| w.eq_ignore_ascii_case(b"SUBSCRIBE"))
        {
            subscriber.store(true, SeqCst);
        }
        if mode.load(SeqCst) == ProxyMode::Down as u8 {
            return;
        }
        if mode.load(SeqCst) == ProxyMode::SilenceSubscribers as u8 && subscriber.load(SeqCst) {
            continue;
        }
        if to.write_all(&buf[..n]).await.is_err() {
            return;
        }
    }
}
