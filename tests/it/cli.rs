//! The `ovation` binary's admin commands against the same SQL and Redis as a running app.

use std::io::Write;
use std::process::{Command, Stdio};

use reqwest::StatusCode;
use sea_orm::{EntityTrait, PaginatorTrait};
use serde_json::json;

use ovation::store::redis::RedisTarget;

use crate::harness::{MASTER_KEY, TestApp, client_builder, shared_target};

pub fn ovation(app: &TestApp, args: &[&str], stdin: &str) -> std::process::Output {
    ovation_on(&app.database.url, &app.prefix, args, stdin)
}

/// The variable that points the binary at `target`, and its value.
fn redis_env(target: &RedisTarget) -> (&'static str, String) {
    match target {
        RedisTarget::Single(url) => ("OVATION_REDIS_URL", url.clone()),
        RedisTarget::Cluster(seeds) => ("OVATION_REDIS_CLUSTER", seeds.join(",")),
    }
}

/// The binary's command `args` on the SQL database `url` and the shared backend (one
/// Redis or the cluster) under `prefix`, fed `stdin`.
fn ovation_on(url: &str, prefix: &str, args: &[&str], stdin: &str) -> std::process::Output {
    let (redis_var, redis) = redis_env(&shared_target());
    let mut child = Command::new(env!("CARGO_BIN_EXE_ovation"))
        .args(args)
        .env("OVATION_CONFIG", "/dev/null")
        .env("OVATION_DATABASE_URL", url)
        .env(redis_var, redis)
        .env("OVATION_KEY_PREFIX", format!("{prefix}:"))
        .env("OVATION_LOG", "error")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

#[tokio::test]
async fn users_added_on_the_command_line_can_sign_in() {
    let app = TestApp::spawn().await;
    let out = ovation(&app, &["user", "add", "ops"], "ops-password-1\n");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = ovation(&app, &["user", "add", "ops"], "ops-password-1\n");
    assert_eq!(out.status.code(), Some(1), "a second ops is refused");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim_end(),
        "error: user ops exists"
    );
    let out = ovation(&app, &["user", "passwd", "ops"], "short\n");
    assert_eq!(out.status.code(), Some(1), "too short");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim_end(),
        "error: a password needs at least 8 characters"
    );
    let out = ovation(&app, &["user", "passwd", "ops"], "ops-password-2\n");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let client = client_builder()
        .cookie_store(true)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let login = client
        .get(format!("{}/admin/login", app.base))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let marker = r#"name="_csrf" value=""#;
    let start = login.find(marker).unwrap() + marker.len();
    let csrf = login[start..].split('"').next().unwrap();
    for (password, expected) in [
        ("ops-password-1", StatusCode::UNAUTHORIZED),
        ("ops-password-2", StatusCode::SEE_OTHER),
    ] {
        let resp = client
            .post(format!("{}/admin/login", app.base))
            .form(&[("_csrf", csrf), ("username", "ops"), ("password", password)])
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), expected, "{password}");
    }
}

#[tokio::test]
async fn import_checks_the_whole_file_then_writes_every_member() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "cli", "title": "CLI"})).await;
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.csv");
    std::fs::write(
        &bad,
        "id,name,image_url,initial_votes,multiplier\nm1,A,,1,\nbad id,B,,1,\n",
    )
    .unwrap();
    let out = ovation(&app, &["import", "cli", bad.to_str().unwrap()], "");
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("line 3"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let good = dir.path().join("good.csv");
    let mut csv = String::from("id,name,image_url,initial_votes,multiplier\n");
    for i in 0..12_000 {
        csv.push_str(&format!("m{i},Member {i},,{},\n", i % 3));
    }
    std::fs::write(&good, csv).unwrap();
    let out = ovation(&app, &["import", "cli", good.to_str().unwrap()], "");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("imported 12000 members into cli"));
    // The running app hears about it and serves the members (initial votes included).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        let (_, top) = app.get("/api/v1/boards/cli/top?period=all&limit=1").await;
        if top["total_members"] == 8000 {
            assert_eq!(top["entries"][0]["score"], 2);
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{top}");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn recount_on_the_command_line_reports_and_repairs() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "cli-rc", "title": "Recount", "membership": "open"}))
        .await;
    for i in 0..5 {
        app.vote("cli-rc", json!({"member": "m1", "voter": format!("u{i}")}))
            .await;
    }
    let mut raw = crate::harness::RawRedis::connect().await;
    // The first board of a fresh database has id 1.
    let tampered = format!("{}:{{b:1}}:z:r:all:all", app.prefix);
    let _: () = raw
        .query(redis::cmd("ZADD").arg(&tampered).arg(9).arg("m1"))
        .await;
    let out = ovation(&app, &["recount", "cli-rc"], "");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "all all real: m1 live 9, recounted 5\n\
         cli-rc: 5 entries, 5 buckets compared, 0 not in Redis any more, 1 mismatches, 0 repaired, 0 seq lost\n"
    );
    let out = ovation(&app, &["recount", "cli-rc", "--repair"], "");
    assert!(out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stdout).ends_with("1 mismatches, 1 repaired, 0 seq lost\n"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let (_, read) = app
        .get("/api/v1/boards/cli-rc/members/m1?period=all&view=real")
        .await;
    assert_eq!(read["score"], 5);
    let out = ovation(&app, &["recount", "nope"], "");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim_end(),
        "error: no board nope"
    );
}

/// An `ovation serve` process of its own: a life of a deployment that a test kills (by
/// dropping it) before starting another.
pub(crate) struct Served {
    pub child: std::process::Child,
    pub base: String,
    pub client: reqwest::Client,
}

/// Killed with SIGKILL when dropped: a test that fails, or ends, leaves no server behind.
impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Served {
    /// The binary served on the SQL database `url` and the shared backend.
    async fn start(url: &str, prefix: &str) -> Self {
        Self::start_with(url, &shared_target(), prefix).await
    }

    /// The same on the Redis at `redis_url`.
    pub async fn start_on(url: &str, redis_url: &str, prefix: &str) -> Self {
        Self::start_with(url, &RedisTarget::Single(redis_url.to_owned()), prefix).await
    }

    async fn start_with(url: &str, redis: &RedisTarget, prefix: &str) -> Self {
        let port = crate::harness::free_port();
        let (redis_var, redis) = redis_env(redis);
        let child = Command::new(env!("CARGO_BIN_EXE_ovation"))
            .env("OVATION_CONFIG", "/dev/null")
            .env("OVATION_BIND", format!("127.0.0.1:{port}"))
            .env("OVATION_DATABASE_URL", url)
            .env(redis_var, redis)
            .env("OVATION_KEY_PREFIX", format!("{prefix}:"))
            .env("OVATION_MASTER_KEY", MASTER_KEY)
            .env("OVATION_ADMIN_PASSWORD", "served-admin-password")
            .env("OVATION_LEDGER_DRAIN_MS", "100")
            .env("OVATION_LOG", "error")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let served = Self {
            child,
            base: format!("http://127.0.0.1:{port}"),
            client: client_builder().build().unwrap(),
        };
        for _ in 0..200 {
            if let Ok(resp) = served
                .client
                .get(format!("{}/readyz", served.base))
                .send()
                .await
                && resp.status() == StatusCode::OK
            {
                return served;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        panic!("ovation serve did not become ready");
    }

    /// Creates the board `slug` (titled so) open to any member.
    pub async fn open_board(&self, slug: &str) {
        self.call(
            reqwest::Method::POST,
            "/api/v1/admin/boards",
            Some(json!({"slug": slug, "title": slug, "membership": "open"})),
        )
        .await;
    }

    pub async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<serde_json::Value>,
    ) -> serde_json::Value {
        let mut req = self
            .client
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(MASTER_KEY);
        if let Some(body) = body {
            req = req.json(&body);
        }
        let resp = req.send().await.unwrap();
        assert!(resp.status().is_success(), "{path}: {}", resp.status());
        resp.json().await.unwrap()
    }
}

/// The `seq` of every entry of `board`'s ledger in SQL, once nothing waits in Redis, as
/// the server at `base` answers.
pub(crate) async fn drained_seqs(client: &reqwest::Client, base: &str, board: &str) -> Vec<i64> {
    for _ in 0..300 {
        let page: serde_json::Value = client
            .get(format!(
                "{base}/api/v1/admin/boards/{board}/ledger?limit=1000"
            ))
            .bearer_auth(MASTER_KEY)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if page["pending"] == 0 {
            return page["entries"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e["seq"].as_i64().unwrap())
                .collect();
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("the ledger of {board} was not drained");
}

/// Votes `n` times on `board` of the server at `base`, as voters `<tag>0…`.
pub(crate) async fn votes(client: &reqwest::Client, base: &str, board: &str, tag: &str, n: usize) {
    for i in 0..n {
        let resp = client
            .post(format!("{base}/api/v1/boards/{board}/votes"))
            .bearer_auth(MASTER_KEY)
            .json(&json!({"member": "m1", "voter": format!("{tag}{i}")}))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::OK);
    }
}

/// A server stopped with SIGTERM leaves its SQLite database whole in its file: its
/// connections close, the last one writes the write-ahead log into the file and removes
/// it, so the file copied alone holds every ledger row. A command of the command line
/// (`backup`) leaves no write-ahead log behind either.
#[tokio::test(flavor = "multi_thread")]
async fn a_stopped_server_leaves_its_sqlite_file_whole() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ovation.db");
    let url = format!("sqlite://{}?mode=rwc", file.display());
    let wal = dir.path().join("ovation.db-wal");
    let shm = dir.path().join("ovation.db-shm");
    let prefix = format!("whole{}", std::process::id());
    let mut served = Served::start(&url, &prefix).await;
    served.open_board("whole").await;
    votes(&served.client, &served.base, "whole", "v", 20).await;
    assert_eq!(
        drained_seqs(&served.client, &served.base, "whole").await,
        (1..=20).collect::<Vec<_>>()
    );
    assert!(wal.exists(), "a running server writes through the log");

    let stopped = Command::new("kill")
        .args(["-TERM", &served.child.id().to_string()])
        .status()
        .unwrap();
    assert!(stopped.success());
    let mut exit = None;
    for _ in 0..200 {
        exit = served.child.try_wait().unwrap();
        if exit.is_some() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(exit.map(|e| e.code()), Some(Some(0)), "the server stopped");
    assert_eq!((wal.exists(), shm.exists()), (false, false));

    let alone = tempfile::tempdir().unwrap();
    let copy = alone.path().join("ovation.db");
    std::fs::copy(&file, &copy).unwrap();
    let db = ovation::store::sql::connect(&format!("sqlite://{}", copy.display()), 1)
        .await
        .unwrap();
    let rows = ovation::store::sql::entities::ledger_record::Entity::find()
        .count(&db)
        .await
        .unwrap();
    assert_eq!(rows, 20);

    let backup = alone.path().join("backup.db");
    let out = ovation_on(&url, &prefix, &["backup", backup.to_str().unwrap()], "");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!((wal.exists(), shm.exists()), (false, false));
}

/// Each thread of process `pid`: its name and its nice value.
#[cfg(target_os = "linux")]
fn thread_nices(pid: u32) -> Vec<(String, i32)> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .map(|task| name_and_nice(&task.unwrap().path().join("stat")))
        .collect()
}

/// The name and nice value in a `/proc` `stat` file: `pid (name) state ppid …`, where the
/// name may hold spaces and nice is the 19th field.
#[cfg(target_os = "linux")]
fn name_and_nice(stat: &std::path::Path) -> (String, i32) {
    let stat = std::fs::read_to_string(stat).unwrap();
    let (head, rest) = stat.rsplit_once(')').unwrap();
    let name = head.split_once('(').unwrap().1.to_owned();
    (
        name,
        rest.split_whitespace().nth(16).unwrap().parse().unwrap(),
    )
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread")]
async fn the_drain_and_its_sqlite_work_run_at_background_priority() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!(
        "sqlite://{}?mode=rwc",
        dir.path().join("ovation.db").display()
    );
    let prefix = format!("nice{}", std::process::id());
    let served = Served::start(&url, &prefix).await;
    served.open_board("nice").await;
    votes(&served.client, &served.base, "nice", "v", 5).await;
    assert_eq!(
        drained_seqs(&served.client, &served.base, "nice").await,
        (1..=5).collect::<Vec<_>>()
    );
    // The server starts at the nice of this process's main thread.
    let own = name_and_nice(std::path::Path::new("/proc/self/stat")).1;
    let background = ovation::engine::background::lowered(own);
    let threads = thread_nices(served.child.id());
    let nices_of = |prefix: &str| -> Vec<i32> {
        let mut nices: Vec<i32> = threads
            .iter()
            .filter(|(name, _)| name.starts_with(prefix))
            .map(|(_, nice)| *nice)
            .collect();
        nices.sort_unstable();
        nices.dedup();
        nices
    };
    assert_eq!(nices_of("ovation-drain"), vec![background]);
    // The pool that serves requests runs at the process's priority, the drain's below
    // (the same where the process already runs at the lowest).
    let mut pools = vec![own, background];
    pools.dedup();
    assert_eq!(nices_of("sqlx-sqlite"), pools);
    assert_eq!(nices_of("actix-server"), vec![own]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sql_ledger_restored_behind_redis_is_reported_and_never_renumbered() {
    let database = std::sync::Arc::new(crate::harness::TestDatabase::create().await);
    let prefix = format!("drill{}", std::process::id());
    let first = Served::start(&database.url, &prefix).await;
    first.open_board("drill").await;
    votes(&first.client, &first.base, "drill", "a", 10).await;
    assert_eq!(
        drained_seqs(&first.client, &first.base, "drill").await,
        (1..=10).collect::<Vec<_>>()
    );
    // An online backup of the SQLite file, then more votes, moved to SQL and trimmed
    // from Redis.
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("backup.db");
    let out = ovation_on(
        &database.url,
        &prefix,
        &["backup", copy.to_str().unwrap()],
        "",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = ovation_on(
        &database.url,
        &prefix,
        &["backup", copy.to_str().unwrap()],
        "",
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "a backup never overwrites a file"
    );
    votes(&first.client, &first.base, "drill", "b", 10).await;
    assert_eq!(
        drained_seqs(&first.client, &first.base, "drill").await,
        (1..=20).collect::<Vec<_>>()
    );
    // SQL restored to the backup, and the service started again on it.
    drop(first);
    let file = database
        .url
        .strip_prefix("sqlite://")
        .and_then(|u| u.split('?').next())
        .unwrap()
        .to_owned();
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{file}{suffix}"));
    }
    std::fs::copy(&copy, &file).unwrap();
    let restored = TestApp::spawn_with(crate::harness::Options {
        redis: shared_target(),
        prefix: prefix.clone(),
        database: Some(database.clone()),
        ..crate::harness::Options::default()
    })
    .await;
    // Found at start-up, before any new vote: which board, which seq.
    let (status, ready) = restored.get("/readyz").await;
    assert_eq!(status, StatusCode::OK, "{ready}");
    assert_eq!(
        ready["ledger"]["gaps"],
        json!([{"board": "drill", "instance": "", "from": 11, "to": 20}])
    );
    let metrics = restored.metrics().await;
    assert!(
        metrics.contains("ovation_ledger_lost_entries{board=\"drill\"} 10"),
        "{metrics}"
    );
    // New entries are numbered after the lost ones: no seq is given twice.
    votes(&restored.client, &restored.base, "drill", "c", 5).await;
    let mut expected: Vec<i64> = (1..=10).collect();
    expected.extend(21..=25);
    assert_eq!(
        drained_seqs(&restored.client, &restored.base, "drill").await,
        expected
    );
    let (status, recount) = restored
        .post("/api/v1/admin/boards/drill/recount", json!({}))
        .await;
    assert_eq!(status, StatusCode::OK, "{recount}");
    assert_eq!(recount["gaps"], json!([{"from": 11, "to": 20}]));
    let out = ovation(&restored, &["recount", "drill"], "");
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{printed}");
    assert!(
        printed.contains("seq 11–20: lost from SQL after Redis had trimmed them"),
        "{printed}"
    );
}
