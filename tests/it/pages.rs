//! The HTML pages over HTTP: sessions, CSRF, escaping, security headers, the dashboard's
//! forms and the public voting page with and without htmx.

use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::{HeaderMap, LOCATION};
use serde_json::json;

use crate::harness::{ADMIN_PASSWORD, Options, RawRedis, TestApp, client_builder, num};

/// A browser without JavaScript: a cookie jar, no automatic redirects.
struct Browser {
    base: String,
    client: reqwest::Client,
}

struct Page {
    status: StatusCode,
    headers: HeaderMap,
    body: String,
}

impl Page {
    /// The CSRF token of the page's first form.
    fn csrf(&self) -> String {
        let marker = r#"name="_csrf" value=""#;
        let start = self.body.find(marker).expect("the page has a form") + marker.len();
        self.body[start..].split('"').next().unwrap().to_owned()
    }

    fn location(&self) -> &str {
        self.headers
            .get(LOCATION)
            .map_or("", |v| v.to_str().unwrap())
    }
}

impl Browser {
    fn new(app: &TestApp) -> Self {
        Self {
            base: app.base.clone(),
            client: client_builder()
                .cookie_store(true)
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap(),
        }
    }

    async fn read(resp: reqwest::Response) -> Page {
        Page {
            status: resp.status(),
            headers: resp.headers().clone(),
            body: resp.text().await.unwrap(),
        }
    }

    async fn get(&self, path: &str) -> Page {
        Self::read(
            self.client
                .get(format!("{}{path}", self.base))
                .send()
                .await
                .unwrap(),
        )
        .await
    }

    async fn post(&self, path: &str, form: &[(&str, &str)]) -> Page {
        Self::read(
            self.client
                .post(format!("{}{path}", self.base))
                .form(form)
                .send()
                .await
                .unwrap(),
        )
        .await
    }

    async fn post_htmx(&self, path: &str, form: &[(&str, &str)]) -> Page {
        Self::read(
            self.client
                .post(format!("{}{path}", self.base))
                .header("HX-Request", "true")
                .form(form)
                .send()
                .await
                .unwrap(),
        )
        .await
    }

    /// Signs in as `admin` and answers a CSRF token of the session.
    async fn sign_in(&self) -> String {
        let login = self.get("/admin/login").await;
        let page = self
            .post(
                "/admin/login",
                &[
                    ("_csrf", &login.csrf()),
                    ("username", "admin"),
                    ("password", ADMIN_PASSWORD),
                ],
            )
            .await;
        assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.body);
        assert_eq!(page.location(), "/admin/boards");
        self.get("/admin/boards").await.csrf()
    }
}

/// A concrete path for a route pattern.
fn concrete(pattern: &str) -> String {
    pattern
        .replace("{board}", "stars")
        .replace("{member}", "m1")
        .replace("{id}", "1")
}

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
async fn logins_are_throttled_per_user() {
    let app = TestApp::spawn().await;
    let browser = Browser::new(&app);
    let csrf = browser.get("/admin/login").await.csrf();
    for _ in 0..5 {
        let page = browser
            .post(
                "/admin/login",
                &[
                    ("_csrf", &csrf),
                    ("username", "admin"),
                    ("password", "wrong-password"),
                ],
            )
            .await;
        assert_eq!(page.status, StatusCode::UNAUTHORIZED);
        assert!(page.body.contains("Wrong user name or password."));
    }
    let page = browser
        .post(
            "/admin/login",
            &[
                ("_csrf", &csrf),
                ("username", "admin"),
                ("password", ADMIN_PASSWORD),
            ],
        )
        .await;
    assert_eq!(
        page.status,
        StatusCode::TOO_MANY_REQUESTS,
        "the right password waits too"
    );
}

/// The `<li>` of a member's card on the voting page.
fn card<'a>(body: &'a str, member: &str) -> &'a str {
    let start = body
        .find(&format!(r#"<li id="m-{member}">"#))
        .unwrap_or_else(|| panic!("no card for {member}: {body}"));
    let end = body[start..].find("</li>").unwrap() + start;
    &body[start..end]
}

#[tokio::test]
async fn the_public_page_votes_without_javascript_and_answers_at_the_member() {
    let app = TestApp::spawn().await;
    app.board(
        json!({"slug": "pub", "title": "Public", "public_page": true, "timezone": "Asia/Shanghai"}),
    )
    .await;
    app.members("pub", &["m1", "m2"]).await;
    let (status, _) = app
        .post(
            "/api/v1/admin/boards/pub/rules",
            json!({"name": "two a day", "dimensions": ["voter"], "window": "day", "limit": 2}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let visitor = Browser::new(&app);
    let page = visitor.get("/b/pub").await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(
        page.body.contains("2 of 2 votes left today"),
        "{}",
        page.body
    );
    assert!(
        page.body.contains(r#"aria-label="Vote for Name m1""#),
        "{}",
        page.body
    );
    let csrf = page.csrf();

    let voted = visitor
        .post(
            "/b/pub/vote",
            &[("_csrf", &csrf), ("member", "m1"), ("period", "all")],
        )
        .await;
    assert_eq!(voted.status, StatusCode::SEE_OTHER);
    assert_eq!(voted.location(), "/b/pub?period=all#m-m1");
    let page = visitor.get("/b/pub?period=all").await;
    assert!(
        card(&page.body, "m1").contains("Thanks — your vote for Name m1 counts."),
        "the answer shows at the member voted for: {}",
        page.body
    );
    assert!(
        page.body.contains("1 of 2 votes left today"),
        "{}",
        page.body
    );
    assert!(card(&page.body, "m1").contains("1 vote<"), "{}", page.body);

    // With htmx the member's card comes back, and the quota out of band.
    let block = visitor
        .post_htmx(
            "/b/pub/vote",
            &[("_csrf", &csrf), ("member", "m2"), ("period", "all")],
        )
        .await;
    assert_eq!(block.status, StatusCode::OK);
    assert!(!block.body.contains("<html"), "a block, not a page");
    assert!(
        block.body.starts_with(r#"<li id="m-m2">"#),
        "{}",
        block.body
    );
    assert!(
        block
            .body
            .contains("Thanks — your vote for Name m2 counts.")
    );
    assert!(
        block.body.contains(r#"<div id="poller""#)
            && block.body.contains(r#"hx-swap-oob="true"></div>"#),
        "a fresh poller: {}",
        block.body
    );
    assert!(
        block.body.contains(
            r#"<div id="quota" hx-swap-oob="true"><p class="quota">0 of 2 votes left today</p>"#
        ),
        "{}",
        block.body
    );

    let refused = visitor
        .post_htmx(
            "/b/pub/vote",
            &[("_csrf", &csrf), ("member", "m2"), ("period", "all")],
        )
        .await;
    assert!(
        refused.body.contains(
            "You have used your 2 votes today. Voting opens again tomorrow 00:00 Beijing time, in "
        ),
        "{}",
        refused.body
    );

    for member in ["m1", "m2"] {
        let (_, body) = app
            .get(&format!(
                "/api/v1/boards/pub/members/{member}?period=all&view=real"
            ))
            .await;
        assert_eq!(num(&body["score"]), 1.0, "{member}");
    }
    // The ranking refreshes on its own: the block for htmx, the same for everyone.
    let ranking = visitor.get("/b/pub/ranking?period=all").await;
    assert_eq!(ranking.status, StatusCode::OK);
    assert!(
        ranking.body.starts_with("<ol class=\"members\">"),
        "{}",
        ranking.body
    );
    assert!(
        !ranking.body.contains("_csrf"),
        "no visitor's token in a shared block"
    );
    let page = visitor.get("/b/pub").await;
    assert!(page.body.contains(
        r##"hx-get="/b/pub/ranking?period=all" hx-trigger="every 5s" hx-target="#ranking""##
    ));
    // Another visitor has their own quota.
    let other = Browser::new(&app);
    assert!(
        other
            .get("/b/pub")
            .await
            .body
            .contains("2 of 2 votes left today")
    );
    // A board without a public page has none.
    app.board(json!({"slug": "private", "title": "Private"}))
        .await;
    assert_eq!(other.get("/b/private").await.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_per_member_refusal_says_about_whom_and_what_is_left_in_chinese_too() {
    let app = TestApp::spawn().await;
    app.board(
        json!({"slug": "acts", "title": "Acts", "public_page": true, "timezone": "Asia/Shanghai"}),
    )
    .await;
    app.members("acts", &["zed", "amy"]).await;
    for rule in [
        json!({"name": "five a day", "dimensions": ["voter"], "window": "day", "limit": 5}),
        json!({"name": "two per act", "dimensions": ["voter", "member"], "window": "day", "limit": 2}),
    ] {
        let (status, _) = app.post("/api/v1/admin/boards/acts/rules", rule).await;
        assert_eq!(status, StatusCode::CREATED);
    }
    let visitor = Browser::new(&app);
    let page = visitor.get("/b/acts").await;
    assert!(
        page.body.contains("5 of 5 votes left today"),
        "{}",
        page.body
    );
    assert!(
        page.body.contains("At most 2 votes for each member today"),
        "{}",
        page.body
    );
    let csrf = page.csrf();
    for _ in 0..2 {
        visitor
            .post_htmx("/b/acts/vote", &[("_csrf", &csrf), ("member", "zed")])
            .await;
    }
    let refused = visitor
        .post_htmx("/b/acts/vote", &[("_csrf", &csrf), ("member", "zed")])
        .await;
    assert!(
        refused.body.contains("You have given Name zed 2 votes today, the most one voter may. Voting opens again tomorrow 00:00 Beijing time, in "),
        "{}",
        refused.body
    );
    assert!(
        refused
            .body
            .contains("You can still vote for others: 3 of 5 left today."),
        "{}",
        refused.body
    );
    // The API says the same in its 429.
    let (status, body) = app
        .vote("acts", json!({"member": "zed", "voter": "api-voter"}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    app.vote("acts", json!({"member": "zed", "voter": "api-voter"}))
        .await;
    let (status, body) = app
        .vote("acts", json!({"member": "zed", "voter": "api-voter"}))
        .await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("You have given Name zed 2 votes today, the most one voter may. Voting opens again tomorrow 00:00 Beijing time, in "),
        "{message}"
    );
    // In Chinese, by Accept-Language, and a switch that sticks.
    let chinese = visitor
        .client
        .get(format!("{}/b/acts", visitor.base))
        .header("Accept-Language", "zh-CN,zh;q=0.9")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(chinese.contains(r#"<html lang="zh-CN">"#), "{chinese}");
    assert!(chinese.contains("今天还剩 3 / 5 票"), "{chinese}");
    assert!(chinese.contains("每位成员今天最多 2 票"), "{chinese}");
    let refused = visitor
        .client
        .post(format!("{}/b/acts/vote", visitor.base))
        .header("Accept-Language", "zh-CN")
        .header("HX-Request", "true")
        .form(&[("_csrf", csrf.as_str()), ("member", "zed")])
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        refused.contains(
            "你今天已为 Name zed 投了 2 票，这是每位投票人的上限。明天 00:00（北京时间）恢复投票，"
        ),
        "{refused}"
    );
    let switched = visitor.get("/lang/zh-CN?back=/b/acts").await;
    assert_eq!(switched.status, StatusCode::SEE_OTHER);
    assert_eq!(switched.location(), "/b/acts");
    let page = visitor.get("/b/acts").await;
    assert!(
        page.body.contains(r#"<html lang="zh-CN">"#),
        "the cookie sticks"
    );
    let away = visitor.get("/lang/en?back=https://evil.example/").await;
    assert_eq!(
        away.location(),
        "/admin",
        "the switch never leaves the site"
    );
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
async fn scores_show_the_boards_decimals_and_ranks_have_no_gaps() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "dec", "title": "Dec", "public_page": true, "multiplier": 1.1, "periods": ["all"]}))
        .await;
    app.members("dec", &["a", "b", "c", "d"]).await;
    for (member, count) in [("a", 3), ("b", 184), ("c", 2), ("d", 2)] {
        let (status, _) = app
            .vote("dec", json!({"member": member, "count": count}))
            .await;
        assert_eq!(status, StatusCode::OK);
    }
    let visitor = Browser::new(&app);
    let page = visitor.get("/b/dec").await;
    assert!(card(&page.body, "b").contains("202 votes"), "{}", page.body);
    app.patch("/api/v1/admin/boards/dec", json!({"display_decimals": 1}))
        .await;
    let page = visitor.get("/b/dec").await;
    assert!(
        card(&page.body, "b").contains("202.4 votes"),
        "{}",
        page.body
    );
    let (_, top) = app.get("/api/v1/boards/dec/top").await;
    assert_eq!(
        top["entries"][0]["score"], 202.4,
        "the API keeps exact values"
    );
    // Disabling the leader moves everyone up, without a gap; ties share a rank.
    let (status, _) = app
        .patch(
            "/api/v1/admin/boards/dec/members/b",
            json!({"enabled": false}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let page = visitor.get("/b/dec").await;
    assert!(!page.body.contains(r#"id="m-b""#), "{}", page.body);
    let rank = |m: &str| {
        let c = card(&page.body, m);
        let start = c.find(r#"<span class="rank">"#).unwrap() + r#"<span class="rank">"#.len();
        c[start..].split('<').next().unwrap().to_owned()
    };
    assert_eq!(
        (rank("a"), rank("c"), rank("d")),
        ("1".into(), "2".into(), "2".into())
    );
}

#[tokio::test]
async fn the_dashboard_imports_with_a_preview_and_audits_every_change() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "imp", "title": "Import"})).await;
    let browser = Browser::new(&app);
    let csrf = browser.sign_in().await;

    let bad = "id,name,image_url,initial_votes,multiplier\nm1,Ada,,5,\nbad id,Lin,,x,\n";
    let page = browser
        .post(
            "/admin/boards/imp/members/import",
            &[("_csrf", &csrf), ("csv", bad)],
        )
        .await;
    assert_eq!(page.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        page.body
            .contains("One line is wrong; nothing will be imported"),
        "{}",
        page.body
    );
    let good = "id,name,image_url,initial_votes,multiplier\nm1,Ada,,5,\nm2,Lin,,0,2\n";
    let page = browser
        .post(
            "/admin/boards/imp/members/import",
            &[("_csrf", &csrf), ("csv", good)],
        )
        .await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(
        page.body
            .contains("2 members will be written: 2 new, 0 updated, 0 unchanged.")
    );
    let (_, members) = app.get("/api/v1/boards/imp").await;
    assert_eq!(members["members"], json!([]), "a preview writes nothing");
    let page = browser
        .post(
            "/admin/boards/imp/members/import",
            &[("_csrf", &csrf), ("csv", good), ("confirm", "yes")],
        )
        .await;
    assert_eq!(page.status, StatusCode::SEE_OTHER);
    let (_, board) = app.get("/api/v1/boards/imp").await;
    assert_eq!(board["members"].as_array().unwrap().len(), 2, "{board}");

    let page = browser
        .post(
            "/admin/boards/imp/rules",
            &[
                ("_csrf", &csrf),
                ("name", "five a day"),
                ("dimensions", "voter"),
                ("window", "day"),
                ("limit", "5"),
                ("overrides", "channel=partner-a: 10"),
                ("missing", "refuse"),
            ],
        )
        .await;
    assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.body);
    let rules = browser.get("/admin/boards/imp/rules").await;
    assert!(
        rules
            .body
            .contains("each voter, 5 per day — channel partner-a: 10"),
        "{}",
        rules.body
    );

    let keys = browser
        .post(
            "/admin/keys",
            &[
                ("_csrf", &csrf),
                ("name", "backend"),
                ("scopes", "vote"),
                ("scopes", "read"),
                ("channel", ""),
            ],
        )
        .await;
    assert_eq!(keys.status, StatusCode::SEE_OTHER, "post, redirect, get");
    assert_eq!(keys.location(), "/admin/keys");
    let shown = browser.get("/admin/keys").await.body;
    let marker = r#"<code id="new-key">"#;
    let start = shown.find(marker).expect("the secret is shown once") + marker.len();
    let secret = shown[start..].split('<').next().unwrap().to_owned();
    assert!(secret.starts_with("ovk_") && secret.len() == 44, "{secret}");
    let listed = browser.get("/admin/keys").await.body;
    assert!(!listed.contains(&secret), "and only once");
    assert!(
        listed.contains("<summary>Revoke…</summary>"),
        "revoking asks first"
    );
    // A partner's key, limited to two boards, reaches no league: the list says so.
    let partner = browser
        .post(
            "/admin/keys",
            &[
                ("_csrf", &csrf),
                ("name", "partner"),
                ("scopes", "vote"),
                ("channel", "partner-a"),
                ("boards", "imp, other"),
                ("leagues", ""),
            ],
        )
        .await;
    assert_eq!(partner.status, StatusCode::SEE_OTHER, "{}", partner.body);
    let listed = browser.get("/admin/keys").await.body;
    assert!(
        listed.contains(
            r#"<td>partner-a</td><td>imp, other</td><td><span class="muted">none</span></td>"#
        ),
        "{listed}"
    );
    assert!(
        listed.contains(r#"<td>vote, read</td><td></td><td><span class="muted">all</span></td><td><span class="muted">all</span></td>"#),
        "{listed}"
    );
    // A refused form keeps what was typed.
    let refused = browser
        .post(
            "/admin/keys",
            &[
                ("_csrf", &csrf),
                ("name", "typed name"),
                ("scopes", "read"),
                ("channel", "not a channel!"),
            ],
        )
        .await;
    assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        refused.body.contains(r#"value="typed name""#),
        "{}",
        refused.body
    );
    assert!(
        refused.body.contains(r#"value="read" checked"#),
        "{}",
        refused.body
    );

    let audit = browser.get("/admin/audit").await;
    for expected in [
        "board.create",
        "master key",
        "members.upsert",
        "user:admin",
        "rule.create",
        "api_key.create",
    ] {
        assert!(
            audit.body.contains(expected),
            "{expected} missing from the audit log"
        );
    }
    let filtered = browser.get("/admin/audit?action=rule.").await;
    assert!(filtered.body.contains("rule.create"));
    assert!(!filtered.body.contains("members.upsert"));
}

#[tokio::test]
async fn the_live_view_refreshes_as_an_htmx_block_with_rank_changes_and_charts() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "live", "title": "Live", "periods": ["hour", "day", "all"]}))
        .await;
    app.members("live", &["m1", "m2"]).await;
    let at = chrono::Utc::now() - chrono::Duration::hours(1);
    let at = at.to_rfc3339();
    for (member, votes) in [("m1", 3), ("m2", 1)] {
        for _ in 0..votes {
            app.vote("live", json!({"member": member, "at": at})).await;
        }
    }
    for _ in 0..5 {
        app.vote("live", json!({"member": "m2"})).await;
    }
    app.vote("live", json!({"member": "m1"})).await;
    let browser = Browser::new(&app);
    browser.sign_in().await;
    let resp = browser
        .client
        .get(format!(
            "{}/admin/boards/live/live?period=hour&view=real",
            browser.base
        ))
        .header("HX-Request", "true")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    let body = resp.text().await.unwrap();
    assert!(!body.contains("<html"), "a block, not a page");
    assert!(body.contains("<svg"), "charts are drawn");
    // m2 leads this hour after trailing last hour; m1 went the other way.
    assert!(body.contains("▲1"), "{body}");
    assert!(body.contains("▼1"), "{body}");
    let full = browser.get("/admin/boards/live?period=hour").await;
    assert!(full.body.contains(r#"hx-trigger="every 2s""#));
    let csv = browser
        .get("/admin/boards/live/export.csv?period=all&view=real")
        .await;
    assert_eq!(
        csv.body,
        "rank,member,name,score\n1,m2,Name m2,6\n2,m1,Name m1,4\n"
    );
}

#[tokio::test]
async fn the_public_page_of_an_open_board_cannot_add_members() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "open", "title": "Open", "membership": "open", "public_page": true}))
        .await;
    let (status, _) = app.vote("open", json!({"member": "via-api"})).await;
    assert_eq!(
        status,
        StatusCode::OK,
        "the API still adds members to open boards"
    );
    let visitor = Browser::new(&app);
    let csrf = visitor.get("/b/open").await.csrf();
    let page = visitor
        .post("/b/open/vote", &[("_csrf", &csrf), ("member", "made-up")])
        .await;
    assert_eq!(page.status, StatusCode::NOT_FOUND, "{}", page.body);
    let page = visitor
        .post("/b/open/vote", &[("_csrf", &csrf), ("member", "via-api")])
        .await;
    assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.body);
    let (_, top) = app.get("/api/v1/boards/open/top?view=real").await;
    assert_eq!(
        top["entries"],
        json!([{"rank": 1, "member": "via-api", "name": null, "image_url": null, "score": 2}])
    );
}

#[tokio::test]
async fn a_public_vote_with_a_bad_period_is_refused_before_it_counts() {
    let app = TestApp::spawn().await;
    app.board(
        json!({"slug": "pub", "title": "Public", "public_page": true, "periods": ["day", "all"]}),
    )
    .await;
    app.members("pub", &["m1"]).await;
    let visitor = Browser::new(&app);
    let csrf = visitor.get("/b/pub").await.csrf();
    for period in ["year", "week", "day\r\nSet-Cookie: x=1", "all "] {
        let page = visitor
            .post(
                "/b/pub/vote",
                &[("_csrf", &csrf), ("member", "m1"), ("period", period)],
            )
            .await;
        assert_eq!(
            page.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{period:?}: {}",
            page.body
        );
    }
    let (_, m1) = app.get("/api/v1/boards/pub/members/m1?view=real").await;
    assert_eq!(num(&m1["score"]), 0.0, "nothing counted");
    let page = visitor
        .post(
            "/b/pub/vote",
            &[("_csrf", &csrf), ("member", "m1"), ("period", "")],
        )
        .await;
    assert_eq!(page.status, StatusCode::SEE_OTHER);
    assert_eq!(page.location(), "/b/pub?period=all#m-m1");
}

#[tokio::test]
async fn the_live_view_and_export_refuse_far_future_buckets_with_a_page() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "far", "title": "Far", "periods": ["week", "month", "all"]}))
        .await;
    let browser = Browser::new(&app);
    browser.sign_in().await;
    for path in [
        "/admin/boards/far?period=month&at=262142-12",
        "/admin/boards/far?period=week&at=262142-W52",
        "/admin/boards/far/live?period=month&at=262142-12",
        "/admin/boards/far/export.csv?period=month&at=262142-12",
        "/admin/boards/far/export.csv?period=week&at=9999-W52",
    ] {
        let page = browser.get(path).await;
        assert_eq!(page.status, StatusCode::UNPROCESSABLE_ENTITY, "{path}");
        assert!(
            page.body.contains("supported years 1970–9999"),
            "{path}: {}",
            page.body
        );
    }
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

/// A login form post from `ip` (the app trusts 127.0.0.1 as a proxy): answers the status.
async fn login_from(
    browser: &Browser,
    csrf: &str,
    ip: &str,
    user: &str,
    password: &str,
) -> StatusCode {
    browser
        .client
        .post(format!("{}/admin/login", browser.base))
        .header("X-Forwarded-For", ip)
        .form(&[("_csrf", csrf), ("username", user), ("password", password)])
        .send()
        .await
        .unwrap()
        .status()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn parallel_guesses_get_five_tries_and_cannot_lock_the_admin_out_elsewhere() {
    let app = TestApp::spawn_with(Options {
        trusted_proxies: vec!["127.0.0.1/32".parse().unwrap()],
        ..Options::default()
    })
    .await;
    let attacker = Browser::new(&app);
    let csrf = attacker.get("/admin/login").await.csrf();
    let mut guesses = Vec::new();
    for i in 0..50 {
        let (client, base, csrf) = (attacker.client.clone(), attacker.base.clone(), csrf.clone());
        guesses.push(tokio::spawn(async move {
            let browser = Browser { base, client };
            login_from(
                &browser,
                &csrf,
                "198.51.100.7",
                "admin",
                &format!("guess-{i}"),
            )
            .await
        }));
    }
    let mut tried = 0;
    for guess in guesses {
        match guess.await.unwrap() {
            StatusCode::UNAUTHORIZED => tried += 1,
            StatusCode::TOO_MANY_REQUESTS => {}
            other => panic!("unexpected {other}"),
        }
    }
    assert_eq!(tried, 5, "exactly five guesses reach the password check");
    // The real admin, elsewhere, still signs in.
    let admin = Browser::new(&app);
    let csrf = admin.get("/admin/login").await.csrf();
    assert_eq!(
        login_from(&admin, &csrf, "203.0.113.20", "admin", ADMIN_PASSWORD).await,
        StatusCode::SEE_OTHER
    );
    // Addresses of one IPv6 /64 count as one.
    let rotating = Browser::new(&app);
    let csrf = rotating.get("/admin/login").await.csrf();
    for i in 1..=5 {
        let ip = format!("2001:db8:5:7::{i:x}");
        assert_eq!(
            login_from(&rotating, &csrf, &ip, "admin", "nope-nope").await,
            StatusCode::UNAUTHORIZED
        );
    }
    assert_eq!(
        login_from(
            &rotating,
            &csrf,
            "2001:db8:5:7:ffff::1",
            "admin",
            ADMIN_PASSWORD
        )
        .await,
        StatusCode::TOO_MANY_REQUESTS
    );
    // A user name no user can have makes no key of its own, whatever its size.
    let long = "x".repeat(100_000);
    assert_eq!(
        login_from(&rotating, &csrf, "192.0.2.50", &long, "whatever").await,
        StatusCode::UNAUTHORIZED
    );
    let client = redis::Client::open(crate::harness::shared_redis().url()).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg(format!("{}:{{login:*", app.prefix))
        .query_async(&mut conn)
        .await
        .unwrap();
    assert!(keys.iter().all(|k| k.len() < 200), "{keys:?}");
    assert!(
        keys.iter().any(|k| k.ends_with("{login:192.0.2.50}:any")),
        "{keys:?}"
    );
}

#[tokio::test]
async fn logins_are_throttled_per_ip_across_user_names() {
    let app = TestApp::spawn().await;
    let browser = Browser::new(&app);
    let csrf = browser.get("/admin/login").await.csrf();
    for i in 0..20 {
        let name = format!("nobody{i}");
        let page = browser
            .post(
                "/admin/login",
                &[
                    ("_csrf", &csrf),
                    ("username", &name),
                    ("password", "wrong-password"),
                ],
            )
            .await;
        assert_eq!(page.status, StatusCode::UNAUTHORIZED);
    }
    let page = browser
        .post(
            "/admin/login",
            &[
                ("_csrf", &csrf),
                ("username", "admin"),
                ("password", ADMIN_PASSWORD),
            ],
        )
        .await;
    assert_eq!(page.status, StatusCode::TOO_MANY_REQUESTS);
}

#[tokio::test]
async fn dashboard_forms_edit_disable_revoke_and_delete() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "edit", "title": "Edit"})).await;
    app.members("edit", &["m1"]).await;
    let browser = Browser::new(&app);
    let csrf = browser.sign_in().await;

    // Disable, then enable a member.
    let page = browser
        .post("/admin/boards/edit/members/m1/toggle", &[("_csrf", &csrf)])
        .await;
    assert_eq!(page.status, StatusCode::SEE_OTHER);
    let (status, body) = app.vote("edit", json!({"member": "m1"})).await;
    assert_eq!(
        (status, body["error"]["code"].clone()),
        (StatusCode::CONFLICT, json!("member_disabled"))
    );
    browser
        .post("/admin/boards/edit/members/m1/toggle", &[("_csrf", &csrf)])
        .await;
    assert_eq!(
        app.vote("edit", json!({"member": "m1"})).await.0,
        StatusCode::OK
    );

    // Edit a rule, then delete it.
    let (_, rule) = app
        .post(
            "/api/v1/admin/boards/edit/rules",
            json!({"name": "r", "dimensions": ["voter"], "window": "day", "limit": 1}),
        )
        .await;
    let id = rule["id"].as_i64().unwrap();
    let page = browser
        .post(
            &format!("/admin/boards/edit/rules/{id}"),
            &[
                ("_csrf", &csrf),
                ("name", "r2"),
                ("dimensions", "voter, terminal"),
                ("window", "rolling:2h"),
                ("limit", "4"),
                ("overrides", ""),
                ("missing", "skip"),
            ],
        )
        .await;
    assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.body);
    let (_, rule) = app
        .get(&format!("/api/v1/admin/boards/edit/rules/{id}"))
        .await;
    assert_eq!(
        rule,
        json!({"id": id, "name": "r2", "dimensions": ["voter", "terminal"], "window": "rolling:2h", "limit": 4, "overrides": [], "missing": "skip"})
    );
    let page = browser
        .post(
            &format!("/admin/boards/edit/rules/{id}"),
            &[
                ("_csrf", &csrf),
                ("name", "r3"),
                ("dimensions", "voter"),
                ("window", "fortnight"),
                ("limit", "4"),
                ("missing", "skip"),
            ],
        )
        .await;
    assert_eq!(page.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(page.body.contains("unknown window"), "{}", page.body);
    browser
        .post(
            &format!("/admin/boards/edit/rules/{id}/delete"),
            &[("_csrf", &csrf)],
        )
        .await;
    assert_eq!(
        app.get(&format!("/api/v1/admin/boards/edit/rules/{id}"))
            .await
            .0,
        StatusCode::NOT_FOUND
    );

    // Revoke a key.
    let key = app.key(&["read"], None).await;
    let (_, keys) = app.get("/api/v1/admin/api-keys").await;
    let key_id = keys["api_keys"][0]["id"].as_i64().unwrap();
    browser
        .post(&format!("/admin/keys/{key_id}/revoke"), &[("_csrf", &csrf)])
        .await;
    let (status, _) = app
        .call(
            reqwest::Method::GET,
            "/api/v1/boards/edit",
            Some(&key),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);

    // Deleting needs the slug typed in.
    let page = browser
        .post(
            "/admin/boards/edit/delete",
            &[("_csrf", &csrf), ("confirm", "nope")],
        )
        .await;
    assert_eq!(page.location(), "/admin/boards/edit/edit");
    assert_eq!(app.get("/api/v1/admin/boards/edit").await.0, StatusCode::OK);
    let page = browser
        .post(
            "/admin/boards/edit/delete",
            &[("_csrf", &csrf), ("confirm", "edit")],
        )
        .await;
    assert_eq!(page.location(), "/admin/boards");
    assert_eq!(
        app.get("/api/v1/admin/boards/edit").await.0,
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn dashboard_forms_keep_input_members_page_and_csv_behave() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "ops", "title": "Ops", "membership": "open"}))
        .await;
    let ids: Vec<String> = (0..120).map(|i| format!("m{i:03}")).collect();
    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    app.members("ops", &ids).await;
    let (status, _) = app
        .put(
            "/api/v1/admin/boards/ops/members",
            json!({"members": [{"id": "m001", "name": "Ada", "image_url": "https://img.example/ada.png", "initial_votes": 7}]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let browser = Browser::new(&app);
    let csrf = browser.sign_in().await;

    // Paging and search.
    let first = browser.get("/admin/boards/ops/members").await;
    assert!(first.body.contains("1–50 of 120"), "{}", first.body);
    assert!(first.body.contains("page=2"), "a next page");
    let third = browser.get("/admin/boards/ops/members?page=3").await;
    assert!(third.body.contains("101–120 of 120"), "{}", third.body);
    let found = browser.get("/admin/boards/ops/members?q=ADA").await;
    assert!(
        found.body.contains("1–1 of 1") && found.body.contains("m001"),
        "{}",
        found.body
    );
    // Edit fills the form with the member's values.
    let edit = browser.get("/admin/boards/ops/members?edit=m001").await;
    assert!(
        edit.body.contains(r#"value="https://img.example/ada.png""#),
        "{}",
        edit.body
    );
    // A refused member form keeps what was typed.
    let refused = browser
        .post(
            "/admin/boards/ops/members",
            &[
                ("_csrf", &csrf),
                ("id", "new-one"),
                ("name", "Typed Name"),
                ("initial_votes", "lots"),
            ],
        )
        .await;
    assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        refused.body.contains(r#"value="Typed Name""#),
        "{}",
        refused.body
    );
    assert!(refused.body.contains(r#"value="lots""#), "{}", refused.body);
    // A refused rule keeps what was typed too.
    let refused = browser
        .post(
            "/admin/boards/ops/rules",
            &[
                ("_csrf", &csrf),
                ("name", "my rule"),
                ("dimensions", "voter"),
                ("window", "fortnight"),
                ("limit", "9"),
                ("missing", "skip"),
            ],
        )
        .await;
    assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
    for typed in [
        r#"value="my rule""#,
        r#"value="fortnight""#,
        r#"value="9""#,
        r#"value="skip" selected"#,
    ] {
        assert!(refused.body.contains(typed), "{typed}: {}", refused.body);
    }

    // A re-import with empty cells keeps images and initial votes; the preview says
    // which rows are new, updated or unchanged.
    let csv = "id,name,image_url,initial_votes,multiplier\nm001,Ada Lovelace,,,\nm002,Name m002,,,\nbrand-new,Newcomer,,,\n";
    let preview = browser
        .post(
            "/admin/boards/ops/members/import",
            &[("_csrf", &csrf), ("csv", csv)],
        )
        .await;
    assert_eq!(preview.status, StatusCode::OK);
    assert!(
        preview.body.contains("1 new, 1 updated, 1 unchanged"),
        "{}",
        preview.body
    );
    assert!(preview.body.contains(">Cancel</a>"), "{}", preview.body);
    let done = browser
        .post(
            "/admin/boards/ops/members/import",
            &[("_csrf", &csrf), ("csv", csv), ("confirm", "yes")],
        )
        .await;
    assert_eq!(done.status, StatusCode::SEE_OTHER);
    let (_, board) = app.get("/api/v1/admin/boards/ops").await;
    let ada = board["members"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["id"] == "m001")
        .unwrap()
        .clone();
    assert_eq!(
        (ada["name"].as_str(), ada["image_url"].as_str()),
        (Some("Ada Lovelace"), Some("https://img.example/ada.png"))
    );
    let (_, m001) = app.get("/api/v1/boards/ops/members/m001?period=all").await;
    assert_eq!(num(&m001["score"]), 7.0, "initial votes kept");

    // The CSV export cannot smuggle a formula into a spreadsheet.
    let (status, _) = app
        .put(
            "/api/v1/admin/boards/ops/members",
            json!({"members": [{"id": "-m1", "name": "=HYPERLINK(1)"}, {"id": "plain", "name": "@once"}]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    app.vote("ops", json!({"member": "-m1", "count": 2})).await;
    app.vote("ops", json!({"member": "plain"})).await;
    let csv = browser
        .get("/admin/boards/ops/export.csv?period=all&view=real")
        .await;
    assert!(
        csv.body.contains(",'-m1,'=HYPERLINK(1),2\n"),
        "{}",
        csv.body
    );
    assert!(csv.body.contains(",plain,'@once,1\n"), "{}", csv.body);
}

#[tokio::test]
async fn only_the_listed_sites_may_frame_the_embedded_board() {
    let app = TestApp::spawn().await;
    app.board(
        json!({"slug": "emb", "title": "Emb", "public_page": true, "periods": ["all"],
        "embed_origins": ["https://shop.example", "https://Blog.example:8443"]}),
    )
    .await;
    app.members("emb", &["m1"]).await;
    let visitor = Browser::new(&app);
    let page = visitor.get("/embed/b/emb").await;
    assert_eq!(page.status, StatusCode::OK);
    let csp = page.headers["content-security-policy"].to_str().unwrap();
    assert!(
        csp.contains("frame-ancestors https://shop.example https://blog.example:8443;"),
        "{csp}"
    );
    assert!(page.headers.get("x-frame-options").is_none());
    assert!(
        page.body.contains(r#"action="/embed/b/emb/vote""#),
        "{}",
        page.body
    );
    assert!(
        page.body
            .contains(r#"hx-get="/embed/b/emb/ranking?period=all""#)
    );
    let cookie = page.headers["set-cookie"].to_str().unwrap();
    assert!(
        cookie.starts_with("ovation_embed=") && cookie.contains("SameSite=None"),
        "{cookie}"
    );
    // Its forms keep the page's CSRF rule, and a vote answers at the member.
    let refused = visitor.post("/embed/b/emb/vote", &[("member", "m1")]).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    let voted = visitor
        .post(
            "/embed/b/emb/vote",
            &[("_csrf", &page.csrf()), ("member", "m1")],
        )
        .await;
    assert_eq!(voted.status, StatusCode::SEE_OTHER);
    assert_eq!(voted.location(), "/embed/b/emb?period=all#m-m1");
    let (_, m1) = app.get("/api/v1/boards/emb/members/m1?view=real").await;
    assert_eq!(num(&m1["score"]), 1.0);
    // The page itself may not be framed anywhere; a board without sites has no embed.
    let own = visitor.get("/b/emb").await;
    assert!(
        own.headers["content-security-policy"]
            .to_str()
            .unwrap()
            .contains("frame-ancestors 'none'")
    );
    assert_eq!(own.headers["x-frame-options"], "DENY");
    app.board(json!({"slug": "closed", "title": "Closed", "public_page": true}))
        .await;
    assert_eq!(
        visitor.get("/embed/b/closed").await.status,
        StatusCode::NOT_FOUND
    );
    let (status, body) = app
        .patch(
            "/api/v1/admin/boards/emb",
            json!({"embed_origins": ["https://shop.example/path"]}),
        )
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("invalid_origin"))
    );
}

#[tokio::test]
async fn live_view_charts_follow_the_bucket_with_axes_zones_a_picker_and_a_pause() {
    let app = TestApp::spawn().await;
    app.board(
        json!({"slug": "ch", "title": "Charts", "timezone": "Asia/Shanghai",
        "periods": ["day", "week", "month", "all"]}),
    )
    .await;
    app.members("ch", &["m1", "m2"]).await;
    let (status, _) = app
        .post(
            "/api/v1/admin/boards/ch/rules",
            json!({"name": "five a day", "dimensions": ["voter"], "window": "day", "limit": 5}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED);
    // Week 2026-W45 in Beijing: 3 votes on Tuesday morning, 2 on Thursday evening.
    for (member, at, n) in [
        ("m1", "2026-11-03T10:00:00+08:00", 3),
        ("m2", "2026-11-05T20:30:00+08:00", 2),
    ] {
        for _ in 0..n {
            let (status, body) = app
                .vote(
                    "ch",
                    json!({"member": member, "at": at, "skip_limits": true}),
                )
                .await;
            assert_eq!(status, StatusCode::OK, "{body}");
        }
    }
    let browser = Browser::new(&app);
    browser.sign_in().await;
    let week = browser
        .get("/admin/boards/ch?period=week&at=2026-W45&view=real")
        .await;
    assert_eq!(week.status, StatusCode::OK);
    let body = &week.body;
    // Votes per day across the week's seven days, each labelled, in board time.
    assert!(
        body.contains("<figcaption>Votes per day</figcaption>"),
        "{body}"
    );
    assert!(body.contains(">day, Beijing time</text>"), "{body}");
    for day in ["11/2", "11/3", "11/4", "11/5", "11/6", "11/7", "11/8"] {
        assert!(body.contains(&format!(">{day}</text>")), "{day}");
    }
    assert!(
        body.contains("<title>Tue 3 Nov Beijing time · votes: 3</title>"),
        "{body}"
    );
    assert!(body.contains("<title>Thu 5 Nov Beijing time · votes: 2</title>"));
    assert!(body.contains("<title>Wed 4 Nov Beijing time · votes: 0</title>"));
    // Participants per week, twelve weeks up to the selected one.
    assert!(body.contains("<figcaption>Participants per week</figcaption>"));
    assert!(body.contains(">W45</text>") && body.contains(">ISO week, Beijing time</text>"));
    assert_eq!(body.matches("· voters: ").count(), 12);
    // Refusals older than Redis keeps them are not drawn as zeros.
    assert!(body.contains("Refusals are kept 8 days; older ones are not drawn."));
    assert!(!body.contains("· five a day: "));
    // The top 10 names its unit; the value axis has round ticks.
    assert!(body.contains(r#"text-anchor="end">score (real)</text>"#));
    assert!(body.contains(r#"<text class="unit" x="2" y="14">votes</text>"#));
    // The picker: the selected week, with earlier and later neighbours.
    assert!(
        body.contains(r#"<option value="2026-W45" selected>2026-W45</option>"#),
        "{body}"
    );
    assert!(body.contains("at=2026-W44"), "{body}");
    assert!(body.contains("at=2026-W46"));
    assert!(body.contains(r#"hx-trigger="every 2s""#));
    // A past month charts its 31 days; all time the last 48 hours.
    let month = browser
        .get("/admin/boards/ch?period=month&at=2026-10&view=real")
        .await;
    assert_eq!(month.body.matches("Beijing time · votes: 0<").count(), 31);
    assert!(
        month
            .body
            .contains("<title>Sat 31 Oct Beijing time · votes: 0</title>")
    );
    let all = browser.get("/admin/boards/ch?period=all").await;
    assert!(all.body.contains("<figcaption>Votes per hour</figcaption>"));
    assert_eq!(all.body.matches("Beijing time · votes: ").count(), 48);
    assert!(all.body.contains(">hour, Beijing time</text>"));
    assert!(
        all.body
            .contains("<figcaption>Participants per day</figcaption>")
    );
    // Paused: no refresh until resumed.
    let paused = browser
        .get("/admin/boards/ch?period=week&at=2026-W45&paused=1")
        .await;
    assert!(!paused.body.contains("hx-trigger"), "{}", paused.body);
    assert!(paused.body.contains(r#"id="resume" href="/admin/boards/ch?period=week&amp;view=display&amp;at=2026-W45">Resume live updates</a>"#), "{}", paused.body);
    assert!(week.body.contains(r#"id="pause""#) && week.body.contains("paused=1"));
}

#[tokio::test]
async fn the_dashboard_speaks_chinese_when_asked() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "zh", "title": "星光大道", "timezone": "Asia/Shanghai"}))
        .await;
    app.members("zh", &["m1"]).await;
    let (status, _) = app
        .post(
            "/api/v1/admin/boards/zh/rules",
            json!({"name": "每天五票", "dimensions": ["voter"], "window": "day", "limit": 5}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let browser = Browser::new(&app);
    browser.sign_in().await;
    let get = |path: &'static str| {
        let req = browser
            .client
            .get(format!("{}{path}", browser.base))
            .header("Accept-Language", "zh-CN,zh;q=0.9,en;q=0.5");
        async move { req.send().await.unwrap().text().await.unwrap() }
    };
    let boards = get("/admin/boards").await;
    assert!(boards.contains(r#"<html lang="zh-CN">"#), "{boards}");
    for text in [
        "<h1>榜单</h1>",
        ">API 密钥<",
        ">审计日志<",
        ">退出登录<",
        ">新建榜单<",
        ">今日票数<",
        ">进行中<",
        "小时、日、周、月、全部",
    ] {
        assert!(boards.contains(text), "{text} in {boards}");
    }
    let live = get("/admin/boards/zh?period=day").await;
    for text in [
        "<figcaption>每小时票数</figcaption>",
        ">小时，北京时间</text>",
        ">前 10 名<",
        ">暂停更新<",
        "位参与者",
        "更新于",
    ] {
        assert!(live.contains(text), "{text} in {live}");
    }
    let rules = get("/admin/boards/zh/rules").await;
    assert!(
        rules.contains("<td>每位投票人每天最多 5 票</td>"),
        "{rules}"
    );
    let members = get("/admin/boards/zh/members").await;
    assert!(
        members.contains(">导入 CSV<") && members.contains("日：排名 · 得分"),
        "{members}"
    );
    // The board's own words stay as written; the switch goes back to English.
    assert!(boards.contains("星光大道"));
    assert!(
        boards.contains(
            r#"<a href="/lang/en?back=/admin/boards" hreflang="en" lang="en">English</a>"#
        )
    );
    let english = browser.get("/admin/boards").await;
    assert!(english.body.contains("<h1>Boards</h1>"));
}

#[tokio::test]
async fn rolling_windows_show_on_the_dashboard_and_the_public_page() {
    let app = TestApp::spawn().await;
    app.board(
        json!({"slug": "rw", "title": "Rolling", "public_page": true, "timezone": "Asia/Shanghai",
        "periods": ["day", "rolling:24h", "rolling:7d"]}),
    )
    .await;
    app.members("rw", &["m1", "m2"]).await;
    for member in ["m1", "m1", "m2"] {
        app.vote("rw", json!({"member": member})).await;
    }
    let browser = Browser::new(&app);
    browser.sign_in().await;
    let live = browser
        .get("/admin/boards/rw?period=rolling:7d&view=real")
        .await;
    assert_eq!(live.status, StatusCode::OK, "{}", live.body);
    assert!(
        live.body
            .contains(r#"class="on" aria-current="page">Last 7 days</a>"#),
        "{}",
        live.body
    );
    assert!(live.body.contains("<figcaption>Votes per day</figcaption>"));
    assert!(
        !live.body.contains(r#"<select name="at">"#),
        "no buckets to pick"
    );
    let rows = live.body.split("<tbody>").nth(1).unwrap();
    assert!(
        rows.find("m1").unwrap() < rows.find("m2").unwrap(),
        "{rows}"
    );
    let csv = browser
        .get("/admin/boards/rw/export.csv?period=rolling:24h&view=real")
        .await;
    assert_eq!(
        csv.body,
        "rank,member,name,score\n1,m1,Name m1,2\n2,m2,Name m2,1\n"
    );
    let form = browser.get("/admin/boards/rw/edit").await;
    assert!(
        form.body
            .contains(r#"value="rolling:24h" checked> Last 24 h"#),
        "{}",
        form.body
    );
    let visitor = Browser::new(&app);
    let page = visitor.get("/b/rw?period=rolling:24h").await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.body.contains(">Last 24 hours</a>"), "{}", page.body);
    assert!(page.body.contains("2 votes"), "{}", page.body);
}

#[tokio::test]
async fn score_boards_of_every_layout_are_made_in_the_form_and_shown_on_both_pages() {
    let app = TestApp::spawn().await;
    let browser = Browser::new(&app);
    let csrf = browser.sign_in().await;
    for (slug, kind, retain, shards) in [
        ("s-full", "full", "", ""),
        ("s-top", "top_n", "2", ""),
        ("s-shard", "sharded", "", "4"),
    ] {
        let page = browser
            .post(
                "/admin/boards",
                &[
                    ("_csrf", csrf.as_str()),
                    ("slug", slug),
                    ("title", slug),
                    ("membership", "open"),
                    ("periods", "day"),
                    ("periods", "all"),
                    ("timezone", "UTC"),
                    ("multiplier", "1"),
                    ("carry_over", "0"),
                    ("max_count", "10"),
                    ("public_page", "on"),
                    ("scoring", "scores"),
                    ("decimals", "1"),
                    ("storage_kind", kind),
                    ("retain", retain),
                    ("trim_at", ""),
                    ("shards", shards),
                ],
            )
            .await;
        assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.body);
        let (_, board) = app.get(&format!("/api/v1/admin/boards/{slug}")).await;
        assert_eq!(board["storage"]["kind"], kind);
        assert_eq!(board["decimals"], 1);
        for (member, value) in [("ann", 12.5), ("bob", 3.0), ("cy", 7.5)] {
            let (status, body) = app
                .post(
                    &format!("/api/v1/boards/{slug}/scores"),
                    json!({"member": member, "op": "incr", "value": value}),
                )
                .await;
            assert_eq!(status, StatusCode::OK, "{body}");
        }
        let public = browser.get(&format!("/b/{slug}")).await;
        assert!(
            card(&public.body, "ann").contains("12.5 points"),
            "{}",
            public.body
        );
        assert!(
            !public.body.contains("/vote\""),
            "no vote buttons on a scores board"
        );
        let edit = browser.get(&format!("/admin/boards/{slug}/edit")).await;
        assert!(
            edit.body.contains(&format!("<strong>{kind}</strong>")),
            "{}",
            edit.body
        );
        assert!(
            !edit.body.contains(r#"name="storage_kind""#),
            "fixed at creation"
        );
        let csv = browser
            .get(&format!("/admin/boards/{slug}/export.csv?period=all"))
            .await;
        assert_eq!(
            csv.body, "rank,member,name,score\n1,ann,,12.5\n2,cy,,7.5\n3,bob,,3\n",
            "{slug}"
        );
        let live = browser
            .get(&format!("/admin/boards/{slug}?period=all"))
            .await;
        assert_eq!(live.status, StatusCode::OK);
        assert!(live.body.contains("ann"), "{}", live.body);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_dashboard_archives_on_demand_and_shows_archived_buckets_and_a_members_history() {
    let app = TestApp::spawn().await;
    app.board(
        json!({"slug": "past", "title": "Past", "membership": "open",
        "periods": ["hour", "day", "all"], "retention": {"hour": 1, "day": 1}}),
    )
    .await;
    let old = (chrono::Utc::now() - chrono::Duration::days(4))
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    for member in ["m1", "m1", "m2"] {
        let (status, body) = app.vote("past", json!({"member": member, "at": old})).await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    let browser = Browser::new(&app);
    let csrf = browser.sign_in().await;
    let board = browser.get("/admin/boards/past").await;
    assert!(
        board
            .body
            .contains(r#"action="/admin/boards/past/archive""#),
        "{}",
        board.body
    );
    let page = browser
        .post("/admin/boards/past/archive", &[("_csrf", &csrf)])
        .await;
    assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.body);
    assert_eq!(page.location(), "/admin/boards/past");
    let board = browser.get("/admin/boards/past").await;
    assert!(
        board
            .body
            .contains("2 buckets archived, 2 released from Redis."),
        "{}",
        board.body
    );
    // The old day, read from the archive, says so.
    let (_, top) = app
        .get(&format!("/api/v1/boards/past/top?period=day&at={old}"))
        .await;
    assert_eq!(top["archived"], true, "{top}");
    let day = browser
        .get(&format!(
            "/admin/boards/past?period=day&at={}",
            top["bucket"].as_str().unwrap()
        ))
        .await;
    assert!(day.body.contains(r#"id="archived""#), "{}", day.body);
    assert!(day.body.contains(">m1<"), "{}", day.body);

    let history = browser
        .get("/admin/boards/past/members/m1/history?period=day")
        .await;
    assert_eq!(history.status, StatusCode::OK, "{}", history.body);
    assert!(history.body.contains("<svg"), "{}", history.body);
    let rows = history.body.matches("<tr><td>").count();
    assert_eq!(rows, 30, "{}", history.body);
    assert_eq!(
        history.body.matches(">archived<").count(),
        1,
        "{}",
        history.body
    );
    let audit = browser.get("/admin/audit").await;
    assert!(audit.body.contains("board.archive"), "{}", audit.body);
}

#[tokio::test(flavor = "multi_thread")]
async fn leagues_are_made_in_the_form_shown_by_bracket_previewed_and_closed_on_the_dashboard() {
    let app = TestApp::spawn().await;
    let browser = Browser::new(&app);
    let csrf = browser.sign_in().await;
    let form = |tiers: &'static str| {
        vec![
            ("slug", "cup"),
            ("title", "Cup"),
            ("tiers", tiers),
            ("bracket_size", "3"),
            ("season", "week"),
            ("timezone", "UTC"),
            ("rewards", "bronze 1-1 medal"),
            ("webhook_url", ""),
        ]
    };
    let with_csrf = |mut fields: Vec<(&'static str, &'static str)>, csrf: &str| {
        let mut all = vec![("_csrf".to_owned(), csrf.to_owned())];
        all.extend(fields.drain(..).map(|(k, v)| (k.to_owned(), v.to_owned())));
        all
    };
    let post = |path: &'static str, fields: Vec<(String, String)>| {
        let req = browser
            .client
            .post(format!("{}{path}", browser.base))
            .form(&fields);
        async move { Browser::read(req.send().await.unwrap()).await }
    };
    let refused = post("/admin/leagues", with_csrf(form("bronze 0.5"), &csrf)).await;
    assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        refused.body.contains("a tier is `name promote demote`"),
        "{}",
        refused.body
    );
    assert!(refused.body.contains(r#"value="Cup""#));
    let created = post(
        "/admin/leagues",
        with_csrf(form("bronze 0.5 0\ngold 0 0.5"), &csrf),
    )
    .await;
    assert_eq!(
        (created.status, created.location()),
        (StatusCode::SEE_OTHER, "/admin/leagues/cup"),
        "{}",
        created.body
    );

    for player in ["p1", "p2", "p3", "p4"] {
        let (status, _) = app
            .post(
                "/api/v1/leagues/cup/join",
                json!({"player": player, "profile": {"nickname": format!("Nick {player}")}}),
            )
            .await;
        assert_eq!(status, StatusCode::OK);
    }
    let (status, _) = app
        .post(
            "/api/v1/leagues/cup/scores",
            json!({"player": "p2", "delta": 5}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);

    let list = browser.get("/admin/leagues").await;
    assert!(
        list.body
            .contains(r#"<a href="/admin/leagues/cup">Cup</a>"#),
        "{}",
        list.body
    );
    assert!(
        list.body.contains("<td>bronze &#60; gold</td>"),
        "{}",
        list.body
    );
    let show = browser.get("/admin/leagues/cup").await;
    assert_eq!(show.status, StatusCode::OK);
    for text in [
        r#"<a href="/admin/leagues/cup?season=1&amp;bracket=bronze-1">bronze-1</a> <span class="muted">(3)</span>"#,
        r#"<a href="/admin/leagues/cup?season=1&amp;bracket=bronze-2">bronze-2</a> <span class="muted">(1)</span>"#,
        r#"<tr class="zone-promote"><td class="num">1</td><td>Nick p2 <span class="muted">p2</span></td><td class="num">5</td><td>Promotion</td></tr>"#,
        r#"<tr class="zone-stay"><td class="num">2</td><td>Nick p1 <span class="muted">p1</span></td><td class="num">0</td><td>Stays</td></tr>"#,
        "This league has no webhook.",
        r#"<a href="/l/cup/bronze-1">Public page</a>"#,
    ] {
        assert!(show.body.contains(text), "{text} in {}", show.body);
    }

    // The public page of the bracket, and its refresh block.
    let public = browser.get("/l/cup/bronze-1").await;
    assert_eq!(public.status, StatusCode::OK);
    assert!(
        public
            .body
            .contains(r#"hx-get="/l/cup/bronze-1/standings""#),
        "{}",
        public.body
    );
    assert!(
        public
            .body
            .contains("<td>Nick p2</td><td class=\"num\">5</td><td>Promotion</td>"),
        "{}",
        public.body
    );
    let block = browser.get("/l/cup/bronze-1/standings").await;
    assert!(
        !block.body.contains("<html") && block.body.contains("Nick p3"),
        "{}",
        block.body
    );
    assert_eq!(
        browser.get("/l/cup/bronze-9").await.status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        browser.get("/l/nope/bronze-1").await.status,
        StatusCode::NOT_FOUND
    );

    // The preview shows what the close would do; the close is one confirmed form.
    let preview = browser.get("/admin/leagues/cup/preview").await;
    for text in [
        "<td>p2</td><td>bronze-1</td><td class=\"num\">1</td><td>bronze → gold</td>",
        "<td>p4</td><td>bronze-2</td><td class=\"num\">1</td><td>medal</td>",
        "4 players in 2 brackets.",
    ] {
        assert!(preview.body.contains(text), "{text} in {}", preview.body);
    }
    let closed = post(
        "/admin/leagues/cup/close",
        vec![("_csrf".into(), preview.csrf())],
    )
    .await;
    assert_eq!(
        (closed.status, closed.location()),
        (StatusCode::SEE_OTHER, "/admin/leagues/cup")
    );
    let show = browser.get("/admin/leagues/cup").await;
    assert!(
        show.body.contains("Season 1 closed: 4 players."),
        "{}",
        show.body
    );
    assert!(
        show.body.contains(">Season 2 · live</a>")
            && show.body.contains("Nobody has joined this season yet."),
        "{}",
        show.body
    );
    let past = browser
        .get("/admin/leagues/cup?season=1&bracket=bronze-1")
        .await;
    assert!(
        past.body.contains(r#"<tr class="zone-promote"><td class="num">1</td><td>p2</td><td class="num">5</td><td>Promotion</td></tr>"#),
        "{}",
        past.body
    );

    // Settings apply from the next season; Chinese on request.
    let saved = post(
        "/admin/leagues/cup",
        with_csrf(form("bronze 0.4 0\ngold 0 0.4"), &show.csrf()),
    )
    .await;
    assert_eq!(saved.status, StatusCode::SEE_OTHER, "{}", saved.body);
    let (_, league) = app.get("/api/v1/admin/leagues/cup").await;
    assert_eq!(league["tiers"][0]["promote"], 0.4);
    let zh = browser
        .client
        .get(format!("{}/admin/leagues/cup/preview", browser.base))
        .header("Accept-Language", "zh-CN")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        zh.contains("<h2>晋级</h2>") && zh.contains("立即结算第 2 赛季"),
        "{zh}"
    );
}

#[tokio::test]
async fn saving_a_league_on_the_dashboard_keeps_the_names_of_its_score_limits() {
    let app = TestApp::spawn().await;
    let (status, created) = app
        .post(
            "/api/v1/admin/leagues",
            json!({"slug": "named", "title": "Named",
                "tiers": [{"name": "bronze", "promote": 0, "demote": 0}],
                "score_limits": [{"name": "ten a minute", "per": ["player"], "window": "minute", "limit": 10},
                    {"name": "flood guard", "per": ["player", "ip"], "window": "rolling:10m", "limit": 100}]}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let browser = Browser::new(&app);
    let csrf = browser.sign_in().await;
    let page = browser.get("/admin/leagues/named").await;
    let shown = "player 10 minute ten a minute\nplayer+ip 100 rolling:10m flood guard";
    assert!(page.body.contains(shown), "{}", page.body);
    let saved = browser
        .post(
            "/admin/leagues/named",
            &[
                ("_csrf", csrf.as_str()),
                ("title", "Named again"),
                ("tiers", "bronze 0 0"),
                ("bracket_size", "50"),
                ("season", "week"),
                ("timezone", "UTC"),
                ("rewards", ""),
                ("webhook_url", ""),
                ("score_limits", &format!("{shown}\nplayer 3 second")),
            ],
        )
        .await;
    assert_eq!(saved.status, StatusCode::SEE_OTHER, "{}", saved.body);
    let (_, league) = app.get("/api/v1/admin/leagues/named").await;
    assert_eq!(league["title"], "Named again");
    let names: Vec<&str> = league["score_limits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["ten a minute", "flood guard", "limit 3"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_league_page_shows_its_secret_rotates_it_and_sends_a_given_up_delivery_again() {
    let app = TestApp::spawn_with(Options {
        league_check: Duration::from_millis(100),
        webhook_allow_private: true,
        ..Options::default()
    })
    .await;
    // Nothing listens on port 1: every attempt fails.
    let (status, created) = app
        .post(
            "/api/v1/admin/leagues",
            json!({"slug": "hooks", "title": "Hooks",
                "tiers": [{"name": "bronze", "promote": 0, "demote": 0}],
                "webhook_url": "http://127.0.0.1:1/hook"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let secret = created["webhook_secret"].as_str().unwrap().to_owned();
    let (status, _) = app
        .post("/api/v1/admin/leagues/hooks/close", json!({}))
        .await;
    assert_eq!(status, StatusCode::OK);
    let (state, league) = app.league_in_sql("hooks").await;
    let started = std::time::Instant::now();
    let delivery = loop {
        let d = ovation::store::sql::leagues::deliveries(&state.db, league.id)
            .await
            .unwrap()
            .remove(0);
        if d.attempts > 0 {
            break d;
        }
        assert!(started.elapsed() < Duration::from_secs(10));
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    use sea_orm::{ActiveModelTrait, Set};
    ovation::store::sql::entities::webhook_delivery::ActiveModel {
        id: Set(delivery.id),
        gave_up_at: Set(Some(chrono::Utc::now().naive_utc())),
        ..Default::default()
    }
    .update(&state.db)
    .await
    .unwrap();

    let browser = Browser::new(&app);
    let csrf = browser.sign_in().await;
    let page = browser.get("/admin/leagues/hooks").await.body;
    assert!(page.contains(&format!("<code>{secret}</code>")), "{page}");
    assert!(page.contains("<strong>gave up "), "{page}");
    let resend = format!("/admin/leagues/hooks/deliveries/{}/resend", delivery.id);
    assert!(page.contains(&format!(r#"action="{resend}""#)), "{page}");
    let sent = browser.post(&resend, &[("_csrf", &csrf)]).await;
    assert_eq!(sent.status, StatusCode::SEE_OTHER, "{}", sent.body);
    let again = ovation::store::sql::leagues::deliveries(&state.db, league.id)
        .await
        .unwrap()
        .remove(0);
    assert_eq!(again.gave_up_at, None, "due again");
    let unknown = browser
        .post(
            "/admin/leagues/hooks/deliveries/999/resend",
            &[("_csrf", &csrf)],
        )
        .await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);

    let rotated = browser
        .post("/admin/leagues/hooks/webhook-secret", &[("_csrf", &csrf)])
        .await;
    assert_eq!(rotated.status, StatusCode::SEE_OTHER);
    let page = browser.get("/admin/leagues/hooks").await.body;
    assert!(
        !page.contains(&format!("<code>{secret}</code>")),
        "a new secret"
    );
    assert!(
        page.contains("Deliveries also carry a signature with the previous secret until"),
        "{page}"
    );
    let audit = browser.get("/admin/audit").await.body;
    assert!(audit.contains("league.webhook_secret.rotate"), "{audit}");
    assert!(audit.contains("league.delivery.resend"), "{audit}");
}

#[tokio::test]
async fn the_public_bracket_page_is_reused_and_shows_bounded_profiles() {
    let app = TestApp::spawn_with(Options {
        read_cache: Duration::from_secs(60),
        ..Options::default()
    })
    .await;
    let (status, body) = app
        .post(
            "/api/v1/admin/leagues",
            json!({"slug": "pub", "title": "Pub",
                "tiers": [{"name": "bronze", "promote": 0, "demote": 0}]}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let long_avatar = format!("https://img.example/{}.png", "a".repeat(600));
    for (player, profile) in [
        (
            "p1",
            json!({"nickname": "Ana", "avatar": "https://img.example/ana.png"}),
        ),
        ("p2", json!({"nickname": "Bo", "avatar": long_avatar})),
    ] {
        let (status, body) = app
            .post(
                "/api/v1/leagues/pub/join",
                json!({"player": player, "profile": profile}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    // A nickname kept from before nicknames were bounded.
    let mut raw = RawRedis::connect().await;
    let profiles = raw
        .keys(&format!("{}:{{l:*}}:s:1:profiles", app.prefix))
        .await
        .remove(0);
    let () = raw
        .query(
            redis::cmd("HSET")
                .arg(&profiles)
                .arg("p1")
                .arg(json!({"nickname": "N".repeat(100), "avatar": null}).to_string()),
        )
        .await;
    let visitor = Browser::new(&app);
    let page = visitor.get("/l/pub/bronze-1").await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(
        page.body.contains(&format!(">{}</td>", "N".repeat(32))),
        "{}",
        page.body
    );
    assert!(!page.body.contains(&"N".repeat(33)), "cut to 32 characters");
    assert!(
        !page.body.contains("img.example/aaaa"),
        "a long avatar is left out"
    );
    assert!(page.body.contains(">Bo</td>"), "{}", page.body);
    // Scores that move within the cache's life show on the next rendering, not before.
    let (status, _) = app
        .post(
            "/api/v1/leagues/pub/scores",
            json!({"player": "p2", "delta": 7}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(visitor.get("/l/pub/bronze-1").await.body, page.body);
    let block = visitor.get("/l/pub/bronze-1/standings").await.body;
    assert!(block.contains(r#"<td class="num">7</td>"#), "{block}");
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
