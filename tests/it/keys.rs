//! API keys limited to boards and leagues: a key used outside them gets 403
//! `key_not_allowed` on every route, before anything is read or written; a key bound to a
//! channel reaches no league it does not name.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::harness::TestApp;

async fn key_with(app: &TestApp, body: Value) -> String {
    let (status, created) = app.post("/api/v1/admin/api-keys", body).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    created["key"].as_str().unwrap().to_owned()
}

fn league(slug: &str) -> Value {
    json!({"slug": slug, "title": slug,
        "tiers": [{"name": "bronze", "promote": 0.5, "demote": 0},
            {"name": "gold", "promote": 0, "demote": 0.5}],
        "bracket_size": 10, "season": "month", "timezone": "UTC"})
}

fn refused(answer: &(StatusCode, Value)) -> bool {
    answer.0 == StatusCode::FORBIDDEN && answer.1["error"]["code"] == "key_not_allowed"
}

#[tokio::test]
async fn a_channel_key_reaches_no_league_unless_it_names_it() {
    let app = TestApp::spawn().await;
    for slug in ["arena", "cup"] {
        let (status, body) = app.post("/api/v1/admin/leagues", league(slug)).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }
    let (status, joined) = app
        .post("/api/v1/leagues/arena/join", json!({"player": "hero"}))
        .await;
    assert_eq!(status, StatusCode::OK, "{joined}");
    let partner = key_with(
        &app,
        json!({"name": "partner", "scopes": ["vote", "read"], "channel": "partner-a"}),
    )
    .await;
    let named = key_with(
        &app,
        json!({"name": "partner cup", "scopes": ["vote", "read"], "channel": "partner-a", "leagues": ["cup"]}),
    )
    .await;
    let routes = |slug: &str| {
        [
            (
                Method::POST,
                format!("/api/v1/leagues/{slug}/join"),
                Some(json!({"player": "hero", "profile": {"nickname": "Mallory"}})),
            ),
            (
                Method::POST,
                format!("/api/v1/leagues/{slug}/scores"),
                Some(json!({"player": "hero", "delta": 9007199254740991_i64})),
            ),
            (
                Method::GET,
                format!("/api/v1/leagues/{slug}/players/hero"),
                None,
            ),
            (
                Method::GET,
                format!("/api/v1/leagues/{slug}/brackets/bronze-1"),
                None,
            ),
        ]
    };
    for (method, path, body) in routes("arena") {
        for key in [&partner, &named] {
            let answer = app
                .call(method.clone(), &path, Some(key), body.as_ref())
                .await;
            assert!(refused(&answer), "{method} {path}: {answer:?}");
        }
    }
    // Nothing the refused calls carried reached the league.
    let (_, standing) = app.get("/api/v1/leagues/arena/brackets/bronze-1").await;
    assert_eq!(
        standing["entries"],
        json!([{"rank": 1, "player": "hero", "score": 0, "nickname": null, "avatar": null, "zone": "stay"}])
    );
    // The league the key names is open to it.
    let (status, joined) = app
        .call(
            Method::POST,
            "/api/v1/leagues/cup/join",
            Some(&named),
            Some(&json!({"player": "p1"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{joined}");
    assert_eq!(joined["bracket"], "bronze-1");
    let answer = app
        .call(
            Method::POST,
            "/api/v1/leagues/cup/join",
            Some(&partner),
            Some(&json!({"player": "p2"})),
        )
        .await;
    assert!(refused(&answer), "{answer:?}");
    // A key without a channel reaches every league unless it names some.
    let backend = app.key(&["vote", "read"], None).await;
    let (status, _) = app
        .call(
            Method::GET,
            "/api/v1/leagues/arena/players/hero",
            Some(&backend),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn a_key_limited_to_boards_is_refused_on_every_other_board() {
    let app = TestApp::spawn().await;
    for slug in ["stars", "moons"] {
        app.board(json!({"slug": slug, "title": slug, "periods": ["day", "all"]}))
            .await;
        app.members(slug, &["m1"]).await;
    }
    let key = key_with(
        &app,
        json!({"name": "stars only", "scopes": ["vote", "read", "admin"], "boards": ["stars"]}),
    )
    .await;
    let call = |method: Method, path: &str, body: Option<Value>| {
        let key = key.clone();
        let path = path.to_owned();
        let app = &app;
        async move { app.call(method, &path, Some(&key), body.as_ref()).await }
    };
    let (status, voted) = call(
        Method::POST,
        "/api/v1/boards/stars/votes",
        Some(json!({"member": "m1"})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{voted}");
    for (method, path, body) in [
        (
            Method::POST,
            "/api/v1/boards/moons/votes",
            Some(json!({"member": "m1"})),
        ),
        (Method::GET, "/api/v1/boards/moons", None),
        (Method::GET, "/api/v1/boards/moons/top", None),
        (Method::GET, "/api/v1/boards/moons/members/m1", None),
        (Method::GET, "/api/v1/boards/moons/members/m1/around", None),
        (Method::GET, "/api/v1/boards/moons/members/m1/history", None),
        (Method::GET, "/api/v1/boards/moons/stats", None),
        (Method::GET, "/api/v1/boards/moons/quota?voter=u1", None),
        (Method::GET, "/api/v1/ranks?board=moons&members=m1", None),
        (Method::GET, "/api/v1/admin/boards/moons", None),
        (
            Method::PATCH,
            "/api/v1/admin/boards/moons",
            Some(json!({"title": "Mine"})),
        ),
        (Method::DELETE, "/api/v1/admin/boards/moons", None),
        (
            Method::PUT,
            "/api/v1/admin/boards/moons/members",
            Some(json!({"members": [{"id": "m9", "name": "x"}]})),
        ),
        (Method::GET, "/api/v1/admin/boards/moons/rules", None),
        (
            Method::POST,
            "/api/v1/admin/boards",
            Some(json!({"slug": "suns", "title": "Suns"})),
        ),
        (Method::GET, "/api/v1/admin/api-keys", None),
        (
            Method::POST,
            "/api/v1/admin/api-keys",
            Some(json!({"name": "wider", "scopes": ["admin"]})),
        ),
    ] {
        let answer = call(method.clone(), path, body).await;
        assert!(refused(&answer), "{method} {path}: {answer:?}");
    }
    // A batch refuses the item, not the call.
    let (status, batch) = call(
        Method::POST,
        "/api/v1/votes",
        Some(json!({"votes": [{"board": "stars", "member": "m1"}, {"board": "moons", "member": "m1"}]})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{batch}");
    assert_eq!(batch["results"][0]["scores"][0]["real"], 2);
    assert_eq!(batch["results"][1]["error"]["code"], "key_not_allowed");
    let tops = call(
        Method::GET,
        "/api/v1/tops?boards=stars,moons&period=all",
        None,
    )
    .await;
    assert!(refused(&tops), "{tops:?}");
    let (_, listed) = call(Method::GET, "/api/v1/admin/boards", None).await;
    let slugs: Vec<&str> = listed["boards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["slug"].as_str().unwrap())
        .collect();
    assert_eq!(slugs, ["stars"]);
    // moons is untouched by all of it.
    let (_, moons) = app.get("/api/v1/boards/moons/top?period=all").await;
    assert_eq!(moons["total_members"], 0);
    let (_, board) = app.get("/api/v1/admin/boards/moons").await;
    assert_eq!(board["title"], "moons");
}

#[tokio::test]
async fn key_limits_are_checked_listed_and_kept() {
    let app = TestApp::spawn().await;
    for (body, code) in [
        (
            json!({"name": "k", "scopes": ["read"], "boards": ["Stars"]}),
            "invalid_boards",
        ),
        (
            json!({"name": "k", "scopes": ["read"], "leagues": ["a b"]}),
            "invalid_leagues",
        ),
        (
            json!({"name": "k", "scopes": ["read"], "boards": (0..101).map(|i| format!("b{i}")).collect::<Vec<_>>()}),
            "invalid_boards",
        ),
    ] {
        let (status, answer) = app.post("/api/v1/admin/api-keys", body).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{answer}");
        assert_eq!(answer["error"]["code"], code);
    }
    key_with(
        &app,
        json!({"name": "partner", "scopes": ["vote"], "channel": "partner-a", "boards": ["stars", "room", "stars"]}),
    )
    .await;
    key_with(&app, json!({"name": "backend", "scopes": ["vote"]})).await;
    let (_, listed) = app.get("/api/v1/admin/api-keys").await;
    let keys = listed["api_keys"].as_array().unwrap();
    assert_eq!(
        (&keys[0]["name"], &keys[0]["boards"], &keys[0]["leagues"]),
        (&json!("backend"), &Value::Null, &Value::Null)
    );
    assert_eq!(
        (&keys[1]["name"], &keys[1]["boards"], &keys[1]["leagues"]),
        (&json!("partner"), &json!(["room", "stars"]), &json!([]))
    );
}
