//! The dashboard's members, keys and audit log: imports with a preview, forms that
//! keep what was typed, edit, disable, revoke and delete.

use reqwest::StatusCode;
use serde_json::json;

use super::Browser;
use crate::harness::{TestApp, num};

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
                (
                    "overrides",
                    "channel=partner-a: 10\nchannel=partner-b: +5\nchannel=spam: blocked",
                ),
                ("missing", "refuse"),
            ],
        )
        .await;
    assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.body);
    let rules = browser.get("/admin/boards/imp/rules").await;
    assert!(
        rules.body.contains(
            "each voter, 5 per day — channel partner-a: 10; channel partner-b: +5; channel \
             spam: blocked"
        ),
        "{}",
        rules.body
    );
    // The edit form gives the overrides back as they were written.
    assert!(
        rules
            .body
            .contains("channel=partner-a: 10\nchannel=partner-b: +5\nchannel=spam: blocked"),
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

/// A member's row leads to the adjustment form on its history page: an adjustment moves
/// that bucket, a form sent twice adjusts once, a refused one keeps what was typed and
/// says why; a scores board has no form.
#[tokio::test]
async fn the_dashboard_adjusts_a_members_score_in_one_bucket() {
    let app = TestApp::spawn().await;
    app.board(json!({"slug": "adj", "title": "Adjust", "periods": ["day", "all"]}))
        .await;
    app.members("adj", &["m1", "m2"]).await;
    app.vote("adj", json!({"member": "m1", "count": 3})).await;
    app.board(json!({"slug": "pts", "title": "Points", "scoring": "scores"}))
        .await;
    app.members("pts", &["p1"]).await;
    let browser = Browser::new(&app);
    let csrf = browser.sign_in().await;

    let list = browser.get("/admin/boards/adj/members").await;
    assert!(
        list.body
            .contains("href=\"/admin/boards/adj/members/m1/history#adjust\""),
        "{}",
        list.body
    );
    let page = browser.get("/admin/boards/adj/members/m1/history").await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    let today = chrono::Utc::now().format("%Y-%m-%d").to_string();
    assert!(
        page.body
            .contains(&format!("name=\"at\" value=\"{today}\"")),
        "the form names today's bucket: {}",
        page.body
    );
    let key = page
        .body
        .split("name=\"key\" value=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap()
        .to_owned();
    let form = [
        ("_csrf", csrf.as_str()),
        ("key", key.as_str()),
        ("period", "day"),
        ("at", today.as_str()),
        ("view", "real"),
        ("delta", "+4"),
        ("reason", "counted by hand"),
    ];
    for _ in 0..2 {
        let done = browser
            .post("/admin/boards/adj/members/m1/adjustments", &form)
            .await;
        assert_eq!(done.status, StatusCode::SEE_OTHER, "{}", done.body);
        assert_eq!(
            done.location(),
            "/admin/boards/adj/members/m1/history?period=day"
        );
    }
    let (_, day) = app
        .get("/api/v1/boards/adj/members/m1?period=day&view=real")
        .await;
    assert_eq!(num(&day["score"]), 7.0, "adjusted once: {day}");
    let (_, all) = app
        .get("/api/v1/boards/adj/members/m1?period=all&view=real")
        .await;
    assert_eq!(num(&all["score"]), 3.0, "no other period: {all}");
    let page = browser
        .get("/admin/boards/adj/members/m1/history?period=day")
        .await;
    assert!(
        page.body.contains("Member m1 adjusted by 4 in"),
        "{}",
        page.body
    );

    let refused = browser
        .post(
            "/admin/boards/adj/members/m2/adjustments",
            &[
                ("_csrf", &csrf),
                ("key", "dash-2"),
                ("period", "day"),
                ("at", &today),
                ("view", "real"),
                ("delta", "-1"),
                ("reason", "typed reason"),
            ],
        )
        .await;
    assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(refused.body.contains("below 0"), "{}", refused.body);
    assert!(
        refused.body.contains(
            r#"<textarea name="reason" required maxlength="2000">typed reason</textarea>"#
        ),
        "{}",
        refused.body
    );
    assert!(
        refused.body.contains("name=\"delta\" value=\"-1\""),
        "{}",
        refused.body
    );

    let scores = browser.get("/admin/boards/pts/members/p1/history").await;
    assert!(!scores.body.contains("id=\"adjust\""), "{}", scores.body);
    let list = browser.get("/admin/boards/pts/members").await;
    assert!(!list.body.contains("#adjust"), "{}", list.body);
}

#[tokio::test]
async fn the_dashboard_makes_lists_and_deletes_identity_providers_and_boards_take_them() {
    let app = TestApp::spawn().await;
    let browser = Browser::new(&app);
    let csrf = browser.sign_in().await;

    // A refused form keeps what was typed and says why.
    let refused = browser
        .post(
            "/admin/identity-providers",
            &[
                ("_csrf", &csrf),
                ("name", "accounts"),
                ("kind", "jwks"),
                ("issuer", "https://id.example"),
                ("audience", "ovation"),
                ("jwks_url", "ftp://id.example/jwks"),
                ("algorithms", "RS256"),
                ("voter_claim", "sub"),
                ("max_age_s", "3600"),
                ("leeway_s", "30"),
            ],
        )
        .await;
    assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        refused.body.contains("jwks_url must be"),
        "{}",
        refused.body
    );
    assert!(
        refused.body.contains(r#"value="https://id.example""#),
        "{}",
        refused.body
    );

    let made = browser
        .post(
            "/admin/identity-providers",
            &[
                ("_csrf", &csrf),
                ("name", "shop"),
                ("kind", "hmac"),
                ("issuer", "https://shop.example"),
                ("audience", "ovation"),
                ("voter_claim", "uid"),
                ("max_age_s", "600"),
                ("leeway_s", "10"),
                ("login_url", "https://shop.example/login"),
            ],
        )
        .await;
    assert_eq!(made.status, StatusCode::SEE_OTHER, "{}", made.body);
    let shown = browser.get("/admin/identity-providers").await.body;
    let marker = r#"<code id="new-secret">"#;
    let start = shown.find(marker).expect("the secret is shown once") + marker.len();
    let secret = shown[start..].split('<').next().unwrap().to_owned();
    assert_eq!(secret.len(), 43, "{secret}");
    let listed = browser.get("/admin/identity-providers").await.body;
    assert!(!listed.contains(&secret), "and only once");
    assert!(
        listed.contains("<td>shop</td><td>hmac</td><td>https://shop.example</td><td>ovation</td><td>HS256</td><td><code>uid</code></td><td>600 s / ± 10 s</td><td>https://shop.example/login</td>"),
        "{listed}"
    );
    let (_, api) = app.get("/api/v1/admin/identity-providers/shop").await;
    assert_eq!(api["voter_claim"], "uid");

    // The board form names the providers and who may vote.
    let board = browser
        .post(
            "/admin/boards",
            &[
                ("_csrf", &csrf),
                ("slug", "gala"),
                ("title", "Gala"),
                ("membership", "closed"),
                ("periods", "all"),
                ("timezone", "UTC"),
                ("multiplier", "1"),
                ("carry_over", "0"),
                ("max_count", "1000"),
                ("scoring", "votes"),
                ("storage_kind", "full"),
                ("instances", "one"),
                ("voters", "signed_in"),
                ("identity_providers", "shop"),
            ],
        )
        .await;
    assert_eq!(board.status, StatusCode::SEE_OTHER, "{}", board.body);
    let (_, gala) = app.get("/api/v1/admin/boards/gala").await;
    assert_eq!(
        (&gala["voters"], &gala["identity_providers"]),
        (&json!("signed_in"), &json!(["shop"]))
    );

    // A provider a board accepts stays; once no board does, it goes.
    let delete = |csrf: String| {
        let browser = &browser;
        async move {
            browser
                .post("/admin/identity-providers/shop/delete", &[("_csrf", &csrf)])
                .await
        }
    };
    assert_eq!(delete(csrf.clone()).await.status, StatusCode::SEE_OTHER);
    let still = browser.get("/admin/identity-providers").await.body;
    assert!(
        still.contains("boards gala accept identity provider shop"),
        "{still}"
    );
    app.patch(
        "/api/v1/admin/boards/gala",
        json!({"voters": "anyone", "identity_providers": []}),
    )
    .await;
    assert_eq!(delete(csrf).await.status, StatusCode::SEE_OTHER);
    let gone = browser.get("/admin/identity-providers").await.body;
    assert!(gone.contains("Identity provider shop deleted."), "{gone}");
    assert!(gone.contains("No identity providers yet."), "{gone}");
}
