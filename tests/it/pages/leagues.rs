//! The dashboard's leagues (the form, standings by bracket, the close, the webhook
//! secret and deliveries) and the public bracket page `/l/{league}/{bracket}`.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::json;

use super::Browser;
use crate::harness::{Options, RawRedis, TestApp};

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
async fn a_closed_seasons_page_lists_its_rewards_and_who_took_them() {
    let app = TestApp::spawn().await;
    let (status, body) = app
        .post(
            "/api/v1/admin/leagues",
            json!({"slug": "gifts", "title": "Gifts",
                "tiers": [{"name": "bronze", "promote": 0, "demote": 0}],
                "rewards": [{"tier": "bronze", "ranks": [1, 1], "reward": "medal"}]}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    for player in ["p1", "p2"] {
        let (status, _) = app
            .post("/api/v1/leagues/gifts/join", json!({"player": player}))
            .await;
        assert_eq!(status, StatusCode::OK);
    }
    let (status, _) = app
        .post(
            "/api/v1/leagues/gifts/scores",
            json!({"player": "p1", "delta": 4}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = app
        .post("/api/v1/admin/leagues/gifts/close", json!({}))
        .await;
    assert_eq!(status, StatusCode::OK);
    let browser = Browser::new(&app);
    browser.sign_in().await;
    let waiting = browser.get("/admin/leagues/gifts?season=1").await.body;
    assert!(
        waiting.contains(
            r#"<tr><td>p1</td><td>medal</td><td><span class="muted">waiting for the player&#39;s next join through the key that played the season</span></td></tr>"#
        ),
        "{waiting}"
    );
    let (_, joined) = app
        .post("/api/v1/leagues/gifts/join", json!({"player": "p1"}))
        .await;
    assert_eq!(joined["rewards"], json!(["medal"]));
    let started = std::time::Instant::now();
    loop {
        let page = browser.get("/admin/leagues/gifts?season=1").await.body;
        if page.contains(" · master</td></tr>") {
            assert!(page.contains("<tr><td>p1</td><td>medal</td><td>"), "{page}");
            break;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(5),
            "{page}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let live = browser.get("/admin/leagues/gifts").await.body;
    assert!(
        !live.contains(r#"id="rewards""#),
        "the live season gave nothing yet"
    );
}
