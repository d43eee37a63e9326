//! What every page guards: sessions on `/admin`, CSRF tokens on forms, escaping,
//! security headers, the voting page's own cookie, the language switch.

use reqwest::StatusCode;
use reqwest::header::LOCATION;
use serde_json::json;

use super::{Browser, concrete};
use crate::harness::TestApp;

#[tokio::test]
async fn every_admin_route_but_login_refuses_without_a_session() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "stars", "title": "Stars"})).await;
    app.members("stars", &["m1"]).await;
    let browser = Browser::new(&app);
    let routes = ovation::web::route_table();
    assert!(routes.len() > 20, "{routes:?}");
    for (method, pattern) in routes {
        let path = concrete(&pattern);
        let resp = browser
            .client
            .request(
                method.as_str().parse().unwrap(),
                format!("{}{path}", browser.base),
            )
            .form(&[("_csrf", "x")])
            .send()
            .await
            .unwrap();
        let status = resp.status();
        if pattern == "/admin/login" {
            assert_ne!(status, StatusCode::SEE_OTHER, "{method} {path}");
            continue;
        }
        assert_eq!(
            status,
            StatusCode::SEE_OTHER,
            "{method} {path} answered without a session"
        );
        assert_eq!(resp.headers()[LOCATION], "/admin/login", "{method} {path}");
    }
}

#[tokio::test]
async fn state_changing_forms_need_the_session_csrf_token() {
    let app = TestApp::spawn().await;
    let browser = Browser::new(&app);
    let csrf = browser.sign_in().await;
    let form = |token: &'static str| {
        vec![
            ("_csrf", token),
            ("slug", "csrf"),
            ("title", "CSRF"),
            ("membership", "closed"),
            ("periods", "day"),
            ("periods", "all"),
            ("timezone", "UTC"),
            ("multiplier", "1"),
            ("carry_over", "0"),
            ("max_count", "10"),
        ]
    };
    let mut without: Vec<(&str, &str)> = form("");
    without.remove(0);
    let page = browser.post("/admin/boards", &without).await;
    assert_eq!(page.status, StatusCode::FORBIDDEN);
    let page = browser.post("/admin/boards", &form("not-the-token")).await;
    assert_eq!(page.status, StatusCode::FORBIDDEN);
    let (status, _) = app.get("/api/v1/admin/boards/csrf").await;
    assert_eq!(
        status,
        StatusCode::NOT_FOUND,
        "a refused form wrote nothing"
    );

    let token: &'static str = Box::leak(csrf.into_boxed_str());
    let page = browser.post("/admin/boards", &form(token)).await;
    assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.body);
    assert_eq!(page.location(), "/admin/boards/csrf");
    let (status, board) = app.get("/api/v1/admin/boards/csrf").await;
    assert_eq!(status, StatusCode::OK);
    let periods: Vec<&str> = board["periods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["period"].as_str().unwrap())
        .collect();
    assert_eq!(periods, ["day", "all"]);

    // htmx requests may carry the token in a header instead.
    let resp = browser
        .client
        .post(format!("{}/admin/logout", browser.base))
        .header("X-CSRF-Token", token)
        .header("HX-Request", "true")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    let page = browser.get("/admin/boards").await;
    assert_eq!(page.status, StatusCode::SEE_OTHER, "signed out");
}

#[tokio::test]
async fn a_member_named_like_a_script_renders_as_text_on_both_pages() {
    let app = TestApp::spawn().await;
    let evil = "<script>alert(1)</script>";
    app.board(json!({"slug": "xss", "title": "<b>XSS</b>", "public_page": true}))
        .await;
    let (status, _) = app
        .put(
            "/api/v1/admin/boards/xss/members",
            json!({"members": [{"id": "m1", "name": evil}]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    app.vote("xss", json!({"member": "m1"})).await;
    let browser = Browser::new(&app);
    browser.sign_in().await;
    for path in ["/b/xss", "/admin/boards/xss/members", "/admin/boards/xss"] {
        let page = browser.get(path).await;
        assert_eq!(page.status, StatusCode::OK, "{path}");
        assert!(!page.body.contains(evil), "{path} carries the raw script");
        assert!(!page.body.contains("<b>XSS</b>"), "{path}");
        assert!(
            page.body
                .contains("&#60;script&#62;alert(1)&#60;/script&#62;")
                || page.body.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
            "{path}: {}",
            page.body
        );
    }
}

#[tokio::test]
async fn pages_send_strict_security_headers() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "hdr", "title": "Headers", "public_page": true}))
        .await;
    let browser = Browser::new(&app);
    for path in ["/admin/login", "/b/hdr", "/static/app.css"] {
        let page = browser.get(path).await;
        assert_eq!(page.status, StatusCode::OK, "{path}");
        let csp = page.headers["content-security-policy"].to_str().unwrap();
        assert!(csp.contains("script-src 'self'"), "{csp}");
        assert!(!csp.contains("unsafe-inline"), "{csp}");
        assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
        assert_eq!(page.headers["x-frame-options"], "DENY");
        assert_eq!(page.headers["x-content-type-options"], "nosniff");
        assert_eq!(page.headers["referrer-policy"], "same-origin");
    }
    let page = browser.get("/admin/login").await;
    assert!(!page.body.contains("<script>"), "no inline script");
    let cookie = page.headers["set-cookie"].to_str().unwrap().to_owned();
    assert!(cookie.contains("HttpOnly"), "{cookie}");
    assert!(cookie.contains("SameSite=Strict"), "{cookie}");
}

#[tokio::test]
async fn language_switch_leads_only_to_paths_on_this_site() {
    let app = TestApp::spawn().await;
    let visitor = Browser::new(&app);
    for back in [
        "//evil.example/",
        "/\\evil.example",
        "/%5Cevil.example",
        "evil.example",
    ] {
        let answer = visitor.get(&format!("/lang/en?back={back}")).await;
        assert_eq!(answer.status, StatusCode::SEE_OTHER, "{back}");
        assert_eq!(answer.location(), "/admin", "{back}");
    }
    for back in ["/%09/evil.example", "/%0d%0aSet-Cookie:%20x=1", "/b/x%00"] {
        let answer = visitor.get(&format!("/lang/en?back={back}")).await;
        assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{back}");
        assert!(answer.headers.get("location").is_none(), "{back}");
    }
    let home = visitor.get("/lang/zh-CN?back=/b/acts?period=day").await;
    assert_eq!(home.status, StatusCode::SEE_OTHER);
    assert_eq!(home.location(), "/b/acts?period=day");
}

#[tokio::test]
async fn every_admin_post_refuses_a_signed_in_request_without_the_csrf_token() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "stars", "title": "Stars"})).await;
    app.members("stars", &["m1"]).await;
    let (_, rule) = app
        .post(
            "/api/v1/admin/boards/stars/rules",
            json!({"name": "r", "dimensions": ["voter"], "window": "day", "limit": 1}),
        )
        .await;
    assert_eq!(rule["id"], 1);
    let browser = Browser::new(&app);
    browser.sign_in().await;
    let posts: Vec<String> = ovation::web::route_table()
        .into_iter()
        .filter(|(m, _)| m == actix_web::http::Method::POST)
        .map(|(_, p)| p)
        .collect();
    assert!(posts.len() >= 12, "{posts:?}");
    for pattern in posts {
        let path = concrete(&pattern);
        let page = browser
            .post(&path, &[("confirm", "stars"), ("name", "x")])
            .await;
        assert_eq!(
            page.status,
            StatusCode::FORBIDDEN,
            "POST {path} without a token"
        );
    }
    // Nothing moved: the board, its member and its rule are still there.
    let (status, board) = app.get("/api/v1/admin/boards/stars/rules/1").await;
    assert_eq!(status, StatusCode::OK, "{board}");
    let (_, board) = app.get("/api/v1/boards/stars").await;
    assert_eq!(board["members"][0]["id"], "m1");
}

#[tokio::test]
async fn the_voting_page_has_a_visitor_cookie_of_its_own_and_never_touches_the_admin_session() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "pubvote", "title": "Pub", "public_page": true, "periods": ["all"]}))
        .await;
    app.members("pubvote", &["m1"]).await;
    let browser = Browser::new(&app);
    let admin_csrf = browser.sign_in().await;
    let login = browser.get("/admin/login").await;
    assert_eq!(login.status, StatusCode::SEE_OTHER, "signed in");

    let page = browser.get("/b/pubvote").await;
    assert_eq!(page.status, StatusCode::OK);
    let cookies: Vec<&str> = page
        .headers
        .get_all("set-cookie")
        .iter()
        .map(|c| c.to_str().unwrap())
        .collect();
    assert_eq!(cookies.len(), 1, "{cookies:?}");
    let visitor = cookies[0];
    assert!(visitor.starts_with("ovation_visitor="), "{visitor}");
    assert!(
        visitor.contains("SameSite=Lax"),
        "arriving from a link keeps it: {visitor}"
    );
    assert!(visitor.contains("Path=/b"), "{visitor}");
    assert!(visitor.contains("HttpOnly"), "{visitor}");
    // The page's CSRF token is the visitor's, not the dashboard's.
    let page_csrf = page.csrf();
    assert_ne!(page_csrf, admin_csrf);
    assert!(!page.body.contains(&admin_csrf));
    // The admin is still signed in, with the same token, and the page's token does not
    // pass a dashboard form.
    let boards = browser.get("/admin/boards").await;
    assert_eq!(boards.status, StatusCode::OK);
    assert_eq!(boards.csrf(), admin_csrf);
    let forged = browser
        .post(
            "/admin/keys",
            &[("_csrf", &page_csrf), ("name", "x"), ("scopes", "read")],
        )
        .await;
    assert_eq!(forged.status, StatusCode::FORBIDDEN);
    // A vote on the page passes with the page's token and keeps the visitor.
    let voted = browser
        .post(
            "/b/pubvote/vote",
            &[("_csrf", &page_csrf), ("member", "m1")],
        )
        .await;
    assert_eq!(voted.status, StatusCode::SEE_OTHER, "{}", voted.body);
    let (_, top) = app.get("/api/v1/boards/pubvote/top?period=all").await;
    assert_eq!(top["entries"][0]["score"], 1);
    // The dashboard's cookie stays under /admin.
    let signed = browser.get("/admin/login").await;
    assert_eq!(signed.status, StatusCode::SEE_OTHER);
    let fresh = Browser::new(&app);
    let login = fresh.get("/admin/login").await;
    let admin_cookie = login.headers["set-cookie"].to_str().unwrap();
    assert!(
        admin_cookie.starts_with("ovation=") && admin_cookie.contains("Path=/admin"),
        "{admin_cookie}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn one_address_at_its_stream_cap_leaves_others_streaming_and_the_dashboard_its_reserve() {
    let app = TestApp::spawn_with(crate::harness::Options {
        trusted_proxies: vec!["127.0.0.1/32".parse().unwrap()],
        events_max_streams: 7,
        events_dashboard_reserve: 2,
        events_max_streams_per_ip: 3,
        ..crate::harness::Options::default()
    })
    .await;
    app.board(json!({"slug": "pub", "title": "Pub", "public_page": true, "periods": ["day"]}))
        .await;
    app.members("pub", &["a"]).await;
    let open = |from: &'static str, path: &'static str| {
        let app = &app;
        async move {
            app.client
                .get(format!("{}{path}", app.base))
                .header("X-Forwarded-For", from)
                .send()
                .await
                .unwrap()
        }
    };
    let code = |resp: reqwest::Response| async move {
        let status = resp.status();
        let body: serde_json::Value = resp.json().await.unwrap();
        (
            status,
            body["error"]["code"].as_str().unwrap_or("").to_owned(),
        )
    };
    // One address: three streams, API and page alike, then no more.
    let mut held = Vec::new();
    for path in [
        "/api/v1/boards/pub/events",
        "/b/pub/stream",
        "/api/v1/boards/pub/events?top=3",
    ] {
        let resp = open("203.0.113.7", path).await;
        assert_eq!(resp.status(), StatusCode::OK, "{path}");
        held.push(resp);
    }
    assert_eq!(
        code(open("203.0.113.7", "/api/v1/boards/pub/events").await).await,
        (
            StatusCode::TOO_MANY_REQUESTS,
            "too_many_streams_from_ip".to_owned()
        )
    );
    let page = open("203.0.113.7", "/b/pub/stream").await;
    assert_eq!(page.status(), StatusCode::TOO_MANY_REQUESTS);
    // Another address still streams, up to what clients may hold (7 less the
    // dashboard's 2).
    for from in ["198.51.100.9", "192.0.2.44"] {
        let resp = open(from, "/api/v1/boards/pub/events").await;
        assert_eq!(resp.status(), StatusCode::OK, "{from}");
        held.push(resp);
    }
    let (status, refused) = code(open("192.0.2.45", "/api/v1/boards/pub/events").await).await;
    assert_eq!(
        (status, refused.as_str()),
        (StatusCode::SERVICE_UNAVAILABLE, "too_many_streams")
    );
    // A signed-in dashboard session still opens its live view's stream: twice.
    let browser = Browser::new(&app);
    browser.sign_in().await;
    let mut dashboard = Vec::new();
    for _ in 0..2 {
        let resp = browser
            .client
            .get(format!("{}/admin/boards/pub/stream?period=day", app.base))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::OK);
        dashboard.push(resp);
    }
    let resp = browser
        .client
        .get(format!("{}/admin/boards/pub/stream?period=day", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::SERVICE_UNAVAILABLE);
    drop((held, dashboard));
}
