//! The webhook guide's verification snippets (`examples/webhook-verify`, in Node, Python
//! and Rust) against a real signed delivery: it verifies; the same with its body
//! tampered with, verified too late, or with another secret, does not. The guide's code
//! blocks are those files.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::json;

use crate::board_webhooks::{add_webhook, board, vote, watched};
use crate::harness::TestApp;
use crate::webhooks::{Receiver, hooked};

mod rust_snippet {
    include!("../../examples/webhook-verify/verify.rs");
}

fn example(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/webhook-verify")
        .join(file)
}

/// Runs the Node or Python snippet as a program; whether it verified.
fn verifies(
    program: &str,
    file: &str,
    secret: &str,
    signature: &str,
    delivery: &str,
    body: &str,
    now: i64,
) -> bool {
    let mut child = Command::new(program)
        .arg(example(file))
        .env("OVATION_SECRET", secret)
        .env("SIGNATURE", signature)
        .env("DELIVERY", delivery)
        .env("NOW", now.to_string())
        .stdin(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{program} runs: {e}"));
    child
        .stdin
        .take()
        .unwrap()
        .write_all(body.as_bytes())
        .unwrap();
    let status = child.wait().unwrap();
    match status.code() {
        Some(0) => true,
        Some(1) => false,
        other => panic!("{program} {file} ended with {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_guides_snippets_verify_a_real_delivery_and_refuse_a_tampered_or_late_one() {
    let receiver = Receiver::start(Vec::new()).await;
    let app = TestApp::spawn_with(hooked(true)).await;
    board(&app).await;
    let created = add_webhook(
        &app,
        json!({"url": receiver.url, "period": "day", "top": 2, "events": ["entered_top"]}),
    )
    .await;
    let secret = created["secret"].as_str().unwrap().to_owned();
    watched(&app).await;
    vote(&app, "a", 3).await;
    receiver.wait_for(1, Duration::from_secs(15)).await;
    let (headers, body) = receiver.seen.lock().unwrap()[0].clone();
    let signature = headers["x-ovation-signature"].clone();
    let delivery = headers["x-ovation-delivery"].clone();
    let t: i64 = signature
        .split(',')
        .find_map(|p| p.strip_prefix("t="))
        .and_then(|t| t.parse().ok())
        .expect("the signature has its time");
    let tampered = body.replacen("\"a\"", "\"b\"", 1);
    assert_ne!(tampered, body);
    let cases = [
        ("the delivery", secret.as_str(), body.as_str(), t + 5, true),
        (
            "a tampered body",
            secret.as_str(),
            tampered.as_str(),
            t + 5,
            false,
        ),
        (
            "verified six minutes late",
            secret.as_str(),
            body.as_str(),
            t + 360,
            false,
        ),
        (
            "another secret",
            "not-the-secret",
            body.as_str(),
            t + 5,
            false,
        ),
    ];
    for (what, key, text, now, genuine) in cases {
        assert_eq!(
            rust_snippet::verify_ovation(key, &signature, &delivery, text.as_bytes(), now, 300),
            genuine,
            "Rust: {what}"
        );
        assert_eq!(
            verifies("node", "verify.mjs", key, &signature, &delivery, text, now),
            genuine,
            "Node: {what}"
        );
        assert_eq!(
            verifies(
                "python3",
                "verify.py",
                key,
                &signature,
                &delivery,
                text,
                now
            ),
            genuine,
            "Python: {what}"
        );
    }

    // The guide shows these very functions.
    let guide = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/guides/webhooks.md"),
    )
    .unwrap();
    for (fence, file) in [
        ("```js\n", "verify.mjs"),
        ("```python\n", "verify.py"),
        ("```rust\n", "verify.rs"),
    ] {
        let start = guide
            .find(fence)
            .unwrap_or_else(|| panic!("no {fence} block"))
            + fence.len();
        let block = &guide[start..start + guide[start..].find("```").unwrap()];
        let code = std::fs::read_to_string(example(file)).unwrap();
        assert!(
            code.starts_with(block),
            "the guide's block is not the start of {file}"
        );
    }
}
