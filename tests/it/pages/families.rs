//! A family's pages: the dashboard's list of its live rooms (searched, paged) and each
//! room's live view, a room's public page, and metrics that name the family only.

use reqwest::StatusCode;
use serde_json::json;

use super::{Browser, card};
use crate::harness::TestApp;
use crate::ops::sample;

/// The instance names the family page's rows link to, in order.
fn listed(body: &str, family: &str) -> Vec<String> {
    let marker = format!(r#"<tr><td><a href="/admin/boards/{family}:"#);
    body.split(&marker)
        .skip(1)
        .map(|rest| rest.split('"').next().unwrap().to_owned())
        .collect()
}

/// The next page link's path, unescaped.
fn next_page(body: &str) -> Option<String> {
    let start = body.find(r#"id="next" href=""#)? + r#"id="next" href=""#.len();
    Some(body[start..].split('"').next()?.replace("&amp;", "&"))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_familys_page_lists_its_live_rooms_searched_and_paged_and_opens_each_live_view() {
    let app = TestApp::spawn().await;
    let family = format!("fam-{}", app.prefix);
    app.board(
        json!({"slug": family, "title": "Rooms", "membership": "open",
        "public_page": true, "periods": ["day", "all"],
        "instances": {"ttl_s": 3600, "pages": true}}),
    )
    .await;
    app.members(&family, &["m1", "m2"]).await;
    let rooms: Vec<String> = (0..55).map(|i| format!("r{i:02}")).collect();
    for room in &rooms {
        let (status, body) = app
            .vote(&format!("{family}:{room}"), json!({"member": "m1"}))
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    for (member, n) in [("m1", 2), ("m2", 3)] {
        for _ in 0..n {
            app.vote(&format!("{family}:8812"), json!({"member": member}))
                .await;
        }
    }

    let browser = Browser::new(&app);
    browser.sign_in().await;
    let first = browser.get(&format!("/admin/boards/{family}")).await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.body);
    assert!(
        first
            .body
            .contains("one board per room, each gone after 1 hour without a write"),
        "{}",
        first.body
    );
    assert!(
        first
            .body
            .contains("56 live rooms, most recently written first"),
        "{}",
        first.body
    );
    let mut expected: Vec<String> = rooms.iter().rev().cloned().collect();
    expected.insert(0, "8812".to_owned());
    assert_eq!(listed(&first.body, &family), expected[..50]);
    assert!(first.body.contains(&format!(
        r#"<a href="/b/{family}:8812">/b/{family}:8812</a>"#
    )));
    let second = browser.get(&next_page(&first.body).unwrap()).await;
    assert_eq!(second.status, StatusCode::OK, "{}", second.body);
    assert_eq!(listed(&second.body, &family), expected[50..]);
    assert_eq!(next_page(&second.body), None);

    let found = browser
        .get(&format!("/admin/boards/{family}?search=881"))
        .await;
    assert_eq!(listed(&found.body, &family), ["8812"]);
    assert!(
        found
            .body
            .contains("Of 56 live rooms, those whose name holds the text"),
        "{}",
        found.body
    );
    let found = browser
        .get(&format!("/admin/boards/{family}?search=r1"))
        .await;
    assert_eq!(
        listed(&found.body, &family),
        (10..20).rev().map(|i| format!("r{i}")).collect::<Vec<_>>()
    );
    let bad = browser
        .get(&format!("/admin/boards/{family}?search=r%2A1"))
        .await;
    assert_eq!(bad.status, StatusCode::OK, "{}", bad.body);
    assert!(
        bad.body
            .contains(r#"<p class="flash error" role="alert">search: "#),
        "{}",
        bad.body
    );
    assert_eq!(listed(&bad.body, &family), Vec::<String>::new());

    // A room's live view: its own ranking and charts; members, rules and settings are
    // the family's, and a room is never archived.
    let live = browser
        .get(&format!("/admin/boards/{family}:8812?period=day&view=real"))
        .await;
    assert_eq!(live.status, StatusCode::OK, "{}", live.body);
    assert!(live.body.contains("<svg"), "charts are drawn");
    assert!(
        live.body.contains(
            r#"<tr><td class="num">1</td><td class="up">new</td><td>Name m2 <span class="muted">m2</span></td><td class="num">3</td></tr>"#
        ),
        "{}",
        live.body
    );
    assert!(
        live.body
            .contains(&format!(r#"<a href="/admin/boards/{family}/members">"#))
    );
    assert!(!live.body.contains("/archive\""), "{}", live.body);
    let block = browser
        .client
        .get(format!(
            "{}/admin/boards/{family}:8812/live?period=all&view=real",
            browser.base
        ))
        .header("HX-Request", "true")
        .send()
        .await
        .unwrap();
    assert_eq!(block.status(), StatusCode::OK);
    let block = block.text().await.unwrap();
    assert!(!block.contains("<html"), "a block, not a page");
    assert!(block.contains(r#"<td class="num">2</td></tr>"#), "{block}");
    let csv = browser
        .get(&format!(
            "/admin/boards/{family}:8812/export.csv?period=all&view=real"
        ))
        .await;
    assert_eq!(
        csv.body,
        "rank,member,name,score\n1,m2,Name m2,3\n2,m1,Name m1,2\n"
    );
    let never = browser
        .get(&format!("/admin/boards/{family}:quiet?period=day"))
        .await;
    assert_eq!(never.status, StatusCode::OK, "{}", never.body);
    assert!(never.body.contains("No votes in this bucket yet."));

    // The family's members score in its rooms: their page shows no ranks and no history.
    let members = browser
        .get(&format!("/admin/boards/{family}/members"))
        .await;
    assert_eq!(members.status, StatusCode::OK, "{}", members.body);
    assert!(members.body.contains("Name m1"), "{}", members.body);
    assert!(
        !members.body.contains(r#"<th class="num">"#),
        "{}",
        members.body
    );
    assert!(!members.body.contains("/history"), "{}", members.body);
    let history = browser
        .get(&format!("/admin/boards/{family}/members/m1/history"))
        .await;
    assert_eq!(history.status, StatusCode::NOT_FOUND, "{}", history.body);

    // A room's public page votes into that room alone.
    let visitor = Browser::new(&app);
    let page = visitor.get(&format!("/b/{family}:8812?period=all")).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    assert!(card(&page.body, "m2").contains("3 votes<"), "{}", page.body);
    let voted = visitor
        .post(
            &format!("/b/{family}:8812/vote"),
            &[("_csrf", &page.csrf()), ("member", "m1"), ("period", "all")],
        )
        .await;
    assert_eq!(voted.status, StatusCode::SEE_OTHER, "{}", voted.body);
    assert_eq!(
        voted.location(),
        format!("/b/{family}:8812?period=all#m-m1")
    );
    let (_, top) = app
        .get(&format!("/api/v1/boards/{family}:8812/top?period=all"))
        .await;
    assert_eq!(top["entries"][0]["score"], 3, "{top}");
    assert_eq!(top["entries"][1]["score"], 3, "{top}");
    let (_, top) = app
        .get(&format!("/api/v1/boards/{family}:r00/top?period=all"))
        .await;
    assert_eq!(
        top["entries"],
        json!([{"rank": 1, "member": "m1", "name": "Name m1", "image_url": null, "score": 1}])
    );

    // Metrics name the family, never a room.
    let text = app.metrics().await;
    assert_eq!(
        sample(
            &text,
            "ovation_writes_total",
            &[
                ("kind", "vote"),
                ("target", &family),
                ("outcome", "accepted")
            ]
        ),
        Some(61.0)
    );
    assert!(!text.contains(&format!("{family}:")), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rooms_voting_page_is_off_unless_its_family_turns_it_on_and_opens_rooms_per_address() {
    let app = TestApp::spawn().await;
    app.board(
        json!({"slug": "quiet", "title": "Quiet", "membership": "open",
        "public_page": true, "instances": {"ttl_s": 3600}}),
    )
    .await;
    let open = format!("open-{}", app.prefix);
    app.board(json!({"slug": open, "title": "Open", "membership": "open",
        "public_page": true, "instances": {"ttl_s": 3600, "pages": true}}))
        .await;
    app.members(&open, &["m1"]).await;
    let (status, body) = app
        .post(
            &format!("/api/v1/admin/boards/{open}/rules"),
            json!({"name": "three rooms", "dimensions": ["creator"], "window": "campaign", "limit": 3}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let visitor = Browser::new(&app);
    // A family's rooms have no page of their own unless the family says so.
    app.vote("quiet:r1", json!({"member": "m1"})).await;
    for path in [
        "/b/quiet:r1",
        "/b/quiet:r1/ranking",
        "/b/quiet:r1/stream",
        "/embed/b/quiet:r1",
    ] {
        assert_eq!(
            visitor.get(path).await.status,
            StatusCode::NOT_FOUND,
            "{path}"
        );
    }
    // With pages on, a visitor's address opens three rooms; votes in rooms
    // already open go on.
    // (A room the API opened shows its ranking and its form.)
    app.vote(&format!("{open}:lobby"), json!({"member": "m1"}))
        .await;
    let csrf = visitor.get(&format!("/b/{open}:lobby")).await.csrf();
    for i in 0..3 {
        let page = visitor
            .post(
                &format!("/b/{open}:r{i}/vote"),
                &[("_csrf", &csrf), ("member", "m1")],
            )
            .await;
        assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.body);
    }
    let refused = visitor
        .post(
            &format!("/b/{open}:r3/vote"),
            &[("_csrf", &csrf), ("member", "m1")],
        )
        .await;
    assert_eq!(refused.status, StatusCode::SEE_OTHER, "{}", refused.body);
    let metrics = app.metrics().await;
    assert_eq!(
        sample(
            &metrics,
            "ovation_writes_total",
            &[
                ("target", &open),
                ("outcome", "refused"),
                ("code", "rate_limited"),
                ("rule", "three rooms")
            ]
        ),
        Some(1.0),
        "{metrics}"
    );
    let again = visitor
        .post_htmx(
            &format!("/b/{open}:r1/vote"),
            &[("_csrf", &csrf), ("member", "m1")],
        )
        .await;
    assert!(again.body.contains("Thanks"), "{}", again.body);
    let (_, listing) = app.get(&format!("/api/v1/boards/{open}/instances")).await;
    let mut rooms: Vec<&str> = listing["instances"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["instance"].as_str().unwrap())
        .collect();
    rooms.sort_unstable();
    assert_eq!(rooms, ["lobby", "r0", "r1", "r2"]);
    // An API key is a creator of its own.
    let (status, body) = app
        .vote(&format!("{open}:r3"), json!({"member": "m1"}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_familys_room_budget_and_pages_are_set_in_the_board_form() {
    let app = TestApp::spawn().await;
    let staff = Browser::new(&app);
    let csrf = staff.sign_in().await;
    let page = staff
        .post(
            "/admin/boards",
            &[
                ("_csrf", csrf.as_str()),
                ("slug", "lobby"),
                ("title", "Lobby"),
                ("membership", "open"),
                ("periods", "day"),
                ("timezone", "UTC"),
                ("multiplier", "1"),
                ("carry_over", "0"),
                ("max_count", "10"),
                ("scoring", "votes"),
                ("decimals", "0"),
                ("storage_kind", "full"),
                ("instances", "family"),
                ("instance_ttl", "2"),
                ("instance_ttl_unit", "hours"),
                ("instance_max_live", "40"),
                ("instance_pages", "on"),
                ("instance_ledger_days", "7"),
            ],
        )
        .await;
    assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.body);
    let (_, board) = app.get("/api/v1/admin/boards/lobby").await;
    assert_eq!(
        board["instances"],
        json!({"ttl_s": 7200, "max_live": 40, "pages": true, "ledger_days": 7})
    );
    // Editing keeps the TTL and changes the rest.
    let edit = staff.get("/admin/boards/lobby/edit").await;
    assert!(
        edit.body
            .contains(r#"<input name="instance_max_live" value="40" inputmode="numeric">"#),
        "{}",
        edit.body
    );
    let page = staff
        .post(
            "/admin/boards/lobby",
            &[
                ("_csrf", csrf.as_str()),
                ("title", "Lobby"),
                ("membership", "open"),
                ("periods", "day"),
                ("timezone", "UTC"),
                ("multiplier", "1"),
                ("carry_over", "0"),
                ("max_count", "10"),
                ("instances", "family"),
                ("instance_max_live", "55"),
                ("instance_ledger_days", "7"),
            ],
        )
        .await;
    assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.body);
    let (_, board) = app.get("/api/v1/admin/boards/lobby").await;
    assert_eq!(
        board["instances"],
        json!({"ttl_s": 7200, "max_live": 55, "pages": false, "ledger_days": 7})
    );
}
