//! The `ovation` binary's admin commands against the same SQL and Redis as a running app.

use std::io::Write;
use std::process::{Command, Stdio};

use reqwest::StatusCode;
use serde_json::json;

use crate::harness::{TestApp, client_builder, shared_redis};

pub fn ovation(app: &TestApp, args: &[&str], stdin: &str) -> std::process::Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ovation"))
        .args(args)
        .env("OVATION_CONFIG", "/dev/null")
        .env("OVATION_DATABASE_URL", &app.database.url)
        .env("OVATION_REDIS_URL", shared_redis().url())
        .env("OVATION_KEY_PREFIX", format!("{}:", app.prefix))
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
         cli-rc: 5 entries, 5 buckets compared, 0 not in Redis any more, 1 mismatches, 0 repaired\n"
    );
    let out = ovation(&app, &["recount", "cli-rc", "--repair"], "");
    assert!(out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stdout).ends_with("1 mismatches, 1 repaired\n"),
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
