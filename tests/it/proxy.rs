//! Two instances behind nginx, configured as `deploy/nginx/ovation.conf` says (its
//! addresses and ports replaced): votes count once, a dashboard session works on both
//! instances, a live stream flows unbuffered, and a rule per `ip` counts the client's
//! address, not the proxy's.

use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::harness::{ADMIN_PASSWORD, MASTER_KEY, Options, TestApp, client_builder, free_port};

/// nginx as `scripts/install-deps.sh --browser` unpacks it from Debian's package.
fn nginx_binary() -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/nginx/usr/sbin/nginx");
    assert!(
        path.exists(),
        "{} is missing: `scripts/install-deps.sh --browser` (run by make test) unpacks it",
        path.display()
    );
    path
}

/// nginx running `deploy/nginx/ovation.conf` in front of `upstreams`, listening on
/// `listen`, connecting to the instances from 127.0.0.1: one process, without a master,
/// so that killing it leaves no worker behind.
struct Nginx {
    child: std::process::Child,
    _dir: tempfile::TempDir,
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Nginx {
    fn start(upstreams: &[&str], listen: &str) -> Self {
        let shipped = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/nginx/ovation.conf"),
        )
        .unwrap();
        let mut servers = String::new();
        for upstream in upstreams {
            servers.push_str(&format!("    server {upstream};\n"));
        }
        let site: String = shipped
            .replace(
                "    server ovation-1:8080;\n    server ovation-2:8080;\n",
                &servers,
            )
            .replace("listen 80;", &format!("listen {listen};"));
        assert!(site.contains(&servers) && site.contains(listen), "{site}");
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().display();
        let conf = format!(
            "daemon off;\nmaster_process off;\npid {d}/nginx.pid;\nerror_log {d}/error.log warn;\nevents {{}}\n\
             http {{\n  access_log off;\n  client_body_temp_path {d}/body;\n  \
             proxy_temp_path {d}/proxy;\n  fastcgi_temp_path {d}/fastcgi;\n  \
             uwsgi_temp_path {d}/uwsgi;\n  scgi_temp_path {d}/scgi;\n{site}\n}}\n"
        );
        std::fs::write(dir.path().join("nginx.conf"), conf).unwrap();
        let child = std::process::Command::new(nginx_binary())
            .arg("-p")
            .arg(dir.path())
            .arg("-c")
            .arg(dir.path().join("nginx.conf"))
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        Self { child, _dir: dir }
    }
}

/// A client that connects from `from` (a loopback address of its own), keeping
/// cookies.
fn client_from(from: &str) -> reqwest::Client {
    client_builder()
        .local_address(from.parse::<IpAddr>().unwrap())
        .cookie_store(true)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

/// The CSRF token of the first form of `page`.
fn csrf(page: &str) -> String {
    let marker = r#"name="_csrf" value=""#;
    let start = page.find(marker).expect("a form") + marker.len();
    page[start..].split('"').next().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn two_instances_behind_the_shipped_nginx_configuration_serve_as_one() {
    let first = TestApp::spawn_with(Options {
        trusted_proxies: vec!["127.0.0.1/32".parse().unwrap()],
        session_key: Some("k".repeat(64)),
        ..Options::default()
    })
    .await;
    let second = TestApp::spawn_with(Options {
        prefix: first.prefix.clone(),
        database: Some(Arc::clone(&first.database)),
        trusted_proxies: vec!["127.0.0.1/32".parse().unwrap()],
        session_key: Some("k".repeat(64)),
        ..Options::default()
    })
    .await;
    let upstreams: Vec<String> = [&first, &second]
        .iter()
        .map(|app| app.base.trim_start_matches("http://").to_owned())
        .collect();
    let listen = format!("127.0.0.2:{}", free_port());
    let _nginx = Nginx::start(&[&upstreams[0], &upstreams[1]], &listen);
    let base = format!("http://{listen}");
    let client = client_from("127.0.0.3");
    let mut ready = false;
    for _ in 0..100 {
        if let Ok(resp) = client.get(format!("{base}/readyz")).send().await
            && resp.status() == StatusCode::OK
        {
            ready = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(ready, "nginx did not answer");
    first
        .board(json!({"slug": "gate", "title": "Gate", "membership": "open", "public_page": true}))
        .await;
    let (status, _) = first
        .post(
            "/api/v1/admin/boards/gate/rules",
            json!({"name": "two per address", "dimensions": ["ip"], "window": "day", "limit": 2}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED);
    // The second instance learns of the rule by the configuration's notice: the votes
    // below may reach either instance, so both must know it first.
    let mut known = false;
    for _ in 0..100 {
        let (_, rules) = second.get("/api/v1/admin/boards/gate/rules").await;
        if rules["rules"].as_array().is_some_and(|r| r.len() == 1) {
            known = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(known, "the second instance never saw the rule");
    let vote = |client: &reqwest::Client, body: Value| {
        client
            .post(format!("{base}/api/v1/boards/gate/votes"))
            .bearer_auth(MASTER_KEY)
            .header("X-Forwarded-For", "198.51.100.66")
            .json(&body)
            .send()
    };

    // 1. A vote retried through the proxy (so through either instance) counts once.
    for _ in 0..4 {
        let resp = vote(
            &client,
            json!({"member": "m1", "idempotency_key": "gate-1"}),
        )
        .await
        .unwrap();
        assert_eq!(resp.status(), StatusCode::OK);
    }
    let (_, top) = second
        .get("/api/v1/boards/gate/top?period=all&view=real")
        .await;
    assert_eq!(top["entries"][0]["score"], 1, "{top}");

    // 2. The rule per ip counts the client's address (127.0.0.3), not the proxy's nor
    // one the client wrote in X-Forwarded-For: one more vote passes, then it refuses;
    // another client's address still votes.
    let resp = vote(&client, json!({"member": "m1"})).await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    let resp = vote(&client, json!({"member": "m1"})).await.unwrap();
    assert_eq!(resp.status(), StatusCode::TOO_MANY_REQUESTS);
    let other = client_from("127.0.0.4");
    let resp = vote(&other, json!({"member": "m1"})).await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);

    // 3. A dashboard session signed in through the proxy works on both instances.
    let login = client
        .get(format!("{base}/admin/login"))
        .send()
        .await
        .unwrap();
    let token = csrf(&login.text().await.unwrap());
    let resp = client
        .post(format!("{base}/admin/login"))
        .form(&[
            ("_csrf", token.as_str()),
            ("username", "admin"),
            ("password", ADMIN_PASSWORD),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    for _ in 0..6 {
        let resp = client
            .get(format!("{base}/admin/boards"))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::OK, "signed in on both instances");
    }

    // 4. A live stream flows through the proxy at once: its first top, then a change.
    let mut stream = client
        .get(format!(
            "{base}/api/v1/boards/gate/events?period=all&view=real"
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), StatusCode::OK);
    let mut seen = String::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while !seen.contains("\"score\":4") {
        if seen.contains("event: top") && !seen.contains("vote sent") {
            seen.push_str("vote sent");
            let resp = vote(&other, json!({"member": "m1"})).await.unwrap();
            assert_eq!(resp.status(), StatusCode::OK);
        }
        let chunk = tokio::time::timeout_at(deadline, stream.chunk())
            .await
            .expect("the stream flows within 5 s")
            .unwrap()
            .expect("the stream stays open");
        seen.push_str(&String::from_utf8_lossy(&chunk));
    }
}
