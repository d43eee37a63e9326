//! The public voting page `/b/{board}` and its embedded form `/embed/b/{board}`: voting
//! with and without htmx, refusals in plain words, scores and ranks as shown.

use reqwest::StatusCode;
use serde_json::json;

use super::{Browser, card};
use crate::harness::{TestApp, num};

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
    assert!(!block.body.contains("poller"), "{}", block.body);
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
    assert!(
        page.body.contains(
            r#"<div id="ranking" hx-ext="sse" sse-connect="/b/pub/stream?period=all" sse-swap="ranking" hx-swap="innerHTML" data-poll="/b/pub/ranking?period=all" data-poll-ms="5000">"#
        ),
        "{}",
        page.body
    );
    assert!(!page.body.contains("hx-trigger"), "the page does not poll");
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
        page.body.contains(
            r#"sse-connect="/embed/b/emb/stream?period=all" sse-swap="ranking" hx-swap="innerHTML" data-poll="/embed/b/emb/ranking?period=all""#
        ),
        "{}",
        page.body
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
async fn the_landing_page_leads_to_the_dashboard_the_docs_and_the_public_boards() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "open-vote", "title": "Open <vote>", "public_page": true}))
        .await;
    app.board(json!({"slug": "hidden", "title": "Hidden", "public_page": false}))
        .await;
    let visitor = Browser::new(&app);
    let page = visitor.get("/").await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(
        page.headers["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/html")
    );
    for link in [
        r#"<a href="/admin/login">Sign in to the dashboard</a>"#,
        r#"<a href="/docs/">API documentation</a>"#,
        r#"<li><a href="/b/open-vote">Open &#60;vote&#62;</a></li>"#,
    ] {
        assert!(page.body.contains(link), "{link}: {}", page.body);
    }
    assert!(!page.body.contains("/b/hidden"), "{}", page.body);
    assert_eq!(page.headers["x-frame-options"], "DENY");
}
