//! Settings: defaults < optional `ovation.toml` < `OVATION_*` environment variables.
//!
//! The file is `./ovation.toml`, or the path in `OVATION_CONFIG`. Its keys are the
//! variable names without the prefix, in lower case (`bind = "0.0.0.0:8080"`). A bad value
//! stops start-up with a message naming the variable (or the file key) that holds it.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, bail};

use crate::store::redis::RedisTarget;

/// Everything the server reads at start-up.
#[derive(Debug, Clone)]
pub struct Settings {
    /// `OVATION_BIND`: address to listen on.
    pub bind: SocketAddr,
    /// `OVATION_DATABASE_URL`: sqlite://, postgres:// or mysql:// URL.
    pub database_url: String,
    /// `OVATION_REDIS_URL`, or `OVATION_REDIS_CLUSTER` (comma-separated seed nodes of a
    /// Redis Cluster; when set, the URL is not used).
    pub redis: RedisTarget,
    /// `OVATION_KEY_PREFIX`: starts every Redis key.
    pub key_prefix: String,
    /// `OVATION_MASTER_KEY`: an API key with every scope, for scripting a fresh deployment.
    pub master_key: Option<String>,
    /// `OVATION_REDIS_TIMEOUT_MS`: the longest a request waits for Redis.
    pub redis_timeout: Duration,
    /// `OVATION_VOTE_GROUP`: the most votes on one board that one Redis call applies
    /// (group commit; 1 sends each request's votes alone).
    pub vote_group: usize,
    /// `OVATION_IDEMPOTENCY_TTL_S`: how long an idempotency key is remembered.
    pub idempotency_ttl: Duration,
    /// `OVATION_WORKERS`: HTTP worker threads.
    pub workers: usize,
    /// `OVATION_LOG`: log filter, `RUST_LOG` syntax.
    pub log: String,
    /// `OVATION_TRUSTED_PROXIES`: comma-separated addresses or CIDR networks of reverse
    /// proxies whose `X-Forwarded-For` names the client; empty trusts none.
    pub trusted_proxies: Vec<ipnet::IpNet>,
    /// `OVATION_ADMIN_PASSWORD`: the password of the `admin` user created on first start
    /// when there is no admin user; unset, a random one is printed once to the log.
    pub admin_password: Option<String>,
    /// `OVATION_SESSION_KEY`: signs and encrypts session cookies (64+ characters; every
    /// instance needs the same). Unset, a random key per process: sessions end on restart.
    pub session_key: Option<String>,
    /// `OVATION_READ_CACHE_MS`: how long a rendered top-N page or board description is
    /// reused (0: off).
    pub read_cache: Duration,
    /// `OVATION_EVENTS_INTERVAL_MS`: how often a watched top is read for its live
    /// subscribers (at most one `top` event per interval).
    pub events_interval: Duration,
    /// `OVATION_EVENTS_MAX_STREAMS`: how many live streams (API and pages) this instance
    /// holds open at once; one more is refused (503 `too_many_streams`) and the pages
    /// poll instead. 0 turns streams off.
    pub events_max_streams: usize,
    /// `OVATION_EVENTS_MAX_STREAMS_PER_IP`: how many of them one client address holds
    /// (an IPv6 client by its /64); one more is refused (429 `too_many_streams_from_ip`).
    pub events_max_streams_per_ip: usize,
    /// `OVATION_EVENTS_DASHBOARD_RESERVE`: streams of `OVATION_EVENTS_MAX_STREAMS` kept
    /// for signed-in dashboard sessions: the public and API streams stop this many short.
    pub events_dashboard_reserve: usize,
    /// `OVATION_EXPORTS_MAX`: ledger exports (NDJSON) running at once on this instance,
    /// each holding one SQL connection; one more is refused (503 `too_many_exports`).
    /// At least two below `OVATION_SQL_POOL`, so exports never take every connection.
    pub exports_max: usize,
    /// `OVATION_SQL_POOL`: SQL connections this instance keeps at most.
    pub sql_pool: u32,
    /// `OVATION_STALL_TIMEOUT_MS`: a connection whose client accepts none of the data
    /// waiting for it this long is closed (`TCP_USER_TIMEOUT`, Linux): a live subscriber
    /// that stopped reading is dropped, its connection and buffers freed; a ledger
    /// export whose reader takes nothing this long stops and frees its SQL connection.
    pub stall_timeout: Duration,
    /// `OVATION_JWKS_REFETCH_MS`: an identity provider's JWKS is fetched again for a
    /// token naming a key it does not hold at most this often, so a flood of made-up key
    /// ids cannot hammer the provider.
    pub jwks_refetch: Duration,
    /// `OVATION_COOKIE_SECURE`: mark cookies Secure (HTTPS only). Turn off only for local
    /// plain-HTTP use.
    pub cookie_secure: bool,
    /// `OVATION_CONFIG_CHECK_MS`: how often an instance reads the configuration version
    /// (reloading when it moved) and pings its notice connection.
    pub config_check: Duration,
    /// `OVATION_ARCHIVE_CHECK_MS`: how often an instance looks for closed buckets to
    /// archive (one instance at a time works).
    pub archive_check: Duration,
    /// `OVATION_LEDGER_DRAIN_MS`: how often an instance moves boards' ledger entries from
    /// Redis to SQL (one instance per board at a time) and looks at what waits.
    pub ledger_drain: Duration,
    /// `OVATION_LEAGUE_CHECK_MS`: how often an instance looks for seasons that are over
    /// and closes them (one instance per league at a time), and, in a task of its own,
    /// for webhook deliveries that are due.
    pub league_check: Duration,
    /// `OVATION_SESSION_IDLE_S`: a dashboard session ends after this long without a
    /// request.
    pub session_idle: Duration,
    /// `OVATION_SESSION_ABSOLUTE_S`: a dashboard session ends this long after sign-in,
    /// however active.
    pub session_absolute: Duration,
    /// `OVATION_ALLOW_EVICTION`: stay ready on a Redis whose `maxmemory-policy` evicts
    /// keys (which loses votes when memory runs out).
    pub allow_eviction: bool,
    /// `OVATION_WEBHOOK_ALLOW_PRIVATE`: let webhook deliveries connect to loopback,
    /// private, link-local and other non-public addresses (a receiver on the same
    /// network); off, only public addresses are reached.
    pub webhook_allow_private: bool,
    /// `OVATION_CORS_ORIGINS`: comma-separated origins (`https://shop.example`) whose web
    /// pages may read the API from a browser; empty allows none.
    pub cors_origins: Vec<String>,
    /// `OVATION_HELD_RETENTION_DAYS`: a flagged subject whose newest held vote is older
    /// than this, unreviewed, has its held votes dropped (and the drop audited).
    pub held_retention: Duration,
}

/// (setting, default), in the order `docs/reference/configuration.md` lists them (a test
/// holds the page to this list).
pub const DEFAULTS: &[(&str, &str)] = &[
    ("bind", "127.0.0.1:8080"),
    ("database_url", "sqlite://./data/ovation.db?mode=rwc"),
    ("redis_url", "redis://127.0.0.1:6379"),
    ("redis_cluster", ""),
    ("key_prefix", "ov:"),
    ("master_key", ""),
    ("redis_timeout_ms", "1000"),
    ("vote_group", "32"),
    ("idempotency_ttl_s", "86400"),
    ("workers", "0"),
    ("log", "info,sqlx=warn,sea_orm_migration=warn"),
    ("trusted_proxies", ""),
    ("admin_password", ""),
    ("session_key", ""),
    ("cookie_secure", "true"),
    ("read_cache_ms", "250"),
    ("events_interval_ms", "1000"),
    ("events_max_streams", "20000"),
    ("events_max_streams_per_ip", "20"),
    ("events_dashboard_reserve", "100"),
    ("stall_timeout_ms", "30000"),
    ("jwks_refetch_ms", "30000"),
    ("exports_max", "2"),
    ("sql_pool", "8"),
    ("config_check_ms", "2000"),
    ("archive_check_ms", "20000"),
    ("ledger_drain_ms", "250"),
    ("league_check_ms", "1000"),
    ("session_idle_s", "1800"),
    ("session_absolute_s", "43200"),
    ("allow_eviction", "false"),
    ("cors_origins", ""),
    ("webhook_allow_private", "false"),
    ("held_retention_days", "30"),
];

impl Settings {
    /// Reads settings from the process environment and the optional file.
    pub fn load() -> anyhow::Result<Self> {
        let env: HashMap<String, String> = std::env::vars().collect();
        Self::from_sources(&env)
    }

    /// Reads settings from `env` (variable -> value) and the file it points to.
    pub fn from_sources(env: &HashMap<String, String>) -> anyhow::Result<Self> {
        let path = env
            .get("OVATION_CONFIG")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("ovation.toml"));
        let explicit = env.contains_key("OVATION_CONFIG");
        let file = read_file(&path, explicit)?;

        // Each value remembers where it came from, so an error can name its source.
        let mut values: HashMap<&str, (String, String)> = HashMap::new();
        for (name, default) in DEFAULTS {
            values.insert(name, ((*default).to_owned(), format!("the default {name}")));
        }
        for (key, value) in file {
            let Some((name, _)) = DEFAULTS.iter().find(|(n, _)| *n == key) else {
                bail!("{}: unknown setting {key:?}", path.display());
            };
            values.insert(name, (value, format!("{key} in {}", path.display())));
        }
        for (name, _) in DEFAULTS {
            let var = format!("OVATION_{}", name.to_uppercase());
            if let Some(value) = env.get(&var) {
                values.insert(name, (value.clone(), var));
            }
        }
        let get = |name: &str| values.get(name).cloned().unwrap_or_default();

        let (bind, src) = get("bind");
        let bind = bind.parse().with_context(|| {
            format!("{src}: {bind:?} is not a socket address like 127.0.0.1:8080")
        })?;
        let (database_url, src) = get("database_url");
        if !["sqlite:", "postgres:", "postgresql:", "mysql:", "mariadb:"]
            .iter()
            .any(|s| database_url.starts_with(s))
        {
            bail!("{src}: want a sqlite://, postgres:// or mysql:// URL");
        }
        let database_url = database_url.replacen("mariadb:", "mysql:", 1);
        let redis_url = |(url, src): (String, String)| {
            if url.starts_with("redis://")
                || url.starts_with("rediss://")
                || url.starts_with("unix://")
            {
                Ok(url)
            } else {
                bail!("{src}: want a redis:// URL, not {url:?}")
            }
        };
        let (seeds, src) = get("redis_cluster");
        let seeds = seeds
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| redis_url((s.to_owned(), src.clone())))
            .collect::<anyhow::Result<Vec<_>>>()?;
        let redis = if seeds.is_empty() {
            RedisTarget::Single(redis_url(get("redis_url"))?)
        } else {
            RedisTarget::Cluster(seeds)
        };
        let (key_prefix, src) = get("key_prefix");
        if key_prefix.len() > 64
            || !key_prefix
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b':' | b'-'))
        {
            bail!("{src}: want at most 64 characters of [A-Za-z0-9_.:-]");
        }
        let (master_key, src) = get("master_key");
        if !master_key.is_empty() && master_key.len() < 16 {
            bail!("{src}: a master key needs at least 16 characters");
        }
        let redis_timeout =
            Duration::from_millis(parse_number(get("redis_timeout_ms"), 50, 60_000)?);
        let vote_group = parse_number(get("vote_group"), 1, 100)? as usize;
        let idempotency_ttl =
            Duration::from_secs(parse_number(get("idempotency_ttl_s"), 1, 30 * 86_400)?);
        let workers = match parse_number(get("workers"), 0, 256)? {
            0 => std::thread::available_parallelism().map_or(1, usize::from),
            n => n as usize,
        };
        let (proxies, src) = get("trusted_proxies");
        let trusted_proxies = proxies
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(|p| {
                p.parse::<ipnet::IpNet>()
                    .or_else(|_| p.parse::<std::net::IpAddr>().map(ipnet::IpNet::from))
                    .with_context(|| format!("{src}: {p:?} is not an IP address or CIDR network"))
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        let (admin_password, src) = get("admin_password");
        if !admin_password.is_empty() && admin_password.len() < 8 {
            bail!("{src}: an admin password needs at least 8 characters");
        }
        let (session_key, src) = get("session_key");
        if !session_key.is_empty() && session_key.len() < 64 {
            bail!("{src}: a session key needs at least 64 characters");
        }
        let cookie_secure = parse_bool(get("cookie_secure"))?;
        let allow_eviction = parse_bool(get("allow_eviction"))?;
        let webhook_allow_private = parse_bool(get("webhook_allow_private"))?;
        let (origins, src) = get("cors_origins");
        let cors_origins = origins
            .split(',')
            .map(str::trim)
            .filter(|o| !o.is_empty())
            .map(|o| {
                crate::domain::board::parse_origin(o)
                    .map_err(|e| anyhow::anyhow!("{src}: {}", e.message))
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        let read_cache = Duration::from_millis(parse_number(get("read_cache_ms"), 0, 60_000)?);
        let events_interval =
            Duration::from_millis(parse_number(get("events_interval_ms"), 50, 60_000)?);
        let events_max_streams =
            usize::try_from(parse_number(get("events_max_streams"), 0, 1_000_000)?)?;
        let events_max_streams_per_ip = usize::try_from(parse_number(
            get("events_max_streams_per_ip"),
            1,
            1_000_000,
        )?)?;
        let (_, reserve_src) = get("events_dashboard_reserve");
        let events_dashboard_reserve =
            usize::try_from(parse_number(get("events_dashboard_reserve"), 0, 1_000_000)?)?;
        if events_max_streams > 0 && events_dashboard_reserve >= events_max_streams {
            bail!(
                "{reserve_src}: the dashboard's reserve ({events_dashboard_reserve}) must be \
                 below OVATION_EVENTS_MAX_STREAMS ({events_max_streams})"
            );
        }
        let sql_pool = u32::try_from(parse_number(get("sql_pool"), 4, 1000)?)?;
        let (_, exports_src) = get("exports_max");
        let exports_max = usize::try_from(parse_number(get("exports_max"), 1, 1000)?)?;
        if exports_max + 2 > sql_pool as usize {
            bail!(
                "{exports_src}: {exports_max} exports would leave fewer than two of \
                 OVATION_SQL_POOL's {sql_pool} connections for the rest"
            );
        }
        let stall_timeout =
            Duration::from_millis(parse_number(get("stall_timeout_ms"), 1000, 600_000)?);
        let jwks_refetch =
            Duration::from_millis(parse_number(get("jwks_refetch_ms"), 100, 3_600_000)?);
        let config_check =
            Duration::from_millis(parse_number(get("config_check_ms"), 50, 600_000)?);
        let archive_check =
            Duration::from_millis(parse_number(get("archive_check_ms"), 50, 600_000)?);
        let league_check =
            Duration::from_millis(parse_number(get("league_check_ms"), 50, 600_000)?);
        let ledger_drain = Duration::from_millis(parse_number(get("ledger_drain_ms"), 10, 60_000)?);
        let session_idle = Duration::from_secs(parse_number(get("session_idle_s"), 1, 86_400)?);
        let session_absolute =
            Duration::from_secs(parse_number(get("session_absolute_s"), 1, 30 * 86_400)?);
        let held_retention =
            Duration::from_secs(parse_number(get("held_retention_days"), 1, 3650)? * 86_400);
        Ok(Self {
            bind,
            database_url,
            redis,
            key_prefix,
            master_key: (!master_key.is_empty()).then_some(master_key),
            redis_timeout,
            vote_group,
            idempotency_ttl,
            workers,
            log: get("log").0,
            trusted_proxies,
            admin_password: (!admin_password.is_empty()).then_some(admin_password),
            session_key: (!session_key.is_empty()).then_some(session_key),
            cookie_secure,
            read_cache,
            events_interval,
            events_max_streams,
            events_max_streams_per_ip,
            events_dashboard_reserve,
            exports_max,
            sql_pool,
            stall_timeout,
            jwks_refetch,
            config_check,
            archive_check,
            ledger_drain,
            league_check,
            session_idle,
            session_absolute,
            allow_eviction,
            webhook_allow_private,
            cors_origins,
            held_retention,
        })
    }
}

fn parse_bool((raw, src): (String, String)) -> anyhow::Result<bool> {
    match raw.as_str() {
        "true" | "1" => Ok(true),
        "false" | "0" => Ok(false),
        other => bail!("{src}: {other:?} is not true or false"),
    }
}

fn parse_number((raw, src): (String, String), min: u64, max: u64) -> anyhow::Result<u64> {
    match raw.parse::<u64>() {
        Ok(n) if (min..=max).contains(&n) => Ok(n),
        _ => bail!("{src}: {raw:?} is not a whole number between {min} and {max}"),
    }
}

fn read_file(path: &Path, required: bool) -> anyhow::Result<Vec<(String, String)>> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !required => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("failed to read {}", path.display())),
    };
    let table: toml::Table =
        toml::from_str(&text).with_context(|| format!("failed to parse {}", path.display()))?;
    table
        .into_iter()
        .map(|(key, value)| {
            let value = match value {
                toml::Value::String(s) => s,
                toml::Value::Integer(i) => i.to_string(),
                toml::Value::Boolean(b) => b.to_string(),
                other => bail!(
                    "{}: {key} must be a string, a number or a boolean, not a {}",
                    path.display(),
                    other.type_str()
                ),
            };
            Ok((key, value))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        let mut map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        map.entry("OVATION_CONFIG".into())
            .or_insert_with(|| "/nonexistent/ovation.toml".into());
        map
    }

    #[test]
    fn defaults_apply_without_file_or_env() {
        let s = Settings::from_sources(&HashMap::new()).unwrap();
        assert_eq!(s.bind.to_string(), "127.0.0.1:8080");
        assert_eq!(s.database_url, "sqlite://./data/ovation.db?mode=rwc");
        assert_eq!(s.key_prefix, "ov:");
        assert_eq!(s.master_key, None);
        assert_eq!(s.idempotency_ttl, Duration::from_secs(86_400));
        assert_eq!(s.vote_group, crate::store::redis::DEFAULT_VOTE_GROUP);
    }

    #[test]
    fn an_explicit_config_file_must_exist() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("absent.toml").display().to_string();
        let err = Settings::from_sources(&env(&[("OVATION_CONFIG", &path)])).unwrap_err();
        assert!(err.to_string().contains("failed to read"), "{err}");
    }

    #[test]
    fn file_then_environment_override_defaults() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ovation.toml");
        std::fs::write(
            &path,
            "bind = \"0.0.0.0:9000\"\nkey_prefix = \"file:\"\nredis_timeout_ms = 300\n",
        )
        .unwrap();
        let path = path.display().to_string();
        let s = Settings::from_sources(&env(&[
            ("OVATION_CONFIG", &path),
            ("OVATION_KEY_PREFIX", "env:"),
        ]))
        .unwrap();
        assert_eq!(s.bind.to_string(), "0.0.0.0:9000");
        assert_eq!(s.key_prefix, "env:");
        assert_eq!(s.redis_timeout, Duration::from_millis(300));
        assert_eq!(
            s.redis,
            RedisTarget::Single("redis://127.0.0.1:6379".to_owned())
        );
    }

    #[test]
    fn cluster_seed_nodes_replace_the_url() {
        let cluster = |seeds: &str| {
            Settings::from_sources(&HashMap::from([(
                "OVATION_REDIS_CLUSTER".to_owned(),
                seeds.to_owned(),
            )]))
        };
        let s = cluster("redis://10.0.0.1:7000, redis://10.0.0.2:7000").unwrap();
        assert_eq!(
            s.redis,
            RedisTarget::Cluster(vec![
                "redis://10.0.0.1:7000".to_owned(),
                "redis://10.0.0.2:7000".to_owned()
            ])
        );
        let err = cluster("10.0.0.1:7000").unwrap_err();
        assert_eq!(
            err.to_string(),
            "OVATION_REDIS_CLUSTER: want a redis:// URL, not \"10.0.0.1:7000\""
        );
    }

    #[test]
    fn a_bad_value_names_its_variable() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ovation.toml");
        std::fs::write(&path, "").unwrap();
        let path = path.display().to_string();
        let err = Settings::from_sources(&env(&[
            ("OVATION_CONFIG", &path),
            ("OVATION_BIND", "nowhere"),
        ]))
        .unwrap_err();
        assert!(err.to_string().starts_with("OVATION_BIND:"), "{err}");
        let err = Settings::from_sources(&env(&[
            ("OVATION_CONFIG", &path),
            ("OVATION_REDIS_TIMEOUT_MS", "0"),
        ]))
        .unwrap_err();
        assert!(
            err.to_string().starts_with("OVATION_REDIS_TIMEOUT_MS:"),
            "{err}"
        );
        let err = Settings::from_sources(&env(&[
            ("OVATION_CONFIG", &path),
            ("OVATION_DATABASE_URL", "oracle://x"),
        ]))
        .unwrap_err();
        assert!(
            err.to_string().starts_with("OVATION_DATABASE_URL:"),
            "{err}"
        );
    }

    #[test]
    fn trusted_proxies_take_addresses_and_networks() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ovation.toml");
        std::fs::write(&path, "trusted_proxies = \"10.0.0.0/8, 127.0.0.1,::1\"\n").unwrap();
        let path = path.display().to_string();
        let s = Settings::from_sources(&env(&[("OVATION_CONFIG", &path)])).unwrap();
        let shown: Vec<String> = s.trusted_proxies.iter().map(|n| n.to_string()).collect();
        assert_eq!(shown, ["10.0.0.0/8", "127.0.0.1/32", "::1/128"]);
        let err = Settings::from_sources(&env(&[
            ("OVATION_CONFIG", &path),
            ("OVATION_TRUSTED_PROXIES", "10.0.0.0/33"),
        ]))
        .unwrap_err();
        assert!(
            err.to_string().starts_with("OVATION_TRUSTED_PROXIES:"),
            "{err}"
        );
    }

    #[test]
    fn a_file_takes_booleans_as_toml_writes_them() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ovation.toml");
        std::fs::write(&path, "cookie_secure = false\nallow_eviction = true\n").unwrap();
        let path = path.display().to_string();
        let s = Settings::from_sources(&env(&[("OVATION_CONFIG", &path)])).unwrap();
        assert!(!s.cookie_secure);
        assert!(s.allow_eviction);
    }

    #[test]
    fn a_bad_file_value_names_its_key_and_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ovation.toml");
        std::fs::write(&path, "workers = \"many\"\n").unwrap();
        let path = path.display().to_string();
        let err = Settings::from_sources(&env(&[("OVATION_CONFIG", &path)])).unwrap_err();
        assert!(err.to_string().starts_with("workers in "), "{err}");
    }
}
