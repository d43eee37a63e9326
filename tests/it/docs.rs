//! The documentation and the deployment files held to the code: every setting, error
//! code and metric has its row in the reference, every relative link and anchor
//! resolves, getting started runs as written against a fresh server, and every metric
//! the Grafana dashboard and the alert rules name is exported.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use reqwest::StatusCode;
use serde_json::json;

use crate::harness::{MASTER_KEY, TestApp};

/// The repository's root.
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The first cell of every table row of `text`, without its backticks.
fn first_cells(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| l.starts_with("| `"))
        .filter_map(|l| l.split('|').nth(1))
        .map(|cell| cell.trim().trim_matches('`').to_owned())
        .collect()
}

#[test]
fn every_setting_has_its_row_with_its_default_in_the_order_of_the_code() {
    let page = read("docs/reference/configuration.md");
    let rows: Vec<&str> = page
        .lines()
        .filter(|l| l.starts_with("| `OVATION_"))
        .collect();
    let documented: Vec<String> = first_cells(&rows.join("\n"));
    let settings: Vec<String> = ovation::config::DEFAULTS
        .iter()
        .map(|(name, _)| format!("OVATION_{}", name.to_uppercase()))
        .collect();
    assert_eq!(documented, settings, "the rows of configuration.md");
    for ((name, default), row) in ovation::config::DEFAULTS.iter().zip(&rows) {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        assert_eq!(cells[2], format!("`{name}`"), "the file key of {name}");
        let shown = match *default {
            "" => ["unset", "empty"].iter().any(|w| cells[3].starts_with(w)),
            default => cells[3] == format!("`{default}`"),
        };
        assert!(
            shown,
            "the default of {name} is {default:?}, the page says {}",
            cells[3]
        );
    }
}

#[test]
fn every_error_code_has_its_row() {
    let page = read("docs/reference/errors.md");
    let documented: BTreeSet<String> = first_cells(&page).into_iter().collect();
    let codes: BTreeSet<String> = ovation::domain::code::Code::EVERY
        .iter()
        .map(|c| c.as_str().to_owned())
        .collect();
    let missing: Vec<&String> = codes.difference(&documented).collect();
    let unknown: Vec<&String> = documented.difference(&codes).collect();
    assert_eq!(
        (missing, unknown),
        (Vec::<&String>::new(), Vec::<&String>::new()),
        "codes without a row, rows without a code"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn every_metric_the_server_exports_after_some_traffic_has_its_row() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "docs", "title": "Docs", "membership": "open", "public_page": true}))
        .await;
    app.vote("docs", json!({"member": "m1", "voter": "v1"}))
        .await;
    let (status, _) = app.get("/api/v1/boards/docs/top").await;
    assert_eq!(status, StatusCode::OK);
    let stream = app
        .client
        .get(format!("{}/api/v1/boards/docs/events", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), StatusCode::OK);
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let text = app.metrics().await;
    drop(stream);
    let exported: BTreeSet<String> = text
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_owned)
        .collect();
    assert!(exported.len() > 8, "{text}");
    let page = read("docs/reference/metrics.md");
    let documented: BTreeSet<String> = first_cells(&page).into_iter().collect();
    let missing: Vec<&String> = exported.difference(&documented).collect();
    assert_eq!(missing, Vec::<&String>::new(), "metrics without a row");
}

/// Every Markdown file of the repository (not its build output nor vendored crates).
fn markdown_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if path.is_dir() {
            if !["target", "vendor", ".git", "node_modules", ".schemathesis"]
                .contains(&name.as_str())
            {
                markdown_files(&path, found);
            }
        } else if name.ends_with(".md") {
            found.push(path);
        }
    }
}

/// The text of a Markdown file without its fenced and inline code.
fn prose(text: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            let mut inline = false;
            for c in line.chars() {
                if c == '`' {
                    inline = !inline;
                } else if !inline {
                    out.push(c);
                }
            }
            out.push('\n');
        }
    }
    out
}

/// The anchors a Markdown file's headings make, as GitHub makes them.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen: std::collections::HashMap<String, usize> = Default::default();
    let mut fenced = false;
    let mut out = BTreeSet::new();
    for line in text.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
        }
        let heading = line.trim_start_matches('#');
        if fenced || heading.len() == line.len() || !heading.starts_with(' ') {
            continue;
        }
        let slug: String = heading
            .trim()
            .to_lowercase()
            .chars()
            .filter_map(|c| match c {
                ' ' => Some('-'),
                c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                _ => None,
            })
            .collect();
        let n = seen.entry(slug.clone()).or_default();
        out.insert(if *n == 0 {
            slug.clone()
        } else {
            format!("{slug}-{n}")
        });
        *n += 1;
    }
    out
}

/// The link targets of a Markdown file's prose: `](target)` and `src="target"`.
fn links(text: &str) -> Vec<String> {
    let prose = prose(text);
    let mut found = Vec::new();
    for (marker, end) in [("](", ')'), ("src=\"", '"')] {
        let mut rest = prose.as_str();
        while let Some(at) = rest.find(marker) {
            rest = &rest[at + marker.len()..];
            if let Some(close) = rest.find(end) {
                let target = &rest[..close];
                if !target.contains(char::is_whitespace) {
                    found.push(target.to_owned());
                }
            }
        }
    }
    found
}

#[test]
fn every_relative_link_and_anchor_in_the_markdown_resolves() {
    let mut files = Vec::new();
    markdown_files(&root(), &mut files);
    assert!(files.len() > 20, "{files:?}");
    let mut broken = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for link in links(&text) {
            if link.contains("://") || link.starts_with("mailto:") {
                continue;
            }
            let (target, anchor) = link.split_once('#').unwrap_or((&link, ""));
            let path = if target.is_empty() {
                file.clone()
            } else {
                file.parent().unwrap().join(target)
            };
            let shown = file.strip_prefix(root()).unwrap().display().to_string();
            if !path.exists() {
                broken.push(format!("{shown}: {link} (no such file)"));
            } else if !anchor.is_empty()
                && path.extension().is_some_and(|e| e == "md")
                && !anchors(&std::fs::read_to_string(&path).unwrap()).contains(anchor)
            {
                broken.push(format!("{shown}: {link} (no such heading)"));
            }
        }
    }
    assert_eq!(broken, Vec::<String>::new());
}

/// The `sh` blocks of a Markdown file, in order.
fn sh_blocks(text: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        match (&mut current, line) {
            (None, "```sh") => current = Some(String::new()),
            (Some(block), "```") => {
                blocks.push(std::mem::take(block));
                current = None;
            }
            (Some(block), line) => {
                block.push_str(line);
                block.push('\n');
            }
            (None, _) => {}
        }
    }
    blocks
}

#[tokio::test(flavor = "multi_thread")]
async fn every_sh_block_of_getting_started_runs_in_order_against_a_fresh_server() {
    let app = TestApp::spawn().await;
    let blocks = sh_blocks(&read("docs/getting-started.md"));
    assert!(blocks.len() >= 8, "{blocks:?}");
    // The only substitutions: the server's address and its key.
    let script: String = blocks
        .iter()
        .map(|b| {
            b.replace("http://127.0.0.1:8080", &app.base)
                .replace("my-master-key-0123456789", MASTER_KEY)
        })
        .collect::<Vec<_>>()
        .join("\n");
    let out = tokio::process::Command::new("bash")
        .arg("-euc")
        .arg(&script)
        .output()
        .await
        .expect("bash runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    // What each step answers.
    for expected in [
        r#""slug":"talent""#,
        r#""id":"kim""#,
        r#""name":"two per member""#,
        "200\n",
        "the vote key: ",
        r#""member":"ada","replayed":false"#,
        r#""code":"rate_limited""#,
        r#""entries":[{"rank":1,"member":"ada""#,
        "event: top",
        r#""embed_origins":["https://fans.example"]"#,
    ] {
        assert!(
            stdout.contains(expected),
            "{expected} not in:\n{stdout}\n{stderr}"
        );
    }
    assert_eq!(stdout.matches("rate_limited").count(), 1, "{stdout}");
}

/// The `ovation_*` metric names `text` names (a histogram's `_bucket`, `_sum` and
/// `_count` series by their metric's name).
fn metric_names(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut rest = text;
    while let Some(at) = rest.find("ovation_") {
        let name: String = rest[at..]
            .chars()
            .take_while(|c| c.is_ascii_lowercase() || *c == '_')
            .collect();
        rest = &rest[at + name.len()..];
        let base = ["_bucket", "_sum", "_count"]
            .iter()
            .find_map(|suffix| name.strip_suffix(suffix))
            .unwrap_or(&name);
        names.insert(base.to_owned());
    }
    names
}

#[tokio::test(flavor = "multi_thread")]
async fn every_metric_the_dashboard_and_the_alert_rules_name_is_exported_after_some_traffic() {
    let app = TestApp::spawn().await;
    app.board(
        json!({"slug": "deploy", "title": "Deploy", "membership": "open", "public_page": true}),
    )
    .await;
    let (status, _) = app
        .post(
            "/api/v1/admin/boards/deploy/rules",
            json!({"name": "one", "dimensions": ["voter"], "window": "day", "limit": 1}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED);
    for _ in 0..2 {
        app.vote("deploy", json!({"member": "m1", "voter": "v1"}))
            .await;
    }
    let (status, _) = app.get("/api/v1/boards/deploy/top").await;
    assert_eq!(status, StatusCode::OK);
    let stream = app
        .client
        .get(format!("{}/api/v1/boards/deploy/events", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), StatusCode::OK);
    let (status, body) = app
        .post(
            "/api/v1/admin/leagues",
            json!({"slug": "deploy-league", "title": "League",
                "tiers": [{"name": "bronze", "promote": 0, "demote": 0}]}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (status, body) = app
        .post("/api/v1/admin/leagues/deploy-league/close", json!({}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // The drain moves the two votes' entries; the readiness watch has run.
    tokio::time::sleep(std::time::Duration::from_millis(800)).await;
    let text = app.metrics().await;
    drop(stream);
    let exported: BTreeSet<String> = text
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_owned)
        .collect();
    for file in [
        "deploy/grafana/ovation.json",
        "deploy/prometheus/alerts.yml",
    ] {
        let named = metric_names(&read(file));
        assert!(named.len() > 5, "{file}: {named:?}");
        let missing: Vec<&String> = named.difference(&exported).collect();
        assert_eq!(
            missing,
            Vec::<&String>::new(),
            "{file} names what /metrics lacks"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_committed_openapi_document_is_the_one_the_server_serves() {
    let app = TestApp::spawn().await;
    let (status, served) = app.get("/api/v1/openapi.json").await;
    assert_eq!(status, StatusCode::OK);
    let committed: serde_json::Value =
        serde_json::from_str(&read("docs/openapi.json")).expect("docs/openapi.json is JSON");
    // Clients are generated from it: each operation needs a name of its own.
    let mut ids: Vec<&str> = served["paths"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|item| item.as_object().unwrap().values())
        .filter_map(|op| op["operationId"].as_str())
        .collect();
    let count = ids.len();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), count, "operationIds repeat");
    assert!(
        served == committed,
        "docs/openapi.json differs from the document the server serves: regenerate it with \
         `make openapi` (cargo run -q -- openapi > docs/openapi.json) and commit it"
    );
}
