//! Leagues: settings through the admin API, checked, audited, and bad input refused with
//! the store unchanged.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::harness::TestApp;

fn arena() -> Value {
    json!({"slug": "arena", "title": "Arena",
        "tiers": [{"name": "bronze", "promote": 0.2, "demote": 0},
            {"name": "silver", "promote": 0.15, "demote": 0.15},
            {"name": "gold", "promote": 0, "demote": 0.2}],
        "bracket_size": 50, "season": "week", "timezone": "Asia/Shanghai",
        "rewards": [{"tier": "gold", "ranks": [1, 3], "reward": "crown"}], "webhook_url": null})
}

#[tokio::test(flavor = "multi_thread")]
async fn a_league_is_created_read_changed_and_deleted() {
    let app = TestApp::spawn().await;
    let (status, league) = app.post("/api/v1/admin/leagues", arena()).await;
    assert_eq!(status, StatusCode::CREATED, "{league}");
    let tiers = |v: &Value| -> Vec<(String, f64, f64)> {
        v["tiers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                (
                    t["name"].as_str().unwrap().to_owned(),
                    t["promote"].as_f64().unwrap(),
                    t["demote"].as_f64().unwrap(),
                )
            })
            .collect()
    };
    assert_eq!(tiers(&league), tiers(&arena()));
    assert_eq!(league["rewards"], arena()["rewards"]);
    assert_eq!(
        (
            league["bracket_size"].clone(),
            league["season"].clone(),
            league["timezone"].clone()
        ),
        (json!(50), json!("week"), json!("Asia/Shanghai"))
    );
    assert_eq!(league["webhook_secret"].as_str().unwrap().len(), 40);
    // The first season starts at creation and ends with the week in Shanghai: Monday
    // 00:00 local time, 16:00 UTC on Sunday.
    let season = &league["current_season"];
    assert_eq!(
        (season["season"].clone(), season["closed"].clone()),
        (json!(1), json!(false)),
        "{league}"
    );
    let ends: chrono::DateTime<chrono::Utc> = season["ends_at"].as_str().unwrap().parse().unwrap();
    assert_eq!(
        ends.format("%a %H:%M:%S").to_string(),
        "Sun 16:00:00",
        "{league}"
    );
    let until = ends - chrono::Utc::now();
    assert!(
        until > chrono::TimeDelta::zero() && until <= chrono::TimeDelta::days(7),
        "{league}"
    );

    let (status, again) = app.post("/api/v1/admin/leagues", arena()).await;
    assert_eq!(
        (status, again["error"]["code"].as_str()),
        (StatusCode::CONFLICT, Some("league_exists"))
    );
    let (status, changed) = app
        .patch(
            "/api/v1/admin/leagues/arena",
            json!({"bracket_size": 30, "webhook_url": "https://hooks.example/arena"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{changed}");
    assert_eq!(changed["bracket_size"], 30);
    assert_eq!(changed["webhook_url"], "https://hooks.example/arena");
    assert_eq!(changed["webhook_secret"], league["webhook_secret"]);
    let (_, list) = app.get("/api/v1/admin/leagues").await;
    assert_eq!(list["leagues"].as_array().unwrap().len(), 1);
    assert_eq!(list["leagues"][0], changed);

    let (status, _) = app.delete("/api/v1/admin/leagues/arena").await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, gone) = app.get("/api/v1/admin/leagues/arena").await;
    assert_eq!(
        (status, gone["error"]["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("league_not_found"))
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_league_settings_are_refused_and_change_nothing() {
    let app = TestApp::spawn().await;
    let (status, _) = app.post("/api/v1/admin/leagues", arena()).await;
    assert_eq!(status, StatusCode::CREATED);
    let (_, before) = app.get("/api/v1/admin/leagues/arena").await;
    let tiers = |promote: f64, demote: f64| {
        json!({"tiers": [{"name": "bronze", "promote": 0.2, "demote": 0},
            {"name": "silver", "promote": promote, "demote": demote},
            {"name": "gold", "promote": 0, "demote": 0.2}]})
    };
    for (body, code) in [
        (tiers(1.2, 0.0), "invalid_ratio"),
        (tiers(-0.1, 0.0), "invalid_ratio"),
        (tiers(0.6, 0.5), "invalid_ratio"),
        (tiers(0.1234, 0.0), "invalid_ratio"),
        (
            json!({"tiers": [{"name": "bronze", "promote": 0.2, "demote": 0.1},
            {"name": "gold", "promote": 0, "demote": 0.2}]}),
            "invalid_ratio",
        ),
        (
            json!({"tiers": [{"name": "bronze", "promote": 0.2, "demote": 0},
            {"name": "gold", "promote": 0.1, "demote": 0.2}]}),
            "invalid_ratio",
        ),
        (json!({"tiers": []}), "invalid_tiers"),
        (json!({"bracket_size": 1}), "invalid_bracket_size"),
        (json!({"season": "year"}), "invalid_season"),
        (json!({"timezone": "Mars/Olympus"}), "invalid_timezone"),
        (
            json!({"rewards": [{"tier": "iron", "ranks": [1, 1], "reward": "x"}]}),
            "unknown_tier",
        ),
        (
            json!({"rewards": [{"tier": "gold", "ranks": [3, 1], "reward": "x"}]}),
            "invalid_reward",
        ),
        (
            json!({"rewards": [{"tier": "gold", "ranks": [1, 51], "reward": "x"}]}),
            "invalid_reward",
        ),
        (json!({"webhook_url": "ftp://x"}), "invalid_webhook"),
        (json!({"slug": "other"}), "slug_immutable"),
    ] {
        let (status, answer) = app.patch("/api/v1/admin/leagues/arena", body.clone()).await;
        assert_eq!(
            (status, answer["error"]["code"].as_str()),
            (StatusCode::UNPROCESSABLE_ENTITY, Some(code)),
            "{body}: {answer}"
        );
    }
    let (status, answer) = app
        .post(
            "/api/v1/admin/leagues",
            json!({"slug": "Bad Slug", "title": "x", "tiers": [{"name": "t", "promote": 0, "demote": 0}]}),
        )
        .await;
    assert_eq!(
        (status, answer["error"]["code"].as_str()),
        (
            StatusCode::UNPROCESSABLE_ENTITY,
            Some("invalid_league_slug")
        )
    );
    let (_, after) = app.get("/api/v1/admin/leagues/arena").await;
    assert_eq!(after, before);
    let (status, answer) = app.delete("/api/v1/admin/leagues/nope").await;
    assert_eq!(
        (status, answer["error"]["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("league_not_found"))
    );
}
