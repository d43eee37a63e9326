//! The admin API over SQL: boards, members (JSON and CSV), initial votes, API keys.
//! CI also runs this module against PostgreSQL and MariaDB.

use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::harness::{TestApp, num};

#[tokio::test(flavor = "multi_thread")]
async fn boards_are_created_read_updated_and_deleted() {
    let app = TestApp::spawn().await;
    let created = app
        .board(json!({"slug": "stars", "title": "Stars", "membership": "closed", "periods": ["hour", "day", "week", "month", "all"],
            "timezone": "Asia/Shanghai", "multiplier": 2.5, "carry_over": 0.2, "starts_at": null, "ends_at": "2030-01-01T00:00:00Z",
            "public_page": true}))
        .await;
    assert_eq!(created["timezone"], "Asia/Shanghai");
    assert_eq!(created["multiplier"], 2.5);
    assert_eq!(created["carry_over"], 0.2);
    assert_eq!(created["ends_at"], "2030-01-01T00:00:00Z");

    let (status, body) = app
        .post(
            "/api/v1/admin/boards",
            json!({"slug": "stars", "title": "Again"}),
        )
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::CONFLICT, Some("board_exists"))
    );

    let (status, updated) = app
        .patch(
            "/api/v1/admin/boards/stars",
            json!({"title": "Stars 2", "ends_at": null, "periods": ["day"]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{updated}");
    assert_eq!(updated["title"], "Stars 2");
    assert_eq!(updated["ends_at"], json!(null));
    assert_eq!(
        updated["multiplier"], 2.5,
        "fields not named keep their values"
    );
    assert_eq!(updated["periods"].as_array().unwrap().len(), 1);

    let (_, list) = app.get("/api/v1/admin/boards").await;
    assert_eq!(list["boards"].as_array().unwrap().len(), 1);

    let (status, _) = app.delete("/api/v1/admin/boards/stars").await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, body) = app.get("/api/v1/admin/boards/stars").await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("board_not_found"))
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn invalid_board_settings_are_refused_with_clear_codes() {
    let app = TestApp::spawn().await;
    for (body, code) in [
        (
            json!({"slug": "x", "title": "X", "timezone": "Mars/Olympus"}),
            "invalid_timezone",
        ),
        (
            json!({"slug": "Bad Slug", "title": "X"}),
            "invalid_board_slug",
        ),
        (
            json!({"slug": "x", "title": "X", "periods": ["year"]}),
            "invalid_period",
        ),
        (
            json!({"slug": "x", "title": "X", "periods": []}),
            "invalid_periods",
        ),
        (
            json!({"slug": "x", "title": "X", "multiplier": 0}),
            "invalid_number",
        ),
        (
            json!({"slug": "x", "title": "X", "carry_over": 1.5}),
            "invalid_number",
        ),
        (
            json!({"slug": "x", "title": "X", "membership": "secret"}),
            "invalid_membership",
        ),
        (
            json!({"slug": "x", "title": "X", "starts_at": "2030-01-02T00:00:00Z", "ends_at": "2030-01-01T00:00:00Z"}),
            "invalid_window",
        ),
        (
            json!({"slug": "x", "title": "X", "ends_at": "tomorrow"}),
            "invalid_timestamp",
        ),
        (json!({"slug": "x"}), "invalid_title"),
        (
            json!({"slug": "x", "title": "X", "colour": "red"}),
            "invalid_field",
        ),
    ] {
        let (status, resp) = app.post("/api/v1/admin/boards", body.clone()).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body} -> {resp}");
        assert_eq!(resp["error"]["code"], code, "{body} -> {resp}");
    }
    let (_, list) = app.get("/api/v1/admin/boards").await;
    assert_eq!(list["boards"], json!([]));
}

#[tokio::test(flavor = "multi_thread")]
async fn initial_votes_go_on_the_all_time_display_board_and_move_by_the_difference() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "iv", "title": "IV", "multiplier": 2}))
        .await;
    let (status, body) = app
        .put(
            "/api/v1/admin/boards/iv/members",
            json!({"members": [{"id": "m1", "name": "One", "initial_votes": 100}]}),
        )
        .await;
    assert_eq!(
        (status, body["upserted"].as_i64()),
        (StatusCode::OK, Some(1)),
        "{body}"
    );
    app.vote("iv", json!({"member": "m1", "count": 5})).await;
    let (_, m) = app.get("/api/v1/boards/iv/members/m1").await;
    assert_eq!(num(&m["score"]), 110.0);
    let (_, real) = app.get("/api/v1/boards/iv/members/m1?view=real").await;
    assert_eq!(
        num(&real["score"]),
        5.0,
        "initial votes never touch the real view"
    );
    let (_, day) = app.get("/api/v1/boards/iv/members/m1?period=day").await;
    assert_eq!(
        num(&day["score"]),
        10.0,
        "initial votes only go on the all-time board"
    );

    let (status, _) = app
        .patch(
            "/api/v1/admin/boards/iv/members/m1",
            json!({"initial_votes": 40}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let (_, m) = app.get("/api/v1/boards/iv/members/m1").await;
    assert_eq!(num(&m["score"]), 50.0);
    // Upserting the same value again changes nothing.
    app.put(
        "/api/v1/admin/boards/iv/members",
        json!({"members": [{"id": "m1", "initial_votes": 40}]}),
    )
    .await;
    let (_, m) = app.get("/api/v1/boards/iv/members/m1").await;
    assert_eq!(num(&m["score"]), 50.0);
    assert_eq!(m["name"], "One", "fields not named keep their values");
}

#[tokio::test(flavor = "multi_thread")]
async fn csv_import_lists_every_bad_line_and_imports_nothing_unless_all_are_good() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "csv", "title": "CSV"})).await;
    let import = |body: &'static str| {
        let app = &app;
        async move {
            let resp = app
                .client
                .post(format!(
                    "{}/api/v1/admin/boards/csv/members/import",
                    app.base
                ))
                .bearer_auth(crate::harness::MASTER_KEY)
                .header("Content-Type", "text/csv")
                .body(body)
                .send()
                .await
                .unwrap();
            (
                resp.status(),
                resp.json::<serde_json::Value>().await.unwrap(),
            )
        }
    };
    let (status, body) = import(
        "id,name,image_url,initial_votes,multiplier\nm1,One,,10,\nbad id,Two,,0,\nm3,Three,ftp://x,0,\nm4,Four,,many,\nm1,Dup,,0,\n",
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(body["error"]["code"], "invalid_csv");
    let lines: Vec<(i64, &str)> = body["error"]["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["line"].as_i64().unwrap(), e["code"].as_str().unwrap()))
        .collect();
    assert_eq!(
        lines,
        vec![
            (3, "invalid_member_id"),
            (4, "invalid_image_url"),
            (5, "invalid_initial_votes"),
            (6, "duplicate_member")
        ]
    );
    let (_, board) = app.get("/api/v1/admin/boards/csv").await;
    assert_eq!(board["members"], json!([]), "nothing imported");

    let (status, body) = import("id,name\nm1,One\n").await;
    assert_eq!(
        (status, body["error"]["errors"][0]["code"].as_str()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("invalid_header"))
    );

    let (status, body) = import(
        "id,name,image_url,initial_votes,multiplier\nm1,One,https://img/1.png,10,2\nm2,Two,,0,\n",
    )
    .await;
    assert_eq!(
        (status, body["upserted"].as_i64()),
        (StatusCode::OK, Some(2)),
        "{body}"
    );
    let (_, m1) = app.get("/api/v1/boards/csv/members/m1").await;
    assert_eq!(num(&m1["score"]), 10.0);
    app.vote("csv", json!({"member": "m1", "count": 1})).await;
    let (_, m1) = app.get("/api/v1/boards/csv/members/m1").await;
    assert_eq!(num(&m1["score"]), 12.0, "the member's multiplier 2 applies");
}

#[tokio::test(flavor = "multi_thread")]
async fn disabled_and_deleted_members_take_no_votes() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "dm", "title": "DM"})).await;
    app.members("dm", &["m1", "m2"]).await;
    app.vote("dm", json!({"member": "m2", "count": 3})).await;
    app.patch(
        "/api/v1/admin/boards/dm/members/m1",
        json!({"enabled": false}),
    )
    .await;
    let (status, body) = app.vote("dm", json!({"member": "m1"})).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::CONFLICT, Some("member_disabled"))
    );

    let (status, _) = app.delete("/api/v1/admin/boards/dm/members/m2").await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, body) = app.vote("dm", json!({"member": "m2"})).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("member_not_found"))
    );
    let (_, top) = app.get("/api/v1/boards/dm/top?period=day").await;
    assert_eq!(
        top["entries"],
        json!([]),
        "a deleted member leaves the current boards"
    );
}

#[tokio::test]
async fn a_member_profile_must_be_a_json_object() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "pr", "title": "PR"})).await;
    app.members("pr", &["m1"]).await;
    let (status, member) = app
        .patch(
            "/api/v1/admin/boards/pr/members/m1",
            json!({"profile": {"genre": "pop"}}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{member}");
    assert_eq!(member["profile"], json!({"genre": "pop"}));
    for profile in [json!(false), json!([1, 2]), json!("text"), json!(3)] {
        let (status, body) = app
            .patch(
                "/api/v1/admin/boards/pr/members/m1",
                json!({"profile": profile}),
            )
            .await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (StatusCode::UNPROCESSABLE_ENTITY, Some("invalid_profile")),
            "{profile}"
        );
    }
    let (status, body) = app
        .put(
            "/api/v1/admin/boards/pr/members",
            json!({"members": [{"id": "m2", "profile": false}]}),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(body["error"]["errors"][0]["code"], "invalid_profile");
    let (_, board) = app.get("/api/v1/boards/pr").await;
    assert_eq!(
        board["members"].as_array().unwrap().len(),
        1,
        "nothing written"
    );
    assert_eq!(board["members"][0]["profile"], json!({"genre": "pop"}));
}

#[tokio::test(flavor = "multi_thread")]
async fn api_keys_are_shown_once_scoped_and_revocable() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "k", "title": "K", "membership": "open"}))
        .await;
    let (status, created) = app
        .post(
            "/api/v1/admin/api-keys",
            json!({"name": "voter", "scopes": ["vote"], "channel": "partner-a"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let secret = created["key"].as_str().unwrap().to_owned();
    assert!(secret.starts_with("ovk_") && secret.len() == 44);
    assert_eq!(created["channel"], "partner-a");

    let (_, list) = app.get("/api/v1/admin/api-keys").await;
    let listed = &list["api_keys"][0];
    assert_eq!(listed["name"], "voter");
    assert_eq!(listed["key"], json!(null), "the secret is never listed");
    assert!(!list.to_string().contains(&secret));

    let (status, _) = app
        .call(
            Method::POST,
            "/api/v1/boards/k/votes",
            Some(&secret),
            Some(&json!({"member": "m"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let (status, body) = app
        .call(Method::GET, "/api/v1/boards/k/top", Some(&secret), None)
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::FORBIDDEN, Some("forbidden"))
    );
    let (status, body) = app
        .call(Method::GET, "/api/v1/admin/boards", Some(&secret), None)
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::FORBIDDEN, Some("forbidden"))
    );

    let id = created["id"].as_i64().unwrap();
    let (status, _) = app.delete(&format!("/api/v1/admin/api-keys/{id}")).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, body) = app
        .call(
            Method::POST,
            "/api/v1/boards/k/votes",
            Some(&secret),
            Some(&json!({"member": "m"})),
        )
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::UNAUTHORIZED, Some("unauthorized"))
    );
    let (status, _) = app.delete(&format!("/api/v1/admin/api-keys/{id}")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    for (body, code) in [
        (json!({"name": "x", "scopes": ["root"]}), "invalid_scope"),
        (json!({"name": "x", "scopes": []}), "invalid_scopes"),
        (
            json!({"name": "x", "scopes": ["vote"], "channel": "bad channel"}),
            "invalid_channel",
        ),
    ] {
        let (status, resp) = app.post("/api/v1/admin/api-keys", body).await;
        assert_eq!(
            (status, resp["error"]["code"].as_str()),
            (StatusCode::UNPROCESSABLE_ENTITY, Some(code))
        );
    }
}
