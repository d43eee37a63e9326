//! Board families: a board per live room, match or region, made by its first write
//! (`instances: {"ttl_s": …}`), addressed as `<family>:<instance>`.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::harness::TestApp;

fn code(body: &Value) -> &str {
    body["error"]["code"].as_str().unwrap_or("")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_family_is_a_board_setting_checked_and_fixed_at_creation() {
    let app = TestApp::spawn().await;
    let family = app
        .board(
            json!({"slug": "room", "title": "Rooms", "membership": "open",
            "scoring": "scores", "instances": {"ttl_s": 604800}}),
        )
        .await;
    assert_eq!(family["instances"], json!({"ttl_s": 604800}));
    let (status, read) = app.get("/api/v1/admin/boards/room").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(read["instances"], json!({"ttl_s": 604800}));
    let plain = app.board(json!({"slug": "plain", "title": "Plain"})).await;
    assert_eq!(plain["instances"], Value::Null);

    for (ttl, expected) in [
        (json!(0), "invalid_ttl"),
        (json!(31_536_001), "invalid_ttl"),
        (json!(-5), "invalid_ttl"),
    ] {
        let (status, body) = app
            .post(
                "/api/v1/admin/boards",
                json!({"slug": "bad", "title": "Bad", "instances": {"ttl_s": ttl}}),
            )
            .await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{ttl}: {body}");
        assert_eq!(code(&body), expected, "{ttl}: {body}");
    }
    let (status, body) = app
        .post(
            "/api/v1/admin/boards",
            json!({"slug": "bad", "title": "Bad", "instances": {"ttl": 5}}),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(code(&body), "invalid_field", "{body}");
    let (status, _) = app.get("/api/v1/admin/boards/bad").await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // Fixed at creation, both ways; the same value again is no change.
    for (board, change) in [
        ("room", json!({"instances": {"ttl_s": 60}})),
        ("room", json!({"instances": null})),
        ("plain", json!({"instances": {"ttl_s": 60}})),
    ] {
        let (status, body) = app
            .patch(&format!("/api/v1/admin/boards/{board}"), change.clone())
            .await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{change}: {body}");
        assert_eq!(code(&body), "invalid_field", "{change}: {body}");
    }
    let (status, body) = app
        .patch(
            "/api/v1/admin/boards/room",
            json!({"title": "Live rooms", "instances": {"ttl_s": 604800}}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        (&body["title"], &body["instances"]),
        (&json!("Live rooms"), &json!({"ttl_s": 604800}))
    );
}
